/**
 * The spend of a range (spend.ts `between`, what the daily caps and spend windows read): whole
 * quarter hours from `usage_quarters` (migration 027), the edges from the rows — always exactly the
 * SUM of the rows in the range, whatever the range, the role, or rows changed afterwards.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { UsageLedger } from '../logs/usage-store';
import { makeTestCore, type TestCore } from '../tests/test-core';
import { usageSpend } from './spend';
import { prepareUsageSpendStatements } from './store';

let core: TestCore | undefined;
afterEach(() => {
  core?.close();
  core = undefined;
});

const DAY = 86_400_000;
const T0 = Date.parse('2026-11-30T00:00:00.000Z');

/** A small deterministic generator (the same rows every run). */
function rng(seed: number) {
  return () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
}

describe('spend of a range', () => {
  it('equals the SUM of the rows for any range and role, also after rows are changed or deleted', () => {
    core = makeTestCore();
    const ledger = new UsageLedger(core.db);
    const rand = rng(7);
    const roles = ['dev', 'ops', 'qa'];
    core.store.write(() => {
      for (let i = 0; i < 400; i++) {
        ledger.record({
          subject: `task:${1 + Math.floor(rand() * 9)}`,
          attempt: 1,
          role: roles[Math.floor(rand() * 3)]!,
          jobId: null,
          instanceId: 'i',
          inputTokens: Math.floor(rand() * 1000),
          outputTokens: Math.floor(rand() * 100),
          costUsd: rand() / 100,
          at: T0 + Math.floor(rand() * 3 * DAY),
        });
      }
    });
    const spend = usageSpend(core.db);
    const raw = core.db.prepare<[number, number, string | null, string | null], { c: number | null; t: number | null }>(
      'SELECT sum(cost_nusd) AS c, sum(input_tokens + output_tokens) AS t FROM usage WHERE at >= ? AND at < ? AND (? IS NULL OR role = ?)',
    );
    const check = () => {
      for (let k = 0; k < 150; k++) {
        const from = T0 - DAY / 2 + Math.floor(rand() * 4 * DAY);
        // Ranges of all sizes: inside one quarter hour, across one edge, days, a week.
        const to = from + [1, 60_000, 900_000, 5 * 3_600_000, DAY, 7 * DAY][k % 6]! * (0.5 + rand());
        const role = k % 4 === 0 ? undefined : roles[k % 3];
        const want = raw.get(from, to, role ?? null, role ?? null)!;
        expect(spend.between(from, to, role)).toEqual({ nano: want.c ?? 0, tokens: want.t ?? 0 });
        expect(spend.nanoBetween(from, to, role)).toBe(want.c ?? 0);
      }
    };
    check();
    core.db.exec(`UPDATE usage SET at = at + 450000, cost_nusd = cost_nusd * 2 WHERE id % 5 = 0`);
    core.db.exec(`UPDATE usage SET role = 'ops' WHERE id % 7 = 0`);
    core.db.exec(`DELETE FROM usage WHERE id % 3 = 0`);
    check();
    // Quarters are kept only while they hold reports.
    expect(core.db.prepare('SELECT count(*) AS n FROM usage_quarters WHERE reports <= 0').get()).toEqual({ n: 0 });
  });

  it('a day reads its whole quarter hours from the kept sums, not every row in it', () => {
    core = makeTestCore();
    const ledger = new UsageLedger(core.db);
    core.store.write(() => {
      for (let i = 0; i < 200; i++) ledger.record({ subject: 'task:1', attempt: 1, role: 'dev', jobId: null, instanceId: 'i', costUsd: 0.01, at: T0 + i * 400_000 });
    });
    const statements = prepareUsageSpendStatements(core.db);
    const rowsRead = vi.spyOn(statements.sums, 'get');
    const spend = usageSpend(core.db, statements);
    // A day aligned on quarter hours: no row read at all.
    expect(spend.nanoBetween(T0, T0 + DAY, 'dev')).toBe(200 * 10_000_000);
    expect(rowsRead).not.toHaveBeenCalled();
    // A 5-hour window ending mid-quarter: the two edge quarters only.
    expect(spend.between(T0 + 123_456, T0 + 123_456 + 5 * 3_600_000)).toEqual({ nano: 45 * 10_000_000, tokens: 0 });
    expect(rowsRead).toHaveBeenCalledTimes(2);
  });
});
