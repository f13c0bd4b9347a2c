/**
 * Where another agent's claim waits during an audit export (issue 32; bench/REPORT.md "export3").
 * Run:  npx tsx bench/export-split.ts
 *
 * The isolation bench's export case, taken apart as bench/flood-split.ts takes the flood apart: one
 * real headless Gaffer (bench/flood-split-server.mjs preloaded) over SPLIT_AUDIT_ROWS audit rows,
 * one probe (bench/logs-agents.ts `latency`, paced as the isolation bench's, its own session) and
 * the export's client in this process (a `fetch` of `GET /audit/export` read to nowhere and started
 * again when it ends, as the isolation bench's). Windows alternate per round: idle, the export, and
 * (SPLIT_IDLE_WORKER=1) the export with its worker thread put in SCHED_IDLE by `chrt` from outside,
 * each new export's worker as it starts. Per window: the probe's cycle p50 / p99 and its
 * requests split (out / in / back, flood-split.ts explains them), every server thread's CPU and
 * run-queue time (schedstat), the main thread's GC, the probe's run-queue time, the client's CPU
 * (this process) and the export's MB/s.
 *
 * Knobs: SPLIT_SECONDS (per window, default 6), SPLIT_ROUNDS (default 2), SPLIT_PACE_MS (12),
 * SPLIT_AUDIT_ROWS (default 1 000 000), SPLIT_IDLE_WORKER=1, SPLIT_DEADLINE_S (default 400).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createCore } from '../src-main/core/create-core';
import { seedDatabase } from '../e2e/seed';
import { BENCH_OPERATOR_TOKEN, startHeadless } from './headless-proc';
import { nicedThreads, setThreadsIdle } from './proc';
import { benchDir, percentile, printTable, seedBacklog, spawnChild, stopChild } from './util';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SECONDS = Number(process.env.SPLIT_SECONDS ?? 6);
const ROUNDS = Number(process.env.SPLIT_ROUNDS ?? 2);
const PACE_MS = Number(process.env.SPLIT_PACE_MS ?? 12);
const AUDIT_ROWS = Number(process.env.SPLIT_AUDIT_ROWS ?? 1_000_000);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface ServerDump {
  gc: Record<string, { n: number; sumMs: number; maxMs: number }>;
  loop: { p50Ms: number; p99Ms: number; maxMs: number; elu: number };
  threads: Array<{ tid: number; main: boolean; name: string; nice: number; cpuMs: number; runQueueMs: number; slices: number }>;
  requests: Array<[number, number, number]>;
}

const dir = benchDir('export-split');
const t0 = performance.now();
seedDatabase(dir, { auditRows: AUDIT_ROWS, tasks: 0, expiredToday: 0 });
const probeToken = (() => {
  const core = createCore({ dataDir: dir });
  try {
    seedBacklog(core.db, 30_000);
    return core.tokens.create({ name: 'split-dev', role: 'dev', actor: 'bench' }).token;
  } finally {
    core.close();
  }
})();
console.log(`seeded ${AUDIT_ROWS.toLocaleString('en')} audit rows in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
const splitFile = path.join(dir, 'split.json');
const before = process.env.NODE_OPTIONS;
process.env.NODE_OPTIONS = `${before ?? ''} --import=${new URL('./flood-split-server.mjs', import.meta.url).href}`.trim();
process.env.GAFFER_BENCH_SPLIT_FILE = splitFile;
const g = await startHeadless(dir);
if (before === undefined) delete process.env.NODE_OPTIONS;
else process.env.NODE_OPTIONS = before;
delete process.env.GAFFER_BENCH_SPLIT_FILE;

const deadline = setTimeout(() => {
  console.error('export-split: past its deadline; stopping the server');
  void g.stop().finally(() => process.exit(2));
}, Number(process.env.SPLIT_DEADLINE_S ?? 400) * 1000);
deadline.unref();
const probe = (await spawnChild(path.join(HERE, 'logs-agents.ts'), [], { ownSession: true })).child;
const dump = async (): Promise<ServerDump> => {
  fs.rmSync(splitFile, { force: true });
  process.kill(g.serverPid, 'SIGURG');
  for (let i = 0; i < 200 && !fs.existsSync(splitFile); i++) await sleep(10);
  await sleep(20);
  return JSON.parse(fs.readFileSync(splitFile, 'utf8')) as ServerDump;
};

/** The export's client: exports back to back until stopped; `idle`: each export's worker in SCHED_IDLE. */
function startExport(idle: boolean): { bytes: () => number; stop: () => Promise<{ bytes: number; workers: string[] }> } {
  const baseline = new Set(fs.readdirSync(`/proc/${g.serverPid}/task`));
  let stop = false;
  let bytes = 0;
  const workers: string[] = [];
  const loop = (async () => {
    while (!stop) {
      const ctl = new AbortController();
      const res = await fetch(`${g.url}/api/v1/audit/export?format=jsonl`, { headers: { authorization: `Bearer ${BENCH_OPERATOR_TOKEN}` }, signal: ctl.signal });
      if (idle) {
        const w = nicedThreads(g.serverPid, baseline);
        setThreadsIdle(w, true);
        for (const t of w) baseline.add(t);
        workers.push(...w);
      }
      try {
        for await (const chunk of res.body!) {
          bytes += (chunk as Uint8Array).length;
          if (stop) {
            ctl.abort();
            break;
          }
        }
      } catch (e) {
        if (!stop) throw e;
      }
    }
  })();
  return {
    bytes: () => bytes,
    stop: async () => {
      stop = true;
      await loop.catch(() => {});
      return { bytes, workers };
    },
  };
}

