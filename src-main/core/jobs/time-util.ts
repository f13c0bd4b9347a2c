/** Small zone helpers for the jobs module (luxon; the schedule library does the slot arithmetic). */
import { DateTime } from 'luxon';

/** UTC ms of local midnight of civil `date` (YYYY-MM-DD) in `zone` (first valid instant of the day). */
export function resolveLocalDate(zone: string, date: string): number {
  const dt = DateTime.fromISO(date, { zone });
  if (!dt.isValid) throw new Error(`cannot resolve ${date} in ${zone}`);
  return dt.startOf('day').toMillis();
}

/** `YYYY-MM-DDTHH:MM` wall clock of instant `ms` in `zone`. */
export function localString(ms: number, zone: string): string {
  return DateTime.fromMillis(ms, { zone }).toFormat("yyyy-MM-dd'T'HH:mm");
}

/** Local minutes after midnight and ISO weekday (1 = Monday) of instant `ms` in `zone`. */
export function localClock(ms: number, zone: string): { minutes: number; weekday: number; date: string } {
  const dt = DateTime.fromMillis(ms, { zone });
  return { minutes: dt.hour * 60 + dt.minute, weekday: dt.weekday, date: dt.toISODate() ?? '' };
}

/** UTC ms of local `date` + `HH:MM` in `zone` (a time in a DST gap moves to the end of the gap). */
export function localInstant(zone: string, date: string, hhmm: string): number {
  if (hhmm === '24:00') return DateTime.fromISO(date, { zone }).plus({ days: 1 }).startOf('day').toMillis();
  const [h, m] = hhmm.split(':').map(Number) as [number, number];
  return DateTime.fromISO(date, { zone }).set({ hour: h, minute: m, second: 0, millisecond: 0 }).toMillis();
}

/** The last day computed per zone: every dispatch asks for today (the attempt ceiling's count). */
const lastDays = new Map<string, { startAt: number; day: string; nextDayAt: number }>();
const LAST_DAYS_KEPT = 256;

/**
 * The civil day of instant `ms` in `zone` (YYYY-MM-DD) and the UTC ms the next one starts. The day
 * of each zone is kept while instants fall inside it (a burst of dispatches asks luxon once a day,
 * not once per dispatch); an instant outside it, earlier or later, computes afresh.
 */
export function localDay(ms: number, zone: string): { day: string; nextDayAt: number } {
  const last = lastDays.get(zone);
  if (last && ms >= last.startAt && ms < last.nextDayAt) return { day: last.day, nextDayAt: last.nextDayAt };
  const dt = DateTime.fromMillis(ms, { zone });
  const out = { startAt: dt.startOf('day').toMillis(), day: dt.toISODate() ?? '', nextDayAt: dt.plus({ days: 1 }).startOf('day').toMillis() };
  if (lastDays.size >= LAST_DAYS_KEPT) lastDays.clear();
  lastDays.set(zone, out);
  return { day: out.day, nextDayAt: out.nextDayAt };
}
