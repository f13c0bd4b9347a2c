/**
 * The audit browser at scale: 1 000 000 rows (opt-in: GAFFER_PERF=1, ~10 s). Prints how long the
 * first page and typical filters take; asserts results, not timings (machines differ).
 *
 *   GAFFER_PERF=1 npx vitest run src-main/core/audit/audit-query.perf.test.ts
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTestCore, type TestCore } from '../tests/test-core';
import { exportAudit } from './audit-export';

const N = 1_000_000;
const T0 = Date.parse('2026-01-01T00:00:00.000Z');
let core: TestCore;

const SKIP_REASON = process.env.GAFFER_PERF ? '' : ' — skipped: a timing measurement on 1M rows (~1 min), opt in with GAFFER_PERF=1';

describe.skipIf(!process.env.GAFFER_PERF)(`audit query over ${N.toLocaleString('en')} rows${SKIP_REASON}`, () => {
  beforeAll(() => {
    core = makeTestCore();
    // Realistic mix: 70 % high-volume lock events, the rest spread over 20 types; 50 actors;
    // 100 000 subjects; one row per second. Hashes are placeholders (queries never read them).
    core.db.exec(`WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < ${N})
      INSERT INTO audit (id, at, type, actor, subject, detail, trace_id, prev_hash, hash)
      SELECT i, ${T0} + i * 1000,
        CASE WHEN i % 10 < 7 THEN CASE i % 3 WHEN 0 THEN 'lock.claim' WHEN 1 THEN 'lock.renew' ELSE 'lock.release' END
             ELSE 'type' || (i % 20) END,
        'inst_' || (i % 50), 'task:' || (i % 100000), '{"n":' || i || ',"title":"task ' || i || '"}', NULL, '0', 'h'
      FROM c`);
    // What AuditLog's bulk subject indexing would have done for these rows (migration 007).
    core.db.exec(`INSERT INTO audit_subjects (subject, id) SELECT subject, id FROM audit;
      UPDATE audit_subjects_progress SET indexed_to = ${N}`);
  }, 120_000);
  afterAll(() => core?.close());

  const timed = <T>(label: string, fn: () => T): T => {
    const t = performance.now();
    const v = fn();
    console.log(`${label.padEnd(44)} ${(performance.now() - t).toFixed(1).padStart(7)} ms`);
    return v;
  };
  const iso = (s: number) => new Date(T0 + s * 1000).toISOString();

  it('pages and filters through indexes', () => {
    const q = core.auditQuery;
    expect(timed('first page, oldest first', () => q.query({ limit: 100 })).items[0]!.id).toBe(1);
    expect(timed('first page, newest first', () => q.query({ limit: 100, order: 'desc' })).items[0]!.id).toBe(N);
    expect(timed('deep cursor (after 900 000), 1000 rows', () => q.query({ after: 900_000, limit: 1000 })).items).toHaveLength(1000);
    expect(timed('type (indexed), newest first', () => q.query({ type: 'type7', order: 'desc' })).items[0]!.id).toBe(999_987);
    expect(timed('type lock.claim (rowid walk), newest first', () => q.query({ type: 'lock.claim', order: 'desc' })).items).toHaveLength(100);
    expect(timed('three types, newest first', () => q.query({ types: ['type7', 'type8', 'type9'], order: 'desc' })).items).toHaveLength(100);
    expect(timed('actor', () => q.query({ actor: 'inst_7' })).items).toHaveLength(100);
    expect(timed('subject', () => q.query({ subject: 'task:777', order: 'desc' })).items).toHaveLength(10);
    expect(timed('actor + type', () => q.query({ actor: 'inst_7', type: 'type7' })).items).toHaveLength(100);
    const none = timed('actor + type, no match (bounded scan)', () => q.query({ actor: 'inst_7', type: 'type8' }));
    expect(none.partial || none.next === null).toBe(true);
    expect(timed('from/to (one day)', () => q.query({ from: iso(500_000), to: iso(586_400) })).items[0]!.id).toBe(500_000);
    expect(timed('from/to + type, newest first', () => q.query({ from: iso(500_000), to: iso(600_000), type: 'type9', order: 'desc' })).items).toHaveLength(100);
    expect(timed('text, common', () => q.query({ text: 'task 99' })).items).toHaveLength(100);
    expect(timed('text, absent (bounded scan)', () => q.query({ text: 'zzz' })).partial).toBe(true);
    expect(timed('count, all', () => q.count({}))).toEqual({ count: N, exact: true });
    expect(timed('count, one type', () => q.count({ type: 'type7' })).count).toBe(50_000);
  });

  it('exports a filtered range with bounded memory', async () => {
    const before = process.memoryUsage().heapUsed;
    let rows = 0;
    let peak = 0;
    const t = performance.now();
    for await (const chunk of exportAudit(core.auditQuery, { type: 'type7' }, { format: 'csv' })) {
      rows += chunk.split('\r\n').length - 1;
      peak = Math.max(peak, process.memoryUsage().heapUsed - before);
    }
    console.log(`export type7 as CSV: ${rows - 1} rows in ${(performance.now() - t).toFixed(0)} ms, heap growth peak ${(peak / 1e6).toFixed(1)} MB`);
    expect(rows - 1).toBe(50_000);
  }, 60_000);
});
