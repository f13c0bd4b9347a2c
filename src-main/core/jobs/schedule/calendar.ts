/**
 * Business calendar: workdays, holidays and make-up workdays as data.
 *
 * Invariants:
 * - Precedence for a date: listed make-up workday → `extra_workday`; else listed holiday →
 *   `holiday`; else its ISO weekday in `workdays` → `workday`; else `weekend`.
 *   A workday is `workday` or `extra_workday`.
 * - Dates are civil dates `YYYY-MM-DD`. The slot functions look a calendar up with the slot's
 *   local date in the JOB's zone; `calendar.timezone` documents the zone the dates were meant in
 *   (validateSchedule warns when it differs from the job's zone).
 * - `nextWorkday` searches at most 366 days and throws CalendarError beyond that.
 * - Lookups are memoised per calendar object (WeakMap): treat a Calendar as immutable once used.
 */
import { civilDateToNaive, DAY_MS, naiveDate, naiveIsoWeekday, parseCivilDate } from './civil';
import { isValidZone } from './zone';
import type { Calendar, DayType, ValidationIssue } from './types';

export const NEXT_WORKDAY_SEARCH_DAYS = 366;

export class CalendarError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CalendarError';
  }
}

interface CalendarIndex {
  workdays: boolean[]; // index 1..7
  holidays: Set<string>;
  extra: Set<string>;
}

const indexes = new WeakMap<Calendar, CalendarIndex>();

function indexOf(calendar: Calendar): CalendarIndex {
  let idx = indexes.get(calendar);
  if (!idx) {
    const workdays: boolean[] = new Array<boolean>(8).fill(false);
    for (const d of calendar.workdays) if (Number.isInteger(d) && d >= 1 && d <= 7) workdays[d] = true;
    idx = { workdays, holidays: new Set(calendar.holidays), extra: new Set(calendar.extraWorkdays) };
    indexes.set(calendar, idx);
  }
  return idx;
}

/** Day type of a naive local date (internal fast path; `date` must equal naiveDate(naive)). */
export function dayTypeOfNaive(calendar: Calendar, naive: number, date: string): DayType {
  const idx = indexOf(calendar);
  if (idx.extra.has(date)) return 'extra_workday';
  if (idx.holidays.has(date)) return 'holiday';
  return idx.workdays[naiveIsoWeekday(naive)] ? 'workday' : 'weekend';
}

/** Day type of `date` (`YYYY-MM-DD`); throws CalendarError for a malformed date. */
export function dayType(calendar: Calendar, date: string): DayType {
  const naive = parseCivilDate(date);
  if (naive === null) throw new CalendarError(`'${date}' is not a valid YYYY-MM-DD date`);
  return dayTypeOfNaive(calendar, naive, date);
}

export function isWorkdayType(t: DayType): boolean {
  return t === 'workday' || t === 'extra_workday';
}

export function isWorkday(calendar: Calendar, date: string): boolean {
  return isWorkdayType(dayType(calendar, date));
}

/**
 * First workday strictly after `date` (or on/after it with `inclusive`). Throws CalendarError when
 * none exists within 366 days (a calendar without workdays).
 */
export function nextWorkday(calendar: Calendar, date: string, inclusive = false): string {
  let naive: number;
  try {
    naive = civilDateToNaive(date);
  } catch (e) {
    throw new CalendarError((e as Error).message);
  }
  for (let i = inclusive ? 0 : 1; i <= NEXT_WORKDAY_SEARCH_DAYS; i++) {
    const n = naive + i * DAY_MS;
    const d = naiveDate(n);
    if (isWorkdayType(dayTypeOfNaive(calendar, n, d))) return d;
  }
  throw new CalendarError(
    `calendar '${calendar.id}' has no workday within ${NEXT_WORKDAY_SEARCH_DAYS} days after ${date}`,
  );
}

/** Problems with a calendar definition; empty when it is usable. */
export function validateCalendar(calendar: Calendar, fieldPrefix = 'calendar'): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const f = (name: string): string => (fieldPrefix ? `${fieldPrefix}.${name}` : name);
  const err = (field: string, message: string): void => {
    issues.push({ field: f(field), message, severity: 'error' });
  };
  const warn = (field: string, message: string): void => {
    issues.push({ field: f(field), message, severity: 'warning' });
  };
  if (typeof calendar.id !== 'string' || calendar.id.trim() === '') err('id', 'calendar id must be a non-empty string');
  if (typeof calendar.name !== 'string' || calendar.name.trim() === '') err('name', 'calendar name must be a non-empty string');
  if (!isValidZone(calendar.timezone)) {
    err('timezone', `'${String(calendar.timezone)}' is not a known IANA time zone (for example 'Asia/Shanghai')`);
  }
  const workdays = Array.isArray(calendar.workdays) ? calendar.workdays : [];
  if (!Array.isArray(calendar.workdays)) err('workdays', 'workdays must be a list of ISO weekdays 1 (Monday) … 7 (Sunday)');
  const seen = new Set<number>();
  for (const d of workdays) {
    if (!Number.isInteger(d) || d < 1 || d > 7) {
      err('workdays', `workday ${String(d)} is not an ISO weekday; use 1 (Monday) … 7 (Sunday)`);
    } else if (seen.has(d)) {
      err('workdays', `workday ${d} is listed twice`);
    }
    seen.add(d);
  }
  const checkDates = (field: 'holidays' | 'extraWorkdays'): Set<string> => {
    const list: unknown = calendar[field];
    const out = new Set<string>();
    if (!Array.isArray(list)) {
      err(field, `${field} must be a list of YYYY-MM-DD dates`);
      return out;
    }
    for (const d of list) {
      if (typeof d !== 'string' || parseCivilDate(d) === null) {
        err(field, `'${String(d)}' in ${field} is not a valid YYYY-MM-DD date`);
      } else if (out.has(d)) {
        warn(field, `${d} is listed twice in ${field}`);
      } else {
        out.add(d);
      }
    }
    return out;
  };
  const holidays = checkDates('holidays');
  const extra = checkDates('extraWorkdays');
  for (const d of extra) {
    if (holidays.has(d)) {
      err('extraWorkdays', `${d} is both a holiday and a make-up workday; a date can only be one of them`);
    }
  }
  if (seen.size === 0 && extra.size === 0) {
    err('workdays', 'the calendar has no workdays and no make-up workdays, so no date is ever a workday');
  }
  for (const d of extra) {
    const naive = parseCivilDate(d);
    if (naive !== null && seen.has(naiveIsoWeekday(naive)) && !holidays.has(d)) {
      warn('extraWorkdays', `${d} is already an ordinary workday, so listing it as a make-up workday changes nothing`);
    }
  }
  return issues;
}
