/**
 * Where a run ends up, and the one writer of its disposition and `waiting_on` after the claim:
 * waiting, dispatched, started, succeeded, retried, failed, held, skipped, missed, backfilled — and
 * where a backfill's attempt ends up. Every function runs inside the caller's transaction.
 *
 * Invariants:
 * 1. Phase changes are edges of run-phase-transitions.ts, applied by `repo.movePhase` (a status
 *    change with them is an edge of run-transitions.ts); retries are counted (`retry_count`,
 *    `next_attempt_at`), never a status flip.
 * 2. A lost attempt (instance gone, deadline passed, trigger undeliverable) is a retryable failure.
 *    A retry that would be due after the window closes fails the run now (a run by hand keeps its
 *    retries). fatal / needs_human fail the run and hold it for review, never retried automatically.
 * 3. After a run reaches a final status (or frees its slot), the job's runs waiting on ordering or
 *    overlap are looked at again at once (`nudge`).
 */
import { VERIFY_ACTOR } from '../../../common/attention';
import { isoTime } from '../../../common/iso-time';
import { LOOP_BREAKER_PREFIX, retryDelayS, type JobSpec, type RunDisposition, type RunErrorClass } from '../../../common/job-schema';
import type { MissedOutcome } from '../plan';
import { runPhase, type WaitingOn } from '../run-phase';
import { specOf, toRun, type BackfillRow, type PhaseChange, type RunChange, type RunPatch, type RunRow } from '../rows';
import { auditBackfill, enqueueBackfill, transitionBackfill } from './backfill-queue';
import { ACTOR, type EngineContext } from './context';

/** The offer fields of a run whose attempt is no longer offered (acknowledged, or over). */
export const NO_OFFER = { offer_to: null, offered_at: null, ack_due_at: null } as const;

export type AlertKind = 'missed' | 'not_ready' | 'failed' | 'held' | 'needs_human' | 'attempt_ceiling';

export function alert(e: EngineContext, run: RunRow, kind: AlertKind, message: string): void {
  e.ctx.audit.append({ type: 'run.alert', actor: ACTOR, subject: `run:${run.id}`, detail: { jobId: run.job_id, job: run.job_name, slot: run.slot, kind, message }, traceId: run.trace_id });
  e.ctx.store.emit({ type: 'run.alert', run: toRun(run), kind, message });
}

/** A run needs a human (money, account, security): audited and announced at once. */
export function needsHuman(e: EngineContext, run: RunRow, actor: string, message: string, detail: Record<string, unknown>): void {
  e.ctx.audit.append({ type: 'run.needs_human', actor, subject: `run:${run.id}`, detail, traceId: run.trace_id });
  e.ctx.store.emit({ type: 'run.needs_human', run: toRun(run), message });
}

/** Runs of the job waiting for their first attempt are looked at again now (ordering, overlap). */
export function nudge(e: EngineContext, jobId: string, except?: string): void {
  const now = e.now();
  let any = false;
  for (const r of e.repo.openRunsOfJob(jobId)) {
    if (r.id === except || r.next_attempt_at === null || r.next_attempt_at <= now || runPhase(r) !== 'checking') continue;
    e.repo.patchRun(r.id, { next_attempt_at: now });
    any = true;
  }
  if (any) e.soon();
}

/** The run waits: for `waitingOn`, until `nextAttemptAt` at the latest. */
export function wait(e: EngineContext, run: RunRow, nextAttemptAt: number, waitingOn: WaitingOn, disposition?: RunChange['disposition']): RunRow {
  return e.repo.setWaiting(run.id, nextAttemptAt, waitingOn, disposition);
}

/**
 * The attempt is out (`fields`: attempt, deadline, covers, …, and its offer when one was placed with
 * it — a new attempt starts with no offer otherwise), audited as `run.dispatch`.
 */
export function dispatched(e: EngineContext, run: RunRow, fields: PhaseChange, actor: string, detail: Record<string, unknown>): RunRow {
  return e.repo.movePhase(run, 'dispatch', { offered: '[]', ...NO_OFFER, ...fields, disposition: 'dispatched', waiting_on: null }, actor, detail);
}

