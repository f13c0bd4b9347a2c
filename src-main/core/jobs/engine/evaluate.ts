/**
 * A due run evaluated: layers 2 (preconditions) and 3 (execution conditions) for a slot's first
 * attempt, layer 3 for a retry, the offer of an attempt out (its ack due, or waiting for an
 * instance), the deadline of an attempt out, and the window's close.
 *
 * Invariants:
 * 1. Layers in order, each verdict recorded in `checks` (write-only, checks.ts); what the run waits
 *    for is written to its `waiting_on` — the first blocker in layer order, a layer skipped by this
 *    evaluation keeping its last known contribution — and every later decision reads that column.
 * 2. The kill switch and a pause stop a slot before its preconditions are probed.
 * 3. Asynchronous checks run outside any transaction; their continuation re-reads the row and acts
 *    only if it is still the same attempt waiting for its first dispatch.
 * 4. A slot that can no longer start gets one decision (`closeWindow`); overlap `queue_one` lets the
 *    slot queued behind a running one wait past its window while that is all it waits for.
 */
import { isoTime } from '../../../common/iso-time';
import type { JobSpec } from '../../../common/job-schema';
import { JobPlan } from '../plan';
import type { CheckOutcome } from '../preconditions';
import { runPhase, type WaitingOn } from '../run-phase';
import { specOf, type JobRow, type RunRow } from '../rows';
import { recordCheck, recordExecution } from './checks';
import { ACTOR, type EngineContext } from './context';
import { dispatchRun } from './dispatch';
import { executionFacts, preconditionFacts } from './facts';
import { offerAttempt, offerLapsed, takenAway } from './offers';
import { alert, attemptFailed, finalFail, missed, precheck, skipped, wait } from './outcomes';
import { executionVerdict, hardStop, windowCloseOutcome, type ExecVerdict } from './verdicts';

/**
 * Looks at a run whose due time came: evaluate, retry, move its offer on, or declare the attempt lost.
 * `current`: the run's job row as it stands now, when the caller has it in hand (else it is read).
 */
export function evaluateDue(e: EngineContext, run: RunRow, now: number, current?: JobRow): void {
  const job = current ?? e.repo.maybeJobRow(run.job_id);
  if (!job) {
    e.repo.patchRun(run.id, { next_attempt_at: null });
    return;
  }
  const phase = runPhase(run);
  if (phase === 'checking') evaluateSlot(e, run, job, now);
  else if (phase === 'undelivered' || phase === 'retrying') evaluateRetry(e, run, job, now);
  else if (phase === 'offered' && (run.deadline === null || run.deadline > now)) offerDue(e, run, job, now);
  else if (phase === 'offered' || phase === 'started') {
    attemptFailed(e, run, 'lost', `no result before the deadline ${run.deadline === null ? '?' : isoTime(run.deadline)}`, ACTOR);
    if (phase === 'started') takenAway(e, run, run.instance_id!, 'deadline');
  } else {
    e.repo.patchRun(run.id, { next_attempt_at: null });
  }
}

/** An attempt out whose offer is due: its ack lapsed (next instance), or it waits for an instance (one may be here now). */
function offerDue(e: EngineContext, run: RunRow, job: JobRow, now: number): void {
  if (run.offer_to === null) offerAttempt(e, run, job);
  else if (run.ack_due_at !== null && run.ack_due_at <= now) offerLapsed(e, run, job, { kind: 'timeout' });
  else e.repo.patchRun(run.id, { next_attempt_at: Math.min(run.ack_due_at ?? Infinity, run.deadline ?? Infinity) });
}

/** Layers 1–3 for a slot not dispatched yet. */
function evaluateSlot(e: EngineContext, run: RunRow, job: JobRow, now: number): void {
  const spec = specOf(job);
  if (job.enabled !== 1 && run.trigger !== 'manual') {
    skipped(e, run, 'skipped_disabled', 'the job is disabled', ACTOR, {});
    return;
  }
  if (now >= (run.window_closes_at ?? Infinity) && !queuedBehindOverlap(run, spec, run.waiting_on)) {
    closeWindow(e, run, spec, now, run.waiting_on);
    return;
  }
  if (now < run.opens_at) {
    wait(e, run, run.opens_at, 'window');
    return;
  }
  // Hard stops first: with the kill switch on or the job paused nothing is dispatched, so
  // upstream systems are not probed for a slot that cannot run (recorded as layer-3 verdicts).
  if (run.trigger !== 'manual') {
    const stop = hardStop(e.settings(), job);
    if (stop) {
      recordExecution(e, run, { action: 'wait', blocker: stop.name, reason: stop.reason, evidence: { [stop.name]: { verdict: 'not_ready', reason: stop.reason, ...stop.evidence } } });
      // The preconditions were not probed: a slot last found not ready still waits on them first.
      recheck(e, run, spec, now, run.waiting_on === 'preconditions' ? 'preconditions' : stop.name);
      return;
    }
  }
  // A run by hand overrides the preconditions unless the operator asked for them.
  const override = run.trigger === 'manual' && run.overrides_preconditions === 1;
  const results = override ? [] : preconditionFacts(e, job, spec, run.slot, run.slot_at);
  if (results instanceof Promise) {
    e.checkingRuns.add(run.id);
    const attempt = run.attempt;
    void e.track(
      results.then(
        (res) => afterChecks(e, run.id, attempt, res),
        (err: unknown) => {
          e.checkingRuns.delete(run.id);
          e.logger.error('jobs: precondition evaluation failed', { run: run.id, error: String(err) });
        },
      ),
    );
    return;
  }
  continueSlot(e, run, job, spec, results, now);
}

