/** The evidence of each attempt's verification (migration 023). SQL only, no rules. */
import { isoTime } from '../../common/iso-time';
import type { CheckResult, Verification } from '../../common/verify';
import type { Db } from '../db/open';

export interface VerificationRow {
  id: number;
  subject: string;
  attempt: number;
  before: number;
  attempt_started_at: number;
  started_at: number;
  finished_at: number | null;
  passed: number | null;
  checks: string | null;
}

export function rowToVerification(r: VerificationRow): Verification | undefined {
  if (r.finished_at === null || r.checks === null) return undefined;
  return {
    at: isoTime(r.finished_at),
    passed: r.passed === 1,
    checks: JSON.parse(r.checks) as CheckResult[],
    attempt: r.attempt,
    ...(r.before === 1 ? { before: true } : {}),
  };
}

export type VerificationStore = ReturnType<typeof prepareVerificationStore>;

export function prepareVerificationStore(db: Db) {
  const insert = db.prepare('INSERT INTO verifications (subject, attempt, before, attempt_started_at, started_at) VALUES (?, ?, ?, ?, ?)');
  const open = db.prepare<[string], VerificationRow>('SELECT * FROM verifications WHERE subject = ? AND finished_at IS NULL ORDER BY id DESC LIMIT 1');
  const latest = db.prepare<[string], VerificationRow>('SELECT * FROM verifications WHERE subject = ? AND finished_at IS NOT NULL ORDER BY id DESC LIMIT 1');
  const all = db.prepare<[string], VerificationRow>('SELECT * FROM verifications WHERE subject = ? AND finished_at IS NOT NULL ORDER BY id');
  const beforeOf = db.prepare<[string, number], { id: number }>('SELECT id FROM verifications WHERE subject = ? AND attempt = ? AND before = 1 LIMIT 1');
  const finish = db.prepare('UPDATE verifications SET finished_at = ?, passed = ?, checks = ? WHERE id = ?');
  /** Earlier unfinished rows of a subject are closed when a new one opens (a stop mid-check). */
  const abandon = db.prepare('UPDATE verifications SET finished_at = ?, passed = 0, checks = ? WHERE subject = ? AND finished_at IS NULL');
  return {
    /** Opens a verification of `subject`'s `attempt`; inside the write that moved it to verifying. */
    open(subject: string, attempt: number, before: boolean, attemptStartedAt: number, now: number): number {
      abandon.run(now, '[]', subject);
      return Number(insert.run(subject, attempt, before ? 1 : 0, attemptStartedAt, now).lastInsertRowid);
    },
    current: (subject: string) => open.get(subject),
    /** True when an "already done?" verification of `subject`'s `attempt` was opened (it runs once per attempt). */
    checkedBefore: (subject: string, attempt: number) => beforeOf.get(subject, attempt) !== undefined,
    finish(id: number, passed: boolean, checks: CheckResult[], now: number): void {
      finish.run(now, passed ? 1 : 0, JSON.stringify(checks), id);
    },
    /** The latest finished verification of the subject. */
    latest: (subject: string) => {
      const r = latest.get(subject);
      return r && rowToVerification(r);
    },
    /** Every finished verification, oldest first (one per verified attempt, plus "already done?" checks). */
    history: (subject: string) => all.all(subject).map(rowToVerification).filter((v): v is Verification => v !== undefined),
  };
}

/** The runs (attempts and backfills) with an open verification (recovered at start), prepared once when the run verifier is built. */
export function prepareVerifyingRuns(db: Db) {
  return db.prepare<[], { id: string }>(`SELECT DISTINCT substr(subject, 5) AS id FROM verifications WHERE finished_at IS NULL AND subject LIKE 'run:%'`);
}

/** The tasks waiting for their verification (recovered at start), prepared once when the task verifier is built. */
export function prepareVerifyingTasks(db: Db) {
  return db.prepare<[], { id: number }>(`SELECT id FROM tasks WHERE status = 'verifying' ORDER BY id`);
}
