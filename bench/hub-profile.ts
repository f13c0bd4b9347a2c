/**
 * Profiles the server side of the hub benchmark at N agents (default 50), measurement window only:
 *   N=50 PROFILE=/tmp/hub.cpuprofile npx tsx bench/hub-profile.ts   (CLAIM_NEXT=1: report+claimNext, one round trip per task)
 * The agents run in a child process (bench/hub-agents.ts), so the profile is the server's alone.
 * Open the .cpuprofile in Chrome DevTools (Performance) or VS Code, or split it by where the time goes:
 *   node bench/hub-profile-split.mjs /tmp/hub.cpuprofile --tasks <the tasks it printed> SYNC_OFF=1 turns the commit's
 * fsync off (profiling only), so the samples show CPU rather than the wait inside COMMIT.
 */
import { fork } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Session } from 'node:inspector/promises';
import { createCore } from '../src-main/core/create-core';
import { attachAgentSocket } from '../src-main/server/agent-socket';

async function main() {
  const n = Number(process.env.N ?? 50);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gaffer-prof-'));
  const core = createCore({ dataDir: dir, hub: { ratePerSecond: 1e9, rateBurst: 1e9 } });
  core.start();
  // Experiments: DROPIDX=audit_actor shows what one index costs in WAL pages per commit.
  for (const idx of (process.env.DROPIDX ?? '').split(',').filter(Boolean)) core.db.exec(`DROP INDEX ${idx}`);
  // SYNC_OFF=1: no fsync at commit, so the profile's wall samples are CPU (the fsync wait otherwise
  // shows as native `run` time and hides the JavaScript's share). Never for a published figure.
  if (process.env.SYNC_OFF === '1') core.db.pragma('synchronous = OFF');
  const server = http.createServer();
  attachAgentSocket(server, core, { maxConnections: 2000 });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  for (let i = 0; i < 40_000; i += 5000) {
    core.store.write(() => {
      for (let j = i; j < i + 5000; j++) core.tasks.create({ title: `bench task ${j}`, role: 'bench', payload: { n: j } }, { actor: 'bench' });
    });
  }
  const { token } = core.tokens.create({ name: 'b', role: 'bench', actor: 'b' });
  const here = path.dirname(fileURLToPath(import.meta.url));
  const child = fork(path.join(here, 'hub-agents.ts'), [], { execArgv: ['--import', import.meta.resolve('tsx')] });
  await new Promise((r) => child.once('message', r));
  child.send({ cmd: 'run', url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}/agent`, token, agents: n, warmupMs: 500, durationMs: 4000, claimNext: process.env.CLAIM_NEXT === '1' });
  const cpu0 = process.cpuUsage();
  const inspector = new Session();
  const out = process.env.PROFILE;
  if (out) {
    inspector.connect();
    await inspector.post('Profiler.enable');
    await inspector.post('Profiler.start');
  }
  const res = (await new Promise((r) => child.once('message', r))) as { cycles: number; totalCycles: number; seconds: number };
  const cpu = process.cpuUsage(cpu0);
  if (out) {
    const { profile } = await inspector.post('Profiler.stop');
    fs.writeFileSync(out, JSON.stringify(profile));
    inspector.disconnect();
  }
  const us = (cpu.user + cpu.system) / Math.max(1, res.totalCycles);
  console.log(`${Math.round(res.cycles / res.seconds)} tasks/s with ${n} agents, server CPU ${us.toFixed(1)} µs/task (user ${(cpu.user / res.totalCycles).toFixed(1)}), ${res.totalCycles} tasks in the profile's window`, core.committer.stats);
  child.kill();
  core.close();
  server.closeAllConnections();
  server.close();
  fs.rmSync(dir, { recursive: true, force: true });
}

void main();
