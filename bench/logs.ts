/**
 * Logs benchmark.  Run:  npm run bench -- logs   (or npx tsx bench/logs.ts)
 *
 * 1. Ingest: 4 SDK agents (one child process), each inside a claimed task, log as fast as the
 *    server acknowledges (`await ctx.log`). Lines/s = lines the server stored / seconds.
 * 2. Claim+report latency of another agent (its own child process, one request at a time),
 *    with no flood and during the flood, in the same run: median and p99 side by side. The two
 *    alternate in WINDOWS pairs of windows (the flood paused, drained, then resumed at pace), so
 *    a change in the machine's background load falls on both sides alike instead of on one.
 * 3. Storage: bytes per line on disk (segment files with their WALs / lines), before and after the word index
 *    has caught up.
 *
 * LOGS_BENCH_WORKER_NICE sets the log worker's nice value (default: Gaffer's), for comparisons.
 *
 * Targets (issue 14): ≥ 100 000 lines/s; the other agent's median within 1.5× of idle.
 * The server is this process: a durable core (temp dir, WAL + synchronous=FULL) with the agent
 * socket; the log store runs in its worker thread, as in Gaffer.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createCore } from '../src-main/core/create-core';
import { attachAgentSocket } from '../src-main/server/agent-socket';
import { benchDir, percentile, printTable, spawnChild, stopChild } from './util';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SECONDS = Number(process.env.LOGS_BENCH_SECONDS ?? 5);
const WINDOWS = Number(process.env.LOGS_BENCH_WINDOWS ?? 5);
/** After a resume, the flood gets this long to reach its pace before a window is measured. */
const PACE_MS = 300;
/** Issue 29: a `usage` frame every N lines of each flooding agent (0: none), on tasks with a spend cap. */
const USAGE_EVERY = Number(process.env.LOGS_BENCH_USAGE_EVERY ?? 0);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const spawnAgents = async () => (await spawnChild(path.join(HERE, 'logs-agents.ts'))).child;

