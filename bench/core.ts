/**
 * Scheduler-core benchmark (issue: scheduler core). Prints:
 *  - the bare durable ceiling: pairs of single-row transactions at synchronous=FULL, same disk;
 *  - in-process claim+report throughput at queue sizes 1k, 100k and 1M, and claim latency.
 * Run: npm run bench -- core   (or: npx tsx bench/core.ts)
 */
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createCore } from '../src-main/core/create-core';
import { benchDir, median, openBare, percentile, printTable, seedBacklog } from './util';

const PAIRS = Number(process.env.GAFFER_BENCH_PAIRS ?? 500);
const ROUNDS = Number(process.env.GAFFER_BENCH_ROUNDS ?? 12);
const SIZES = (process.env.GAFFER_BENCH_SIZES ?? '1000,100000,1000000').split(',').map(Number);

interface SizeResult {
  walPagesPerClaim: number;
  walPagesPerReport: number;
  rate: number;
  bare: number;
  ratio: number;
  claimP50: number;
  claimP99: number;
}

/**
 * Bare and core rounds alternate (PAIRS pairs each, ROUNDS times) on the same disk, so drift in
 * fsync latency hits both sides of each round's ratio alike; the figures are medians over rounds.
 */
function measureSize(dir: string, queued: number): SizeResult {
  const core = createCore({ dataDir: dir });
  if (process.env.GAFFER_BENCH_CKPT) core.db.pragma('wal_autocheckpoint = ' + process.env.GAFFER_BENCH_CKPT);
  for (const idx of (process.env.GAFFER_BENCH_DROP ?? '').split(',').filter(Boolean)) core.db.exec(`DROP INDEX ${idx}`);
  seedBacklog(core.db, queued + PAIRS * ROUNDS + WAL_PAIRS);
  const bare = openBare(dir);
  const inst = core.instances.register({ role: 'dev', name: 'bench' }).id;
  const lat: number[] = [];
  const rates: number[] = [];
  const bares: number[] = [];
  const ratios: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const bareRate = bare.run(PAIRS);
    const t0 = performance.now();
    for (let i = 0; i < PAIRS; i++) {
      const c0 = performance.now();
      const c = core.locks.claim({ instanceId: inst });
      lat.push(performance.now() - c0);
      core.locks.report({ instanceId: inst, taskId: c.task!.id, fence: c.lock!.fence, status: 'done' });
    }
    const rate = PAIRS / ((performance.now() - t0) / 1000);
    rates.push(rate);
    bares.push(bareRate);
    ratios.push(rate / bareRate);
  }
  bare.close();
  const wal = walPagesPerOp(core, inst);
  core.close();
  lat.sort((a, b) => a - b);
  return { rate: median(rates), bare: median(bares), ratio: median(ratios), claimP50: percentile(lat, 50), claimP99: percentile(lat, 99), ...wal };
}

const WAL_PAIRS = 300;

/** WAL pages written per claim and per report (WAL growth over WAL_PAIRS pairs, checkpoints held off). */
function walPagesPerOp(core: ReturnType<typeof createCore>, inst: string): { walPagesPerClaim: number; walPagesPerReport: number } {
  core.db.pragma('wal_autocheckpoint = 0');
  core.db.pragma('wal_checkpoint(TRUNCATE)');
  const walFile = `${core.dbPath}-wal`;
  const pageSize = core.db.pragma('page_size', { simple: true }) as number;
  const size = () => fs.statSync(walFile).size;
  let claimBytes = 0;
  let reportBytes = 0;
  for (let i = 0; i < WAL_PAIRS; i++) {
    const s0 = size();
    const c = core.locks.claim({ instanceId: inst });
    const s1 = size();
    core.locks.report({ instanceId: inst, taskId: c.task!.id, fence: c.lock!.fence, status: 'done' });
    claimBytes += s1 - s0;
    reportBytes += size() - s1;
  }
  const frame = pageSize + 24; // each WAL frame: a 24-byte header and one page
  return { walPagesPerClaim: claimBytes / WAL_PAIRS / frame, walPagesPerReport: reportBytes / WAL_PAIRS / frame };
}

export async function runCoreBench(): Promise<Record<string, number>> {
  const rows: Array<Record<string, string | number>> = [];
  const figures: Record<string, number> = {};
  const bares: number[] = [];
  for (const size of SIZES) {
    const r = measureSize(benchDir(`q${size}`), size);
    bares.push(r.bare);
    figures[`claimReportPerS@${size}`] = r.rate;
    figures[`vsBare@${size}`] = r.ratio;
    figures[`walPagesPerClaim@${size}`] = r.walPagesPerClaim;
    figures[`walPagesPerReport@${size}`] = r.walPagesPerReport;
    rows.push({
      'queued tasks': size.toLocaleString('en'),
      'claim+report /s': Math.round(r.rate),
      'bare FULL pairs /s': Math.round(r.bare),
      'vs bare (median of rounds)': `${(r.ratio * 100).toFixed(0)} %`,
      'claim p50 ms': r.claimP50,
      'claim p99 ms': r.claimP99,
      'WAL pages claim / report': `${r.walPagesPerClaim.toFixed(1)} / ${r.walPagesPerReport.toFixed(1)}`,
    });
  }
  figures.barePairsPerS = median(bares);
  printTable(`Core claim+report, in-process, synchronous=FULL (${ROUNDS} alternating rounds of ${PAIRS} bare / ${PAIRS} core pairs, medians)`, rows);
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
