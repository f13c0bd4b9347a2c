/**
 * A job's time plan: its slots, their windows, and the pure decisions the runner, the explainer and
 * the downtime simulation share (so a forecast can never disagree with what the runner does).
 *
 * Invariants:
 * 1. Slots come only from the schedule library (`expectedSlots`/`nextSlots`); keys are computed in
 *    the job's zone, never here.
 * 2. Every slot has an effective window [opensAt, closesAt): the configured execution window on its
 *    local date, or — without one — from its due instant to the next slot's due instant (a slot the
 *    runner reaches late still runs once, like anacron; older slots are "missed").
 * 3. `latestStart` = closesAt, plus `toleranceS` under `run_now`. A slot first looked at on or after
 *    its latestStart is decided by the missed-window policy, once, with the true reason: the runner
 *    was not there in time, or the slot is due after its own window closed.
 * 4. DST: windows follow `windowFor` (a window in a gap opens with its shifted slot and keeps its
 *    length; a window in a repeated hour covers both passes).
 */
import type { JobSpec, MissedWindowPolicy } from '../../common/job-schema';
import { JOB_DEFAULTS } from '../../common/job-schema';
import {
  expectedSlots,
  isWorkday,
  nextSlots,
  nextWorkday,
  parseSlotKey,
  resolveLocal,
  SCAN_HORIZON_MS,
  shiftBusinessDate,
  slotsBefore,
  windowFor,
  type Calendar,
  type SlotOccurrence,
  type SlotSpec,
} from './schedule';

const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;

export function slotSpecOf(spec: JobSpec, calendar: Calendar | undefined): SlotSpec {
  const s: SlotSpec = {
    schedule: spec.schedule.cron !== undefined
      ? { cron: spec.schedule.cron, timezone: spec.schedule.timezone ?? 'UTC' }
      : spec.schedule.timezone !== undefined
        ? { everyS: spec.schedule.everyS ?? 0, timezone: spec.schedule.timezone }
        : { everyS: spec.schedule.everyS ?? 0 },
    dstGapPolicy: spec.dstGapPolicy,
  };
  if (calendar) {
    s.calendar = calendar;
    s.calendarPolicy = spec.calendarPolicy ?? 'skip';
  }
  return s;
}

export function zoneOf(spec: JobSpec): string {
  return spec.schedule.timezone ?? 'UTC';
}

export interface SlotWindowInfo {
  opensAt: number;
  closesAt: number;
  /** closesAt (+ toleranceS for run_now): the last instant the slot may start. */
  latestStart: number;
  /** True when the window is the job's configured execution window. */
  explicit: boolean;
}

export class JobPlan {
  readonly slotSpec: SlotSpec;
  readonly zone: string;

  constructor(
    readonly spec: JobSpec,
    readonly calendar: Calendar | undefined,
  ) {
    this.slotSpec = slotSpecOf(spec, calendar);
    this.zone = zoneOf(spec);
  }

  /**
   * Entries (any disposition) due in [from, to). Every entry of the range is computed: only for a
   * range the caller has bounded by the schedule's form (a day's slots of a daily cron). Anything
   * an operator names uses the searches below, which stop at a count.
   */
  slots(from: number, to: number): SlotOccurrence[] {
    return expectedSlots(this.slotSpec, from, to);
  }

  /** The latest entry (any disposition) due at or before `at`, looked for at most `lookbackMs` back. */
  latestAtOrBefore(at: number, lookbackMs: number = SCAN_HORIZON_MS): SlotOccurrence | undefined {
    return slotsBefore(this.slotSpec, at + 1, 1, { horizonMs: lookbackMs })[0];
  }

  /**
   * The latest `due` entry strictly before `before`, looked for at most `lookbackMs` back and
   * through at most `maxEntries` entries (a long run of skipped days of a frequent job ends the
   * search rather than scanning all of it).
   */
  latestDueBefore(before: number, lookbackMs: number, maxEntries: number): SlotOccurrence | undefined {
    return slotsBefore(this.slotSpec, before, 1, { horizonMs: lookbackMs, maxEntries, dueOnly: true })[0];
  }

