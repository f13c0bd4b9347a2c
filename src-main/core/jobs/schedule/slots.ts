/**
 * Expected slots of a job: the main API of the schedule library.
 *
 * Invariants:
 * - Pure: every function takes the times it needs; nothing reads the clock or schedules timers.
 * - `expectedSlots(spec, from, to)` returns every slot whose due instant `at` is in the half-open
 *   interval [from, to), ordered by `at` then slot key, and no two entries share a slot key.
 *   Consecutive intervals partition the slots: each slot appears in exactly one of them.
 * - Slots are never silently dropped: a slot on a non-workday under `skip` is returned with
 *   disposition `calendar_skip`; a nonexistent local time under `dstGapPolicy: 'skip'` is returned
 *   as `dst_skip` (its `at` is the end of the DST gap, where it would have run).
 * - DST, cron: a nonexistent local time runs at the first valid instant after the gap (`shifted:
 *   'dst_gap'`) under the default `shift_forward`; a local time that occurs twice runs once, at
 *   the earlier instant (a cron names wall-clock times).
 * - DST, intervals: a slot exists every `everyS` seconds of real time, always. In the second pass
 *   of a repeated hour its minute key carries the UTC offset (`2026-10-25T01:15+00:00` after
 *   `2026-10-25T01:15` at +01:00), so no two instants share a key.
 * - When several occurrences share a key (a coarser `granularity` than the schedule's own), the
 *   earliest occurrence owns the key, independent of the queried interval.
 * - `next_workday`: a slot on a non-workday keeps its own key and `dayType`, and is due on the next
 *   workday at the same nominal local time (`movedFrom` = its original date, `local` = the new
 *   local time).
 * - Cost is linear in the number of occurrences scanned: the interval plus about an hour of margin,
 *   the run of non-workdays before it under `next_workday` (for an interval, only the instants of
 *   those days that move into the interval), and the current key period when the granularity is
 *   coarser than the schedule's own. An every-second job has 86 400 occurrences a
 *   day, so no caller may scan a range it did not bound by a count: `nextSlots` and `slotsBefore`
 *   search outwards in growing windows and stop at a number of entries; `slotScanMeter` counts
 *   what was scanned (tests prove a path is bounded with it).
 */
import { civilDateToNaive, DAY_MS, formatOffset, HOUR_MS, MINUTE_MS, naiveDate, naiveDayStart, naiveLocal, parseHHMM } from './civil';
import { dayTypeOfNaive, isWorkdayType, nextWorkday } from './calendar';
import { cronNaiveTimes, parseCron, type ParsedCron } from './cron';
import { granularityOf, keyOfNaive, periodStartNaive, usesSecondKeys } from './slot-key';
import { isSecondPass, isValidZone, offsetAt, resolveLocal, toNaive } from './zone';
import {
  ScheduleError,
  type Calendar,
  type CalendarPolicy,
  type DayType,
  type DstGapPolicy,
  type ExecutionWindow,
  type SlotGranularity,
  type SlotOccurrence,
  type SlotSpec,
} from './types';

interface Resolved {
  zone: string;
  granularity: SlotGranularity;
  natural: SlotGranularity;
  withSeconds: boolean;
  calendar: Calendar | undefined;
  calendarPolicy: CalendarPolicy;
  dstGapPolicy: DstGapPolicy;
  cron: ParsedCron | undefined;
  everyS: number;
}

