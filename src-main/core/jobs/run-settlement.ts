/**
 * Where a failed run stands for the operator, written once: in JS for the decision itself
 * (engine/decisions.ts) and in SQL for the run lists that filter on it (repo.ts `listRuns`).
 * A run's status never goes back (run-transitions.ts), so `failed` alone does not say whether
 * anything is still pending for its slot: it may have been run again since (a backfill, an
 * approved re-run), successfully or not.
 *
 *   awaiting a decision   failed, not rejected or backfilled, and its latest backfill is `held`
 *                         (held for review when it failed) or `failed` with an error class that
 *                         holds for review (an approved re-run that ended the same way)
 *   failed for good       failed, never backfilled, no backfill open (queued, held, in flight),
 *                         and not awaiting a decision
 *
 * Invariant: `awaitsDecision` and `AWAITS_DECISION_SQL` are the same rule (run-settlement.test.ts
 * checks them against each other on every kind of failed run).
 */
import type { BackfillRow, RunRow } from './rows';

/** Error classes that hold a run for the operator's decision instead of retrying it. */
export const DECIDABLE_ERRORS: ReadonlySet<string> = new Set(['needs_human', 'fatal', 'budget']);

/** True when `run` waits for the operator's approve / reject; `latest` is its newest backfill, if any. */
export function awaitsDecision(run: Pick<RunRow, 'status' | 'disposition'>, latest: Pick<BackfillRow, 'status' | 'error_class'> | undefined): boolean {
  if (run.status !== 'failed' || run.disposition === 'rejected' || run.disposition === 'backfilled' || !latest) return false;
  return latest.status === 'held' || (latest.status === 'failed' && latest.error_class !== null && DECIDABLE_ERRORS.has(latest.error_class));
}

const DECIDABLE_LIST = [...DECIDABLE_ERRORS].map((c) => `'${c}'`).join(', ');
const LATEST_BACKFILL = '(SELECT max(b2.id) FROM backfills b2 WHERE b2.run_id = runs.id)';

/** `awaitsDecision` over the `runs` table (a condition for its WHERE). */
export const AWAITS_DECISION_SQL = `(runs.status = 'failed' AND runs.disposition NOT IN ('rejected', 'backfilled') AND EXISTS (
  SELECT 1 FROM backfills b WHERE b.id = ${LATEST_BACKFILL}
    AND (b.status = 'held' OR (b.status = 'failed' AND b.error_class IN (${DECIDABLE_LIST})))))`;

/** Failed for good (see the table above), over the `runs` table. */
export const FAILED_FOR_GOOD_SQL = `(runs.status = 'failed' AND runs.disposition <> 'backfilled'
  AND NOT EXISTS (SELECT 1 FROM backfills b WHERE b.run_id = runs.id AND b.status IN ('queued', 'held', 'dispatched'))
  AND NOT ${AWAITS_DECISION_SQL})`;
