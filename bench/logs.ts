/**
 * Logs benchmark.  Run:  npm run bench -- logs   (or npx tsx bench/logs.ts)
 *
 * 1. Ingest: 4 SDK agents (one child process), each inside a claimed task, log as fast as the
 *    server acknowledges (`await ctx.log`). Lines/s = lines the server stored / seconds.
 * 2. Claim+report latency of another agent (its own child process, one request at a time),
 *    idle first, then during the flood, in the same run: median and p99 side by side.
 * 3. Storage: bytes per line on disk (segment pages / lines), before and after the word index
 *    has caught up.
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
import { benchDir, printTable, spawnChild, stopChild } from './util';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SECONDS = Number(process.env.LOGS_BENCH_SECONDS ?? 5);

const spawnAgents = async () => (await spawnChild(path.join(HERE, 'logs-agents.ts'))).child;

export async function runLogsBench(): Promise<Record<string, number>> {
  const dir = benchDir('logs');
  const core = createCore({ dataDir: dir, hub: { ratePerSecond: 1e9, rateBurst: 1e9 } });
  core.start();
  const server = http.createServer((_q, s) => s.writeHead(404).end());
  attachAgentSocket(server, core, { maxConnections: 100 });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/agent`;
  core.store.write(() => {
    for (let i = 0; i < 60_000; i++) core.tasks.create({ title: `latency ${i}`, role: 'bench', payload: { n: i } }, { actor: 'bench' });
    for (let i = 0; i < 4; i++) core.tasks.create({ title: `flood ${i}`, role: 'flood' }, { actor: 'bench' });
  });
  const benchToken = core.tokens.create({ name: 'bench', role: 'bench', actor: 'bench' }).token;
  const floodToken = core.tokens.create({ name: 'flood', role: 'flood', actor: 'bench' }).token;
  const latencyChild = await spawnAgents();
  const floodChild = await spawnAgents();
  try {
    // Warm both paths (JIT, the worker thread, page cache), then measure idle.
    latencyChild.send({ cmd: 'latency', url, token: benchToken, durationMs: 1000 });
    await latencyChild.next();
    latencyChild.send({ cmd: 'latency', url, token: benchToken, durationMs: SECONDS * 1000 });
    const idle = await latencyChild.next();

    floodChild.send({ cmd: 'flood', url, token: floodToken, agents: 4, lineChars: 80 });
    await floodChild.next();
    await new Promise((r) => setTimeout(r, 1000)); // the flood reaches its pace
    const lines0 = core.logs.stats.lines;
    const t0 = performance.now();
    const elu0 = performance.eventLoopUtilization();
    const cpu0 = process.cpuUsage();
    latencyChild.send({ cmd: 'latency', url, token: benchToken, durationMs: SECONDS * 1000 });
    const busy = await latencyChild.next();
    const floodS = (performance.now() - t0) / 1000;
    const ingest = (core.logs.stats.lines - lines0) / floodS;
    // How busy the thread serving claims was, and the whole process (it + the log worker) on the CPUs.
    const mainBusy = performance.eventLoopUtilization(elu0).utilization;
    const cpu = process.cpuUsage(cpu0);
    const processCpu = (cpu.user + cpu.system) / 1e6 / floodS;
    floodChild.send({ cmd: 'stop' });
    const flood = await floodChild.next();

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
      `\n(flood: ${flood.lines} lines acknowledged in ${flood.seconds.toFixed(1)} s; ${core.logs.stats.batches} batches; median ratio flood/idle ${(busy.p50Ms / idle.p50Ms).toFixed(2)}; ` +
        `during the flood the server's main thread was busy ${(mainBusy * 100).toFixed(0)} % of the time, the server process used ${(processCpu * 100).toFixed(0)} % of one CPU; load average ${os.loadavg()[0]!.toFixed(1)} on ${os.cpus().length} CPUs)`,
    );
    return {
      ingestLinesPerS: Math.round(ingest),
      idleP50Ms: idle.p50Ms,
      idleP99Ms: idle.p99Ms,
      floodP50Ms: busy.p50Ms,
      floodP99Ms: busy.p99Ms,
      medianRatio: busy.p50Ms / idle.p50Ms,
      mainThreadBusyPct: Math.round(mainBusy * 100),
      serverCpuPct: Math.round(processCpu * 100),
      bytesPerLine: Math.round(bytesPerLine),
      bytesPerLineIndexed: Math.round(bytesPerLineIndexed),
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
