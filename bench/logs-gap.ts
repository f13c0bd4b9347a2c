/**
 * Why the logs bench and the isolation bench disagree about the same flood (bench/REPORT.md,
 * "ingest-isolation").  Run:  npx tsx bench/logs-gap.ts
 *
 * One probe (bench/logs-agents.ts `latency`) and one flood (4 SDK agents, a usage frame every 10
 * lines) against, in turn, the two servers the benches use: the logs bench's (a core in THIS
 * process with the agent socket, hub rate lifted) and the isolation bench's (the real headless
 * Gaffer, `npm start -- --headless`). Windows alternate: flood off / on, paced (a cycle at most
 * every 12 ms, as isolation must to stay under the hub's 200 requests/s) and, in-process only,
 * unpaced (as the logs bench). Per window: the probe's claim+report p50 / p99, and where the
 * time went — the probe's and the server's main threads' time on a run queue (Linux schedstat:
 * ready but another process had the CPU), the server's event-loop delay and utilisation, the
 * server's CPU.
 *
 * Knobs: GAP_SECONDS (per window, default 3), GAP_ROUNDS (default 2), GAP_SERVERS (inproc,headless),
 * GAP_NICE (nice value for the flood process, default 0).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { createCore } from '../src-main/core/create-core';
import { seedFlood, startFloodServer } from './flood-core';
import { startHeadless, withPreloads } from './headless-proc';
import { processCpuUs, runQueueMs } from './proc';
import { benchDir, percentile, printTable, spawnChild, stopChild } from './util';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SECONDS = Number(process.env.GAP_SECONDS ?? 3);
const ROUNDS = Number(process.env.GAP_ROUNDS ?? 2);
const SERVERS = (process.env.GAP_SERVERS ?? 'inproc,headless').split(',');
const NICE = Number(process.env.GAP_NICE ?? 0);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Server {
  url: string;
  pid: number;
  tokens: { probe: string; flood: string };
  /** The server's event-loop delay and utilisation since the last call. */
  loop(): Promise<{ p50Ms: number; p99Ms: number; maxMs: number; elu: number }>;
  stop(): Promise<void>;
}

async function inproc(dir: string): Promise<Server> {
  const { core, server, url, tokens } = await startFloodServer(dir);
  const h = monitorEventLoopDelay({ resolution: 1 });
  h.enable();
  let elu = performance.eventLoopUtilization();
  return {
    url,
    pid: process.pid,
    tokens,
    async loop() {
      const u = performance.eventLoopUtilization(elu);
      elu = performance.eventLoopUtilization();
      const r = { p50Ms: h.percentile(50) / 1e6, p99Ms: h.percentile(99) / 1e6, maxMs: h.max / 1e6, elu: u.utilization };
      h.reset();
      return r;
    },
    async stop() {
      h.disable();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      core.close();
      await core.logs.close();
    },
  };
}

async function headless(dir: string): Promise<Server> {
  const core = createCore({ dataDir: dir });
  const tokens = seedFlood(core);
  core.close();
  const file = path.join(dir, 'loop-delay.json');
  const g = await startHeadless(dir, [], { NODE_OPTIONS: withPreloads(new URL('./loop-delay.mjs', import.meta.url)), GAFFER_BENCH_LOOP_DELAY_FILE: file });
  return {
    url: g.agentUrl,
    pid: g.serverPid,
    tokens,
    async loop() {
      fs.rmSync(file, { force: true });
      process.kill(g.serverPid, 'SIGURG');
      for (let i = 0; i < 100 && !fs.existsSync(file); i++) await sleep(20);
      return JSON.parse(fs.readFileSync(file, 'utf8'));
    },
    stop: () => g.stop(),
  };
}

const rows: Array<Record<string, string | number>> = [];
for (const kind of SERVERS) {
  const dir = benchDir(`gap-${kind}`);
  const s = kind === 'headless' ? await headless(dir) : await inproc(dir);
  const probe = (await spawnChild(path.join(HERE, 'logs-agents.ts'))).child;
  const flood = (await spawnChild(path.join(HERE, 'logs-agents.ts'))).child;
  if (NICE) os.setPriority(flood.proc.pid!, NICE);
  const measure = async (paceMs: number, ms: number) => {
    probe.send({ cmd: 'latency', url: s.url, token: s.tokens.probe, durationMs: ms, role: 'dev', paceMs });
    return (await probe.next()) as { times: number[]; runQueueMs: number; loopP99Ms: number };
  };
  try {
    await measure(12, 1500);
    flood.send({ cmd: 'flood', url: s.url, token: s.tokens.flood, agents: 4, lineChars: 80, usageEvery: 10 });
    await flood.next();
    await sleep(1000);
    const acc = new Map<string, { times: number[]; probeRq: number; serverRq: number; loop: Array<{ p50Ms: number; p99Ms: number; maxMs: number; elu: number }>; cpuUs: number; ms: number }>();
    for (let r = 0; r < ROUNDS; r++) {
      for (const on of [false, true]) {
        flood.send({ cmd: on ? 'resume' : 'pause' });
        await flood.next();
        await sleep(400);
        for (const pace of kind === 'headless' ? [12] : [0, 12]) {
          const key = `${kind}|${pace}|${on ? 'flood' : 'idle'}`;
          const a = acc.get(key) ?? { times: [], probeRq: 0, serverRq: 0, loop: [], cpuUs: 0, ms: 0 };
          acc.set(key, a);
          await s.loop();
          const rq0 = runQueueMs(s.pid);
          const cpu0 = processCpuUs(s.pid);
          const t0 = performance.now();
          const m = await measure(pace, SECONDS * 1000);
          a.ms += performance.now() - t0;
          a.cpuUs += processCpuUs(s.pid) - cpu0;
          a.serverRq += runQueueMs(s.pid) - rq0;
          a.loop.push(await s.loop());
          a.times.push(...m.times);
          a.probeRq += m.runQueueMs;
        }
      }
    }
    for (const [key, a] of acc) {
      const [server, pace, load] = key.split('|');
      const t = a.times.sort((x, y) => x - y);
      const n = t.length;
      const mean = (f: (l: (typeof a.loop)[number]) => number) => a.loop.reduce((x, l) => x + f(l), 0) / a.loop.length;
      rows.push({
        server: server === 'headless' ? 'headless Gaffer (isolation)' : 'in-process core (logs bench)',
        pace: pace === '0' ? 'none' : `${pace} ms`,
        load: load!,
        'p50 ms': percentile(t, 50),
        'p99 ms': percentile(t, 99),
        cycles: n,
        'probe run-queue ms/cycle': a.probeRq / n,
        'server run-queue ms/cycle': a.serverRq / n,
        'server loop delay p50 / p99 ms': `${mean((l) => l.p50Ms).toFixed(1)} / ${mean((l) => l.p99Ms).toFixed(1)}`,
        'server loop busy %': Math.round(mean((l) => l.elu) * 100),
        'server CPU %': Math.round(a.cpuUs / 10 / a.ms),
      });
    }
  } finally {
    flood.send({ cmd: 'resume' });
    await flood.next().catch(() => {});
    flood.send({ cmd: 'stop' });
    await flood.next().catch(() => {});
    await stopChild(flood).catch(() => {});
    await stopChild(probe).catch(() => {});
    await s.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
printTable(`Probe gap: one probe, one flood (4 agents, usage every 10 lines), ${ROUNDS} × ${SECONDS} s windows each, alternating${NICE ? `; flood process at nice ${NICE}` : ''}`, rows);
console.log(`\n(load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')} on ${os.cpus().length} CPUs)`);