  /** The `n` latest entries (any disposition) due at or before `at` and at or after `notBefore`, newest first. */
  newestAtOrBefore(at: number, n: number, notBefore: number): SlotOccurrence[] {
    if (!(at >= notBefore)) return [];
    return slotsBefore(this.slotSpec, at + 1, n, { horizonMs: at + 1 - notBefore, maxEntries: 4 * n + 64 });
  }

  /** The first entry (any disposition) due at or after `at`. */
  firstAtOrAfter(at: number): SlotOccurrence | undefined {
    return nextSlots(this.slotSpec, at - 1, 1, { maxEntries: 1 })[0];
  }

  /** The first entry due strictly after `at`. */
  after(at: number): SlotOccurrence | undefined {
    return nextSlots(this.slotSpec, at, 1, { maxEntries: 1 })[0];
  }

  /** Up to `limit` entries due in [from, to), and whether the range was cut short. */
  slotsLimited(from: number, to: number, limit: number): { entries: SlotOccurrence[]; truncated: boolean } {
    if (!(to > from)) return { entries: [], truncated: false };
    const entries = nextSlots(this.slotSpec, from - 1, limit, { horizonMs: to - from, maxEntries: limit });
    const inRange = entries.filter((e) => e.at < to);
    return { entries: inRange, truncated: inRange.length >= limit };
  }

  /**
   * The entries after `after` up to the `count`-th due one (skipped ones in between included, at
   * most `maxEntries`), for previews. `truncated`: fewer than `count` due slots are listed because
   * the scan stopped at a limit (`maxEntries`, or ten years ahead). `next`: the instant to continue
   * after (the last listed entry, or where the scan stopped), or null when nothing follows.
   */
  upcoming(after: number, count: number, maxEntries: number): { entries: SlotOccurrence[]; truncated: boolean; next: number | null } {
    // One due slot and one entry more than shown tell whether anything follows.
    const scan = nextSlots(this.slotSpec, after, count + 1, { maxEntries: maxEntries + 1 });
    let due = 0;
    let k = 0;
    while (k < scan.length && k < maxEntries && due < count) if (scan[k++]!.disposition === 'due') due++;
    const entries = scan.slice(0, k);
    const last = entries[entries.length - 1];
    if (scan.length > k) return { entries, truncated: due < count, next: last ? last.at : null };
    // The scan ran to its horizon: nothing more within ten years.
    return due < count ? { entries, truncated: true, next: after + SCAN_HORIZON_MS } : { entries, truncated: false, next: null };
  }

  /**
   * Finds the occurrence of a slot key. A minute key names a local time: only the minutes around
   * the instants it can be due at are searched (its own date, and the workday it moves to under
   * `next_workday`), so an every-second job costs a few hundred entries, not days of them. Other
   * keys (a day, week or month: a schedule that fires once per such period by its form) search
   * their dates ± a few days, and moved slots.
   */
  find(slot: string): SlotOccurrence | undefined {
    const parsed = parseSlotKey(slot);
    if (parsed.time !== undefined) return this.findLocalTime(slot, parsed.date, parsed.time);
    const from = Date.parse(`${parsed.date}T00:00:00Z`) - 2 * DAY_MS;
    const to = Date.parse(`${parsed.endDate}T00:00:00Z`) + 3 * DAY_MS;
    const near = this.slots(from, to).find((o) => o.slot === slot);
    if (near || this.spec.calendarPolicy !== 'next_workday') return near;
    // A slot moved by next_workday can be due long after its own date (a long holiday).
    return this.slots(to, to + 40 * DAY_MS).find((o) => o.slot === slot);
  }

