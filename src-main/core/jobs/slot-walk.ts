/**
 * The runner's first look at the slots of [from, to], as steps: one slot at a time, or — for the
 * older slots of a long gap — one step for a whole run of slots that get the same decision. Pure
 * (the decisions are plan.ts's), so the runner (engine/slots.ts) and the downtime simulation
 * (insight.ts) cannot disagree.
 *
 * Invariants:
 * 1. The newest ONE_BY_ONE slots due at or before `to` (less run_now's tolerance) are stepped one
 *    by one, exactly as without this module: each gets its own row, backfill, alert, fold.
 * 2. An older slot that the first look decides at once (calendar/DST skip, missed) joins a `range`
 *    step with its neighbours that get the same decision; an older slot whose window is still
 *    open, or a slot `covered` by a row already (its own, or a range's), breaks the range.
 *    A whole day of an every-second job slept through is therefore one step, and one row.
 * 3. Bounded per call: at most `maxEntries` entries scanned and `maxOnes` one-by-one steps;
 *    `cursor` says where the next call starts (entries at that instant are looked at again, and
 *    found covered). An interval without calendar or window has only due slots, each missed once
 *    its successor is due (plus the tolerance): its older slots are counted, not scanned.
 */
import type { JobSpec } from '../../common/job-schema';
import { firstLook, type FirstLook, type JobPlan, type SlotWindowInfo } from './plan';
import type { SlotOccurrence } from './schedule';

/** The newest slots of a gap decided one by one (invariant 1); older ones collapse into ranges. */
export const ONE_BY_ONE = 100;

/** A first look that decides the slot at once. */
export type Decided = Exclude<FirstLook, { kind: 'open' }>;

export type SlotStep =
  | { kind: 'one'; occ: SlotOccurrence; w: SlotWindowInfo; look: FirstLook }
  | { kind: 'range'; first: SlotOccurrence; firstW: SlotWindowInfo; last: SlotOccurrence; lastW: SlotWindowInfo; slots: number; look: Decided }
  | { kind: 'covered'; occ: SlotOccurrence };

export interface WalkOptions {
  stops: { paused: boolean; killSwitch: boolean };
  /** The slot has a row already (its own, or a range's), as far as the caller's rows of [from, to] tell. */
  covered(occ: SlotOccurrence): boolean;
  /**
   * The slot's key has a row, wherever it is due (a job whose zone changed has runs of its keys at
   * other instants): asked only of a slot about to start a range row. A `one` step's key is not
   * asked: its claim is an INSERT that writes nothing when the key is taken (the caller's
   * `claimFreeRun`), one statement where a read and the INSERT were two on every trigger.
   */
  hasRow(occ: SlotOccurrence): boolean;
  /** Some slot due in [from, to) has a row already (decides whether a stretch may be counted). */
  anyCovered(from: number, to: number): boolean;
  maxEntries: number;
  maxOnes: number;
}

export interface Walk {
  steps: SlotStep[];
  /** Where the next call starts: `to + 1` once everything up to `to` was looked at. */
  cursor: number;
  done: boolean;
  /** When done: the first slot after `to` (null: none within the horizon). */
  following?: SlotOccurrence | null;
}

/** Two first looks that write the same row: same status and disposition (and alert). */
export function sameDecision(a: Decided, b: Decided): boolean {
  if (a.kind === 'skip') return b.kind === 'skip' && a.disposition === b.disposition;
  if (b.kind === 'skip') return false;
  return a.outcome.status === b.outcome.status && a.outcome.disposition === b.outcome.disposition && a.outcome.alert === b.outcome.alert;
}

/**
 * Slots due before this instant and decided at once collapse into ranges: the ONE_BY_ONE-th newest
 * slot due at or before `to − tolerance`, or −∞ when [from, to] has fewer slots than that.
 */
