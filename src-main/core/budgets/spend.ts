/**
 * What attempts spent, read from the usage ledger (`usage` rows written by the agents' `usage`
 * frames, PROTOCOL §5: subject, attempt, role, cost in nano-dollars, tokens, at; core/logs
 * writes them). Read only. `measured` says whether any agent has reported usage yet: until one
 * does, every sum is 0 and the console says spend is not reported.
 */
import type { Db } from '../db/open';
import { prepareUsageSpendStatements } from './store';

export const NANO = 1e9;

export interface Spend {
  costUsd: number;
  tokens: number;
}

export interface SpendSource {
  /** True once any usage was reported. */
  readonly measured: boolean;
  /** Cost of everything reported in [from, to), of one role or of all, in nano-dollars (exact, as stored). */
  nanoBetween(from: number, to: number, role?: string): number;
  /** What one attempt of a run or task (`run:<id>` / `task:<id>`) reported so far. */
  ofAttempt(subject: string, attempt: number): Spend;
  /** Cost (nano-dollars) and tokens reported in [from, to), of one role or of all. */
  between(from: number, to: number, role?: string): { nano: number; tokens: number };
  /** The reports in [from, to) oldest first, of one role or of all (when a used-up window frees). */
  reports(from: number, to: number, role?: string): Array<{ at: number; nano: number; tokens: number }>;
}

/** The quarter hours of `usage_quarters` (migration 027): `at / QUARTER_MS`, rounded down. */
const QUARTER_MS = 900_000;

export function usageSpend(db: Db, statements: ReturnType<typeof prepareUsageSpendStatements> = prepareUsageSpendStatements(db)): SpendSource {
  const { any, attempt, sums, quarters, rows } = statements;
  let seen = false;
  /**
   * Exactly the SUM of the rows in [from, to): the whole quarter hours inside the range from
   * usage_quarters, the rows of the part-quarters at either edge from the ledger itself. A day or a
   * 168-hour window costs some hundreds of keyed rows and at most two quarter hours of reports,
   * not every report in it (read once a second by the caps, budgets.ts invariant 3).
   */
  const between = (from: number, to: number, role?: string): { nano: number; tokens: number } => {
    const r = role ?? null;
    const add = (acc: { nano: number; tokens: number }, s: { c: number | null; t: number | null } | undefined) => {
      acc.nano += s?.c ?? 0;
      acc.tokens += s?.t ?? 0;
      return acc;
    };
    const first = Math.ceil(from / QUARTER_MS);
    const end = Math.floor(to / QUARTER_MS);
    if (first >= end) return add({ nano: 0, tokens: 0 }, to > from ? sums.get(from, to, r, r) : undefined);
    const acc = add({ nano: 0, tokens: 0 }, quarters.get(first, end, r, r));
    if (from < first * QUARTER_MS) add(acc, sums.get(from, first * QUARTER_MS, r, r));
    if (end * QUARTER_MS < to) add(acc, sums.get(end * QUARTER_MS, to, r, r));
    return acc;
  };
  return {
    get measured() {
      // Once true, always true (the ledger only grows).
      return (seen ||= any.get()!.n > 0);
    },
    nanoBetween: (from, to, role) => between(from, to, role).nano,
    between,
    reports: (from, to, role) => rows.all(from, to, role ?? null, role ?? null),
    ofAttempt(subject, n) {
      const r = attempt.get(subject, n);
      return { costUsd: (r?.c ?? 0) / NANO, tokens: r?.t ?? 0 };
    },
  };
}