function resolveSpec(spec: SlotSpec): Resolved {
  const { schedule } = spec;
  const zone = schedule.timezone ?? 'UTC';
  if (!isValidZone(zone)) throw new ScheduleError(`unknown time zone '${String(zone)}'`);
  let cron: ParsedCron | undefined;
  let everyS = 0;
  if ('cron' in schedule) {
    cron = parseCron(schedule.cron);
  } else if ('everyS' in schedule) {
    everyS = schedule.everyS;
    if (!Number.isInteger(everyS) || everyS < 1) {
      throw new ScheduleError(`everyS must be a whole number of seconds >= 1 (got ${String(everyS)})`);
    }
  } else {
    throw new ScheduleError('schedule needs either { cron, timezone } or { everyS }');
  }
  const natural = granularityOf(schedule);
  return {
    zone,
    granularity: spec.granularity ?? natural,
    natural,
    withSeconds: usesSecondKeys(schedule),
    calendar: spec.calendar,
    calendarPolicy: spec.calendarPolicy ?? 'skip',
    dstGapPolicy: spec.dstGapPolicy ?? 'shift_forward',
    cron,
    everyS,
  };
}

interface DayInfo {
  date: string;
  type: DayType;
  /** Naive midnight of the workday a slot of this day moves to (next_workday only). */
  movedTo?: number;
}

/**
 * Every occurrence `expectedSlots` considers counts one here. Tests read it to prove that a path
 * is bounded by the slots it scans (not by wall time), and set `limit` to make a scan past it
 * throw at once (an unbounded path fails fast instead of running for minutes).
 */
export const slotScanMeter = { considered: 0, limit: Infinity };

