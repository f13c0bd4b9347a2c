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
import { startHeadless } from './headless-proc';
import { percentile, printTable, seedBacklog, spawnChild, stopChild, benchDir } from './util';
import { fsyncTimesByThread, nicedThreads, setThreadsIdle } from './proc';

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

interface ServerDump {
  gc: Record<string, { n: number; sumMs: number; maxMs: number }>;
  loop: { p50Ms: number; p99Ms: number; maxMs: number; elu: number };
  threads: Array<{ tid: number; main: boolean; name: string; nice: number; cpuMs: number; runQueueMs: number; slices: number }>;
  requests: Array<[number, number, number]>;
}

const dir = benchDir('flood-split');
const splitFile = path.join(dir, 'split.json');
const tokens = seed(dir);
const before = process.env.NODE_OPTIONS;
process.env.NODE_OPTIONS = `${before ?? ''} ${process.env.SPLIT_SERVER_NODE_OPTIONS ?? ''} --import=${new URL('./flood-split-server.mjs', import.meta.url).href}`.trim();
process.env.GAFFER_BENCH_SPLIT_FILE = splitFile;
const g = await startHeadless(dir);
if (before === undefined) delete process.env.NODE_OPTIONS;
else process.env.NODE_OPTIONS = before;
delete process.env.GAFFER_BENCH_SPLIT_FILE;

// The server runs in a session of its own: a bench killed from outside would leave it running. So
// this script bounds itself (SPLIT_DEADLINE_S, default 300) and stops the server on the way out.
const deadline = setTimeout(() => {
  console.error('flood-split: past its deadline; stopping the server');
  void g.stop().finally(() => process.exit(2));
}, Number(process.env.SPLIT_DEADLINE_S ?? 300) * 1000);
deadline.unref();
const probe = (await spawnChild(path.join(HERE, 'logs-agents.ts'), [], { ownSession: true })).child;
const flood = (await spawnChild(path.join(HERE, 'logs-agents.ts'), [], { ownSession: true })).child;
const dump = async (): Promise<ServerDump> => {
  fs.rmSync(splitFile, { force: true });
  process.kill(g.serverPid, 'SIGURG');
  for (let i = 0; i < 200 && !fs.existsSync(splitFile); i++) await sleep(10);
  await sleep(20);
  return JSON.parse(fs.readFileSync(splitFile, 'utf8')) as ServerDump;
};
const rows: Array<Record<string, string | number>> = [];
try {
  const measure = async (ms: number) => {
    probe.send({ cmd: 'latency', url: g.agentUrl, token: tokens.probe, durationMs: ms, role: 'dev', paceMs: PACE_MS, trace: true });
    return (await probe.next()) as { times: number[]; runQueueMs: number; trace: Array<[number, number, number]> };
  };
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
      const server = new Map(s.requests.map(([id, read, sent]) => [id, { read, sent }]));
      // One cycle = the claim (odd id after hello) and its report; split each request.
      const reqs = p.trace
        .map(([id, send, recv]) => ({ id, send, recv, srv: server.get(id) }))
        .filter((r) => r.srv && r.send > 0)
        .map((r) => ({ id: r.id, out: r.srv!.read - r.send, inn: r.srv!.sent - r.srv!.read, back: r.recv - r.srv!.sent, total: r.recv - r.send }));
      // The two processes' wall clocks (timeOrigin + now) differ by a constant: take it out, assuming
      // the fastest one-way trips are equal both ways.
      const theta = (Math.min(...reqs.map((r) => r.back)) - Math.min(...reqs.map((r) => r.out))) / 2;
      for (const r of reqs) {
        r.out += theta;
        r.back -= theta;
      }
      const sorted = (f: (r: (typeof reqs)[number]) => number) => reqs.map(f).sort((a, b) => a - b);
      const total = sorted((r) => r.total);
      const p99 = percentile(total, 99);
      const slow = reqs.filter((r) => r.total >= p99);
      const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
      const main = s.threads.find((t) => t.main)!;
      const others = s.threads.filter((t) => !t.main).sort((a, b) => b.cpuMs - a.cpuMs);
      const cycles = p.times.length;
      rows.push({
        window: `${key} r${round + 1}`,
        'cycle p50/p99 ms': `${percentile([...p.times].sort((a, b) => a - b), 50).toFixed(1)} / ${percentile([...p.times].sort((a, b) => a - b), 99).toFixed(1)}`,
        'req p50 out/in/back ms': `${percentile(sorted((r) => r.out), 50).toFixed(2)} / ${percentile(sorted((r) => r.inn), 50).toFixed(2)} / ${percentile(sorted((r) => r.back), 50).toFixed(2)}`,
        'req p99 ms': p99.toFixed(2),
        'slowest 1 %: out/in/back ms': `${mean(slow.map((r) => r.out)).toFixed(1)} / ${mean(slow.map((r) => r.inn)).toFixed(1)} / ${mean(slow.map((r) => r.back)).toFixed(1)}`,
        'main: CPU % / runq ms per cycle / runq µs per slice': `${((main.cpuMs / (SECONDS * 1000)) * 100).toFixed(0)} / ${(main.runQueueMs / cycles).toFixed(2)} / ${((main.runQueueMs / Math.max(1, main.slices)) * 1000).toFixed(0)}`,
        'loop delay p99 / max ms, ELU': `${s.loop.p99Ms.toFixed(1)} / ${s.loop.maxMs.toFixed(1)}, ${s.loop.elu.toFixed(2)}`,
        'other threads CPU % (nice)': others.slice(0, 3).map((t) => `${t.name}${t.nice ? `(${t.nice})` : ''} ${((t.cpuMs / (SECONDS * 1000)) * 100).toFixed(0)}`).join(', '),
        'GC kind: n / sum / max ms': Object.entries(s.gc).map(([k, v]) => `${k}: ${v.n} / ${v.sumMs.toFixed(0)} / ${v.maxMs.toFixed(1)}`).join('; '),
        'probe runq ms/cycle': (p.runQueueMs / cycles).toFixed(2),
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
