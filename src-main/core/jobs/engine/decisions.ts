/**
 * The operator's decision on a held run (PROTOCOL §8), and a run taken away for its spend cap.
 *
 * Invariants:
 * 1. Only a run waiting for a decision is decided: one held for review (fatal, needs a human, a
 *    spend cap) with its `held` backfill open, or one whose last re-run ended the same way (its
 *    backfill `failed` with such an error) — the rule of run-settlement.ts, which the run lists
 *    filter by too. Anything else is `invalid_transition`.
 * 2. A run's status never goes back (run-transitions.ts): the approved re-run is the run's
 *    backfill ("run now", backfill-transitions.ts), and the approval is stored on it, so every offer
 *    of that dispatch (an undelivered trigger, a lost instance) carries it again (backfills.ts).
 *    A rejection cancels that backfill; the run stays failed, disposition `rejected`.
 * 3. A run past its spend cap is held (error class `budget`) in one transaction, and the
 *    instance's attempt is taken away (`run_cancelled`, reason `budget`) right after it commits.
 *    That transaction may be the usage report's group commit (core/budgets): the push then leaves
 *    with the runner's next pass, as a run result's pushes do.
 */
import { GafferError } from '../../../common/errors';
import type { RunApproval } from '../../../common/job-schema';
import type { BackfillRow, RunRow } from '../rows';
import { awaitsDecision } from '../run-settlement';
import { closeBackfill, runBackfillNow } from './backfills';
import { ACTOR, type EngineContext } from './context';
import { takenAway } from './offers';
import { backfillAttemptFailed, held } from './outcomes';

/** The backfill a decision acts on (invariant 1): the run's latest, or a typed refusal. */
function waitingBackfill(e: EngineContext, run: RunRow): BackfillRow {
  if (run.status !== 'failed') throw new GafferError('invalid_transition', `run ${run.id} is ${run.status}; only a run held for review is approved or rejected`);
  const open = e.backfillRows.openOfRun(run.id);
  if (open && open.status !== 'held') throw new GafferError('invalid_transition', `run ${run.id} is already being run again (backfill ${open.id} is ${open.status})`);
  const latest = e.backfillRows.ofRun(run.id).at(-1);
  if (latest && awaitsDecision(run, latest)) return latest;
  throw new GafferError('invalid_transition', `run ${run.id} is not held for review (disposition ${run.disposition})`);
}

export function approveHeld(e: EngineContext, runId: string, approval: RunApproval): RunRow {
  const run = e.repo.run(runId);
  const b = waitingBackfill(e, run);
  const job = e.repo.jobRow(run.job_id);
  const next = e.repo.updateRun(run, { held: 0 }, 'operator.approve', approval.by, { note: approval.note, backfillId: b.id, errorClass: run.error_class });
  runBackfillNow(e, e.backfillRows.patch(b.id, { approval: JSON.stringify(approval) }, e.now()), job, approval.note, approval.by);
  return e.repo.run(next.id);
}

export function rejectHeld(e: EngineContext, runId: string, note: string, actor: string): RunRow {
  const run = e.repo.run(runId);
  const b = waitingBackfill(e, run);
  if (b.status === 'held') closeBackfill(e, b, 'cancel', note, actor);
  return e.repo.updateRun(run, { held: 0, disposition: 'rejected' }, 'operator.reject', actor, { note, previous: run.disposition, backfillId: b.id, errorClass: run.error_class });
}

export function holdForBudget(e: EngineContext, runId: string, message: string): boolean {
  let taken: string | null = null;
  e.write(() => {
    const run = e.repo.maybeRun(runId);
    if (!run) return;
    const b = e.backfillRows.dispatchedOfRun(run.id);
    if (b) {
      if (b.instance_id === null) return;
      taken = b.instance_id;
      backfillAttemptFailed(e, b, 'budget', message);
    } else {
      if (run.status !== 'running' || run.dispatched_at === null || run.instance_id === null) return;
      taken = run.instance_id;
      held(e, run, 'budget', message, ACTOR);
    }
    // Audited now, `run_cancelled` to the holder once this commits (offers.ts invariant 5).
    takenAway(e, run, taken, 'budget');
  });
  if (taken !== null) {
    e.arm();
    // Inside the caller's transaction the outbox is still closed: the next pass sends it after the commit.
    if (e.ctx.db.inTransaction) e.soon();
  }
  return taken !== null;
}