/** Slots due in [fromMs, toMs); see the module header for the rules. */
export function expectedSlots(spec: SlotSpec, fromMs: number, toMs: number): SlotOccurrence[] {
  const r = resolveSpec(spec);
  if (!Number.isFinite(fromMs) || !Number.isFinite(toMs)) {
    throw new ScheduleError('fromMs and toMs must be finite epoch milliseconds');
  }
  if (!(toMs > fromMs)) return [];
  const { zone, calendar } = r;
  const moving = calendar !== undefined && r.calendarPolicy === 'next_workday';

  const days = new Map<number, DayInfo>();
  const dayInfo = (dayStart: number): DayInfo => {
    let info = days.get(dayStart);
    if (!info) {
      const date = naiveDate(dayStart);
      info = { date, type: calendar ? dayTypeOfNaive(calendar, dayStart, date) : 'workday' };
      if (moving && calendar && !isWorkdayType(info.type)) {
        info.movedTo = civilDateToNaive(nextWorkday(calendar, date));
      }
      days.set(dayStart, info);
    }
    return info;
  };

  // Which nominal local times can be due in [from, to): a local time L is due within the zone's
  // offsets around it, at ∈ [L - maxOffset, L - minOffset] (gap shifts and fall-back picks stay in
  // that range), so L ∈ [from + minOffset, to + maxOffset]. Offsets are sampled a day either side
  // (the same one-change-per-day assumption as resolveLocal) and an hour of slack is added.
  const near = (t: number): number[] => [offsetAt(zone, t - DAY_MS), offsetAt(zone, t), offsetAt(zone, t + DAY_MS)];
  let naiveLo = fromMs + Math.min(...near(fromMs)) - HOUR_MS;
  const naiveHi = toMs + Math.max(...near(toMs)) + HOUR_MS;
  // A slot moved by next_workday is enumerated at its original date: include the non-workdays
  // that lead up to the first day of the range.
  const firstDay = naiveDayStart(naiveLo);
  if (moving) {
    let day = naiveDayStart(naiveLo);
    if (!isWorkdayType(dayInfo(day).type)) naiveLo = day;
    for (let i = 0; i < 366 && !isWorkdayType(dayInfo(day - DAY_MS).type); i++) {
      day -= DAY_MS;
      naiveLo = day;
    }
  }
  // Keys coarser than the schedule's own: the first occurrence of the period owns the key.
  if (r.granularity !== r.natural) naiveLo = Math.min(naiveLo, periodStartNaive(naiveLo, r.granularity));

  const out: SlotOccurrence[] = [];
  const seen = new Set<string>();

  const consider = (naive: number, instant: number | undefined): void => {
    if (++slotScanMeter.considered > slotScanMeter.limit) throw new Error(`slot scan limit of ${slotScanMeter.limit} occurrences exceeded`);
    let slot = keyOfNaive(naive, r.granularity, r.withSeconds);
    // An interval instant whose minute key was already used by the first pass of a repeated hour.
    if (instant !== undefined && r.granularity === 'minute' && isSecondPass(zone, instant)) slot += formatOffset(naive - instant);
    if (seen.has(slot)) return;
    seen.add(slot);
    let disposition: SlotOccurrence['disposition'] = 'due';
    let dueNaive = naive;
    let movedFrom: string | undefined;
    let type: DayType | undefined;
    if (calendar) {
      const dayStart = naiveDayStart(naive);
      const info = dayInfo(dayStart);
      type = info.type;
      if (!isWorkdayType(info.type)) {
        if (info.movedTo !== undefined) {
          movedFrom = info.date;
          dueNaive = info.movedTo + (naive - dayStart);
        } else {
          disposition = 'calendar_skip';
        }
      }
    }
    let at: number;
    let shifted = false;
    if (instant !== undefined && dueNaive === naive) {
      at = instant;
    } else {
      const res = resolveLocal(zone, dueNaive);
      at = res.at;
      if (res.kind === 'gap' && disposition === 'due') {
        if (r.dstGapPolicy === 'skip') disposition = 'dst_skip';
        else shifted = true;
      }
    }
    if (at < fromMs || at >= toMs) return;
    const occ: SlotOccurrence = { slot, at, local: naiveLocal(dueNaive, r.withSeconds), disposition };
    if (type !== undefined) occ.dayType = type;
    if (shifted) occ.shifted = 'dst_gap';
    if (movedFrom !== undefined) occ.movedFrom = movedFrom;
    out.push(occ);
  };

  if (r.cron) {
    for (const naive of cronNaiveTimes(r.cron, naiveLo, naiveHi)) consider(naive, undefined);
  } else {
    // Instants, not local times: an interval slot always exists, it only has to be named. With
    // keys of the schedule's own granularity every instant has its own key, so the scan covers
    // [from, to) — and, under next_workday, only those instants of the non-workdays before it that
    // move into it (not whole days of them: a weekend of an every-second job is 172 800 instants).
    // With coarser keys (the first occurrence of a period owns its key) it starts at the first
    // instant whose local time can be >= naiveLo.
    const period = r.everyS * 1000;
    const scan = (from: number, to: number): void => {
      for (let u = Math.ceil(from / period) * period; u < to; u += period) consider(toNaive(zone, u), u);
    };
    if (r.granularity !== r.natural) scan(naiveLo - Math.max(...near(naiveLo)) - HOUR_MS, toMs);
    else {
      scan(fromMs, toMs);
      // Non-workdays with instants before `from`: the run leading up to the range, and the day `from` falls on.
      const lastDay = Math.max(firstDay, naiveDayStart(fromMs + Math.max(...near(fromMs)) + HOUR_MS));
      for (let day = naiveDayStart(naiveLo); moving && day <= lastDay; day += DAY_MS) {
        const movedTo = dayInfo(day).movedTo;
        const into = movedTo === undefined ? undefined : movedInto(zone, period, day, movedTo, fromMs, toMs);
        if (into) scan(into.from, Math.min(into.to, fromMs));
      }
    }
  }

  let sorted = true;
  for (let i = 1; i < out.length && sorted; i++) {
    const a = out[i - 1];
    const b = out[i];
    if (a && b && (a.at > b.at || (a.at === b.at && a.slot > b.slot))) sorted = false;
  }
  if (!sorted) out.sort((a, b) => a.at - b.at || (a.slot < b.slot ? -1 : a.slot > b.slot ? 1 : 0));
  return out;
}

