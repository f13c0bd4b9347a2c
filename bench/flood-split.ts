/**
 * Where another agent's claim waits during a 4-agent log flood (issue 32; bench/REPORT.md "flood3").
 * Run:  npx tsx bench/flood-split.ts
 *
 * The isolation bench's flood case, taken apart: one real headless Gaffer with
 * bench/flood-split-server.mjs preloaded, one probe (bench/logs-agents.ts `latency`, paced as the
 * isolation bench's, its own session) and the flood (4 SDK agents, a usage frame every 10 lines,
 * its own session). Windows alternate idle / flood. Each of the probe's requests (a claim, then a
 * report) is split by the wall clock of both processes into:
 *   out  — from the probe's send to the server's JS reading the frame: the frame waited in the
 *          kernel while the server's event loop ran something else or its thread was not on a CPU;
 *   in   — from that read to the reply's send: the handling and the group commit (its fsync);
 *   back — from the reply's send to the probe's JS reading it.
 * Beside it: the server main thread's CPU and run-queue time (/proc schedstat: ready, not running)
 * per probe cycle, its event-loop delay, the other threads' CPU (the log worker), the probe's own
 * run-queue time.
 *
 * Knobs: SPLIT_SECONDS (per window, default 6), SPLIT_ROUNDS (default 2), SPLIT_PACE_MS (12),
 * SPLIT_STRACE=1 (also the fsyncs of the server's threads during each window: `strace --seccomp-bpf`,
 * count, p50 / p99 and the sum on the main thread — the claims' and usage's commits — and on the others),
 * SPLIT_IDLE_WORKER=1 (a third window per round: the flood with the server's nice-10 threads — the log
 * worker — put in SCHED_IDLE by `chrt` for the window, so any woken thread of any process preempts it),
 * SPLIT_TRACE_GC=1 (V8's --trace-gc in the server; its output saved to /tmp/flood-split-gc.txt),
 * SPLIT_V8_FLAGS (more V8 flags set in the server at start, e.g. --trace-incremental-marking),
 * SPLIT_SERVER_NODE_OPTIONS (Node options for the server only, e.g. --max-semi-space-size=64),
 * SPLIT_DEADLINE_S (default 300: the script stops the server and exits past it).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createCore } from '../src-main/core/create-core';
import { percentile, printTable, seedBacklog, spawnChild, stopChild, benchDir } from './util';
import { fsyncTimesByThread, nicedThreads, setThreadsIdle } from './proc';
import { probeWindow, splitWindow, startSplitServer } from './split-kit';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SECONDS = Number(process.env.SPLIT_SECONDS ?? 6);
const ROUNDS = Number(process.env.SPLIT_ROUNDS ?? 2);
const PACE_MS = Number(process.env.SPLIT_PACE_MS ?? 12);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function seed(dir: string): { probe: string; flood: string } {
  const core = createCore({ dataDir: dir });
  try {
    seedBacklog(core.db, 30_000);
    core.logs.setSettings({ logBytesPerSecondPerToken: 1024 ** 3, logBurstBytesPerToken: 1024 ** 3 }, { actor: 'bench', reason: 'bench: the flood is what is measured' });
    core.budgets.put({ perRoleDailyUsd: { flood: 1e6 }, windows: [{ scope: 'role', role: 'flood', hours: 5, maxTokens: 1e13 }], actor: 'bench' });
    core.store.write(() => {
      // Each flood window takes (and reports) 4 tasks of its own: two flood windows a round with SPLIT_IDLE_WORKER.
      for (let i = 0; i < 4 * ROUNDS * 2; i++) core.tasks.create({ title: `flood ${i}`, role: 'flood', budget: { maxCostUsdPerRun: 1e6 } }, { actor: 'bench' });
    });
    const token = (role: string) => core.tokens.create({ name: `split-${role}`, role, actor: 'bench' }).token;
    return { probe: token('dev'), flood: token('flood') };
  } finally {
    core.close();
  }
}

const dir = benchDir('flood-split');
const tokens = seed(dir);
const { g, dump } = await startSplitServer(dir, 'flood-split', Number(process.env.SPLIT_DEADLINE_S ?? 300), process.env.SPLIT_SERVER_NODE_OPTIONS ?? '');
const probe = (await spawnChild(path.join(HERE, 'logs-agents.ts'), [], { ownSession: true })).child;
const flood = (await spawnChild(path.join(HERE, 'logs-agents.ts'), [], { ownSession: true })).child;
const rows: Array<Record<string, string | number>> = [];
try {
  const measure = (ms: number) => probeWindow(probe, g, tokens.probe, ms, PACE_MS);
  await measure(2000);
  for (let round = 0; round < ROUNDS; round++) {
    const kinds = process.env.SPLIT_IDLE_WORKER === '1' ? (['idle', 'flood', 'flood-sched-idle'] as const) : (['idle', 'flood'] as const);
    for (const key of kinds) {
      const idled = key === 'flood-sched-idle' ? nicedThreads(g.serverPid) : [];
      setThreadsIdle(idled, true);
      if (key !== 'idle') {
        flood.send({ cmd: 'flood', url: g.agentUrl, token: tokens.flood, agents: 4, lineChars: 80, usageEvery: 10 });
        await flood.next();
        await sleep(500);
      }
      const traceFile = path.join(dir, `strace-${key}-${round}.txt`);
      const st = process.env.SPLIT_STRACE === '1' ? spawn('strace', ['-f', '--seccomp-bpf', '-T', '-e', 'trace=fsync,fdatasync', '-p', String(g.serverPid), '-o', traceFile], { stdio: 'ignore' }) : undefined;
      if (st) await sleep(300);
      await dump(); // restart the server's figures
      const p = await measure(SECONDS * 1000);
      const s = await dump();
      let fsyncs = '';
      if (st) {
        st.kill('SIGINT');
        await new Promise((r) => st.once('exit', r));
        fsyncs = [...fsyncTimesByThread(fs.readFileSync(traceFile, 'utf8'))]
          .map(([tid, d]) => `${tid === String(g.serverPid) ? 'main' : tid}: ${d.length} p50 ${percentile(d, 50).toFixed(1)} p99 ${percentile(d, 99).toFixed(1)} sum ${d.reduce((a, b) => a + b, 0).toFixed(0)}`)
          .join('; ');
      }
      let lines = 0;
      if (key !== 'idle') {
        flood.send({ cmd: 'stop' });
        lines = (await flood.next()).lines;
      }
      setThreadsIdle(idled, false);
      const w = splitWindow(p, s, SECONDS * 1000);
      rows.push({
        window: `${key} r${round + 1}`,
        ...w.head,
        'other threads CPU % (nice)': w.others.slice(0, 3).map((t) => `${t.name}${t.nice ? `(${t.nice})` : ''} ${w.pct(t.cpuMs)}`).join(', '),
        ...w.tail,
        'lines/s': key !== 'idle' ? Math.round(lines / SECONDS) : '—',
        ...(fsyncs ? { 'fsyncs (ms)': fsyncs } : {}),
      });
      console.log(JSON.stringify(rows[rows.length - 1]));
      await sleep(1000);
    }
  }
  // The server's memory at the end (VmHWM: its peak resident set), for heap tuning's cost.
  const status = fs.readFileSync(`/proc/${g.serverPid}/status`, 'utf8');
  console.log(`server memory: ${['VmHWM', 'VmRSS'].map((k) => status.match(new RegExp(`^${k}:\\s+(.*)$`, 'm'))?.[0]).join(', ')}`);
  printTable(`Where the probe's requests wait (${ROUNDS} rounds of ${SECONDS} s, paced ${PACE_MS} ms; load ${os.loadavg().map((l) => l.toFixed(1)).join(' ')})`, rows);
} finally {
  await stopChild(flood).catch(() => {});
  await stopChild(probe).catch(() => {});
  if (process.env.SPLIT_TRACE_GC === '1') fs.writeFileSync('/tmp/flood-split-gc.txt', g.output());
  await g.stop();
  fs.rmSync(dir, { recursive: true, force: true });
}
