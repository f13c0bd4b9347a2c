/**
 * Import holidays and make-up workdays from iCalendar (.ics) text, using ical.js.
 *
 * Invariants:
 * - All-day events (VALUE=DATE) cover every date from DTSTART up to, not including, DTEND (one day
 *   when DTEND is absent). Timed events cover the local date(s) they touch (end exclusive): in
 *   `opts.timezone`, else X-WR-TIMEZONE, else the wall-clock date as written.
 * - An event is a make-up workday when its SUMMARY or CATEGORIES match MAKE_UP_WORKDAY_PATTERN
 *   (and do not say "non-working"); every other event is a holiday. A date that is both becomes a
 *   make-up workday, with a warning.
 * - Recurring events (RRULE/RDATE, EXDATE, RECURRENCE-ID overrides) are expanded; an unbounded rule
 *   is expanded for `recurrenceYears` years from its start, with a warning. Cancelled events are
 *   ignored.
 * - Unparseable text throws IcsParseError; anything odd but usable becomes a warning. Text that
 *   is not valid Unicode (an unpaired surrogate) is unparseable: names and warnings taken from it
 *   end up stored and audited, so it is refused rather than imported half-readable.
 * - Output date lists are sorted and unique.
 */
import ICAL from 'ical.js';
import { DateTime } from 'luxon';
import { isWellFormedText } from '../../../common/text';
import { isValidZone } from './zone';

export class IcsParseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'IcsParseError';
  }
}

export const MAKE_UP_WORKDAY_PATTERN = /make-?up|working ?day|workday|补班|上班|调休上班/i;
const NOT_WORKING_PATTERN = /non-?working|non-?workday|not a work|no work|不上班/i;

export interface IcsParseOptions {
  /** Zone to date timed events in (default: X-WR-TIMEZONE, else the date as written). */
  timezone?: string;
  /** How many years an unbounded recurrence is expanded (default 10). */
  recurrenceYears?: number;
}

export interface IcsCalendarData {
  holidays: string[];
  extraWorkdays: string[];
  warnings: string[];
  /** X-WR-CALNAME, when present. */
  name?: string;
  /** X-WR-TIMEZONE, when present and a valid IANA zone. */
  timezone?: string;
}

const MAX_EVENT_DAYS = 366;
const MAX_OCCURRENCES = 5000;

type IcalTime = InstanceType<typeof ICAL.Time>;
type IcalComponent = InstanceType<typeof ICAL.Component>;

function pad(n: number, w = 2): string {
  return String(n).padStart(w, '0');
}

function isMakeUpWorkday(summary: string, categories: string[]): boolean {
  const text = [summary, ...categories].join(' | ');
  if (NOT_WORKING_PATTERN.test(text)) return false;
  return MAKE_UP_WORKDAY_PATTERN.test(text);
}

/** Date `YYYY-MM-DD` of an ICAL.Time as written (its own wall clock). */
function writtenDate(t: IcalTime): string {
  return `${pad(t.year, 4)}-${pad(t.month)}-${pad(t.day)}`;
}

