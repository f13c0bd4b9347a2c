/**
 * fsync durations on the server's main thread (the claims' commits) and on the log worker (its
 * segments), with no flood and during one (bench/REPORT.md, "ingest-isolation").
 * Run:  npx tsx bench/logs-fsync.ts   (needs strace and ptrace rights; an in-process core, a paced probe, 4 s each)
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { startFloodServer } from './flood-core';
import { fsyncTimesByThread } from './proc';
import { benchDir, spawnChild, stopChild } from './util';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const dir = benchDir('fsync');
const { core, server, url, tokens: { probe: probeTok, flood: floodTok } } = await startFloodServer(dir);
const HERE = path.dirname(new URL(import.meta.url).pathname);
const probe = (await spawnChild(path.join(HERE, 'logs-agents.ts'))).child;
const flood = (await spawnChild(path.join(HERE, 'logs-agents.ts'))).child;
const measure = async (label: string) => {
  const out = `/tmp/ii/strace-${label}.txt`;
  const st = spawn('strace', ['-f', '-T', '-e', 'trace=fsync,fdatasync', '-p', String(process.pid), '-o', out], { stdio: 'ignore' });
  await sleep(500);
  probe.send({ cmd: 'latency', url, token: probeTok, durationMs: 4000, role: 'dev', paceMs: 12 });
  const m = await probe.next();
  st.kill('SIGINT');
  await new Promise((r) => st.once('exit', r));
  const byTid = fsyncTimesByThread(fs.readFileSync(out, 'utf8'));
  console.log(`${label}: probe p50 ${m.p50Ms.toFixed(2)} p99 ${m.p99Ms.toFixed(2)} cycles ${m.cycles}`);
  for (const [tid, d] of byTid) {
    console.log(`  tid ${tid}${tid === String(process.pid) ? ' (main)' : ''}: ${d.length} fsyncs, p50 ${d[Math.floor(d.length / 2)]!.toFixed(2)} p90 ${d[Math.floor(d.length * 0.9)]!.toFixed(2)} max ${d.at(-1)!.toFixed(2)} ms, sum ${d.reduce((a, b) => a + b, 0).toFixed(0)} ms`);
  }
};
await measure('idle');
flood.send({ cmd: 'flood', url, token: floodTok, agents: 4, lineChars: 80, usageEvery: 10 });
await flood.next();
await sleep(800);
await measure('flood');
flood.send({ cmd: 'stop' });
await flood.next();
await stopChild(flood); await stopChild(probe);
server.closeAllConnections(); server.close(); core.close(); await core.logs.close();
fs.rmSync(dir, { recursive: true, force: true });
