/**
 * Backfills dispatched: at each tick of a job (a new slot opening) up to `backfillCapPerTick` queued
 * backfills, oldest first, once their own slot's preconditions pass; and the operator's actions on
 * the queue (queue a finished slot, run now, cancel, mark done).
 *
 * Invariants:
 * 1. A backfill dispatches the original slot: same run id, slot key, idempotency key and completed
 *    steps; the run's attempt counter continues. The run keeps its final status.
 * 2. Nothing is dispatched while the kill switch is on; a paused job selects no backfill at its tick.
 * 3. An asynchronous precondition's continuation acts only if the backfill is still queued.
 */
import { GafferError } from '../../../common/errors';
import { isoTime } from '../../../common/iso-time';
import type { JobSpec } from '../../../common/job-schema';
import { operatorMayAct } from '../backfill-transitions';
import type { CheckOutcome } from '../preconditions';
import { runPhase } from '../run-phase';
import { specOf, type BackfillRow, type JobRow, type RunRow } from '../rows';
import { auditBackfill, enqueueBackfill, transitionBackfill } from './backfill-queue';
import { recordCheck } from './checks';
import { ACTOR, type EngineContext } from './context';
import { offerAttempt } from './offers';
import { countAttempt } from './dispatch';
import { ceilingReached } from './evaluate';
import { executionFacts, preconditionFacts } from './facts';
import { backfilled, nudge } from './outcomes';
import { executionVerdict } from './verdicts';

/** At a tick of `job` (its newest open slot is `tickRun`): up to the cap of queued backfills, oldest first. */
export function selectBackfills(e: EngineContext, job: JobRow, spec: JobSpec, tickRun: RunRow, now: number): void {
  if (spec.backfillCapPerTick <= 0 || job.paused_at !== null || !e.anyBackfill() || e.settings().killSwitch.on) return;
  for (const b of e.backfillRows.queuedOfJob(job.id, spec.backfillCapPerTick)) {
    const row = e.backfillRows.patch(b.id, { tick_run_id: tickRun.id }, now);
    evaluateBackfill(e, row, job, spec, now);
  }
}

/** Preconditions of the backfill's own slot, then layer 3; dispatches it when ready. */
function evaluateBackfill(e: EngineContext, b: BackfillRow, job: JobRow, spec: JobSpec, now: number): void {
  const run = e.repo.run(b.run_id);
  const finish = (results: CheckOutcome[], at: number) => {
    for (const r of results) recordCheck(e, run, 'precondition', r.name, r.verdict, r.reason, { kind: r.kind, ...r.evidence, forBackfill: b.id });
    const blocking = results.filter((r) => r.verdict !== 'ready');
    if (blocking.length > 0) {
      auditBackfill(e, b, 'backfill.not_ready', ACTOR, { reasons: blocking.map((r) => `${r.name}: ${r.reason}`) });
      return;
    }
    const ex = executionVerdict(executionFacts(e, run, job, spec, at, 'backfill'));
    if (ex.blocker) {
      auditBackfill(e, b, 'backfill.not_ready', ACTOR, { reasons: [ex.reason] });
      ceilingReached(e, run, ex);
      return;
    }
    dispatchBackfill(e, e.backfillRows.get(b.id), job, at, ACTOR);
  };
  const results = preconditionFacts(e, job, spec, b.slot, b.slot_at);
  if (!(results instanceof Promise)) {
    finish(results, now);
    return;
  }
  e.checkingBackfills.add(b.id);
  void e.track(
    results.then(
      (res) => {
        e.checkingBackfills.delete(b.id);
        if (e.closed) return;
        e.write(() => {
          const cur = e.backfillRows.get(b.id);
          const j = e.repo.maybeJobRow(b.job_id);
          if (cur.status !== 'queued' || !j) return;
          finish(res, e.now());
          nudge(e, b.job_id);
        });
        e.arm();
      },
      () => e.checkingBackfills.delete(b.id),
    ),
  );
}

