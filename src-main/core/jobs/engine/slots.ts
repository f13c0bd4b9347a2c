/**
 * Layer 1, time: claiming slots. The runner claims every slot of a job due in [cursor, now] and
 * decides at once what the first look can decide (calendar/DST skip, missed window); an operator's
 * "run now" claims one slot by hand.
 *
 * Invariants:
 * 1. One run per (job, slot): a slot with a run row — its own, or a range row spanning it — is never
 *    claimed again; the row is inserted ("claimed", pending) before anything about the slot is
 *    dispatched.
 * 2. A slot first looked at after its latest start gets exactly one decision, by the missed-window
 *    policy (plan.ts `firstLook`). Nothing is ever decided twice: the run row is the proof.
 * 3. A long gap costs O(1) rows per job: its newest slots are decided one by one, its older ones
 *    that get the same decision share one range row (slot-walk.ts) — no backfill is queued for
 *    them. Each call scans at most ENTRIES_PER_CALL entries and claims at most CLAIMS_PER_CALL
 *    slots one by one, in the caller's transaction; the job's cursor says how far it got, and a
 *    range left open at the end of a call is extended by the next.
 */
import { isoTime } from '../../../common/iso-time';
import { totalRetryDelayS, type JobSpec } from '../../../common/job-schema';
import type { FirstLook, JobPlan, SlotWindowInfo } from '../plan';
import { slotRunBase, specOf, type JobRow, type RunRow } from '../rows';
import type { SlotOccurrence } from '../schedule';
import { ONE_BY_ONE, sameDecision, walkSlots, type Decided, type SlotStep } from '../slot-walk';
import { selectBackfills } from './backfills';
import { recordCheck } from './checks';
import { ACTOR, type EngineContext } from './context';
import { missed, skipped } from './outcomes';

/** Slots claimed one by one per job per call (each is a few rows). */
const CLAIMS_PER_CALL = 500;
/** Entries scanned per job per call (arithmetic only: the older slots of a gap write one row per range). */
const ENTRIES_PER_CALL = 5000;

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
  // What already has a row in [cursor, now]: normally nothing; after a backward step, what ran.
  const own = e.repo.runSlotsBetween(job.id, job.cursor, now);
  const ownSlots = new Set(own.map((r) => r.slot));
  const ranges = e.repo.rangesOverlapping(job.id, job.cursor, now + 1);
  const rangeAt = (at: number) => ranges.find((r) => r.slot_at <= at && at <= r.range_last_at!);
  const walk = walkSlots(plan, job.cursor, now, {
    stops: { paused: job.paused_at !== null, killSwitch: settings.killSwitch.on },
    covered: (occ) => ownSlots.has(occ.slot) || rangeAt(occ.at) !== undefined,
    hasRow: (occ) => e.repo.runBySlot(job.id, occ.slot) !== undefined,
    anyCovered: (from, to) => own.some((r) => r.slot_at >= from && r.slot_at < to) || ranges.some((r) => r.range_last_at! >= from && r.slot_at < to),
    maxEntries: ENTRIES_PER_CALL,
    maxOnes: CLAIMS_PER_CALL,
  });
  let newestOpen: RunRow | undefined;
  // The range row spanning the previous step's slot when that slot was its last: a range step
  // right after it with the same decision extends it (a gap worked off over several calls).
  let extendable: RunRow | undefined;
  for (const step of walk.steps) {
    if (step.kind === 'covered') {
      const r = rangeAt(step.occ.at);
      extendable = r && r.range_last_at === step.occ.at ? r : undefined;
      continue;
    }
    if (step.kind === 'range') {
      if (extendable && sameDecision(decisionOf(extendable), step.look)) extendRange(e, extendable, step);
      else claimRange(e, job, spec, plan, step, now);
      extendable = undefined;
      continue;
    }
    extendable = undefined;
    const run = claimOne(e, job, spec, plan, step.occ, step.w, step.look, now);
    if (run) {
      if (!newestOpen || run.slot_at >= newestOpen.slot_at) newestOpen = run;
      open.push(run);
    }
  }
  const cursor = walk.cursor;
  const next = walk.done ? (walk.following?.at ?? null) : now;
  e.repo.patchJob(job.id, { cursor, next_check_at: next });
  // Backfills are other slots' runs: the open rows claimed here stay as they are.
  if (newestOpen) selectBackfills(e, job, spec, newestOpen, now);
  return { job: { ...job, cursor, next_check_at: next }, open };
}

/**
 * Claims one slot and decides what its first look decides; returns the run when its window is open.
 * A key that has a row already (due at another instant: the job moved to another zone) is not
 * claimed again, and nothing is written for it (invariant 1).
 */