const rows: Array<Record<string, string | number>> = [];
try {
  const measure = async (ms: number) => {
    probe.send({ cmd: 'latency', url: g.agentUrl, token: probeToken, durationMs: ms, role: 'dev', paceMs: PACE_MS, trace: true });
    return (await probe.next()) as { times: number[]; runQueueMs: number; trace: Array<[number, number, number]> };
  };
  await measure(2000);
  for (let round = 0; round < ROUNDS; round++) {
    const kinds = process.env.SPLIT_IDLE_WORKER === '1' ? (['idle', 'export', 'export-sched-idle'] as const) : (['idle', 'export'] as const);
    for (const key of round % 2 ? [...kinds].reverse() : kinds) {
      const exp = key === 'idle' ? undefined : startExport(key === 'export-sched-idle');
      if (exp) await sleep(500);
      await dump(); // restart the server's figures
      const cpu0 = process.cpuUsage();
      const bytes0 = exp?.bytes() ?? 0;
      const w0 = performance.now();
      const p = await measure(SECONDS * 1000);
      const s = await dump();
      const wallS = (performance.now() - w0) / 1000;
      const bytes1 = exp?.bytes() ?? 0;
      const cpu = process.cpuUsage(cpu0);
      const e = exp ? await exp.stop() : undefined;
      const server = new Map(s.requests.map(([id, read, sent]) => [id, { read, sent }]));
      const reqs = p.trace
        .map(([id, send, recv]) => ({ id, send, recv, srv: server.get(id) }))
        .filter((r) => r.srv && r.send > 0)
        .map((r) => ({ id: r.id, out: r.srv!.read - r.send, inn: r.srv!.sent - r.srv!.read, back: r.recv - r.srv!.sent, total: r.recv - r.send }));
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
      const times = [...p.times].sort((a, b) => a - b);
      const pct = (ms: number) => ((ms / (wallS * 1000)) * 100).toFixed(0);
      rows.push({
        window: `${key} r${round + 1}`,
        'cycle p50/p99 ms': `${percentile(times, 50).toFixed(1)} / ${percentile(times, 99).toFixed(1)}`,
        'req p50 out/in/back ms': `${percentile(sorted((r) => r.out), 50).toFixed(2)} / ${percentile(sorted((r) => r.inn), 50).toFixed(2)} / ${percentile(sorted((r) => r.back), 50).toFixed(2)}`,
        'req p99 ms': p99.toFixed(2),
        'slowest 1 %: out/in/back ms': `${mean(slow.map((r) => r.out)).toFixed(1)} / ${mean(slow.map((r) => r.inn)).toFixed(1)} / ${mean(slow.map((r) => r.back)).toFixed(1)}`,
        'main: CPU % / runq ms per cycle / runq µs per slice': `${pct(main.cpuMs)} / ${(main.runQueueMs / cycles).toFixed(2)} / ${((main.runQueueMs / Math.max(1, main.slices)) * 1000).toFixed(0)}`,
        'loop delay p99 / max ms, ELU': `${s.loop.p99Ms.toFixed(1)} / ${s.loop.maxMs.toFixed(1)}, ${s.loop.elu.toFixed(2)}`,
        'other threads CPU % / runq % (nice)': others
          .slice(0, 4)
          .map((t) => `${t.name}${t.nice ? `(${t.nice})` : ''} ${pct(t.cpuMs)}/${pct(t.runQueueMs)}`)
          .join(', '),
        'GC kind: n / sum / max ms': Object.entries(s.gc).map(([k, v]) => `${k}: ${v.n} / ${v.sumMs.toFixed(0)} / ${v.maxMs.toFixed(1)}`).join('; '),
        'probe runq ms/cycle': (p.runQueueMs / cycles).toFixed(2),
        'client CPU %': (((cpu.user + cpu.system) / 1e3 / (wallS * 1000)) * 100).toFixed(0),
        'export MB/s': e ? ((bytes1 - bytes0) / 2 ** 20 / wallS).toFixed(1) : '—',
        load: os.loadavg()[0]!.toFixed(1),
      });
      console.log(JSON.stringify(rows[rows.length - 1]));
      await sleep(1500);
    }
  }
  printTable(`Where the probe's requests wait during an export (${ROUNDS} rounds of ${SECONDS} s, paced ${PACE_MS} ms; load ${os.loadavg().map((l) => l.toFixed(1)).join(' ')})`, rows);
} finally {
  await stopChild(probe).catch(() => {});
  await g.stop();
  fs.rmSync(dir, { recursive: true, force: true });
}
