/**
 * The one owner of a trigger offer (PROTOCOL §1): an attempt out is offered — its `job_trigger`
 * pushed — to one online instance of its role at a time, and that instance acknowledges it with
 * `run_started` within the ack timeout. The offer lives on the run's row (`offer_to`, `offered_at`,
 * `ack_due_at`, `offered`; a backfill's attempt is offered through its run's row too), so a restart
 * resumes from the rows; the hub only picks an instance and sends (hub/ports.ts `JobsHubPort`).
 *
 * Invariants:
 * 1. An attempt is offered to at most one instance at a time (`offer_to`) and to each instance at
 *    most once (`offered`); every offer of a run carries the same runId — never a second run.
 * 2. An offer and its `trigger.offer` audit row are written in the transaction that decided it (for
 *    a first attempt: the one that claimed and dispatched the slot); the push leaves after its
 *    commit (context.ts invariant 1).
 * 3. Only `offer_to` may acknowledge, and its acknowledgement clears the offer in the start's own
 *    transaction (outcomes.ts `started`); anyone else's `run_started` is `not_holder`.
 * 4. An unacknowledged offer moves to the next instance when its ack is due (`trigger.timeout`) or
 *    its instance's session ends (`trigger.lost`). With nobody of the role online that takes runs a
 *    run's offer waits for an instance (`waiting_on` = instance: a hello offers it at once); with
 *    every online instance that takes runs already offered it is undeliverable — a retryable
 *    failure of the attempt.
 * 6. An instance whose `hello` said `takesRuns: false` is never offered a trigger (hub `pick`), and
 *    does not count as online for a run: with only such instances online the offer waits, and the
 *    execution check says why (explain).
 * 5. An acknowledged attempt taken away (deadline, operator, kill switch, budget) is audited
 *    (`trigger.cancel`) in the transaction that took it, and its holder is told at once after the
 *    commit (`run_cancelled`); its later messages are refused by the rows (run-sink.ts).
 */
import { GafferError } from '../../../common/errors';
import { isoTime } from '../../../common/iso-time';
import type { RunApproval } from '../../../common/job-schema';
import type { RunCancelReason } from '../../../common/protocol';
import type { JobTrigger } from '../../hub';
import { specOf, type BackfillRow, type JobRow, type RunPatch, type RunRow } from '../rows';
import { ACTOR, type EngineContext } from './context';
import { attemptFailed, backfillAttemptFailed, NO_OFFER, offerPlaced, wait } from './outcomes';
import { instanceWords } from './verdicts';

/** A `job_trigger` as the engine builds it: the PROTOCOL fields, then the documented additions. */
export type BuiltTrigger = JobTrigger & { slotAt: string; trigger: string; backfillId?: number; covers?: string[]; previousError?: string; approval?: RunApproval };

/** The `job_trigger` of the attempt out of `run` (or of its dispatched backfill `b`), built from the rows. */
export function triggerOf(e: EngineContext, job: JobRow, run: RunRow, b?: BackfillRow): BuiltTrigger {
  const spec = specOf(job);
  const covers = JSON.parse(run.covers) as string[];
  // An attempt 1 was never acknowledged before (it would be started, not offered): it has no steps.
  const completedSteps = run.attempt <= 1 ? [] : e.repo.completedSteps(run.id);
  const previousError = b ? run.last_error : run.attempt > 1 ? run.last_error : null;
  return {
    runId: run.id,
    jobId: job.id,
    job: job.name,
    slot: run.slot,
    attempt: run.attempt,
    payload: spec.payload,
    idempotencyKey: run.idempotency_key,
    deadline: isoTime((b ? b.deadline : run.deadline) ?? e.now()),
    completedSteps,
    version: job.version,
    traceId: run.trace_id,
    // Additions.
    slotAt: isoTime(run.slot_at),
    trigger: b ? 'backfill' : run.trigger,
    ...(b ? { backfillId: b.id } : {}),
    ...(covers.length ? { covers } : {}),
    ...(previousError ? { previousError } : {}),
    // Every offer of an approved re-run carries the operator's decision (decisions.ts).
    ...(b?.approval ? { approval: JSON.parse(b.approval) as RunApproval } : {}),
  };
}

/** The next instance an attempt is offered to, and the offer's fields for its run's row. */
export interface NextOffer {
  instanceId: string;
  offers: number;
  fields: RunPatch;
}

/**
 * Picks the next instance for the attempt out (`offered`: who had it already; `deadline`: the
 * attempt's), or null when there is nobody to offer it to. For a run's own attempt the runner's
 * timer looks at the run when its ack is due (or at its deadline, if sooner).
 */
export function nextOffer(e: EngineContext, job: JobRow, offeredBefore: string, deadline: number | null, own: boolean): NextOffer | null {
  const offered = JSON.parse(offeredBefore) as string[];
  const instanceId = e.hub.pick(job.role, new Set(offered), (id) => e.offersOut(id), e.instanceLoads());
  if (instanceId === null) return null;
  // Both callers place the offer now (in the caller's transaction).
  e.offerCounted(instanceId);
  const now = e.now();
  const ackDueAt = now + e.ctx.config.triggerAckTimeoutS * 1000;
  offered.push(instanceId);
  return {
    instanceId,
    offers: offered.length,
    fields: {
      offer_to: instanceId,
      offered_at: now,
      ack_due_at: ackDueAt,
      offered: JSON.stringify(offered),
      ...(own ? { next_attempt_at: Math.min(ackDueAt, deadline ?? Infinity), version: job.version } : {}),
    },
  };
}

/**
 * Offers the attempt out of `run` (the row already says it is out: dispatched, or its backfill
 * `b` dispatched) to the next instance of the job's role, in the caller's transaction. Returns the
 * run row as it now stands.
 */