function claimOne(e: EngineContext, job: JobRow, spec: JobSpec, plan: JobPlan, occ: SlotOccurrence, w: SlotWindowInfo, look: FirstLook, now: number): RunRow | undefined {
  const run = e.repo.claimFreeRun(
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
  if (!run) return undefined;
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
    return undefined;
  }
  if (look.kind === 'missed') {
    recordCheck(e, run, 'time', 'time', 'not_ready', look.outcome.reason, timeEvidence);
    missed(e, run, spec, look.outcome);
    return undefined;
  }
  const reason = now < w.opensAt
    ? `slot ${occ.slot} due ${occ.local} (${plan.zone}); its window opens at ${isoTime(w.opensAt)}`
    : `slot ${occ.slot} due ${occ.local} (${plan.zone})${look.late ? `, looked at late (${Math.round((now - occ.at) / 1000)} s after due)` : ''}; window open until ${isoTime(w.latestStart)}`;
  recordCheck(e, run, 'time', 'time', now < w.opensAt ? 'not_ready' : 'ready', reason, timeEvidence);
  return run;
}

type RangeStep = Extract<SlotStep, { kind: 'range' }>;

/** The decision a range row records, as a first look (to compare with the next range step). */
function decisionOf(r: RunRow): Decided {
  if (r.status === 'skipped' && (r.disposition === 'skipped_calendar' || r.disposition === 'skipped_dst')) return { kind: 'skip', disposition: r.disposition, reason: r.last_error ?? '' };
  const alert = r.disposition === 'missed' || r.disposition === 'skipped_not_ready';
  return { kind: 'missed', why: '', outcome: { status: r.status === 'failed' ? 'failed' : 'skipped', disposition: r.disposition as Extract<Decided, { kind: 'missed' }>['outcome']['disposition'], backfill: false, alert, reason: '' } };
}

/** What a range row says: how many slots, from which to which, and the one decision they got. */
function rangeReason(step: { first: Pick<SlotOccurrence, 'slot' | 'at'>; last: SlotOccurrence; look: Decided }, slots: number): string {
  const span = `${slots} slot${slots === 1 ? '' : 's'} from ${step.first.slot} to ${step.last.slot} (due ${isoTime(step.first.at)} … ${isoTime(step.last.at)})`;
  const head = `${span}, recorded as one row (a gap's slots older than its newest ${ONE_BY_ONE} get one row per decision)`;
  if (step.look.kind === 'skip') return `${head}: ${step.look.reason}`;
  const o = step.look.outcome;
  // run_now queues the newest missed slots of a gap for backfill, not these: say so, and how to run one.
  if (o.backfill) return `${head}: ${step.look.why}; beyond the tolerance, not queued for backfill (run one of them by hand: "run now" with its slot)`;
  return `${head}: ${o.reason}`;
}

/** One row for a run of slots decided alike: claimed for its first slot, spanning to its last. */
function claimRange(e: EngineContext, job: JobRow, spec: JobSpec, plan: JobPlan, step: RangeStep, now: number): void {
  const { first, firstW, last, lastW, slots, look } = step;
  const range = { slots, lastSlot: last.slot, lastAt: last.at };
  const run = e.repo.claimRun(
    {
      ...slotRunBase(job, first, spec.retry.maxAttempts),
      trigger: 'schedule',
      nextAttemptAt: null,
      opensAt: firstW.opensAt,
      windowClosesAt: lastW.latestStart,
      range,
    },
    ACTOR,
    { local: first.local, range: { slots, lastSlot: last.slot, lastAt: isoTime(last.at) } },
  );
  const reason = rangeReason(step, slots);
  recordCheck(e, run, 'time', 'time', 'not_ready', reason, {
    slot: first.slot,
    dueAt: isoTime(first.at),
    local: first.local,
    zone: plan.zone,
    range: { slots, lastSlot: last.slot, lastAt: isoTime(last.at), lastLocal: last.local },
    window: { opensAt: isoTime(firstW.opensAt), latestStart: isoTime(lastW.latestStart), explicit: firstW.explicit },
    firstLookedAt: isoTime(now),
  });
  if (look.kind === 'skip') skipped(e, run, look.disposition, reason, ACTOR);
  else missed(e, run, spec, { ...look.outcome, backfill: false, reason });
}

/** A range row of an earlier call grows by the slots of this one (a long gap worked off in calls). */
function extendRange(e: EngineContext, r: RunRow, step: RangeStep): void {
  const slots = (r.range_slots ?? 1) + step.slots;
  const reason = rangeReason({ first: { slot: r.slot, at: r.slot_at }, last: step.last, look: step.look }, slots);
  e.repo.patchRun(r.id, { range_slots: slots, range_last_slot: step.last.slot, range_last_at: step.last.at, window_closes_at: Math.max(r.window_closes_at ?? 0, step.lastW.latestStart), last_error: reason });
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