/** Marks the queued backfill dispatched (a new attempt of its run) and offers it, in the caller's transaction. */
function dispatchBackfill(e: EngineContext, b: BackfillRow, job: JobRow, now: number, actor: string): BackfillRow {
  const spec = specOf(job);
  const run = e.repo.run(b.run_id);
  const attempt = run.attempt + 1;
  // A new attempt of the run: its offer (on the run's row) starts afresh. Audited as the backfill's dispatch.
  const out = e.repo.movePhase(run, 'backfill', { attempt, offered: '[]' }, actor);
  const deadline = now + spec.runTimeoutS * 1000;
  countAttempt(e, job.id, spec, now);
  const row = transitionBackfill(
    e,
    b,
    'dispatch',
    'dispatched',
    { attempts: b.attempts + 1, dispatched_at: now, deadline, instance_id: null, started_at: null, version: job.version },
    actor,
    { attempt, backfillAttempt: b.attempts + 1, deadline: isoTime(deadline) },
  );
  offerAttempt(e, out, job, row);
  return e.backfillRows.get(row.id);
}

// ---- the operator's actions ------------------------------------------------------------------

/** Puts a finished slot (failed, missed, skipped) in the backfill queue by hand. */
export function requestBackfill(e: EngineContext, job: JobRow, slot: string, reason: string, actor: string): BackfillRow {
  const run = e.repo.runBySlot(job.id, slot);
  if (!run) {
    // A slot inside a range row (the older slots of a long gap) has no row of its own to backfill.
    const at = rangeSlotAt(e, job, slot);
    const range = at === undefined ? undefined : e.repo.rangeCovering(job.id, at);
    if (range) throw new GafferError('not_found', `slot ${slot} of job ${job.name} is one of ${range.range_slots} slots decided as one row (run ${range.id}, from ${range.slot} to ${range.range_last_slot}) and has no run of its own to backfill; run it by hand ("run now" with slot ${slot})`);
    throw new GafferError('not_found', `slot ${slot} of job ${job.name} has no run to backfill`);
  }
  if (runPhase(run) !== 'finished') throw new GafferError('invalid_transition', `run ${run.id} is still ${run.status}`);
  if (run.status === 'success') throw new GafferError('invalid_transition', `run ${run.id} succeeded; there is nothing to backfill`);
  if (e.backfillRows.openOfRun(run.id)) throw new GafferError('conflict', `slot ${slot} is already in the backfill queue`);
  return enqueueBackfill(e, run, 'operator', 'queued', actor, reason);
}

/** The instant a slot key of the job is due, if it is one of its slots. */
function rangeSlotAt(e: EngineContext, job: JobRow, slot: string): number | undefined {
  try {
    return e.repo.planOf(job).find(slot)?.at;
  } catch {
    return undefined; // not a slot key: the plain "no run" answer says enough
  }
}

/** "Run now": dispatches a queued, held or failed backfill at once (never while the kill switch is on). */
export function runBackfillNow(e: EngineContext, b: BackfillRow, job: JobRow, reason: string, actor: string): BackfillRow {
  if (!operatorMayAct(b.status)) throw new GafferError('invalid_transition', `backfill ${b.id} is ${b.status}`);
  if (e.settings().killSwitch.on) throw new GafferError('conflict', 'the kill switch is on; nothing is dispatched');
  const row = transitionBackfill(e, b, 'run_now', 'queued', { note: reason }, actor, { reason });
  return dispatchBackfill(e, row, job, e.now(), actor);
}

/** Cancels a backfill, or marks it done by hand (then its slot counts as backfilled). */
export function closeBackfill(e: EngineContext, b: BackfillRow, action: 'cancel' | 'mark_done', reason: string, actor: string): BackfillRow {
  if (b.status === 'done' || b.status === 'cancelled') throw new GafferError('invalid_transition', `backfill ${b.id} is already ${b.status}`);
  if (!operatorMayAct(b.status)) throw new GafferError('invalid_transition', `backfill ${b.id} is in flight; wait for its result`);
  const row = transitionBackfill(e, b, action, action === 'cancel' ? 'cancelled' : 'done', { note: reason, finished_at: e.now() }, actor, { reason });
  if (action === 'mark_done') {
    const run = e.repo.run(b.run_id);
    backfilled(e, run, actor, { reason, previous: run.disposition, byHand: true });
  }
  return row;
}
