/**
 * Usage (tokens and cost) reported by attempts: one row per `usage` frame in the main database
 * (table `usage`), summed per attempt, per task/run, and by role, job and local day.
 *
 * Invariants:
 * 1. Increments only: a report adds, never sets; totals are sums of rows, so nothing is lost
 *    when two reports race.
 * 2. Cost is kept in nano-dollars (integers), so sums are exact whatever the order.
 * 3. Writes go through the caller's transaction (the group commit): the reply's running total is
 *    read in the same transaction as the row it includes.
 * 4. A final report (PROTOCOL §14 `final`: the attempt's totals, e.g. a CLI's own cost) is stored
 *    as the one row that makes the attempt's sums equal its figures (a correction, negative when
 *    the estimate was high), so invariant 1 holds and every sum stays a plain SUM. Sent twice, the
 *    second adds nothing: the estimate is replaced exactly once. A figure the final report lacks
 *    (a cost nobody could price) keeps the sum so far.
 * 5. The running total an insert answers is the attempt's row of `usage_attempts` (migration 027),
 *    kept equal to the SUM of its `usage` rows by triggers in the same transaction as each row:
 *    a report costs one insert and one keyed read, whatever the attempt's history (summing the
 *    rows grew with it: ~3 ms at 20 000 rows). A write rolled back takes its total's change with
 *    it; a reopened database, a retried attempt (a new row of its own) and a row written some
 *    other way all read true.
 */
import type { Db } from '../db/open';
import { ZERO_USAGE, type CostlyRun, type DailyUsage, type UsageGroup, type UsageRow, type UsageTotals } from '../../common/logs';

export interface UsageIncrement {
  subject: string;
  attempt: number;
  role: string;
  jobId: string | null;
  instanceId: string;
  model?: string;
  inputTokens?: number | undefined;
  outputTokens?: number | undefined;
  costUsd?: number | undefined;
  cacheReadTokens?: number | undefined;
  cacheWriteTokens?: number | undefined;
  estimated?: boolean | undefined;
  final?: boolean | undefined;
  at: number;
}

/** What one report added to the ledger (for a final one, the correction): nano-dollars and tokens. */
export interface UsageAdded {
  totals: UsageTotals;
  costNusd: number;
  tokens: number;
}

interface SumRow {
  i: number | null;
  o: number | null;
  c: number | null;
}

const NANO = 1e9;
/** A cost as the ledger stores it: whole nano-dollars (invariant 2). */
export const nanoUsd = (usd: number | undefined): number => Math.round((usd ?? 0) * NANO);
const toTotals = (r: SumRow | undefined): UsageTotals =>
  r ? { inputTokens: r.i ?? 0, outputTokens: r.o ?? 0, costUsd: (r.c ?? 0) / NANO } : { ...ZERO_USAGE };

/** Local calendar day of an instant (the machine's zone, like the console's "today"). */
function localDay(ms: number): string {
  const d = new Date(ms);
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
}

/** Quarter hours: every zone offset in use is a whole number of them, so local days are exact. */
const QUARTER_MS = 15 * 60 * 1000;

export class UsageLedger {
  private readonly q;