/** The attempt out is offered to an instance (offers.ts): the offer's fields, and it waits for nothing else. */
export function offerPlaced(e: EngineContext, run: RunRow, fields: RunPatch): RunRow {
  return e.repo.setOffer(run.id, fields);
}

/**
 * The instance the attempt was offered to acknowledged it: it holds the attempt until its result or
 * deadline. One transaction and one audit row (`run.start` / `run.attempt_start`) are the ack.
 */
export function started(e: EngineContext, run: RunRow, instanceId: string): RunRow {
  const offers = (JSON.parse(run.offered) as string[]).length;
  const fields = { instance_id: instanceId, ...NO_OFFER, next_attempt_at: run.deadline, disposition: 'running' as const };
  const detail = { instanceId, attempt: run.attempt, offers };
  const next =
    run.status === 'pending'
      ? e.repo.movePhase(run, 'start', { ...fields, started_at: run.started_at ?? e.now() }, instanceId, detail)
      : e.repo.movePhase(run, 'attempt_start', fields, instanceId, detail);
  // Heard only by the console's stream: without one, neither the event nor its job's role (a read) is made.
  if (e.ctx.store.wants('trigger.acknowledged')) e.ctx.store.emit({ type: 'trigger.acknowledged', runId: run.id, role: e.repo.roleOfJob(run.job_id), instanceId, offers });
  return next;
}

/** `already_done`: the "already done?" checks passed before a later attempt was handed out (PROTOCOL §13). */
export function succeeded(e: EngineContext, run: RunRow, instanceId: string, output: string | null, disposition: 'ran' | 'already_done' = 'ran'): RunRow {
  e.breaker?.runSucceeded(run.id);
  const next = e.repo.movePhase(
    run,
    'succeed',
    { disposition, finished_at: e.now(), output, next_attempt_at: null, dispatched_at: null, deadline: null, ...NO_OFFER, last_error: run.last_error, waiting_on: null },
    instanceId,
    { attempt: run.attempt, retryCount: run.retry_count, ...(disposition === 'already_done' ? { disposition } : {}) },
  );
  coversDone(e, next, instanceId);
  nudge(e, run.job_id, run.id);
  return next;
}

/**
 * The agent reported success and the job declares checks (PROTOCOL §13): the attempt is verifying
 * (no holder; the output kept) until core/verify settles it with `verified`.
 */
export function verifying(e: EngineContext, run: RunRow, instanceId: string, output: string | null): RunRow {
  const next = e.repo.movePhase(run, 'verify', { disposition: 'verifying', instance_id: null, output, deadline: null, ...NO_OFFER, waiting_on: null }, instanceId, { attempt: run.attempt });
  e.verify!.open(`run:${run.id}`, run.attempt, false, run.dispatched_at ?? e.now());
  return next;
}

/**
 * "Is it already done?" (PROTOCOL §13, `before: true`): a retry is due of a run whose earlier attempt
 * may have done the work and only failed to say so (it failed, was lost, or its instance died).
 * The attempt is verifying, nothing is dispatched, until core/verify settles it with `verified`.
 * The checks judge the run's work since it first started.
 */
export function precheck(e: EngineContext, run: RunRow, now: number): RunRow {
  const next = e.repo.movePhase(run, 'verify', { disposition: 'verifying', instance_id: null, next_attempt_at: null, deadline: null, ...NO_OFFER, waiting_on: null }, ACTOR, { attempt: run.attempt, before: true });
  e.verify!.open(`run:${run.id}`, run.attempt, true, run.started_at ?? run.triggered_at ?? now);
  return next;
}

/**
 * The checks of a verifying attempt ended: success, or the declaration's `onFail` with `error`.
 * `before` (the "already done?" checks): success is `already_done`; a failure lets the retry go at
 * once, not counted as one more failed attempt (the attempt's own failure was counted).
 */
