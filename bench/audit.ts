/**
 * Audit browser benchmark: 1 000 000 hash-chained rows. First page (both orders), index-driven
 * filters, paging, bounded text search, export throughput and memory, full chain verification.
 * Run: npm run bench -- audit   (or: npx tsx bench/audit.ts)
 */
import { fileURLToPath } from 'node:url';
import { createCore } from '../src-main/core/create-core';
import { exportAudit } from '../src-main/core/audit/audit-export';
import { seedDatabase } from '../e2e/seed';
import { benchDir, median, printTable } from './util';

const ROWS = Number(process.env.GAFFER_BENCH_AUDIT_ROWS ?? 1_000_000);
const REPEAT = 7;

function timeMs(fn: () => unknown): number {
  const t0 = performance.now();
  fn();
  return performance.now() - t0;
}

export async function runAuditBench(): Promise<Record<string, number>> {
  const dir = benchDir('audit');
  const seeded = seedDatabase(dir, { auditRows: ROWS, tasks: 50_000 });
  const core = createCore({ dataDir: dir });
  const q = core.auditQuery;
  const s = seeded.samples;
  const cases: Array<[string, () => unknown]> = [
    ['first page, newest first', () => q.query({ order: 'desc', limit: 100 })],
    ['first page, oldest first', () => q.query({ limit: 100 })],
    [`type = ${s.rareType}`, () => q.query({ type: s.rareType, order: 'desc', limit: 100 })],
    ['type = lock.claim (high volume)', () => q.query({ type: 'lock.claim', order: 'desc', limit: 100 })],
    [`actor = ${s.rareActor} (rare)`, () => q.query({ actor: s.rareActor, order: 'desc', limit: 100 })],
    ['actor = an instance (busy)', () => q.query({ actor: s.busyActor, order: 'desc', limit: 100 })],
    [`subject = ${s.subject}`, () => q.query({ subject: s.subject, order: 'desc', limit: 100 })],
    ['last 24 h, newest first', () => q.query({ from: new Date(Date.now() - 86400_000).toISOString(), order: 'desc', limit: 100 })],
    [`text "${s.text}" (bounded scan)`, () => q.query({ text: s.text, order: 'desc', limit: 100 })],
  ];
  const figures: Record<string, number> = { rows: ROWS };
  const rows: Array<Record<string, string | number>> = [];
  for (const [name, fn] of cases) {
    fn(); // warm the statement cache
    const ms = median(Array.from({ length: REPEAT }, () => timeMs(fn)));
    figures[`query:${name}`] = ms;
    rows.push({ query: name, 'median ms': ms });
  }
  // ten pages deep, newest first
  const deep = median(
    Array.from({ length: 3 }, () =>
      timeMs(() => {
        let before: number | undefined;
        for (let i = 0; i < 10; i++) {
          const p = q.query({ order: 'desc', limit: 100, ...(before ? { before } : {}) });
          before = Number(p.next);
        }
      }),
    ),
  );
  rows.push({ query: '10 pages of 100, newest first', 'median ms': deep });
  figures['query:10 pages'] = deep;
  printTable(`Audit browser queries over ${ROWS.toLocaleString('en')} rows (median of ${REPEAT})`, rows);

  // export: the whole log as JSONL, streamed; memory must stay flat
  const heap0 = process.memoryUsage().heapUsed;
  let peak = heap0;
  let bytes = 0;
  let n = 0;
  const t0 = performance.now();
  let chunks = 0;
  for await (const chunk of exportAudit(q, {}, { format: 'jsonl' })) {
    bytes += chunk.length;
    for (let i = chunk.indexOf('\n'); i !== -1; i = chunk.indexOf('\n', i + 1)) n++;
    if (++chunks % 50 === 0) peak = Math.max(peak, process.memoryUsage().heapUsed);
  }
  const exportS = (performance.now() - t0) / 1000;
  figures.exportRowsPerS = n / exportS;
  figures.exportPeakHeapGrowthMb = (peak - heap0) / 2 ** 20;
  const verifyS = timeMs(() => core.audit.verify()) / 1000;
  figures.verifyRowsPerS = ROWS / verifyS;
  printTable('Audit export and verification', [
    { what: 'export JSONL (whole log)', figure: `${Math.round(figures.exportRowsPerS).toLocaleString('en')} rows/s, ${(bytes / 2 ** 20).toFixed(0)} MiB, peak heap +${figures.exportPeakHeapGrowthMb.toFixed(1)} MiB` },
    { what: 'verify hash chain (whole log)', figure: `${Math.round(figures.verifyRowsPerS).toLocaleString('en')} rows/s (${verifyS.toFixed(1)} s)` },
  ]);
  core.close();
  return figures;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await runAuditBench();