function afterChecks(e: EngineContext, runId: string, attempt: number, results: CheckOutcome[]): void {
  e.checkingRuns.delete(runId);
  if (e.closed) return;
  try {
    e.write(() => {
      const run = e.repo.maybeRun(runId);
      if (!run || runPhase(run) !== 'checking' || run.attempt !== attempt) return;
      const job = e.repo.maybeJobRow(run.job_id);
      if (!job) return;
      continueSlot(e, run, job, specOf(job), results, e.now());
    });
  } catch (err) {
    e.logger.error('jobs: continuation failed', { run: runId, error: String(err) });
  }
  e.arm();
}

function continueSlot(e: EngineContext, run: RunRow, job: JobRow, spec: JobSpec, results: CheckOutcome[], now: number): void {
  for (const r of results) recordCheck(e, run, 'precondition', r.name, r.verdict, r.reason, { kind: r.kind, ...r.evidence });
  const blocking = results.some((r) => r.verdict !== 'ready');
  if (now >= (run.window_closes_at ?? Infinity) && (blocking || !queuedBehindOverlap(run, spec, run.waiting_on))) {
    // Not ready: that is the last word. Ready after all: whatever the execution layer said last.
    closeWindow(e, run, spec, now, blocking ? 'preconditions' : run.waiting_on === 'preconditions' ? null : run.waiting_on);
    return;
  }
  if (blocking) {
    recheck(e, run, spec, now, 'preconditions');
    return;
  }
  const ex = executionVerdict(executionFacts(e, run, job, spec, now, run.trigger === 'manual' ? 'manual' : 'slot'));
  recordExecution(e, run, ex);
  ceilingReached(e, run, ex);
  if (ex.action === 'dispatch') dispatchRun(e, run, job, now, 'first');
  else if (ex.action === 'skip_overlap') skipped(e, run, 'skipped_overlap', ex.reason, ACTOR);
  else recheck(e, run, spec, now, ex.blocker!, ex.waitUntil);
}

/** A retry (or a re-offer of an undelivered attempt) whose due time came. */
function evaluateRetry(e: EngineContext, run: RunRow, job: JobRow, now: number): void {
  const spec = specOf(job);
  if (now >= (run.window_closes_at ?? Infinity) && run.trigger !== 'manual') {
    finalFail(e, run, spec, run.error_class ?? 'retryable', `${run.last_error ?? 'the previous attempt failed'}; the window closed before the retry could start`, ACTOR);
    return;
  }
  // PROTOCOL §13 `before: true`: the earlier attempt may have done the work and only failed to say
  // so (it failed, was lost, or its agent died): its checks run first, once per attempt.
  if (runPhase(run) === 'retrying' && spec.verify?.before && e.verify && !e.verify.checkedBefore(`run:${run.id}`, run.attempt)) {
    precheck(e, run, now);
    return;
  }
  const ex = executionVerdict(executionFacts(e, run, job, spec, now, run.trigger === 'manual' ? 'manual' : 'retry'));
  recordExecution(e, run, ex);
  ceilingReached(e, run, ex);
  if (ex.action === 'dispatch') dispatchRun(e, run, job, now, 'retry');
  else recheck(e, run, spec, now, ex.blocker!, ex.waitUntil);
}

/** The job's attempts a day are used up: the operator is told (an inbox item), once per run and attempt. */
export function ceilingReached(e: EngineContext, run: RunRow, ex: ExecVerdict): void {
  if (ex.blocker === 'attemptCeiling') alert(e, run, 'attempt_ceiling', ex.reason);
}

/** The run is looked at again at `until`, or after the re-check period (never past its window unless queued behind). */
function recheck(e: EngineContext, run: RunRow, spec: JobSpec, now: number, waitingOn: WaitingOn, until?: number): void {
  let next = until ?? now + recheckMs(spec, now);
  const close = run.window_closes_at;
  if (close !== null && next > close && !(queuedBehindOverlap(run, spec, waitingOn) && until === undefined)) next = close;
  if (next <= now) next = now + 1000;
  wait(e, run, next, waitingOn, runPhase(run) === 'checking' ? 'waiting' : 'retry_scheduled');
}

/** The re-check period follows the schedule's own spacing (the calendar aside). */
function recheckMs(spec: JobSpec, now: number): number {
  return new JobPlan(spec, undefined).recheckMs(now);
}

/** True when the run waits only because of overlap 'queue_one' (it ignores its window then). */
function queuedBehindOverlap(run: RunRow, spec: JobSpec, waitingOn: WaitingOn | null): boolean {
  // The run it waited for may just have finished: this run is looked at once more (and then
  // dispatched, or closed if something else blocks it now).
  return spec.overlap === 'queue_one' && runPhase(run) === 'checking' && waitingOn === 'overlap';
}

/** The slot can no longer start: what it waited for last decides what it becomes. */
function closeWindow(e: EngineContext, run: RunRow, spec: JobSpec, now: number, waitingOn: WaitingOn | null): void {
  const reasons = e.repo.checkReasons(run.job_id, run.slot);
  const words = {
    preconditions: reasons.filter((c) => c.layer === 'precondition' && c.verdict !== 'ready').map((c) => `${c.name}: ${c.reason}`),
    execution: reasons.find((c) => c.name === 'execution')?.reason,
    closedAt: isoTime(run.window_closes_at ?? now),
  };
  missed(e, run, spec, windowCloseOutcome(waitingOn, words, spec.missedWindow));
}