export function verified(e: EngineContext, run: RunRow, passed: boolean, onFail: 'retry' | 'needs_human' | 'fail', error: string, before = false): RunRow {
  if (before) {
    if (passed) return succeeded(e, run, VERIFY_ACTOR, run.output, 'already_done');
    return e.repo.movePhase(run, 'retry', { next_attempt_at: e.now(), disposition: 'retry_scheduled', waiting_on: null }, VERIFY_ACTOR, { before: true, attempt: run.attempt, error });
  }
  if (passed) return succeeded(e, run, VERIFY_ACTOR, run.output);
  if (onFail === 'retry') return attemptFailed(e, run, 'retryable', error, VERIFY_ACTOR);
  if (onFail === 'needs_human') return held(e, run, 'needs_human', error, VERIFY_ACTOR);
  const job = e.repo.maybeJobRow(run.job_id);
  return finalFail(e, run, job ? specOf(job) : undefined, 'fatal', error, VERIFY_ACTOR);
}

/** The slot ran after all (a backfill succeeded, or the operator marked it done). */
export function backfilled(e: EngineContext, run: RunRow, actor: string, detail: Record<string, unknown>, output?: string): RunRow {
  return e.repo.updateRun(run, { disposition: 'backfilled', ...(output !== undefined ? { output } : {}) }, 'run.backfilled', actor, detail);
}

/** Marks folded slots covered by `run` as backfilled (after `run` succeeded). */
export function coversDone(e: EngineContext, run: RunRow, actor: string): void {
  // Only a dispatch marks a folded run covered, and it lists that slot in the run's `covers` in the
  // same write: a run that covers nothing (almost every run) has nothing to look up.
  if (run.covers === '[]') return;
  for (const f of e.repo.coveredBy(run.id)) {
    if (f.disposition === 'backfilled') continue;
    e.repo.updateRun(f, { disposition: 'backfilled' }, 'run.backfilled', actor, { by: run.id, bySlot: run.slot, previous: f.disposition });
  }
}

/** Skipped before any attempt: calendar, DST, overlap, disabled. */
export function skipped(e: EngineContext, run: RunRow, disposition: RunDisposition, reason: string, actor: string, detail: Record<string, unknown> = { reason }): RunRow {
  return e.repo.movePhase(run, 'skip', { disposition, last_error: reason, finished_at: e.now(), next_attempt_at: null, waiting_on: null }, actor, detail);
}

/** The missed-window policy's decision for a slot that can no longer start. */
export function missed(e: EngineContext, run: RunRow, spec: JobSpec, o: MissedOutcome): RunRow {
  const fields = { disposition: o.disposition, last_error: o.reason, finished_at: e.now(), next_attempt_at: null, waiting_on: null };
  const detail = { reason: o.reason, policy: spec.missedWindow };
  const next = e.repo.movePhase(run, o.status === 'failed' ? 'fail' : 'skip', fields, ACTOR, detail);
  if (o.backfill) enqueueBackfill(e, next, o.disposition === 'missed' ? 'missed' : 'not_ready', 'queued', ACTOR, o.reason);
  if (o.alert) alert(e, next, o.disposition === 'skipped_not_ready' ? 'not_ready' : 'missed', o.reason);
  nudge(e, run.job_id, run.id);
  return next;
}

/** A retryable failure of the current attempt (including lost and undeliverable ones). */
export function attemptFailed(e: EngineContext, run: RunRow, errorClass: RunErrorClass, message: string, actor: string): RunRow {
  const job = e.repo.maybeJobRow(run.job_id);
  const spec = job ? specOf(job) : undefined;
  const now = e.now();
  if (spec && run.retry_count < run.max_retry) {
    // PROTOCOL §14: the same error again and again holds the run instead of paying for it once more.
    const streak = errorClass === 'retryable' && job ? e.breaker?.runFailed({ id: run.id, jobId: run.job_id, job: run.job_name, slot: run.slot, role: job.role, attempt: run.attempt }, message, spec.loopBreaker?.sameErrorTimes) : 0;
    if (streak) return held(e, run, 'fatal', loopBreakerMessage(streak, message), actor);
    const n = run.retry_count + 1;
    const delayS = retryDelayS(spec.retry, n);
    const at = now + delayS * 1000;
    if (run.trigger === 'manual' || run.window_closes_at === null || at < run.window_closes_at) {
      const next = e.repo.movePhase(
        run,
        'retry',
        { retry_count: n, next_attempt_at: at, dispatched_at: null, deadline: null, instance_id: null, ...NO_OFFER, last_error: message, error_class: errorClass, disposition: 'retry_scheduled', waiting_on: null },
        actor,
        { retry: n, maxRetry: run.max_retry, errorClass, error: message, at: isoTime(at), delayS, attempt: run.attempt },
      );
      nudge(e, run.job_id, run.id);
      return next;
    }
    return finalFail(e, run, spec, errorClass, `${message}; retry ${n} would be due at ${isoTime(at)}, after the window closes`, actor);
  }
  return finalFail(e, run, spec, errorClass, `${message}; ${run.max_retry} retr${run.max_retry === 1 ? 'y' : 'ies'} used`, actor);
}