/**
 * The instants of interval slots of non-workday `day` (naive midnight) whose slot, moved to the
 * workday `movedTo` at the same local time, is due in [fromMs, toMs): a superset, as an instant
 * range. The moved instant grows with the instant (binary search), except in a repeated hour,
 * which an hour of slack covers on a day whose offset changes.
 */
function movedInto(zone: string, period: number, day: number, movedTo: number, fromMs: number, toMs: number): { from: number; to: number } | undefined {
  const offs = [offsetAt(zone, day - DAY_MS), offsetAt(zone, day + DAY_MS / 2), offsetAt(zone, day + 2 * DAY_MS)];
  const slack = Math.max(...offs) === Math.min(...offs) ? period : HOUR_MS + period;
  // The day's instants (and a little of its neighbours': `consider` places those correctly).
  const lo = day - Math.max(...offs);
  const hi = day + DAY_MS - Math.min(...offs);
  const movedAt = (u: number) => resolveLocal(zone, movedTo + (toNaive(zone, u) - day)).at;
  const first = (x: number): number => {
    let a = 0;
    let b = Math.ceil((hi - lo) / period);
    while (a < b) {
      const m = (a + b) >> 1;
      if (movedAt(lo + m * period) >= x) b = m;
      else a = m + 1;
    }
    return lo + a * period;
  };
  const from = Math.max(lo, first(fromMs) - slack);
  const to = Math.min(hi + period, first(toMs) + slack);
  return to > from ? { from, to } : undefined;
}

export interface ScanOptions {
  /** How far to look, ms (default 10 years). */
  horizonMs?: number;
  /** Stop after this many entries of any disposition (default 100 000). */
  maxEntries?: number;
}

/** How far `nextSlots` and `slotAt` look by default: ten years. */
export const SCAN_HORIZON_MS = 3660 * DAY_MS;
const DEFAULT_MAX_ENTRIES = 100_000;

function initialChunk(spec: SlotSpec, count: number): number {
  if ('everyS' in spec.schedule) {
    return Math.min(2 * DAY_MS, Math.max(MINUTE_MS, spec.schedule.everyS * 1000 * (count + 1)));
  }
  return 2 * DAY_MS;
}

/**
 * Entries due strictly after `afterMs`, in order, up to and including the `count`-th `due` one.
 * Skipped entries (calendar_skip, dst_skip) in between are included. Fewer `due` entries are
 * returned when the horizon or maxEntries is reached first (a job that never runs returns only
 * skipped entries or nothing).
 */
export function nextSlots(spec: SlotSpec, afterMs: number, count: number, opts: ScanOptions = {}): SlotOccurrence[] {
  const out: SlotOccurrence[] = [];
  if (!(count > 0)) return out;
  const horizon = opts.horizonMs ?? SCAN_HORIZON_MS;
  const maxEntries = opts.maxEntries ?? DEFAULT_MAX_ENTRIES;
  const limit = afterMs + 1 + horizon;
  let from = afterMs + 1;
  let chunk = initialChunk(spec, count);
  let due = 0;
  while (from < limit) {
    const to = Math.min(from + chunk, limit);
    for (const e of expectedSlots(spec, from, to)) {
      out.push(e);
      if (e.disposition === 'due' && ++due >= count) return out;
      if (out.length >= maxEntries) return out;
    }
    from = to;
    chunk *= 2;
  }
  return out;
}

export interface SlotAtResult {
  /** The latest slot (any disposition) due at or before the instant, or null within the horizon. */
  current: SlotOccurrence | null;
  /** The first slot (any disposition) due after the instant, or null within the horizon. */
  next: SlotOccurrence | null;
}

export interface BackwardScanOptions extends ScanOptions {
  /** Only `due` entries count towards `count` (skipped ones are passed over). */
  dueOnly?: boolean;
}

/**
 * The `count` latest entries due strictly before `beforeMs`, newest first: the mirror of
 * `nextSlots`. Windows double backwards from `beforeMs` and never overlap, and the scan stops once
 * `maxEntries` occurrences were scanned (at most about twice that: the last window is as long as
 * all before it) or at the horizon, whichever comes first.
 */