export function collapseBefore(plan: JobPlan, spec: JobSpec, from: number, to: number): number {
  const t = to - (spec.missedWindow === 'run_now' ? (spec.toleranceS ?? 0) * 1000 : 0);
  // Too short a stretch for ONE_BY_ONE slots even at the schedule's densest (the runner's every pass).
  const densest = spec.schedule.everyS !== undefined ? spec.schedule.everyS * 1000 : 60_000;
  if (!(t >= from) || (t - from) / densest < ONE_BY_ONE) return -Infinity;
  const newest = plan.newestAtOrBefore(t, ONE_BY_ONE, from);
  return newest.length < ONE_BY_ONE ? -Infinity : newest[ONE_BY_ONE - 1]!.at;
}

/** Every slot of an interval job without calendar or window is due, and its window closes when the next is due. */
function uniform(plan: JobPlan): boolean {
  return plan.spec.schedule.everyS !== undefined && plan.calendar === undefined && plan.spec.window === undefined;
}

export function walkSlots(plan: JobPlan, from: number, to: number, o: WalkOptions): Walk {
  const spec = plan.spec;
  const steps: SlotStep[] = [];
  const boundary = collapseBefore(plan, spec, from, to);
  let start = from;
  if (boundary > from && uniform(plan) && !o.anyCovered(from, boundary)) {
    const counted = countedRange(plan, from, boundary, to, o.stops);
    if (counted && !o.hasRow(counted.first)) {
      steps.push(counted);
      start = boundary;
    }
  }

  const { entries, truncated } = plan.slotsLimited(start, to + 1, o.maxEntries);
  const following = truncated ? undefined : (plan.firstAtOrAfter(to + 1) ?? null);
  let range: Extract<SlotStep, { kind: 'range' }> | undefined;
  const close = () => {
    if (range) steps.push(range);
    range = undefined;
  };
  let ones = 0;
  for (let k = 0; k < entries.length; k++) {
    const occ = entries[k]!;
    if (o.covered(occ)) {
      close();
      steps.push({ kind: 'covered', occ });
      continue;
    }
    const w = plan.windowOf(occ, k + 1 < entries.length ? entries[k + 1] : following);
    const look = firstLook(occ, w, to, spec.missedWindow, o.stops);
    const collapses = occ.at < boundary && look.kind !== 'open';
    if (collapses && range && sameDecision(range.look, look)) {
      Object.assign(range, { last: occ, lastW: w, slots: range.slots + 1, look });
      continue;
    }
    close();
    if (collapses) {
      // About to start a range row: a key taken elsewhere is covered (and breaks the range).
      if (o.hasRow(occ)) steps.push({ kind: 'covered', occ });
      else range = { kind: 'range', first: occ, firstW: w, last: occ, lastW: w, slots: 1, look: look as Decided };
      continue;
    }
    if (ones >= o.maxOnes) return { steps, cursor: occ.at, done: false };
    steps.push({ kind: 'one', occ, w, look });
    ones++;
  }
  close();
  const last = entries[entries.length - 1];
  if (truncated && last) return { steps, cursor: last.at, done: false };
  return { steps, cursor: to + 1, done: true, following: following ?? null };
}

/** The slots of an interval job due in [from, before), counted: all missed alike (see `uniform`). */
function countedRange(plan: JobPlan, from: number, before: number, now: number, stops: WalkOptions['stops']): Extract<SlotStep, { kind: 'range' }> | undefined {
  const period = plan.spec.schedule.everyS! * 1000;
  const slots = Math.ceil(before / period) - Math.ceil(from / period);
  const first = plan.firstAtOrAfter(from);
  const last = plan.firstAtOrAfter((Math.ceil(before / period) - 1) * period);
  if (slots < 1 || !first || !last || last.at >= before) return undefined;
  const firstW = plan.windowOf(first);
  const lastW = plan.windowOf(last);
  const look = firstLook(last, lastW, now, plan.spec.missedWindow, stops);
  // `before` is a slot due at least the tolerance before `now`, so every slot before it is missed.
  if (look.kind !== 'missed' || firstLook(first, firstW, now, plan.spec.missedWindow, stops).kind !== 'missed') return undefined;
  return { kind: 'range', first, firstW, last, lastW, slots, look };
}
