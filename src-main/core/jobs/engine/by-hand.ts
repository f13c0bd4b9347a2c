/**
 * The operator's hand on runs: "run now", cancelling a run, what disabling a job and turning the
 * kill switch on take away, and the waiting runs a resume or a released kill switch looks at again.
 * Each runs inside the caller's transaction.
 *
 * Invariants:
 * 1. "Run now" keeps one run per slot: it claims the slot if free, dispatches a slot still waiting
 *    for its first attempt, and otherwise reports the existing run.
 * 2. A run by hand overrides the schedule, the pause and (unless the operator asks for them) the
 *    preconditions — never the kill switch or a disabled job.
 * 3. Taking an attempt away records what becomes of its run and tells its holder (`run_cancelled`)
 *    after the commit: the kill switch stops every attempt out (each retried by its policy once the
 *    switch is off); disabling a job ends its attempts out (runs by hand go on); cancelling a run
 *    ends it (or its dispatched backfill). A run an operator ended is never retried by itself.
 */
import { GafferError } from '../../../common/errors';
import type { RunCancelReason } from '../../../common/protocol';
import { isOut, isWaiting, runPhase } from '../run-phase';
import { specOf, type BackfillRow, type JobRow, type RunRow } from '../rows';
import { currentSlotOf } from '../trigger-choices';
import type { EngineContext } from './context';
import { dispatchRun } from './dispatch';
import { takenAway } from './offers';
import { attemptFailed, backfillAttemptFailed, backfillCancelled, cancelled, skipped, wait } from './outcomes';
import { claimByHand } from './slots';
import { instanceWords } from './verdicts';

export interface RunNowResult {
  run: RunRow;
  created: boolean;
  dispatched: boolean;
  message: string;
}

/** How long a run by hand waits for an instance of its role before it is looked at again (a hello wakes it sooner). */
const NO_INSTANCE_RECHECK_MS = 60_000;

/** "Run now": the slot the current instant falls in (or `wanted`), claimed and dispatched at once. */
export function runNow(e: EngineContext, job: JobRow, wanted: string | undefined, reason: string, actor: string, checkPreconditions: boolean): RunNowResult {
  const spec = specOf(job);
  const ks = e.settings().killSwitch;
  if (ks.on) throw new GafferError('conflict', `the kill switch is on (by ${ks.by}: ${ks.reason}); nothing is dispatched`);
  if (job.enabled !== 1) throw new GafferError('conflict', `job ${job.name} is disabled; enable it first`);
  const plan = e.repo.planOf(job, spec);
  const now = e.now();
  let occ;
  if (wanted !== undefined) {
    try {
      occ = plan.find(wanted);
    } catch (err) {
      throw new GafferError('bad_request', (err as Error).message);
    }
    if (!occ) throw new GafferError('bad_request', `${wanted} is not a slot of job ${job.name}`);
  } else {
    occ = currentSlotOf(plan, now);
    if (!occ) throw new GafferError('conflict', `job ${job.name} has no slot to run`);
  }
  e.ctx.audit.append({ type: 'job.trigger', actor, subject: `job:${job.id}`, detail: { name: job.name, slot: occ.slot, reason, checkPreconditions } });
  const existing = e.repo.runBySlot(job.id, occ.slot);
  if (existing) {
    if (runPhase(existing) === 'checking') {
      const run = e.repo.updateRun(existing, { trigger: 'manual' }, 'run.trigger_now', actor, { reason });
      if (checkPreconditions) {
        const due = e.repo.patchRun(run.id, { next_attempt_at: now });
        return { run: due, created: false, dispatched: false, message: `slot ${occ.slot} was waiting; it is checked now and runs once its preconditions pass` };
      }
      return dispatchByHand(e, run, job, reason, actor, now, false);
    }
    return { run: existing, created: false, dispatched: false, message: `slot ${occ.slot} already has run ${existing.id} (${existing.status}, ${existing.disposition}); one run per slot — use the backfill queue to run it again` };
  }
  const run = claimByHand(e, job, spec, plan, occ, now, checkPreconditions, reason, actor);
  if (checkPreconditions) return { run, created: true, dispatched: false, message: `slot ${occ.slot} claimed by hand; it runs once its preconditions pass` };
  return dispatchByHand(e, run, job, reason, actor, now, true);
}