export function offerAttempt(e: EngineContext, run: RunRow, job: JobRow, b?: BackfillRow): RunRow {
  const o = nextOffer(e, job, run.offered, b ? b.deadline : run.deadline, !b);
  if (o === null) return nobodyToOffer(e, run, job, JSON.parse(run.offered) as string[], b);
  return offerMade(e, offerPlaced(e, run, o.fields), job, o, b);
}

/** The offer `o` is on the run's row: audited, announced, and its push queued for after the commit. */
export function offerMade(e: EngineContext, run: RunRow, job: JobRow, o: NextOffer, b?: BackfillRow): RunRow {
  const { instanceId, offers } = o;
  const trigger = triggerOf(e, job, run, b);
  e.ctx.audit.append({
    type: 'trigger.offer',
    actor: ACTOR,
    subject: `run:${run.id}`,
    detail: { jobId: job.id, job: job.name, slot: run.slot, attempt: run.attempt, role: job.role, instanceId, offer: offers, ...(b ? { backfillId: b.id } : {}) },
    traceId: run.trace_id,
  });
  if (e.ctx.store.wants('trigger.offered')) e.ctx.store.emit({ type: 'trigger.offered', runId: run.id, role: job.role, instanceId, offer: offers });
  e.afterCommit(() => {
    // The session may have ended since the pick: its `session.closed` moves the offer on.
    if (!e.closed) e.hub.send(instanceId, { type: 'job_trigger', ...trigger });
  });
  return run;
}

/** Nobody can be offered the attempt now: a run's offer waits for an instance, unless everyone online that takes runs had it. */
export function nobodyToOffer(e: EngineContext, run: RunRow, job: JobRow, offered: string[], b: BackfillRow | undefined): RunRow {
  const online = e.hub.runTakers(job.role);
  const noRuns = e.hub.connectedInstances(job.role).length - online.length;
  const everyoneHadIt = online.length > 0 && online.every((id) => offered.includes(id));
  if (!everyoneHadIt && !b) {
    // Nobody of the role that takes runs is online: the offer waits for one (its hello offers it at once).
    if (noRuns > 0) {
      // Online, but none takes runs (invariant 6): say so where explain reads it.
      const why = instanceWords(job.role, 0, noRuns);
      e.repo.recordCheck(run.job_id, run.slot, 'execution', 'execution', 'not_ready', why, { blocker: 'instance', instance: { verdict: 'not_ready', reason: why, online: 0, onlineNoRuns: noRuns } });
    }
    const cleared = e.repo.patchRun(run.id, NO_OFFER);
    return wait(e, cleared, run.deadline ?? e.now(), 'instance');
  }
  const reason = offered.length === 0 ? 'no_instance' : 'not_acknowledged';
  const why = offered.length === 0 ? instanceWords(job.role, 0, noRuns) : `offered to ${offered.join(', ')}; none acknowledged`;
  e.ctx.audit.append({ type: 'trigger.undeliverable', actor: ACTOR, subject: `run:${run.id}`, detail: { reason, offeredTo: offered, role: job.role }, traceId: run.trace_id });
  e.ctx.store.emit({ type: 'trigger.undeliverable', runId: run.id, role: job.role, reason, offeredTo: offered });
  if (b) {
    backfillAttemptFailed(e, b, 'undeliverable', `trigger undeliverable (${why})`);
    return e.repo.run(run.id);
  }
  return attemptFailed(e, run, 'undeliverable', `trigger undeliverable: ${why}`, ACTOR);
}

/** Why an offer moved on before its acknowledgement. */
export type Lapse = { kind: 'timeout' } | { kind: 'lost'; why: string };

/** The offer of `run`'s attempt lapsed: audited, and the attempt is offered to the next instance. */
export function offerLapsed(e: EngineContext, run: RunRow, job: JobRow, lapse: Lapse, b?: BackfillRow): RunRow {
  const detail = lapse.kind === 'timeout' ? { instanceId: run.offer_to, ackTimeoutMs: e.ctx.config.triggerAckTimeoutS * 1000 } : { instanceId: run.offer_to, why: lapse.why };
  e.ctx.audit.append({ type: lapse.kind === 'timeout' ? 'trigger.timeout' : 'trigger.lost', actor: ACTOR, subject: `run:${run.id}`, detail, traceId: run.trace_id });
  return offerAttempt(e, run, job, b);
}

/** Refuses the `run_started` of anyone but the instance the attempt is offered to (invariant 3). */
export function assertOfferedTo(run: RunRow, instanceId: string): void {
  if (run.offer_to === instanceId) return;
  const had = (JSON.parse(run.offered) as string[]).includes(instanceId);
  if (run.offer_to === null) throw new GafferError('not_holder', `the trigger for run ${run.id} is not offered to any instance now${had ? ' (yours lapsed)' : ''}; do not start it`);
  throw new GafferError('not_holder', had ? `the trigger for run ${run.id} lapsed and is offered to another instance; do not start it` : `run ${run.id} is offered to another instance; do not start it`);
}

/**
 * The attempt `holder` acknowledged is taken away (invariant 5): audited now, `run_cancelled` to
 * its live session once the caller's transaction committed. The caller records what becomes of
 * the run (retry, failure, hold).
 */
export function takenAway(e: EngineContext, run: Pick<RunRow, 'id' | 'attempt' | 'trace_id'>, holder: string, reason: RunCancelReason, actor = ACTOR): void {
  e.ctx.audit.append({ type: 'trigger.cancel', actor, subject: `run:${run.id}`, detail: { instanceId: holder, reason, attempt: run.attempt }, traceId: run.trace_id });
  e.afterCommit(() => {
    if (!e.closed) e.hub.send(holder, { type: 'run_cancelled', runId: run.id, reason });
  });
}
