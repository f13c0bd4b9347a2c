/**
 * Verification benchmark (PROTOCOL §13).  Run:  npm run bench -- verify   (or npx tsx bench/verify.ts)
 *
 * Another agent's claim+report latency (its own child process, one request at a time, over the
 * agent socket) with no verification running, and while 4 verifications of 10 s each run: tasks
 * whose agent said done and whose check is a 10-second command. Two kinds of check:
 *  - `sleep 10` (waits: what Gaffer's design costs — the check runs in a child process, off the
 *    claim path, so the claim path should not notice it);
 *  - a 10-second busy loop (4 processes competing with the server for the machine's CPUs, as an
 *    `npm test` would: what the machine costs).
 * Windows alternate (idle, then during) WINDOWS times so background load falls on both alike.
 * The server is this process: a durable core (temp dir, WAL + synchronous=FULL) with the agent socket.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createCore } from '../src-main/core/create-core';
import { attachAgentSocket } from '../src-main/server/agent-socket';
import { benchDir, percentile, printTable, spawnChild, stopChild } from './util';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const WINDOWS = Number(process.env.VERIFY_BENCH_WINDOWS ?? 2);
const CHECK_S = Number(process.env.VERIFY_BENCH_CHECK_S ?? 10);
const CHECKS = 4;

export async function runVerifyBench(): Promise<Record<string, number>> {
  const dir = benchDir('verify');
  const core = createCore({ dataDir: dir, hub: { ratePerSecond: 1e9, rateBurst: 1e9 }, verify: { concurrency: CHECKS } });
  core.start();
  const server = http.createServer((_q, s) => s.writeHead(404).end());
  attachAgentSocket(server, core, { maxConnections: 100 });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/agent`;
  core.store.write(() => {
    for (let i = 0; i < 60_000; i++) core.tasks.create({ title: `latency ${i}`, role: 'bench', payload: { n: i } }, { actor: 'bench' });
  });
  const token = core.tokens.create({ name: 'bench', role: 'bench', actor: 'bench' }).token;
  const { child } = await spawnChild(path.join(HERE, 'logs-agents.ts'));
  const slowInstance = core.instances.register({ role: 'slow', name: 'said-done' }).id;
  const measure = async (ms: number): Promise<number[]> => {
    child.send({ cmd: 'latency', url, token, durationMs: ms });
    return ((await child.next()) as { times: number[] }).times;
  };
  const busyLoop = `const t = Date.now() + ${CHECK_S * 1000}; let x = 0; while (Date.now() < t) x++;`;
  /** Four tasks say done; their checks start at once (concurrency 4) and take CHECK_S each. */
  const startChecks = (kind: 'sleep' | 'busy') => {
    const command = kind === 'sleep' ? ['sleep', String(CHECK_S)] : [process.execPath, '-e', busyLoop];
    for (let i = 0; i < CHECKS; i++) {
      core.tasks.create({ title: `checked ${kind} ${i}`, role: 'slow', verify: { checks: [{ kind: 'command', name: 'tests', command, cwd: dir, timeoutS: CHECK_S * 3 }] } }, { actor: 'bench' });
      const c = core.locks.claim({ instanceId: slowInstance });
      core.locks.report({ instanceId: slowInstance, taskId: c.task!.id, fence: c.lock!.fence, status: 'done' });
    }
  };
  const summary = (times: number[]) => {
    times.sort((a, b) => a - b);
    return { p50: percentile(times, 50), p99: percentile(times, 99), n: times.length };
  };
  try {
    await measure(1000); // warm up
    const windowMs = (CHECK_S - 1) * 1000;
    const figures: Record<string, number> = {};
    const rows: Array<Record<string, string | number>> = [];
    for (const kind of ['sleep', 'busy'] as const) {
      const idle: number[] = [];
      const during: number[] = [];
      for (let w = 0; w < WINDOWS; w++) {
        idle.push(...(await measure(windowMs)));
        startChecks(kind);
        during.push(...(await measure(windowMs)));
        await core.verify.runner.idle();
      }
      const a = summary(idle);
      const b = summary(during);
      rows.push({ run: `no verification (${kind} pass)`, 'claim+report p50 ms': a.p50.toFixed(2), 'p99 ms': a.p99.toFixed(2), cycles: a.n });
      rows.push({ run: `4 × ${CHECK_S} s ${kind === 'sleep' ? '`sleep`' : 'busy-loop'} checks running`, 'claim+report p50 ms': b.p50.toFixed(2), 'p99 ms': b.p99.toFixed(2), cycles: b.n });
      Object.assign(figures, { [`${kind}IdleP99Ms`]: a.p99, [`${kind}DuringP99Ms`]: b.p99, [`${kind}IdleP50Ms`]: a.p50, [`${kind}DuringP50Ms`]: b.p50 });
    }
    const verified = core.db.prepare(`SELECT count(*) AS n FROM tasks WHERE role = 'slow' AND status = 'done'`).get() as { n: number };
    printTable(`Verification: another agent's claim+report while 4 checks of ${CHECK_S} s run (${WINDOWS} alternating windows each)`, rows);
    console.log(`checked tasks verified done: ${verified.n} of ${CHECKS * WINDOWS * 2}`);
    return figures;
  } finally {
    await stopChild(child);
    core.close();
    server.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await runVerifyBench();