/** Dispatches a claimed run by hand now, or — with no instance of the role online that takes runs — as soon as one says hello. */
function dispatchByHand(e: EngineContext, run: RunRow, job: JobRow, reason: string, actor: string, now: number, created: boolean): RunNowResult {
  e.repo.recordCheck(run.job_id, run.slot, 'execution', 'manual', 'ready', `run by hand by ${actor}: ${reason} (schedule, pause and preconditions overridden)`, { override: true, reason, actor });
  if (e.hub.runTakers(job.role).length === 0) {
    const noRuns = e.hub.connectedInstances(job.role).length;
    const why = instanceWords(job.role, 0, noRuns);
    e.repo.recordCheck(run.job_id, run.slot, 'execution', 'execution', 'not_ready', why, { blocker: 'instance', instance: { verdict: 'not_ready', reason: why, online: 0, ...(noRuns > 0 ? { onlineNoRuns: noRuns } : {}) } });
    e.repo.patchRun(run.id, { overrides_preconditions: 1 });
    const r = wait(e, run, now + NO_INSTANCE_RECHECK_MS, 'instance', 'waiting');
    return { run: r, created, dispatched: false, message: `slot ${run.slot} claimed by hand; ${why}: it is dispatched as soon as one says hello` };
  }
  e.repo.recordCheck(run.job_id, run.slot, 'execution', 'execution', 'ready', `run by hand by ${actor}: ${reason}`, { blocker: null, manual: { verdict: 'ready', reason, actor } });
  const d = dispatchRun(e, run, job, now, 'first', actor);
  return { run: d, created, dispatched: true, message: `slot ${run.slot} ${created ? 'claimed and ' : ''}dispatched by hand` };
}

/**
 * A disabled job: its slots that wait for an attempt are skipped, and its attempts out are taken
 * away and end (runs by hand go on in both cases).
 */
export function jobDisabled(e: EngineContext, jobId: string, why: string, actor: string): void {
  for (const r of e.repo.openRunsOfJob(jobId)) {
    const phase = runPhase(r);
    if ((phase !== 'checking' && phase !== 'undelivered') || r.trigger === 'manual') continue;
    skipped(e, r, 'skipped_disabled', why, actor);
  }
  for (const a of attemptsOut(e, jobId)) {
    if (!a.backfill && a.run.trigger === 'manual') continue;
    takeAway(e, a, { reason: 'operator', message: `cancelled: ${why}`, actor, then: 'end' });
  }
}

/** The kill switch went on: every attempt out is taken away (and retried by its policy once it is off). */
export function killSwitchOn(e: EngineContext, reason: string, actor: string): void {
  for (const a of attemptsOut(e)) takeAway(e, a, { reason: 'kill_switch', message: `taken away: the kill switch was turned on by ${actor}: ${reason}`, actor, then: 'retry' });
}

/**
 * The operator cancels a run: an open run ends failed (its attempt out, if any, is taken away); a
 * finished run whose backfill is dispatched has that backfill's attempt taken away and ended.
 */
export function cancelRun(e: EngineContext, run: RunRow, reason: string, actor: string): RunRow {
  const message = `cancelled by ${actor}: ${reason}`;
  if (runPhase(run) === 'finished') {
    const b = e.backfillRows.dispatchedOfRun(run.id);
    if (!b) throw new GafferError('invalid_transition', `run ${run.id} is already ${run.status}; nothing of it is in flight`);
    takeAway(e, { run, backfill: b }, { reason: 'operator', message, actor, then: 'end' });
  } else if (isOut(runPhase(run))) {
    takeAway(e, { run }, { reason: 'operator', message, actor, then: 'end' });
  } else {
    cancelled(e, run, message, actor);
  }
  return e.repo.run(run.id);
}

/** An attempt out: a run's own (offered or started), or its dispatched backfill's. */
interface AttemptOut {
  run: RunRow;
  backfill?: BackfillRow;
}

function attemptsOut(e: EngineContext, jobId?: string): AttemptOut[] {
  const runs = jobId === undefined ? e.repo.openRuns() : e.repo.openRunsOfJob(jobId);
  const out: AttemptOut[] = runs.filter((r) => isOut(runPhase(r))).map((run) => ({ run }));
  const backfills = jobId === undefined ? e.backfillRows.allDispatched() : e.backfillRows.dispatchedOfJob(jobId);
  for (const b of backfills) out.push({ run: e.repo.run(b.run_id), backfill: b });
  return out;
}

/** What is taken away, and what becomes of the run: retried by its policy, or ended. */
interface TakeAway {
  reason: RunCancelReason;
  message: string;
  actor: string;
  then: 'retry' | 'end';
}

function takeAway(e: EngineContext, a: AttemptOut, t: TakeAway): void {
  const { run, backfill: b } = a;
  const holder = b ? b.instance_id : runPhase(run) === 'started' ? run.instance_id : null;
  if (b) {
    if (t.then === 'retry') backfillAttemptFailed(e, b, 'lost', t.message);
    else backfillCancelled(e, b, t.message, t.actor);
  } else if (t.then === 'retry') {
    attemptFailed(e, run, 'lost', t.message, t.actor);
  } else {
    cancelled(e, run, t.message, t.actor);
  }
  if (holder !== null) takenAway(e, run, holder, t.reason, t.actor);
}

/** Waiting runs (of one job, or all) are looked at again now. */
export function wakeWaiting(e: EngineContext, runs: RunRow[]): void {
  const now = e.now();
  for (const r of runs) if (isWaiting(runPhase(r)) && r.next_attempt_at !== null) e.repo.patchRun(r.id, { next_attempt_at: now });
}
