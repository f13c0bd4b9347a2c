/**
 * Dispatch: an attempt marked out in the caller's transaction, and offered (offers.ts) in the same
 * transaction, so a first attempt's claim, dispatch and offer are one commit.
 *
 * Invariants:
 * 1. The row says the attempt is out (dispatched_at, deadline, attempt) before anything leaves; the
 *    push leaves after the commit (context.ts invariant 1).
 * 2. `first` is a slot's first attempt, `retry` the next one (attempt + 1); a trigger that was out
 *    when the process stopped is offered again as the same attempt, never dispatched anew.
 */
import { isoTime } from '../../../common/iso-time';
import type { JobSpec } from '../../../common/job-schema';
import { specOf, type JobRow, type RunRow } from '../rows';
import { localDay } from '../time-util';
import { ACTOR, type EngineContext } from './context';
import { nextOffer, nobodyToOffer, offerMade } from './offers';
import { dispatched } from './outcomes';

/** Counts one attempt of the job on today's date in its zone (the per-day ceiling, verdicts.ts). */
export function countAttempt(e: EngineContext, jobId: string, spec: JobSpec, now: number): void {
  e.repo.countAttempt(jobId, localDay(now, spec.schedule.timezone ?? 'UTC').day);
}

/** `first`: a slot's first attempt; `retry`: attempt + 1. */
export type DispatchKind = 'first' | 'retry';

/** Marks the next attempt of `run` out and offers it (in the caller's transaction; the push leaves after the commit). */
export function dispatchRun(e: EngineContext, run: RunRow, job: JobRow, now: number, kind: DispatchKind, actor = ACTOR): RunRow {
  const spec = specOf(job);
  const attempt = run.attempt + 1;
  let covers = JSON.parse(run.covers) as string[];
  // Only fold_into_next leaves folded slots behind (a job switched away from it keeps old ones
  // uncovered: they stay folded).
  if (kind === 'first' && spec.missedWindow === 'fold_into_next') {
    const folded = e.repo.uncoveredFolded(job.id, run.slot_at);
    for (const f of folded) e.repo.updateRun(f, { covered_by: run.id }, 'run.covered', actor, { by: run.id, bySlot: run.slot });
    covers = [...covers, ...folded.map((f) => f.slot)];
  }
  const deadline = now + spec.runTimeoutS * 1000;
  countAttempt(e, job.id, spec, now);
  // The hot path of a trigger: the instance picked first, so the attempt is marked out and its
  // offer placed in one write of the row.
  const offer = nextOffer(e, job, '[]', deadline, true);
  const out = dispatched(
    e,
    run,
    { attempt, dispatched_at: now, triggered_at: run.triggered_at ?? now, deadline, next_attempt_at: deadline, instance_id: null, covers: JSON.stringify(covers), version: job.version, ...offer?.fields },
    actor,
    { attempt, role: job.role, deadline: isoTime(deadline), ...(covers.length ? { covers } : {}), kind },
  );
  return offer ? offerMade(e, out, job, offer) : nobodyToOffer(e, out, job, [], undefined);
}
