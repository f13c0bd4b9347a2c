/**
 * The running total per attempt (usage-ledger.ts invariant 5): a report's total and the cap check
 * behind it cost no sum over the attempt's rows, and stay equal to that sum when a write rolls back,
 * after a restart, across retried attempts and over a database made before the totals were kept.
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MIGRATIONS } from '../db/migrations';
import { openDatabase, type Db } from '../db/open';
import { makeTestCore, onlineInstance, tempDir, type TestCore } from '../tests/test-core';
import { UsageLedger } from './usage-store';

let core: TestCore | undefined;
afterEach(() => {
  core?.close();
  core = undefined;
});

const report = (costUsd: number, outputTokens = 10) => ({ subject: 'task:1', attempt: 1, role: 'dev', jobId: null, instanceId: 'inst', inputTokens: 100, outputTokens, costUsd, at: 1 });
type Sums = { ofAttempt: { get: (...a: unknown[]) => unknown; source: string }; attemptFull: { source: string } };

describe('usage ledger: running total per attempt', () => {
  it('answers each report with the attempt’s total without summing its rows', () => {
    core = makeTestCore();
    const ledger = new UsageLedger(core.db);
    const sums = vi.spyOn((ledger as unknown as { q: Sums }).q.ofAttempt, 'get');
    let last;
    for (let i = 0; i < 50; i++) last = core.store.write(() => ledger.record(report(0.01)));
    // Each report reads its attempt's totals row (migration 027), never a SUM of the rows.
    expect(sums).toHaveBeenCalledTimes(50);
    const q = (ledger as unknown as { q: Sums }).q;
    for (const statement of [q.ofAttempt, q.attemptFull]) expect(statement.source).toMatch(/^SELECT (?:(?!sum\().)* FROM usage_attempts WHERE subject = \? AND attempt = \?$/i);
    sums.mockRestore();
    expect(last!.totals).toEqual(ledger.ofAttempt('task:1', 1));
    expect(last!.totals).toMatchObject({ inputTokens: 5000, outputTokens: 500 });
    expect(last!.totals.costUsd).toBeCloseTo(0.5, 9);
  });

  it('a report whose write rolled back is not in the next total (the total is summed afresh)', () => {
    core = makeTestCore();
    const ledger = new UsageLedger(core.db);
    core.store.write(() => ledger.record(report(0.25)));
    expect(() =>
      core!.store.write(() => {
        ledger.record(report(5));
        throw new Error('the commit failed');
      }),
    ).toThrow('the commit failed');
    const next = core.store.write(() => ledger.record(report(0.25)));
    expect(next.totals).toEqual(ledger.ofAttempt('task:1', 1));
    expect(next.totals.costUsd).toBeCloseTo(0.5, 9);
  });

  it('the cap check uses the total the report brings: no sum of its own, and the cap still fires on it', () => {
    core = makeTestCore();
    const inst = onlineInstance(core);
    const task = core.tasks.create({ title: 'capped', role: 'dev', budget: { maxCostUsdPerRun: 1 } }, { actor: 'test' }).task;
    core.locks.claim({ instanceId: inst });
    // A first report, so that spend counts as measured.
    core.store.write(() => new UsageLedger(core!.db).record({ ...report(0.01), subject: `task:${task.id}` }));
    const spend = (core.budgets as unknown as { spend: { ofAttempt: (...a: unknown[]) => unknown } }).spend;
    const sums = vi.spyOn(spend, 'ofAttempt');
    const at = core.clock.now();
    core.store.write(() => core!.budgets.usageRecorded({ subject: `task:${task.id}`, role: 'dev', costNusd: 0, at, attempt: 1, attemptTotals: { inputTokens: 0, outputTokens: 0, costUsd: 0.5 } }));
    expect(core.tasks.get(task.id).status).toBe('in_progress');
    core.store.write(() => core!.budgets.usageRecorded({ subject: `task:${task.id}`, role: 'dev', costNusd: 0, at, attempt: 1, attemptTotals: { inputTokens: 0, outputTokens: 0, costUsd: 1.5 } }));
    expect(sums).not.toHaveBeenCalled();
    expect(core.tasks.get(task.id)).toMatchObject({ status: 'blocked', note: expect.stringContaining('$1.50 spent') });
  });
});

/** The attempt's totals as a SUM of its rows (the truth, invariant 1) and as kept (invariant 5). */
function sumsAndKept(db: Db, subject: string, attempt: number) {
  const sum = db
    .prepare('SELECT sum(input_tokens) AS i, sum(output_tokens) AS o, sum(cost_nusd) AS c, sum(cache_read_tokens) AS cr, sum(cache_write_tokens) AS cw, count(*) AS n FROM usage WHERE subject = ? AND attempt = ?')
    .get(subject, attempt);
  const kept = db
    .prepare('SELECT input_tokens AS i, output_tokens AS o, cost_nusd AS c, cache_read_tokens AS cr, cache_write_tokens AS cw, reports AS n FROM usage_attempts WHERE subject = ? AND attempt = ?')
    .get(subject, attempt);
  return { sum, kept };
}

