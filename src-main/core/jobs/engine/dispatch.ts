/**
 * Dispatch: an attempt marked out in the caller's transaction, its `job_trigger` built, and the
 * offer handed to the hub once the transaction committed. The offer's outcome comes back here and
 * is routed by what was offered (a run's attempt or a backfill's dispatch).
 *
 * Invariants:
 * 1. The row says the attempt is out (dispatched_at, deadline, attempt) before anything leaves; the
 *    push leaves after the commit (context.ts invariant 1).
 * 2. An offer is identified by its subject — (run, attempt) or (backfill, dispatch count) — and its
 *    outcome counts only while the row still shows that same offer unacknowledged: a late outcome of
 *    an older attempt changes nothing.
 * 3. An undeliverable offer (nobody online, nobody acknowledged) is a retryable failure of that
 *    attempt; a closing hub is not an outcome (the rows stay, the next start offers again).
 */
import { isoTime } from '../../../common/iso-time';
import type { JobSpec, RunApproval } from '../../../common/job-schema';
import type { JobTrigger, TriggerOutcome } from '../../hub/ports';
import { runPhase } from '../run-phase';
import { specOf, type JobRow, type RunRow } from '../rows';
import { ACTOR, type EngineContext } from './context';
import { attemptFailed, backfillAttemptFailed, dispatched } from './outcomes';

/** What one offer is for. */
export type OfferSubject = { kind: 'run'; runId: string; attempt: number } | { kind: 'backfill'; backfillId: number; dispatch: number };

/** `first`: a slot's first attempt; `retry`: attempt + 1; `redispatch`: the same attempt offered again. */
export type DispatchKind = 'first' | 'retry' | 'redispatch';

/** A `job_trigger` as the engine builds it: the PROTOCOL fields, then the documented additions. */
export type BuiltTrigger = JobTrigger & { slotAt: string; trigger: string; backfillId?: number; covers?: string[]; previousError?: string; approval?: RunApproval };

/** The `job_trigger` body for one attempt of `run`. */
export function buildTrigger(
  job: JobRow,
  spec: JobSpec,
  run: RunRow,
  attempt: number,
  deadline: number,
  extra: { completedSteps: string[]; trigger: string; covers: string[]; previousError: string | null; backfillId?: number; approval?: RunApproval },
): BuiltTrigger {
  return {
    runId: run.id,
    jobId: job.id,
    job: job.name,
    slot: run.slot,
    attempt,
    payload: spec.payload,
    idempotencyKey: run.idempotency_key,
    deadline: isoTime(deadline),
    completedSteps: extra.completedSteps,
    version: job.version,
    traceId: run.trace_id,
    // Additions.
    slotAt: isoTime(run.slot_at),
    trigger: extra.trigger,
    ...(extra.backfillId !== undefined ? { backfillId: extra.backfillId } : {}),
    ...(extra.covers.length ? { covers: extra.covers } : {}),
    ...(extra.previousError ? { previousError: extra.previousError } : {}),
    ...(extra.approval ? { approval: extra.approval } : {}),
  };
}

/** Marks the attempt dispatched (in the caller's transaction) and offers it after the commit. */
export function dispatchRun(e: EngineContext, run: RunRow, job: JobRow, now: number, kind: DispatchKind, actor = ACTOR): RunRow {
  const spec = specOf(job);
  const attempt = kind === 'redispatch' ? Math.max(1, run.attempt) : run.attempt + 1;
  let covers = JSON.parse(run.covers) as string[];
  // Only fold_into_next leaves folded slots behind (a job switched away from it keeps old ones
  // uncovered: they stay folded).
  if (kind === 'first' && spec.missedWindow === 'fold_into_next') {
    const folded = e.repo.uncoveredFolded(job.id, run.slot_at);
    for (const f of folded) e.repo.updateRun(f, { covered_by: run.id }, 'run.covered', actor, { by: run.id, bySlot: run.slot });
    covers = [...covers, ...folded.map((f) => f.slot)];
  }
  const deadline = now + spec.runTimeoutS * 1000;
  const next = dispatched(
    e,
    run,
    { attempt, dispatched_at: now, triggered_at: run.triggered_at ?? now, deadline, next_attempt_at: deadline, instance_id: null, covers: JSON.stringify(covers), version: job.version },
    actor,
    { attempt, role: job.role, deadline: isoTime(deadline), ...(covers.length ? { covers } : {}), kind },
  );
  const trigger = buildTrigger(job, spec, run, attempt, deadline, {
    completedSteps: attempt === 1 && kind === 'first' ? [] : e.repo.completedSteps(run.id),
    trigger: run.trigger,
    covers,
    previousError: attempt > 1 ? run.last_error : null,
  });
  offer(e, job.role, trigger, { kind: 'run', runId: run.id, attempt });
  return next;
}

/** Hands `trigger` to the hub once the current transaction committed; the outcome comes back to `outcome`. */
export function offer(e: EngineContext, role: string, trigger: BuiltTrigger, subject: OfferSubject): void {
  e.afterCommit(() => {
    if (e.closed) return;
    const key = offerKey(subject);
    e.pushing.add(key);
    // Not tracked by `settled()`: an outcome waits for an agent (or the ack timeout on the clock).
    void e.hub.pushJobTrigger(role, trigger).then(
      (o) => {
        e.pushing.delete(key);
        if (!e.closed) outcome(e, subject, o);
      },
      (err: unknown) => {
        e.pushing.delete(key);
        e.logger.error('jobs: pushJobTrigger failed', { key, error: String(err) });
      },
    );
  });
}

/** The key of an offer in flight (`run:<id>` / `bf:<id>`). */
export function offerKey(subject: OfferSubject): string {
  return subject.kind === 'run' ? `run:${subject.runId}` : `bf:${subject.backfillId}`;
}

function outcome(e: EngineContext, subject: OfferSubject, o: TriggerOutcome): void {
  if (o.status === 'acknowledged' || o.reason === 'hub_closed') return;
  try {
    e.write(() => {
      if (subject.kind === 'run') {
        const run = e.repo.maybeRun(subject.runId);
        if (!run || runPhase(run) !== 'offered' || run.attempt !== subject.attempt) return;
        const why = o.reason === 'no_instance' ? `no online instance of role ${e.repo.maybeJobRow(run.job_id)?.role ?? '?'}` : `offered to ${o.offeredTo.join(', ')}; none acknowledged`;
        attemptFailed(e, run, 'undeliverable', `trigger undeliverable: ${why}`, ACTOR);
      } else {
        const b = e.backfillRows.get(subject.backfillId);
        if (b.status !== 'dispatched' || b.attempts !== subject.dispatch || b.instance_id !== null) return;
        backfillAttemptFailed(e, b, 'undeliverable', `trigger undeliverable (${o.reason})`);
      }
    });
  } catch (err) {
    e.logger.error(subject.kind === 'run' ? 'jobs: undeliverable handling failed' : 'jobs: backfill undeliverable handling failed', { subject, error: String(err) });
  }
  e.arm();
}