/** How a run (or backfill) held by the loop breaker says why; the inbox knows it by its first words. */
function loopBreakerMessage(times: number, error: string): string {
  return `${LOOP_BREAKER_PREFIX} the same error came ${times} times in a row, retries stopped: ${error}`.slice(0, 4000);
}

/** No more retries: failed, and the missed-window policy says what follows. */
export function finalFail(e: EngineContext, run: RunRow, spec: JobSpec | undefined, errorClass: RunErrorClass, message: string, actor: string): RunRow {
  const policy = spec?.missedWindow ?? 'skip_and_alert';
  const disposition = policy === 'fold_into_next' ? 'folded' : 'failed';
  const next = e.repo.movePhase(
    run,
    'fail',
    { disposition, last_error: message, error_class: errorClass, finished_at: e.now(), next_attempt_at: null, dispatched_at: null, deadline: null, ...NO_OFFER, waiting_on: null },
    actor,
    { errorClass, error: message, policy },
  );
  if (policy === 'run_now') enqueueBackfill(e, next, 'failed', 'queued', actor, message);
  alert(e, next, 'failed', message);
  nudge(e, run.job_id, run.id);
  return next;
}

/**
 * The operator ended the run (cancelled it, or disabled its job while its attempt was out): failed,
 * never retried by itself, no alert (it is their own act). Error class `lost`: a result for the
 * attempt is refused (`not_holder`), never recorded.
 */
export function cancelled(e: EngineContext, run: RunRow, message: string, actor: string): RunRow {
  const next = e.repo.movePhase(
    run,
    'fail',
    { disposition: 'failed', last_error: message, error_class: 'lost', finished_at: e.now(), next_attempt_at: null, dispatched_at: null, deadline: null, ...NO_OFFER, waiting_on: null },
    actor,
    { errorClass: 'lost', error: message, cancelled: true },
  );
  nudge(e, run.job_id, run.id);
  return next;
}

/** fatal / needs_human / a spend cap passed: failed and held for review; never retried automatically. */
export function held(e: EngineContext, run: RunRow, errorClass: 'fatal' | 'needs_human' | 'budget', message: string, actor: string): RunRow {
  const next = e.repo.movePhase(
    run,
    'fail',
    { disposition: 'held', held: 1, last_error: message, error_class: errorClass, finished_at: e.now(), next_attempt_at: null, dispatched_at: null, deadline: null, ...NO_OFFER, waiting_on: null },
    actor,
    { errorClass, error: message },
  );
  enqueueBackfill(e, next, errorClass, 'held', ACTOR, message);
  alert(e, next, errorClass === 'needs_human' ? 'needs_human' : 'held', message);
  if (errorClass === 'needs_human') needsHuman(e, next, actor, message, { jobId: run.job_id, job: run.job_name, slot: run.slot, error: message });
  nudge(e, run.job_id, run.id);
  return next;
}

// ---- backfills -----------------------------------------------------------------------------

