/**
 * What attempts spent, read from the usage ledger (`usage` rows written by the agents' `usage`
 * frames, PROTOCOL §5: subject, attempt, role, cost in nano-dollars, tokens, at). Read only.
 * While the database has no usage ledger (a build without usage reporting) nothing is measured:
 * `measured` is false and every sum is 0, so a cap can never be reached by accident.
 */
import type { Db } from '../db/open';

const NANO = 1e9;

export interface Spend {
  costUsd: number;
  tokens: number;
}

export interface SpendSource {
  readonly measured: boolean;
  /** Cost of everything reported in [from, to), of one role or of all. */
  costBetween(from: number, to: number, role?: string): number;
  /** What one attempt of a run or task (`run:<id>` / `task:<id>`) reported so far. */
  ofAttempt(subject: string, attempt: number): Spend;
}

export function usageSpend(db: Db): SpendSource {
  const probe = db.prepare<[], { n: number }>(`SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name = 'usage'`);
  type Stmt = { get(...params: unknown[]): unknown };
  let q: { all: Stmt; ofRole: Stmt; attempt: Stmt } | null = null;
  // Looked up until found (the ledger's migration may come with a later build of the same database).
  const ledger = () => {
    if (!q && probe.get()!.n > 0) {
      q = {
        all: db.prepare('SELECT sum(cost_nusd) AS c FROM usage WHERE at >= ? AND at < ?'),
        ofRole: db.prepare('SELECT sum(cost_nusd) AS c FROM usage WHERE at >= ? AND at < ? AND role = ?'),
        attempt: db.prepare('SELECT sum(cost_nusd) AS c, sum(input_tokens + output_tokens) AS t FROM usage WHERE subject = ? AND attempt = ?'),
      };
    }
    return q;
  };
  return {
    get measured() {
      return ledger() !== null;
    },
    costBetween(from, to, role) {
      const l = ledger();
      if (!l) return 0;
      const r = (role === undefined ? l.all.get(from, to) : l.ofRole.get(from, to, role)) as { c: number | null } | undefined;
      return (r?.c ?? 0) / NANO;
    },
    ofAttempt(subject, n) {
      const l = ledger();
      if (!l) return { costUsd: 0, tokens: 0 };
      const r = l.attempt.get(subject, n) as { c: number | null; t: number | null } | undefined;
      return { costUsd: (r?.c ?? 0) / NANO, tokens: r?.t ?? 0 };
    },
  };
}