  private findLocalTime(slot: string, date: string, time: string): SlotOccurrence | undefined {
    const [h = 0, m = 0, sec = 0] = time.split(':').map(Number);
    const ofDay = ((h * 60 + m) * 60 + sec) * 1000;
    const dates = [date];
    const cal = this.slotSpec.calendar;
    if (cal && this.slotSpec.calendarPolicy === 'next_workday' && !isWorkday(cal, date)) dates.push(nextWorkday(cal, date));
    for (const d of dates) {
      const r = resolveLocal(this.zone, Date.parse(`${d}T00:00:00Z`) + ofDay);
      // A shifted (DST gap) slot is due at the gap's end, an offset key in the repeated hour's second pass.
      const hit = this.slots(r.at - MINUTE_MS, (r.laterAt ?? r.at) + MINUTE_MS + 1).find((o) => o.slot === slot);
      if (hit) return hit;
    }
    return undefined;
  }

  /** Period between slots in ms (interval, or the smallest gap among the next few cron slots). */
  periodMs(from: number): number {
    if (this.spec.schedule.everyS !== undefined) return this.spec.schedule.everyS * 1000;
    const next = nextSlots(this.slotSpec, from, 6, { maxEntries: 12 });
    let gap = Infinity;
    for (let i = 1; i < next.length; i++) gap = Math.min(gap, next[i]!.at - next[i - 1]!.at);
    return Number.isFinite(gap) && gap > 0 ? gap : DAY_MS;
  }

  recheckMs(from: number): number {
    const r = (this.spec.window?.recheckEveryS ?? JOB_DEFAULTS.recheckEveryS) * 1000;
    return Math.max(1000, Math.min(r, this.spec.window ? r : this.periodMs(from)));
  }

  /** `following`: the entry after `occ` when the caller already knows it (saves a slot scan). */
  windowOf(occ: SlotOccurrence, following?: SlotOccurrence | null): SlotWindowInfo {
    let opensAt: number;
    let closesAt: number;
    const explicit = this.spec.window !== undefined;
    if (this.spec.window) {
      const w = windowFor(occ, this.spec.window, this.zone);
      opensAt = w.opensAt;
      closesAt = w.closesAt ?? opensAt;
    } else {
      opensAt = occ.at;
      const next = following !== undefined && (following === null || following.at > occ.at) ? following : this.after(occ.at);
      closesAt = next ? next.at : occ.at + 366 * DAY_MS;
    }
    const tolerance = this.spec.missedWindow === 'run_now' ? (this.spec.toleranceS ?? 0) * 1000 : 0;
    return { opensAt, closesAt, latestStart: Math.max(opensAt, closesAt) + tolerance, explicit };
  }
}

/** What a slot gets when the runner first looks at it at `now`. */
export type FirstLook =
  | { kind: 'skip'; disposition: 'skipped_calendar' | 'skipped_dst'; reason: string }
  | { kind: 'open'; late: boolean }
  | { kind: 'missed'; outcome: MissedOutcome; why: string };

export interface MissedOutcome {
  status: 'failed' | 'skipped';
  disposition: 'missed' | 'folded' | 'skipped_paused' | 'skipped_kill_switch' | 'skipped_disabled' | 'skipped_not_ready' | 'skipped_maintenance' | 'skipped_quota' | 'skipped_budget';
  backfill: boolean;
  alert: boolean;
  reason: string;
}

