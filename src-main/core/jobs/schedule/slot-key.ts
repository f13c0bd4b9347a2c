/**
 * Slot keys: the business key of one occurrence, computed in the job's zone.
 *
 * Invariants:
 * - `day` → `2026-11-30`, `week` → `2026-W48` (ISO week-year, so 2027-01-01 is `2026-W53` and
 *   2020-12-31 is `2020-W53`), `month` → `2026-11`, `minute` → `2026-11-30T09:00`
 *   (`2026-11-30T09:00:30` for intervals shorter than 60 s). An interval slot in the second pass
 *   of a repeated hour adds its UTC offset: `2026-10-25T01:15+00:00` (slots.ts).
 * - Keys are derived from the NOMINAL local time (a cron 02:30 slot shifted to 03:00 by a DST gap
 *   keeps the key `…T02:30`), so they never depend on DST resolution.
 * - Keys of one granularity sort chronologically as strings, except the offset-suffixed keys of a
 *   repeated hour (they sort inside the first pass); order slots by instant, then key.
 * - `granularityOf` (cron): minute and hour single values → `day` when day-of-month and
 *   day-of-week are `*`, `week` when only day-of-week is a single value, `month` when only
 *   day-of-month is a single value; anything else, and every interval, → `minute`. The key names
 *   the period in which the schedule fires exactly once by its form: `0 9 * * *` fires once every
 *   day (a date), `0 9 * * MON-FRI` on a set of days, so it keeps minute keys like every other
 *   shape. Changing the rule would rename the keys of existing jobs (and run their slots again).
 */
import { DateTime } from 'luxon';
import {
  civilDateToNaive,
  formatOffset,
  naiveDate,
  naiveIsoWeek,
  naiveLocal,
  naiveMonth,
  parseCivilDate,
} from './civil';
import { cronFields } from './cron';
import { isSecondPass, toNaive } from './zone';
import { ScheduleError, type Schedule, type SlotGranularity } from './types';

const SINGLE_NUMBER = /^\d+$/;
const SINGLE_NAME = /^[a-z]{3}$/i;

function isSingleValue(field: string | undefined): boolean {
  return field !== undefined && (SINGLE_NUMBER.test(field) || SINGLE_NAME.test(field));
}

/** The natural granularity of a schedule's slot keys (see header for the rule). */
export function granularityOf(schedule: Schedule): SlotGranularity {
  if (!('cron' in schedule)) return 'minute';
  const f = cronFields(schedule.cron);
  if (!f) return 'minute';
  const [minute, hour, dom, , dow] = f;
  if (!isSingleValue(minute) || !isSingleValue(hour)) return 'minute';
  const domStar = dom === '*';
  const dowStar = dow === '*';
  if (domStar && dowStar) return 'day';
  if (domStar && isSingleValue(dow)) return 'week';
  if (dowStar && isSingleValue(dom)) return 'month';
  return 'minute';
}

/** True when an interval schedule needs second-resolution keys. */
export function usesSecondKeys(schedule: Schedule): boolean {
  return 'everyS' in schedule && schedule.everyS < 60;
}

/** Key of a naive local wall-clock time (internal; naive = local reading encoded as UTC ms). */
export function keyOfNaive(naive: number, granularity: SlotGranularity, withSeconds = false): string {
  switch (granularity) {
    case 'day':
      return naiveDate(naive);
    case 'week':
      return naiveIsoWeek(naive);
    case 'month':
      return naiveMonth(naive);
    case 'minute':
      return naiveLocal(naive, withSeconds);
  }
}

