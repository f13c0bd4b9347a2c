/**
 * Scheduler-core benchmark (issue: scheduler core). Prints:
 *  - the bare durable ceiling: pairs of single-row transactions at synchronous=FULL, same disk;
 *  - in-process claim+report throughput at queue sizes 1k, 100k and 1M, and claim latency.
 * Run: npm run bench -- core   (or: npx tsx bench/core.ts)
 */
import Database from 'better-sqlite3';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createCore } from '../src-main/core/create-core';
import { benchDir, median, percentile, printTable } from './util';

const PAIRS = Number(process.env.GAFFER_BENCH_PAIRS ?? 3000);
const RUNS = Number(process.env.GAFFER_BENCH_RUNS ?? 3);
const SIZES = (process.env.GAFFER_BENCH_SIZES ?? '1000,100000,1000000').split(',').map(Number);

/** Two bare single-row transactions per "pair", WAL + FULL: what the disk allows. */
function bareRate(dir: string): number {
  const db = new Database(path.join(dir, 'bare.db'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v INTEGER)');
  const ins = db.prepare('INSERT INTO t (v) VALUES (?)');
  const upd = db.prepare('UPDATE t SET v = v + 1 WHERE id = ?');
  const insTx = db.transaction((v: number) => Number(ins.run(v).lastInsertRowid));
  const updTx = db.transaction((id: number) => upd.run(id));
  const t0 = performance.now();
  for (let i = 0; i < PAIRS; i++) updTx(insTx(i));
  const rate = PAIRS / ((performance.now() - t0) / 1000);
  db.close();
  return rate;
}

function seed(db: Database.Database, n: number): void {
  const now = Date.now();
  const ins = db.prepare(`INSERT INTO tasks (title, role, status, priority, payload, depends_on, unmet_deps, created_at, updated_at)
    VALUES (?, 'dev', 'backlog', ?, '{"n":1}', '[]', 0, ?, ?)`);
  const BATCH = 50_000;
  for (let done = 0; done < n; done += BATCH) {
    db.transaction(() => {
      for (let i = done; i < Math.min(n, done + BATCH); i++) ins.run(`task ${i}`, i % 10, now, now);
    })();
  }
}

function claimReportRate(dir: string, queued: number): { rate: number; claimP50: number; claimP99: number } {
  const core = createCore({ dataDir: dir });
  if (process.env.GAFFER_BENCH_CKPT) core.db.pragma('wal_autocheckpoint = ' + process.env.GAFFER_BENCH_CKPT);
  for (const idx of (process.env.GAFFER_BENCH_DROP ?? '').split(',').filter(Boolean)) core.db.exec(`DROP INDEX ${idx}`);
  seed(core.db, queued + PAIRS);
  const inst = core.instances.register({ role: 'dev', name: 'bench' }).id;
  const lat: number[] = [];
  const t0 = performance.now();
  for (let i = 0; i < PAIRS; i++) {
    const c0 = performance.now();
    const c = core.locks.claim({ instanceId: inst });
    lat.push(performance.now() - c0);
    core.locks.report({ instanceId: inst, taskId: c.task!.id, fence: c.lock!.fence, status: 'done' });
  }
  const rate = PAIRS / ((performance.now() - t0) / 1000);
  core.close();
  lat.sort((a, b) => a - b);
  return { rate, claimP50: percentile(lat, 50), claimP99: percentile(lat, 99) };
}

export async function runCoreBench(): Promise<Record<string, number>> {
  const rows: Array<Record<string, string | number>> = [];
  const figures: Record<string, number> = {};
  const bares: number[] = [];
  for (const size of SIZES) {
    // Bare and core runs alternate, so a noisy disk affects both sides of each ratio alike.
    const runs = Array.from({ length: size >= 1_000_000 ? Math.min(RUNS, 2) : RUNS }, (_, i) => {
      const bare = bareRate(benchDir(`bare-${size}-${i}`));
      const r = claimReportRate(benchDir(`q${size}-${i}`), size);
      bares.push(bare);
      return { ...r, bare, ratio: r.rate / bare };
    });
    const rate = median(runs.map((r) => r.rate));
    figures[`claimReportPerS@${size}`] = rate;
    figures[`vsBare@${size}`] = median(runs.map((r) => r.ratio));
    rows.push({
      'queued tasks': size.toLocaleString('en'),
      'claim+report /s': Math.round(rate),
      'bare FULL pairs /s': Math.round(median(runs.map((r) => r.bare))),
      'vs bare (median of runs)': `${(figures[`vsBare@${size}`]! * 100).toFixed(0)} %`,
      'claim p50 ms': median(runs.map((r) => r.claimP50)),
      'claim p99 ms': median(runs.map((r) => r.claimP99)),
    });
  }
  figures.barePairsPerS = median(bares);
  printTable(`Core claim+report, in-process, synchronous=FULL (${PAIRS} pairs per run, ${RUNS} runs, median)`, rows);
  const first = SIZES[0]!;
  const last = SIZES[SIZES.length - 1]!;
  figures.flatnessRatio = figures[`claimReportPerS@${first}`]! / figures[`claimReportPerS@${last}`]!;
  console.log(
    `\nflatness: throughput at ${first} ÷ at ${last} = ${figures.flatnessRatio.toFixed(2)}× (target ≤ 1.3×)\n` +
      `closeness to disk: ${(figures[`vsBare@${first}`]! * 100).toFixed(0)} % of bare at ${first}, ` +
      `${(figures[`vsBare@${last}`]! * 100).toFixed(0)} % at ${last} (target ≥ 70 %)`,
  );
  return figures;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await runCoreBench();
