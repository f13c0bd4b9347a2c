/**
 * Layer 1, time: claiming slots. The runner claims every slot of a job due in [cursor, now] and
 * decides at once what the first look can decide (calendar/DST skip, missed window); an operator's
 * "run now" claims one slot by hand.
 *
 * Invariants:
 * 1. One run per (job, slot): a slot with a run row is never claimed again; the row is inserted
 *    ("claimed", pending) before anything about the slot is dispatched.
 * 2. A slot first looked at after its latest start gets exactly one decision, by the missed-window
 *    policy (plan.ts `firstLook`). Nothing is ever decided twice: the run row is the proof.
 * 3. A long gap is worked off SLOTS_PER_PASS slots per job per pass; the job's cursor says how far.
 */
import { isoTime } from '../../../common/iso-time';
import { totalRetryDelayS, type JobSpec } from '../../../common/job-schema';
import { firstLook, type JobPlan } from '../plan';
import { slotRunBase, specOf, type JobRow, type RunRow } from '../rows';
import type { SlotOccurrence } from '../schedule';
import { selectBackfills } from './backfills';
import { recordCheck } from './checks';
import { ACTOR, type EngineContext } from './context';
import { missed, skipped } from './outcomes';

/** Slots enumerated per job per pass (a long gap is worked off in passes, each its own transaction). */
const SLOTS_PER_PASS = 500;

/** What `advanceJob` leaves to evaluate: the job as it now stands, and its claimed slots still open. */
export interface Advanced {
  job: JobRow;
  /** The open runs as claimed, in slot order. */
  open: RunRow[];
}

/**
 * Claims every slot due in [cursor, now] of one job and decides what it can decide at once.
 * Returns the claimed slots that are open (in slot order), to be evaluated next.
 */
export function advanceJob(e: EngineContext, job: JobRow, now: number): Advanced {
  const spec = specOf(job);
  const open: RunRow[] = [];
  let plan: JobPlan;
  try {
    plan = e.repo.planOf(job, spec);
  } catch (err) {
    e.logger.error('jobs: cannot compute slots', { job: job.name, error: String(err) });
    e.repo.patchJob(job.id, { next_check_at: null });
    return { job: { ...job, next_check_at: null }, open };
  }
  const settings = e.settings();
  const stops = { paused: job.paused_at !== null, killSwitch: settings.killSwitch.on };
  const { entries, truncated } = plan.slotsLimited(job.cursor, now + 1, SLOTS_PER_PASS);
  const lastEntry = entries[entries.length - 1];
  const cursor = truncated && lastEntry ? lastEntry.at : now + 1;
  // The job's next slot; it also closes the window of the last slot claimed now (no window set).
  const following = truncated ? undefined : (plan.firstAtOrAfter(cursor) ?? null);
  let newestOpen: RunRow | undefined;
  for (let k = 0; k < entries.length; k++) {
    const occ = entries[k]!;
    if (e.repo.runBySlot(job.id, occ.slot)) continue; // claimed before (by hand, or an earlier pass)
    const w = plan.windowOf(occ, k + 1 < entries.length ? entries[k + 1] : following);
    const look = firstLook(occ, w, now, spec.missedWindow, stops);
    const run = e.repo.claimRun(
      {
        ...slotRunBase(job, occ, spec.retry.maxAttempts),
        trigger: look.kind === 'open' && look.late ? 'catch_up' : 'schedule',
        nextAttemptAt: look.kind === 'open' ? Math.max(now, w.opensAt) : null,
        opensAt: w.opensAt,
        windowClosesAt: w.latestStart,
      },
      ACTOR,
      { local: occ.local, ...(occ.movedFrom ? { movedFrom: occ.movedFrom } : {}), ...(occ.shifted ? { shifted: occ.shifted } : {}) },
    );
    const timeEvidence = {
      slot: occ.slot,
      dueAt: isoTime(occ.at),
      local: occ.local,
      zone: plan.zone,
      dayType: occ.dayType ?? null,
      movedFrom: occ.movedFrom ?? null,
      shifted: occ.shifted ?? null,
      window: { opensAt: isoTime(w.opensAt), closesAt: isoTime(w.closesAt), latestStart: isoTime(w.latestStart), explicit: w.explicit },
      firstLookedAt: isoTime(now),
    };
    if (look.kind === 'skip') {
      recordCheck(e, run, 'time', 'time', 'not_ready', look.reason, timeEvidence);
      skipped(e, run, look.disposition, look.reason, ACTOR);
    } else if (look.kind === 'missed') {
      recordCheck(e, run, 'time', 'time', 'not_ready', look.outcome.reason, timeEvidence);
      missed(e, run, spec, look.outcome);
    } else {
      const reason = now < w.opensAt
        ? `slot ${occ.slot} due ${occ.local} (${plan.zone}); its window opens at ${isoTime(w.opensAt)}`
        : `slot ${occ.slot} due ${occ.local} (${plan.zone})${look.late ? `, looked at late (${Math.round((now - occ.at) / 1000)} s after due)` : ''}; window open until ${isoTime(w.latestStart)}`;
      recordCheck(e, run, 'time', 'time', now < w.opensAt ? 'not_ready' : 'ready', reason, timeEvidence);
      if (!newestOpen || run.slot_at >= newestOpen.slot_at) newestOpen = run;
      open.push(run);
    }
  }
  const next = truncated ? now : (following?.at ?? null);
  e.repo.patchJob(job.id, { cursor, next_check_at: next });
  // Backfills are other slots' runs: the open rows claimed here stay as they are.
  if (newestOpen) selectBackfills(e, job, spec, newestOpen, now);
  return { job: { ...job, cursor, next_check_at: next }, open };
}

/**
 * "Run now" claims `occ` by hand. Its window opens now at the latest and stays open long enough for
 * all its retries; with `checkPreconditions` it is due at once (the runner checks it), otherwise the
 * caller dispatches it.
 */
export function claimByHand(e: EngineContext, job: JobRow, spec: JobSpec, plan: JobPlan, occ: SlotOccurrence, now: number, checkPreconditions: boolean, reason: string, actor: string): RunRow {
  const w = plan.windowOf(occ);
  const retrySpan = totalRetryDelayS(spec.retry) * 1000;
  return e.repo.claimRun(
    {
      ...slotRunBase(job, occ, spec.retry.maxAttempts),
      trigger: 'manual',
      nextAttemptAt: checkPreconditions ? now : null,
      opensAt: Math.min(now, w.opensAt),
      windowClosesAt: Math.max(w.latestStart, now + retrySpan + 1000),
    },
    actor,
    { reason, local: occ.local },
  );
}
