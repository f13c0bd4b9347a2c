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
import { BENCH_OPERATOR_TOKEN } from './headless-proc';
import { nicedThreads, setThreadsIdle } from './proc';
import { probeWindow, splitWindow, startSplitServer } from './split-kit';
import { benchDir, printTable, seedBacklog, spawnChild, stopChild } from './util';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SECONDS = Number(process.env.SPLIT_SECONDS ?? 6);
const ROUNDS = Number(process.env.SPLIT_ROUNDS ?? 2);
const PACE_MS = Number(process.env.SPLIT_PACE_MS ?? 12);
const AUDIT_ROWS = Number(process.env.SPLIT_AUDIT_ROWS ?? 1_000_000);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

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
const { g, dump } = await startSplitServer(dir, 'export-split', Number(process.env.SPLIT_DEADLINE_S ?? 400));
const probe = (await spawnChild(path.join(HERE, 'logs-agents.ts'), [], { ownSession: true })).child;

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
  const measure = (ms: number) => probeWindow(probe, g, probeToken, ms, PACE_MS);
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
      const w = splitWindow(p, s, wallS * 1000);
      rows.push({
        window: `${key} r${round + 1}`,
        ...w.head,
        'other threads CPU % / runq % (nice)': w.others
          .slice(0, 4)
          .map((t) => `${t.name}${t.nice ? `(${t.nice})` : ''} ${w.pct(t.cpuMs)}/${w.pct(t.runQueueMs)}`)
          .join(', '),
        ...w.tail,
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