const LOCAL_RE = /^(\d{4}-\d{2}-\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2}))?)?$/;
/** A minute key, optionally with the UTC offset of a repeated hour's second pass. */
const MINUTE_KEY_RE = /^(\d{4}-\d{2}-\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?([+-]\d{2}:\d{2}(?::\d{2})?)?$/;

/**
 * Key of a nominal local time `YYYY-MM-DD[THH:MM[:SS]]` (e.g. a SlotOccurrence's `local`).
 * Seconds are kept only for `minute` granularity when the input has them.
 */
export function slotKeyOfLocal(local: string, granularity: SlotGranularity): string {
  const m = LOCAL_RE.exec(local);
  const day = m?.[1] !== undefined ? parseCivilDate(m[1]) : null;
  if (!m || day === null) throw new ScheduleError(`'${local}' is not a local time YYYY-MM-DDTHH:MM`);
  const h = Number(m[2] ?? 0);
  const mi = Number(m[3] ?? 0);
  const s = Number(m[4] ?? 0);
  if (h > 23 || mi > 59 || s > 59) throw new ScheduleError(`'${local}' is not a local time YYYY-MM-DDTHH:MM`);
  return keyOfNaive(day + ((h * 60 + mi) * 60 + s) * 1000, granularity, m[4] !== undefined);
}

/**
 * Key of the slot period containing instant `atMs` in `timezone` (its local wall clock); a minute
 * key in the second pass of a repeated hour carries the offset, as interval slots do.
 */
export function slotKeyAt(atMs: number, timezone: string, granularity: SlotGranularity, withSeconds = false): string {
  const naive = toNaive(timezone, atMs);
  const key = keyOfNaive(naive, granularity, withSeconds);
  return granularity === 'minute' && isSecondPass(timezone, atMs) ? key + formatOffset(naive - atMs) : key;
}

/** Civil date `days` days after (negative: before) `date`; exact across month/year ends and leap days. */
export function shiftBusinessDate(date: string, days: number): string {
  if (!Number.isInteger(days)) throw new ScheduleError(`days must be an integer (got ${days})`);
  if (parseCivilDate(date) === null) throw new ScheduleError(`'${date}' is not a valid YYYY-MM-DD date`);
  const out = DateTime.fromISO(date, { zone: 'utc' }).plus({ days }).toISODate();
  if (out === null) throw new ScheduleError(`cannot shift '${date}' by ${days} days`);
  return out;
}

export interface ParsedSlotKey {
  granularity: SlotGranularity;
  /** First local date of the slot's period (the Monday of an ISO week, the 1st of a month). */
  date: string;
  /** Last local date of the period (same as `date` for day and minute keys). */
  endDate: string;
  /** `HH:MM` or `HH:MM:SS` for minute keys. */
  time?: string;
  /** The UTC offset of a key in the second pass of a repeated hour (`+00:00`). */
  offset?: string;
}

const WEEK_RE = /^(\d{4})-W(\d{2})$/;
const MONTH_RE = /^(\d{4})-(\d{2})$/;

/** Parse a slot key back to its local date(s); throws ScheduleError for anything malformed. */
export function parseSlotKey(key: string): ParsedSlotKey {
  const bad = (): never => {
    throw new ScheduleError(`'${key}' is not a slot key (YYYY-MM-DD, YYYY-Www, YYYY-MM or YYYY-MM-DDTHH:MM[:SS][±HH:MM])`);
  };
  const week = WEEK_RE.exec(key);
  if (week) {
    const dt = DateTime.fromObject(
      { weekYear: Number(week[1]), weekNumber: Number(week[2]), weekday: 1 },
      { zone: 'utc' },
    );
    if (!dt.isValid || dt.weekNumber !== Number(week[2])) return bad();
    return { granularity: 'week', date: dt.toISODate() ?? bad(), endDate: dt.plus({ days: 6 }).toISODate() ?? bad() };
  }
  const month = MONTH_RE.exec(key);
  if (month) {
    const first = `${month[1]}-${month[2]}-01`;
    if (parseCivilDate(first) === null) return bad();
    const last = DateTime.fromISO(first, { zone: 'utc' }).endOf('month').toISODate() ?? bad();
    return { granularity: 'month', date: first, endDate: last };
  }
  if (LOCAL_RE.test(key) && !key.includes('T')) {
    if (parseCivilDate(key) === null) return bad();
    return { granularity: 'day', date: key, endDate: key };
  }
  const m = MINUTE_KEY_RE.exec(key);
  if (!m || m[1] === undefined || parseCivilDate(m[1]) === null) return bad();
  const date = m[1];
  if (Number(m[2]) > 23 || Number(m[3]) > 59 || (m[4] !== undefined && Number(m[4]) > 59)) return bad();
  const time = m[4] === undefined ? `${m[2]}:${m[3]}` : `${m[2]}:${m[3]}:${m[4]}`;
  return { granularity: 'minute', date, endDate: date, time, ...(m[5] !== undefined ? { offset: m[5] } : {}) };
}

/** Naive midnight of the first local date of the key period containing a naive time (internal). */
export function periodStartNaive(naive: number, granularity: SlotGranularity): number {
  if (granularity === 'minute' || granularity === 'day') return civilDateToNaive(naiveDate(naive));
  return civilDateToNaive(parseSlotKey(keyOfNaive(naive, granularity)).date);
}