export function slotsBefore(spec: SlotSpec, beforeMs: number, count: number, opts: BackwardScanOptions = {}): SlotOccurrence[] {
  const out: SlotOccurrence[] = [];
  if (!(count > 0)) return out;
  const floor = beforeMs - (opts.horizonMs ?? SCAN_HORIZON_MS);
  const maxEntries = opts.maxEntries ?? DEFAULT_MAX_ENTRIES;
  let hi = beforeMs;
  let chunk = initialChunk(spec, count);
  let scanned = 0;
  while (hi > floor && out.length < count && scanned < maxEntries) {
    const lo = Math.max(floor, hi - chunk);
    const found = expectedSlots(spec, lo, hi);
    scanned += found.length;
    for (let i = found.length - 1; i >= 0 && out.length < count; i--) {
      const o = found[i]!;
      if (!opts.dueOnly || o.disposition === 'due') out.push(o);
    }
    hi = lo;
    chunk *= 2;
  }
  return out;
}

/** The slot an instant falls in, and the one after it: for "why didn't it run at T". */
export function slotAt(spec: SlotSpec, atMs: number, opts: Pick<ScanOptions, 'horizonMs'> = {}): SlotAtResult {
  const horizon = opts.horizonMs ?? SCAN_HORIZON_MS;
  const current = slotsBefore(spec, atMs + 1, 1, { horizonMs: horizon })[0] ?? null;
  const next = nextSlots(spec, atMs, 1, { horizonMs: horizon, maxEntries: 1 })[0] ?? null;
  return { current, next };
}

export interface SlotWindow {
  /** When the slot may start: max(due, window start on the slot's local date). */
  opensAt: number;
  /** Window end on that local date, or null without a window. opensAt >= closesAt means no chance. */
  closesAt: number | null;
}

/**
 * Execution window of an occurrence on its local due date (`occurrence.local`, so a slot moved by
 * next_workday uses the window of the day it moved to). `end` may be `24:00`. DST:
 * - a repeated hour: an ambiguous start uses the earlier instant and an ambiguous end the later
 *   one, so the window covers the whole local span (both passes);
 * - a gap: when an edge does not exist, the window keeps its length from its start, and a start
 *   that does not exist moves to the end of the gap with its slot (02:30–02:45 on a New York
 *   spring-forward day is 03:00–03:15 EDT; 01:00–02:45 lasts until 03:45 EDT). A window whose
 *   edges both exist keeps them (01:30–03:30 that day is one real hour).
 */
export function windowFor(
  occurrence: Pick<SlotOccurrence, 'at' | 'local'>,
  window: ExecutionWindow | undefined,
  timezone: string,
): SlotWindow {
  if (!window) return { opensAt: occurrence.at, closesAt: null };
  if (!isValidZone(timezone)) throw new ScheduleError(`unknown time zone '${String(timezone)}'`);
  const start = parseHHMM(window.start);
  const end = parseHHMM(window.end, true);
  if (start === null) throw new ScheduleError(`window start '${window.start}' is not HH:MM`);
  if (end === null) throw new ScheduleError(`window end '${window.end}' is not HH:MM (or 24:00)`);
  if (end <= start) throw new ScheduleError(`window end ${window.end} must be after start ${window.start}`);
  const day = civilDateToNaive(occurrence.local.slice(0, 10), 'slot local date');
  const s = resolveLocal(timezone, day + start * MINUTE_MS);
  const e = resolveLocal(timezone, day + end * MINUTE_MS);
  const closesAt = s.kind === 'gap' || e.kind === 'gap' ? s.at + (end - start) * MINUTE_MS : (e.laterAt ?? e.at);
  return { opensAt: Math.max(occurrence.at, s.at), closesAt };
}