export function firstLook(
  occ: SlotOccurrence,
  w: SlotWindowInfo,
  now: number,
  policy: MissedWindowPolicy,
  stops: { paused: boolean; killSwitch: boolean } = { paused: false, killSwitch: false },
): FirstLook {
  if (occ.disposition === 'calendar_skip') {
    return { kind: 'skip', disposition: 'skipped_calendar', reason: `${occ.local.slice(0, 10)} is a ${occ.dayType ?? 'non-workday'} in the job's calendar` };
  }
  if (occ.disposition === 'dst_skip') {
    return { kind: 'skip', disposition: 'skipped_dst', reason: `local time ${occ.local} does not exist (DST gap) and dstGapPolicy is 'skip'` };
  }
  // `late`: the window itself has closed and only run_now's tolerance still lets it start.
  if (now < w.latestStart) return { kind: 'open', late: now >= w.closesAt };
  // A slot due when its own window has already closed (an interval slot outside the window) never
  // had a chance; saying "Gaffer was not running" would blame the wrong thing.
  const why = w.explicit && occ.at >= w.closesAt
    ? `slot ${occ.slot} is due at ${occ.local}, after its window closed at ${new Date(w.closesAt).toISOString()}, so it could not start`
    : `the window closed ${Math.round((now - w.closesAt) / 1000)} s before the runner could look at the slot (Gaffer was not running)`;
  if (stops.killSwitch) {
    return { kind: 'missed', why, outcome: { status: 'skipped', disposition: 'skipped_kill_switch', backfill: false, alert: false, reason: 'the kill switch was on while the window passed' } };
  }
  if (stops.paused) {
    return { kind: 'missed', why, outcome: { status: 'skipped', disposition: 'skipped_paused', backfill: false, alert: false, reason: 'the job was paused while the window passed' } };
  }
  return { kind: 'missed', why, outcome: missedOutcome(policy, why) };
}

/** The missed-window policy applied to a slot that cannot start any more. */
export function missedOutcome(policy: MissedWindowPolicy, reason: string, notReady = false): MissedOutcome {
  switch (policy) {
    case 'run_now':
      // Beyond the tolerance: a slot that should have run goes to the backfill queue.
      return notReady
        ? { status: 'skipped', disposition: 'missed', backfill: true, alert: true, reason: `${reason}; queued for backfill (runs at the next window once ready)` }
        : { status: 'failed', disposition: 'missed', backfill: true, alert: true, reason: `${reason}; beyond the tolerance, queued for backfill` };
    case 'fold_into_next':
      return { status: 'skipped', disposition: 'folded', backfill: false, alert: false, reason: `${reason}; folded into the next run` };
    case 'skip_and_alert':
      return { status: 'skipped', disposition: 'missed', backfill: false, alert: true, reason: `${reason}; skipped (policy skip_and_alert)` };
  }
}

/** Business-date placeholders of a slot. */
export function slotDates(slot: string): { slot: string; date: string; yesterday: string; tomorrow: string; month: string } {
  const date = parseSlotKey(slot).date;
  return { slot, date, yesterday: shiftBusinessDate(date, -1), tomorrow: shiftBusinessDate(date, 1), month: date.slice(0, 7) };
}

const PLACEHOLDER = /\{([a-z]+)([+-]\d{1,4})?\}/g;

/** Resolves `{slot}`, `{date}`, `{yesterday}`, `{tomorrow}`, `{date±N}`, `{month}` in `text`. */
export function resolvePlaceholders(text: string, slot: string): { text: string; used: Record<string, string> } {
  const d = slotDates(slot);
  const used: Record<string, string> = {};
  const out = text.replace(PLACEHOLDER, (whole, name: string, offset: string | undefined) => {
    let v: string | undefined;
    if (offset !== undefined) v = name === 'date' ? shiftBusinessDate(d.date, Number(offset)) : undefined;
    else if (name === 'slot') v = d.slot;
    else if (name === 'date') v = d.date;
    else if (name === 'yesterday') v = d.yesterday;
    else if (name === 'tomorrow') v = d.tomorrow;
    else if (name === 'month') v = d.month;
    if (v === undefined) throw new Error(`unknown placeholder ${whole}`);
    used[whole] = v;
    return v;
  });
  return { text: out, used };
}

/** Placeholders in `text` that `resolvePlaceholders` would refuse. */
export function unknownPlaceholders(text: string): string[] {
  const bad: string[] = [];
  for (const m of text.matchAll(PLACEHOLDER)) {
    const [whole, name, offset] = m;
    const ok = offset !== undefined ? name === 'date' : ['slot', 'date', 'yesterday', 'tomorrow', 'month'].includes(name!);
    if (!ok) bad.push(whole);
  }
  return bad;
}