  constructor(db: Db) {
    this.q = {
      insert: db.prepare(
        `INSERT INTO usage (subject, attempt, role, job_id, model, instance_id, input_tokens, output_tokens, cost_nusd, at, cache_read_tokens, cache_write_tokens, estimated, final)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      // Invariant 5: the attempt's totals, one keyed row (usage_attempts) instead of a SUM of its rows.
      attemptFull: db.prepare<[string, number], SumRow & { cr: number | null; cw: number | null }>(
        'SELECT input_tokens AS i, output_tokens AS o, cost_nusd AS c, cache_read_tokens AS cr, cache_write_tokens AS cw FROM usage_attempts WHERE subject = ? AND attempt = ?',
      ),
      ofAttempt: db.prepare<[string, number], SumRow>('SELECT input_tokens AS i, output_tokens AS o, cost_nusd AS c FROM usage_attempts WHERE subject = ? AND attempt = ?'),
      ofSubject: db.prepare<[string], SumRow>('SELECT sum(input_tokens) AS i, sum(output_tokens) AS o, sum(cost_nusd) AS c FROM usage_attempts WHERE subject = ?'),
      attemptsOf: db.prepare<[string], SumRow & { attempt: number }>(
        'SELECT attempt, input_tokens AS i, output_tokens AS o, cost_nusd AS c FROM usage_attempts WHERE subject = ? ORDER BY attempt',
      ),
      byRole: db.prepare<[number, number], SumRow & { k: string }>(
        'SELECT role AS k, sum(input_tokens) AS i, sum(output_tokens) AS o, sum(cost_nusd) AS c FROM usage WHERE at >= ? AND at < ? GROUP BY role ORDER BY c DESC, k',
      ),
      byJob: db.prepare<[number, number], SumRow & { k: string }>(
        'SELECT job_id AS k, sum(input_tokens) AS i, sum(output_tokens) AS o, sum(cost_nusd) AS c FROM usage WHERE at >= ? AND at < ? AND job_id IS NOT NULL GROUP BY job_id ORDER BY c DESC, k',
      ),
      byQuarter: db.prepare<[number, number, number], SumRow & { k: number; role: string; job: string | null }>(
        `SELECT at / ? AS k, role, job_id AS job, sum(input_tokens) AS i, sum(output_tokens) AS o, sum(cost_nusd) AS c
           FROM usage WHERE at >= ? AND at < ? GROUP BY k, role, job_id ORDER BY k`,
      ),
      topRuns: db.prepare<[number, number, number], SumRow & { subject: string; job: string }>(
        `SELECT subject, job_id AS job, sum(input_tokens) AS i, sum(output_tokens) AS o, sum(cost_nusd) AS c
           FROM usage WHERE at >= ? AND at < ? AND job_id IS NOT NULL GROUP BY subject ORDER BY c DESC LIMIT ?`,
      ),
    };
  }

  /** Adds one report (inside the caller's transaction); returns the attempt's running total. */
  add(u: UsageIncrement): UsageTotals {
    return this.record(u).totals;
  }

  /** Adds one report, a final one as its correction (invariant 4); says what it added. */
  record(u: UsageIncrement): UsageAdded {
    let row = { i: u.inputTokens ?? 0, o: u.outputTokens ?? 0, c: nanoUsd(u.costUsd), cr: u.cacheReadTokens ?? 0, cw: u.cacheWriteTokens ?? 0 };
    if (u.final) {
      const so = this.q.attemptFull.get(u.subject, u.attempt);
      const d = (to: number | undefined, from: number | null | undefined) => (to === undefined ? 0 : to - (from ?? 0));
      row = {
        i: d(u.inputTokens, so?.i),
        o: d(u.outputTokens, so?.o),
        c: u.costUsd === undefined ? 0 : nanoUsd(u.costUsd) - (so?.c ?? 0),
        cr: d(u.cacheReadTokens, so?.cr),
        cw: d(u.cacheWriteTokens, so?.cw),
      };
    }
    this.q.insert.run(u.subject, u.attempt, u.role, u.jobId, u.model ?? null, u.instanceId, row.i, row.o, row.c, u.at, row.cr, row.cw, u.estimated ? 1 : 0, u.final ? 1 : 0);
    // Invariant 5: the insert's trigger has added the row to the attempt's totals.
    return { totals: toTotals(this.q.ofAttempt.get(u.subject, u.attempt)), costNusd: row.c, tokens: row.i + row.o };
  }

  ofAttempt(subject: string, attempt: number): UsageTotals {
    return toTotals(this.q.ofAttempt.get(subject, attempt));
  }

  /** All attempts of a task or run. */
  ofSubject(subject: string): UsageTotals {
    return toTotals(this.q.ofSubject.get(subject));
  }

  perAttempt(subject: string): Array<UsageTotals & { attempt: number }> {
    return this.q.attemptsOf.all(subject).map((r) => ({ attempt: r.attempt, ...toTotals(r) }));
  }

  /** Sums in [from, to) by role, job or local day; `role`/`job` narrow the rows first. */
  summary(by: UsageGroup, from: number, to: number, filter: { role?: string; job?: string } = {}): UsageRow[] {
    if (by !== 'day' && !filter.role && !filter.job) {
      const rows = by === 'role' ? this.q.byRole.all(from, to) : this.q.byJob.all(from, to);
      return rows.map((r) => ({ key: r.k, ...toTotals(r) }));
    }
    const sums = new Map<string, { i: number; o: number; c: number }>();
    for (const r of this.q.byQuarter.all(QUARTER_MS, from, to)) {
      if (filter.role && r.role !== filter.role) continue;
      if (filter.job && r.job !== filter.job) continue;
      const key = by === 'day' ? localDay(r.k * QUARTER_MS) : by === 'role' ? r.role : r.job;
      if (key === null) continue;
      const s = sums.get(key) ?? { i: 0, o: 0, c: 0 };
      s.i += r.i ?? 0;
      s.o += r.o ?? 0;
      s.c += r.c ?? 0;
      sums.set(key, s);
    }
    const out = [...sums].map(([key, s]) => ({ key, ...toTotals(s) }));
    return by === 'day' ? out.sort((a, b) => a.key.localeCompare(b.key)) : out.sort((a, b) => b.costUsd - a.costUsd || a.key.localeCompare(b.key));
  }

  /** Sums in [from, to) per local day, role and job (job null for tasks), days in order. */
  daily(from: number, to: number): DailyUsage[] {
    const sums = new Map<string, DailyUsage & { nano: number }>();
    for (const r of this.q.byQuarter.all(QUARTER_MS, from, to)) {
      const day = localDay(r.k * QUARTER_MS);
      const key = `${day}\u0000${r.role}\u0000${r.job ?? ''}`;
      const s = sums.get(key) ?? { day, role: r.role, job: r.job, inputTokens: 0, outputTokens: 0, costUsd: 0, nano: 0 };
      s.inputTokens += r.i ?? 0;
      s.outputTokens += r.o ?? 0;
      s.nano += r.c ?? 0;
      sums.set(key, s);
    }
    return [...sums.values()]
      .map(({ nano, ...d }) => ({ ...d, costUsd: nano / NANO }))
      .sort((a, b) => a.day.localeCompare(b.day) || a.role.localeCompare(b.role));
  }

  /** The runs that cost most in [from, to) (their usage inside the range). */
  topRuns(from: number, to: number, limit: number, describe: (runId: string) => { job: string; slot: string } | null): CostlyRun[] {
    const out: CostlyRun[] = [];
    for (const r of this.q.topRuns.all(from, to, limit)) {
      const runId = r.subject.slice('run:'.length);
      const d = describe(runId);
      out.push({ runId, jobId: r.job, job: d?.job ?? r.job, slot: d?.slot ?? '', ...toTotals(r) });
    }
    return out;
  }
}
