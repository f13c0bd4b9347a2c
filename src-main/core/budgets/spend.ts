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

export function usageSpend(db: Db): SpendSource {
  const { any, all, ofRole, attempt, sums, rows } = prepareUsageSpendStatements(db);
  let seen = false;
  return {
    get measured() {
      // Once true, always true (the ledger only grows).
      return (seen ||= any.get()!.n > 0);
    },
    nanoBetween: (from, to, role) => (role === undefined ? all.get(from, to) : ofRole.get(from, to, role))?.c ?? 0,
    between(from, to, role) {
      const r = sums.get(from, to, role ?? null, role ?? null);
      return { nano: r?.c ?? 0, tokens: r?.t ?? 0 };
    },
    reports: (from, to, role) => rows.all(from, to, role ?? null, role ?? null),
    ofAttempt(subject, n) {
      const r = attempt.get(subject, n);
      return { costUsd: (r?.c ?? 0) / NANO, tokens: r?.t ?? 0 };
    },
  };
}