describe('usage ledger: the kept totals equal the sum of the rows', () => {
  const frame = (i: number, attempt: number) => ({
    subject: 'task:7',
    attempt,
    role: 'dev',
    jobId: null,
    instanceId: 'inst',
    model: 'm',
    inputTokens: 100 + i,
    outputTokens: i % 7,
    costUsd: (i % 5) * 0.001,
    cacheReadTokens: i % 3,
    cacheWriteTokens: i % 2,
    at: i,
  });

  it('after many reports and a final one, after a restart, and for a retried attempt', () => {
    const dir = tempDir();
    core = makeTestCore({}, dir);
    let ledger = new UsageLedger(core.db);
    core.store.write(() => {
      for (let i = 0; i < 300; i++) ledger.record(frame(i, 1));
    });
    // A final report replaces the estimate (a correction row): still the sum.
    const fin = core.store.write(() => ledger.record({ ...frame(0, 1), inputTokens: 9, outputTokens: 3, costUsd: 0.5, final: true }));
    expect(fin.totals).toEqual({ inputTokens: 9, outputTokens: 3, costUsd: 0.5 });
    let { sum, kept } = sumsAndKept(core.db, 'task:7', 1);
    expect(kept).toEqual(sum);
    expect(kept).toMatchObject({ i: 9, o: 3, c: 500_000_000, n: 301 });

    core.close();
    core = makeTestCore({}, dir); // reopened: the totals are in the file, not in memory
    ledger = new UsageLedger(core.db);
    const after = core.store.write(() => ledger.record(frame(1, 1)));
    ({ sum, kept } = sumsAndKept(core.db, 'task:7', 1));
    expect(kept).toEqual(sum);
    expect(after.totals).toEqual({ inputTokens: 9 + 101, outputTokens: 3 + 1, costUsd: 0.501 });

    // The retry is an attempt of its own: it starts from nothing; the first attempt is unchanged.
    const retry = core.store.write(() => ledger.record(frame(4, 2)));
    expect(retry.totals).toEqual({ inputTokens: 104, outputTokens: 4, costUsd: 0.004 });
    expect(sumsAndKept(core.db, 'task:7', 2).kept).toEqual(sumsAndKept(core.db, 'task:7', 2).sum);
    expect(sumsAndKept(core.db, 'task:7', 1).kept).toEqual(sum);
    expect(ledger.perAttempt('task:7')).toEqual([
      { attempt: 1, ...ledger.ofAttempt('task:7', 1) },
      { attempt: 2, ...retry.totals },
    ]);
    expect(ledger.ofSubject('task:7').inputTokens).toBe(9 + 101 + 104);
  });

  it('rows deleted or changed some other way move the totals with them', () => {
    core = makeTestCore();
    const ledger = new UsageLedger(core.db);
    for (let i = 0; i < 5; i++) core.store.write(() => ledger.record(frame(i, 1)));
    core.db.exec("UPDATE usage SET cost_nusd = cost_nusd + 1000, attempt = 3 WHERE id = (SELECT min(id) FROM usage)");
    core.db.exec('DELETE FROM usage WHERE id = (SELECT max(id) FROM usage)');
    for (const a of [1, 3]) expect(sumsAndKept(core.db, 'task:7', a).kept).toEqual(sumsAndKept(core.db, 'task:7', a).sum);
    core.db.exec('DELETE FROM usage WHERE attempt = 3');
    expect(sumsAndKept(core.db, 'task:7', 3).kept).toBeUndefined();
  });

  it('migration 027 fills the totals from a database made before it, and running it again changes nothing', () => {
    const file = path.join(tempDir(), 'before-027.db');
    const raw = new Database(file);
    raw.pragma('synchronous = OFF'); // a scratch file: no fsync per step
    const at = MIGRATIONS.findIndex((m) => m.name === '027_usage_attempts');
    raw.transaction(() => {
      for (const m of MIGRATIONS.slice(0, at)) {
        raw.exec(m.sql);
        m.run?.(raw);
      }
    })();
    raw.pragma(`user_version = ${at}`);
    raw.exec(`INSERT INTO usage (subject, attempt, role, instance_id, input_tokens, output_tokens, cost_nusd, at, cache_read_tokens) VALUES
      ('task:1', 1, 'dev', 'i', 10, 5, 7000, 1, 2), ('task:1', 1, 'dev', 'i', 20, 1, 3000, 2, 0), ('task:1', 2, 'dev', 'i', 1, 1, 1, 3, 0), ('run:r', 1, 'ops', 'i', 4, 4, 4, 4, 4)`);
    raw.close();
    const db = openDatabase(file);
    try {
      const all = () => db.prepare('SELECT * FROM usage_attempts ORDER BY subject, attempt').all();
      expect(all()).toEqual([
        { subject: 'run:r', attempt: 1, input_tokens: 4, output_tokens: 4, cost_nusd: 4, cache_read_tokens: 4, cache_write_tokens: 0, reports: 1 },
        { subject: 'task:1', attempt: 1, input_tokens: 30, output_tokens: 6, cost_nusd: 10_000, cache_read_tokens: 2, cache_write_tokens: 0, reports: 2 },
        { subject: 'task:1', attempt: 2, input_tokens: 1, output_tokens: 1, cost_nusd: 1, cache_read_tokens: 0, cache_write_tokens: 0, reports: 1 },
      ]);
      const quarters = () => db.prepare('SELECT * FROM usage_quarters ORDER BY quarter, role').all();
      expect(quarters()).toEqual([
        { quarter: 0, role: 'dev', cost_nusd: 10_001, tokens: 38, reports: 3 },
        { quarter: 0, role: 'ops', cost_nusd: 4, tokens: 8, reports: 1 },
      ]);
      const before = [all(), quarters()];
      db.exec(MIGRATIONS[at]!.sql);
      expect([all(), quarters()]).toEqual(before);
    } finally {
      db.close();
    }
  });
});