export async function runLogsBench(): Promise<Record<string, number>> {
  const dir = benchDir('logs');
  const nice = process.env.LOGS_BENCH_WORKER_NICE;
  const core = createCore({ dataDir: dir, hub: { ratePerSecond: 1e9, rateBurst: 1e9 }, ...(nice ? { logs: { workerNice: Number(nice) } } : {}) });
  core.start();
  // The writer is what is measured: one token's log rate (a protection, core/logs/admission.ts) is
  // lifted, as the hub's request rate is above.
  core.logs.setSettings({ logBytesPerSecondPerToken: 1024 ** 3, logBurstBytesPerToken: 1024 ** 3 }, { actor: 'bench', reason: 'bench' });
  const server = http.createServer((_q, s) => s.writeHead(404).end());
  attachAgentSocket(server, core, { maxConnections: 100 });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/agent`;
  core.store.write(() => {
    for (let i = 0; i < 60_000; i++) core.tasks.create({ title: `latency ${i}`, role: 'bench', payload: { n: i } }, { actor: 'bench' });
    // With usage frames, the flooded tasks carry a cap (checked on every frame) that is never reached.
    for (let i = 0; i < 4; i++) core.tasks.create({ title: `flood ${i}`, role: 'flood', ...(USAGE_EVERY ? { budget: { maxCostUsdPerRun: 1e6 } } : {}) }, { actor: 'bench' });
  });
  const benchToken = core.tokens.create({ name: 'bench', role: 'bench', actor: 'bench' }).token;
  const floodToken = core.tokens.create({ name: 'flood', role: 'flood', actor: 'bench' }).token;
  const latencyChild = await spawnAgents();
  const floodChild = await spawnAgents();
  /** The probe's time on a run queue (ready, another process on the CPU), summed per kind of window. */
  const probeRunQueueMs = { idle: 0, flood: 0 };
  let window: keyof typeof probeRunQueueMs = 'idle';
  const measure = async (): Promise<number[]> => {
    latencyChild.send({ cmd: 'latency', url, token: benchToken, durationMs: (SECONDS * 1000) / WINDOWS });
    const r = (await latencyChild.next()) as { times: number[]; runQueueMs: number };
    probeRunQueueMs[window] += r.runQueueMs;
    return r.times;
  };
  /** Pauses the flood and waits until its outboxes have drained (no line stored for 150 ms). */
  const pauseFlood = async () => {
    floodChild.send({ cmd: 'pause' });
    await floodChild.next();
    for (let last = -1, quiet = 0; quiet < 3; await sleep(50)) {
      quiet = core.logs.stats.lines === last ? quiet + 1 : 0;
      last = core.logs.stats.lines;
    }
  };
  try {
    // Warm both paths (JIT, the worker thread, page cache).
    latencyChild.send({ cmd: 'latency', url, token: benchToken, durationMs: 1000 });
    await latencyChild.next();
    window = 'idle';
    const serverCpu0 = process.cpuUsage();
    if (USAGE_EVERY) core.budgets.put({ perRoleDailyUsd: { flood: 1e6 }, windows: [{ scope: 'role', role: 'flood', hours: 5, maxTokens: 1e13 }], actor: 'bench' });
    floodChild.send({ cmd: 'flood', url, token: floodToken, agents: 4, lineChars: 80, ...(USAGE_EVERY ? { usageEvery: USAGE_EVERY } : {}) });
    await floodChild.next();
    await sleep(1000);
    await pauseFlood();

    const idleTimes: number[] = [];
    const floodTimes: number[] = [];
    let floodLines = 0;
    let floodMs = 0;
    let mainBusyMs = 0;
    let cpuUs = 0;
    let idleBusyMs = 0;
    let idleMs = 0;
    for (let w = 0; w < WINDOWS; w++) {
      const idleT0 = performance.now();
      const idleElu0 = performance.eventLoopUtilization();
      window = 'idle';
      idleTimes.push(...(await measure()));
      window = 'flood';
      idleMs += performance.now() - idleT0;
      idleBusyMs += performance.eventLoopUtilization(idleElu0).utilization * (performance.now() - idleT0);
      floodChild.send({ cmd: 'resume' });
      await floodChild.next();
      await sleep(PACE_MS);
      const lines0 = core.logs.stats.lines;
      const t0 = performance.now();
      const elu0 = performance.eventLoopUtilization();
      const cpu0 = process.cpuUsage();
      floodTimes.push(...(await measure()));
      const ms = performance.now() - t0;
      floodLines += core.logs.stats.lines - lines0;
      floodMs += ms;
      // How busy the thread serving claims was, and the whole process (it + the log worker) on the CPUs.
      mainBusyMs += performance.eventLoopUtilization(elu0).utilization * ms;
      const cpu = process.cpuUsage(cpu0);
      cpuUs += cpu.user + cpu.system;
      await pauseFlood();
    }
    const summary = (times: number[]) => {
      times.sort((a, b) => a - b);
      return { p50Ms: percentile(times, 50), p99Ms: percentile(times, 99), cycles: times.length };
    };
    const idle = summary(idleTimes);
    const busy = summary(floodTimes);
    const ingest = floodLines / (floodMs / 1000);
    const mainBusy = mainBusyMs / floodMs;
    const idleMainBusy = idleBusyMs / idleMs;
    const processCpu = cpuUs / 1000 / floodMs;
    floodChild.send({ cmd: 'stop' });
    const flood = await floodChild.next();
    const serverCpu = process.cpuUsage(serverCpu0);

    const stored = await core.logs.storage();
    const bytesPerLine = stored.bytes / Math.max(1, stored.lines);
    // Each search first indexes up to 50 000 missing lines: enough searches index everything.
    for (let i = 0; i <= Math.ceil(stored.lines / 50_000); i++) await core.logs.search('agent', 1);
    const indexed = await core.logs.storage();
    const bytesPerLineIndexed = indexed.bytes / Math.max(1, indexed.lines);

    printTable('Logs: ingest through the hub (4 SDK agents flooding) and another agent’s claim+report', [
      { run: 'idle (no flood)', 'lines/s': 0, 'claim+report p50 ms': idle.p50Ms, 'p99 ms': idle.p99Ms, cycles: idle.cycles },
      { run: 'during the flood', 'lines/s': Math.round(ingest), 'claim+report p50 ms': busy.p50Ms, 'p99 ms': busy.p99Ms, cycles: busy.cycles },
    ]);
    printTable('Logs: storage', [
      { what: 'bytes per line (80-character lines)', value: Math.round(bytesPerLine) },
      { what: 'bytes per line with the word index', value: Math.round(bytesPerLineIndexed) },
      { what: 'lines stored', value: stored.lines },
      { what: 'segments', value: indexed.segments },
    ]);
    console.log(
      `\nthe probe stood on a run queue (ready while another process had the CPU) ${(probeRunQueueMs.idle / idle.cycles).toFixed(2)} ms per cycle with no flood, ${(probeRunQueueMs.flood / busy.cycles).toFixed(2)} ms during it`,
    );
    const usageRows = (core.db.prepare('SELECT count(*) AS n FROM usage').get() as { n: number }).n;
    if (USAGE_EVERY) console.log(`\nusage: reported every ${USAGE_EVERY} lines per agent: ${flood.usageFrames} reports, sent as ${usageRows} usage frames, priced and checked against a per-task cap, a daily cap and a 5-hour window`);
    console.log(
      `\n(${WINDOWS} windows of ${(SECONDS / WINDOWS).toFixed(1)} s each way, alternating; flood: ${flood.lines} lines acknowledged in ${flood.seconds.toFixed(1)} s with its pauses, the flooding agents used ${flood.cpuS.toFixed(1)} CPU-s and the server ${((serverCpu.user + serverCpu.system) / 1e6).toFixed(1)}; ${core.logs.stats.batches} batches, ` +
        `${core.logs.stats.textFrames} of ${core.logs.stats.frames} frames parsed by the log worker; median ratio flood/idle ${(busy.p50Ms / idle.p50Ms).toFixed(2)}; ` +
        `the server's main thread was busy ${(idleMainBusy * 100).toFixed(0)} % of the time with no flood (the claims' commits, their fsync included), ${(mainBusy * 100).toFixed(0)} % during the flood; the server process used ${(processCpu * 100).toFixed(0)} % of one CPU; load average ${os.loadavg()[0]!.toFixed(1)} on ${os.cpus().length} CPUs)`,
    );
    return {
      ingestLinesPerS: Math.round(ingest),
      idleP50Ms: idle.p50Ms,
      idleP99Ms: idle.p99Ms,
      floodP50Ms: busy.p50Ms,
      floodP99Ms: busy.p99Ms,
      medianRatio: busy.p50Ms / idle.p50Ms,
      mainThreadBusyPct: Math.round(mainBusy * 100),
      mainThreadBusyIdlePct: Math.round(idleMainBusy * 100),
      serverCpuPct: Math.round(processCpu * 100),
      bytesPerLine: Math.round(bytesPerLine),
      bytesPerLineIndexed: Math.round(bytesPerLineIndexed),
      ...(USAGE_EVERY ? { usageReports: flood.usageFrames, usageFrames: usageRows } : {}),
    };
  } finally {
    await stopChild(floodChild);
    await stopChild(latencyChild);
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
    core.close();
    await core.logs.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await runLogsBench();