/** A backfill's attempt failed: queued again while attempts are left, else failed (and alerted). */
export function backfillAttemptFailed(e: EngineContext, b: BackfillRow, errorClass: RunErrorClass, message: string): BackfillRow {
  // Its attempt was offered through the run's row: nothing is offered any more.
  e.repo.patchRun(b.run_id, NO_OFFER);
  const job = e.repo.maybeJobRow(b.job_id);
  const spec = job ? specOf(job) : undefined;
  const max = spec ? spec.retry.maxAttempts : 1;
  let row: BackfillRow;
  const retryable = (errorClass === 'retryable' || errorClass === 'lost' || errorClass === 'undeliverable') && b.attempts < max;
  // PROTOCOL §14: the loop breaker counts a backfill's attempts as the run's.
  const streak = retryable && errorClass === 'retryable' && job ? e.breaker?.runFailed({ id: b.run_id, jobId: b.job_id, job: job.name, slot: b.slot, role: job.role, attempt: e.repo.run(b.run_id).attempt }, message, spec?.loopBreaker?.sameErrorTimes) : 0;
  if (streak) message = loopBreakerMessage(streak, message);
  if (retryable && !streak) {
    row = transitionBackfill(e, b, 'requeue', 'queued', { tick_run_id: null, instance_id: null, deadline: null, last_error: message, error_class: errorClass }, ACTOR, { errorClass, error: message, attempts: b.attempts, max });
  } else {
    row = transitionBackfill(e, b, 'fail', 'failed', { finished_at: e.now(), deadline: null, last_error: message, error_class: errorClass }, ACTOR, { errorClass, error: message, attempts: b.attempts });
    const run = e.repo.run(b.run_id);
    alert(e, run, errorClass === 'needs_human' ? 'needs_human' : 'failed', `backfill of ${b.slot} failed: ${message}`);
    if (errorClass === 'needs_human') needsHuman(e, run, ACTOR, message, { jobId: run.job_id, slot: run.slot, error: message, backfillId: b.id });
  }
  nudge(e, b.job_id);
  return row;
}

/**
 * A dispatched backfill whose holder reported success while its job declares checks (PROTOCOL
 * §13): it stays dispatched with no holder and no deadline (nobody may act for it, no sweep ends
 * it) until core/verify settles it with `backfillVerified`. Its row says so: started, no holder.
 */
export function isVerifyingBackfill(b: BackfillRow): boolean {
  return b.status === 'dispatched' && b.started_at !== null && b.instance_id === null;
}

/** A backfill's holder reported success and its job has checks: verifying (see isVerifyingBackfill); the output kept on the run. */
export function backfillVerifying(e: EngineContext, run: RunRow, b: BackfillRow, instanceId: string, output: string | undefined): BackfillRow {
  if (output !== undefined) e.repo.patchRun(run.id, { output });
  const row = e.backfillRows.patch(b.id, { instance_id: null, deadline: null }, e.now());
  auditBackfill(e, row, 'backfill.verify', instanceId, { attempt: run.attempt });
  e.verify!.open(`run:${run.id}`, run.attempt, false, b.dispatched_at ?? e.now());
  return row;
}

/** The checks of a backfill's attempt ended: it succeeded, or its failure counts as the `onFail` class says. */
export function backfillVerified(e: EngineContext, run: RunRow, b: BackfillRow, passed: boolean, onFail: 'retry' | 'needs_human' | 'fail', error: string): void {
  if (passed) {
    backfillSucceeded(e, run, b, VERIFY_ACTOR, undefined);
    return;
  }
  backfillAttemptFailed(e, b, onFail === 'retry' ? 'retryable' : onFail === 'needs_human' ? 'needs_human' : 'fatal', error);
}

/** The operator ended a dispatched backfill (cancelled its run, or disabled its job): failed, waiting for the operator. */
export function backfillCancelled(e: EngineContext, b: BackfillRow, message: string, actor: string): BackfillRow {
  e.repo.patchRun(b.run_id, NO_OFFER);
  const row = transitionBackfill(e, b, 'fail', 'failed', { finished_at: e.now(), deadline: null, last_error: message, error_class: 'lost' }, actor, { errorClass: 'lost', error: message, cancelled: true });
  nudge(e, b.job_id);
  return row;
}

/** A backfill's attempt succeeded: the backfill is done and its slot ran after all. */
export function backfillSucceeded(e: EngineContext, run: RunRow, b: BackfillRow, instanceId: string, output: string | undefined): { run: RunRow; backfill: BackfillRow } {
  e.breaker?.runSucceeded(run.id);
  const row = transitionBackfill(e, b, 'done', 'done', { finished_at: e.now(), deadline: null }, instanceId, { attempt: run.attempt });
  const next = backfilled(e, run, instanceId, { backfillId: b.id, previous: run.disposition, attempt: run.attempt }, output);
  coversDone(e, next, instanceId);
  nudge(e, run.job_id);
  return { run: next, backfill: row };
}