/** Parse .ics text into holiday and make-up workday dates. */
export function parseIcsCalendar(text: string, opts: IcsParseOptions = {}): IcsCalendarData {
  if (typeof text !== 'string' || text.trim() === '') throw new IcsParseError('the .ics text is empty');
  if (!isWellFormedText(text)) throw new IcsParseError('the .ics text is not valid Unicode (it holds an unpaired UTF-16 surrogate)');
  if (opts.timezone !== undefined && !isValidZone(opts.timezone)) {
    throw new IcsParseError(`'${opts.timezone}' is not a known IANA time zone`);
  }
  let jcal: unknown;
  try {
    jcal = ICAL.parse(text);
  } catch (e) {
    throw new IcsParseError(`not valid iCalendar text: ${e instanceof Error ? e.message : String(e)}`);
  }
  const roots: unknown[] = Array.isArray(jcal) && typeof jcal[0] === 'string' ? [jcal] : Array.isArray(jcal) ? jcal : [];
  const calendars: IcalComponent[] = [];
  for (const root of roots) {
    if (Array.isArray(root) && root[0] === 'vcalendar') calendars.push(new ICAL.Component(root as unknown as unknown[]));
  }
  if (calendars.length === 0) throw new IcsParseError('no BEGIN:VCALENDAR … END:VCALENDAR block found');

  const warnings: string[] = [];
  const holidays = new Set<string>();
  const extra = new Set<string>();
  const recurrenceYears = opts.recurrenceYears ?? 10;
  let name: string | undefined;
  let calZone: string | undefined;
  let warnedUtcDates = false;

  for (const cal of calendars) {
    const calName = cal.getFirstPropertyValue('x-wr-calname');
    if (typeof calName === 'string' && name === undefined) name = calName;
    const wrZone = cal.getFirstPropertyValue('x-wr-timezone');
    if (typeof wrZone === 'string') {
      if (isValidZone(wrZone)) calZone ??= wrZone;
      else warnings.push(`X-WR-TIMEZONE '${wrZone}' is not a known IANA zone and was ignored`);
    }
    const targetZone = opts.timezone ?? calZone;

    const vevents = cal.getAllSubcomponents('vevent');
    if (vevents.length === 0) warnings.push('the calendar contains no events');
    const exceptionsByUid = new Map<string, IcalComponent[]>();
    for (const ve of vevents) {
      if (ve.hasProperty('recurrence-id')) {
        const uid = String(ve.getFirstPropertyValue('uid') ?? '');
        const list = exceptionsByUid.get(uid) ?? [];
        list.push(ve);
        exceptionsByUid.set(uid, list);
      }
    }

    /** Dates covered by [start, end) of one occurrence. */
    const datesOf = (start: IcalTime, end: IcalTime | null, tzid: string | undefined, label: string): string[] => {
      if (start.isDate) {
        const first = writtenDate(start);
        const last = end && end.isDate ? writtenDate(end) : null;
        const out: string[] = [];
        let d = DateTime.fromISO(first, { zone: 'utc' });
        const stop = last ? DateTime.fromISO(last, { zone: 'utc' }) : d.plus({ days: 1 });
        if (!d.isValid) return [];
        if (stop <= d) return [first];
        while (d < stop && out.length < MAX_EVENT_DAYS) {
          out.push(d.toISODate() ?? first);
          d = d.plus({ days: 1 });
        }
        if (d < stop) warnings.push(`${label} spans more than ${MAX_EVENT_DAYS} days; only the first ${MAX_EVENT_DAYS} were imported`);
        return out;
      }
      const toLocal = (t: IcalTime): DateTime => {
        const fields = { year: t.year, month: t.month, day: t.day, hour: t.hour, minute: t.minute, second: t.second };
        const isUtc = t.zone?.tzid === 'UTC';
        const sourceZone = isUtc ? 'utc' : tzid && isValidZone(tzid) ? tzid : undefined;
        if (sourceZone && targetZone) {
          return DateTime.fromObject(fields, { zone: sourceZone }).setZone(targetZone);
        }
        if (isUtc && !warnedUtcDates) {
          warnedUtcDates = true;
          warnings.push('timed events in UTC were dated by their UTC date; pass a timezone to date them locally');
        }
        return DateTime.fromObject(fields, { zone: 'utc' });
      };
      const s = toLocal(start);
      const e = end ? toLocal(end) : s;
      const out: string[] = [];
      let d = s.startOf('day');
      const lastInstant = e > s ? e.minus({ milliseconds: 1 }) : s;
      while (d <= lastInstant && out.length < MAX_EVENT_DAYS) {
        out.push(d.toISODate() ?? '');
        d = d.plus({ days: 1 });
      }
      return out.filter((x) => x !== '');
    };

    for (const ve of vevents) {
      if (ve.hasProperty('recurrence-id')) continue; // handled through its master event
      const summary = String(ve.getFirstPropertyValue('summary') ?? '').trim();
      const label = summary ? `event '${summary}'` : `event ${String(ve.getFirstPropertyValue('uid') ?? '(no UID)')}`;
      const status = String(ve.getFirstPropertyValue('status') ?? '').toUpperCase();
      if (status === 'CANCELLED') {
        warnings.push(`${label} is cancelled and was ignored`);
        continue;
      }
      if (!ve.hasProperty('dtstart')) {
        warnings.push(`${label} has no DTSTART and was ignored`);
        continue;
      }
      const categories = ve
        .getAllProperties('categories')
        .flatMap((p) => p.getValues())
        .map((v: unknown) => String(v));
      const target = isMakeUpWorkday(summary, categories) ? extra : holidays;
      const tzidParam = ve.getFirstProperty('dtstart')?.getParameter('tzid');
      const tzid = typeof tzidParam === 'string' ? tzidParam : undefined;
      if (tzid && !isValidZone(tzid) && targetZone) {
        warnings.push(`${label} uses TZID '${tzid}', which is not an IANA zone; its date was taken as written`);
      }
      const uid = String(ve.getFirstPropertyValue('uid') ?? '');
      let event: InstanceType<typeof ICAL.Event>;
      try {
        event = new ICAL.Event(ve, { strictExceptions: true, exceptions: exceptionsByUid.get(uid) ?? [] });
      } catch (err) {
        warnings.push(`${label} could not be read (${err instanceof Error ? err.message : String(err)}) and was ignored`);
        continue;
      }
      try {
        if (!event.isRecurring()) {
          for (const d of datesOf(event.startDate, event.endDate, tzid, label)) target.add(d);
          continue;
        }
        const rrule = ve.getFirstPropertyValue('rrule');
        const bounded = rrule instanceof ICAL.Recur ? rrule.count !== null || rrule.until !== null : true;
        const lastYear = event.startDate.year + recurrenceYears - 1;
        if (!bounded) {
          warnings.push(`${label} repeats without end; it was expanded for ${recurrenceYears} years (${event.startDate.year}–${lastYear})`);
        }
        const it = event.iterator();
        let n = 0;
        for (let occ = it.next(); occ; occ = it.next()) {
          if (occ.year > lastYear) break;
          if (++n > MAX_OCCURRENCES) {
            warnings.push(`${label} has more than ${MAX_OCCURRENCES} occurrences; the rest were ignored`);
            break;
          }
          const details = event.getOccurrenceDetails(occ);
          const itemStatus = String(details.item.component.getFirstPropertyValue('status') ?? '').toUpperCase();
          if (itemStatus === 'CANCELLED') continue;
          for (const d of datesOf(details.startDate, details.endDate, tzid, label)) target.add(d);
        }
      } catch (err) {
        warnings.push(`${label} could not be expanded (${err instanceof Error ? err.message : String(err)}) and was ignored`);
      }
    }
  }

  for (const d of extra) {
    if (holidays.has(d)) {
      holidays.delete(d);
      warnings.push(`${d} is marked both as a holiday and as a make-up workday; it was kept as a make-up workday`);
    }
  }
  const result: IcsCalendarData = {
    holidays: [...holidays].sort(),
    extraWorkdays: [...extra].sort(),
    warnings,
  };
  if (name !== undefined) result.name = name;
  if (calZone !== undefined) result.timezone = calZone;
  return result;
}
