/**
 * Civil (zone-less) date and wall-clock helpers, internal to the schedule library.
 *
 * Invariants:
 * - A "naive" time is a local wall-clock reading encoded as if it were UTC epoch ms
 *   (`Date.UTC(y, m - 1, d, hh, mm)`); it is never an instant and never leaves this library.
 * - Calendar arithmetic is delegated to the built-in proleptic Gregorian calendar (`Date.UTC`,
 *   `getUTC*`) or to luxon; nothing here reads the clock.
 */
import { DateTime } from 'luxon';

export const MINUTE_MS = 60_000;
export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;

const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;
const HHMM_RE = /^(\d{2}):(\d{2})$/;

/** Naive midnight of a strict `YYYY-MM-DD` date, or null when malformed or not a real date. */
export function parseCivilDate(date: string): number | null {
  const m = DATE_RE.exec(date);
  if (!m) return null;
  const y = Number(m[1]);
  const mo = Number(m[2]);
  const d = Number(m[3]);
  if (mo < 1 || mo > 12 || d < 1 || d > 31) return null;
  const naive = Date.UTC(y, mo - 1, d);
  const back = new Date(naive);
  // Date.UTC maps years 0..99 to 1900..1999; setUTCFullYear is not needed for 4-digit >= 1000.
  if (y < 1000 || back.getUTCFullYear() !== y || back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d) {
    return null;
  }
  return naive;
}

export function isCivilDate(date: string): boolean {
  return parseCivilDate(date) !== null;
}

/** Like parseCivilDate, but throws on a bad date. */
export function civilDateToNaive(date: string, what = 'date'): number {
  const naive = parseCivilDate(date);
  if (naive === null) throw new RangeError(`${what} '${date}' is not a valid YYYY-MM-DD date`);
  return naive;
}

const pad2 = (n: number): string => (n < 10 ? `0${n}` : String(n));
const pad4 = (n: number): string => String(n).padStart(4, '0');

/** `YYYY-MM-DD` of a naive time. */
export function naiveDate(naive: number): string {
  const d = new Date(naive);
  return `${pad4(d.getUTCFullYear())}-${pad2(d.getUTCMonth() + 1)}-${pad2(d.getUTCDate())}`;
}

/** `YYYY-MM-DDTHH:MM` (or `…:SS` with seconds) of a naive time. */
export function naiveLocal(naive: number, withSeconds = false): string {
  const d = new Date(naive);
  const base = `${pad4(d.getUTCFullYear())}-${pad2(d.getUTCMonth() + 1)}-${pad2(d.getUTCDate())}T${pad2(d.getUTCHours())}:${pad2(d.getUTCMinutes())}`;
  return withSeconds ? `${base}:${pad2(d.getUTCSeconds())}` : base;
}

/** A UTC offset in ms as `+HH:MM` (`+HH:MM:SS` when it has seconds, as old local mean times do). */
export function formatOffset(offsetMs: number): string {
  const sign = offsetMs < 0 ? '-' : '+';
  const total = Math.round(Math.abs(offsetMs) / 1000);
  const s = total % 60;
  return `${sign}${pad2(Math.floor(total / 3600))}:${pad2(Math.floor(total / 60) % 60)}${s ? `:${pad2(s)}` : ''}`;
}

/** `YYYY-MM` of a naive time. */
export function naiveMonth(naive: number): string {
  const d = new Date(naive);
  return `${pad4(d.getUTCFullYear())}-${pad2(d.getUTCMonth() + 1)}`;
}

/** ISO week key `YYYY-Www` (ISO week-year, so 2027-01-01 is `2026-W53`). */
export function naiveIsoWeek(naive: number): string {
  const dt = DateTime.fromMillis(naive, { zone: 'utc' });
  return `${pad4(dt.weekYear)}-W${pad2(dt.weekNumber)}`;
}

/** Naive midnight of the day containing a naive time. */
export function naiveDayStart(naive: number): number {
  return Math.floor(naive / DAY_MS) * DAY_MS;
}

/** ISO weekday 1 = Monday … 7 = Sunday of a naive time (1970-01-01 was a Thursday). */
export function naiveIsoWeekday(naive: number): number {
  const days = Math.floor(naive / DAY_MS);
  return ((((days + 3) % 7) + 7) % 7) + 1;
}

/** Minutes after midnight of `HH:MM` (00:00..23:59, plus 24:00 when allowed), or null. */
export function parseHHMM(text: string, allow2400 = false): number | null {
  const m = HHMM_RE.exec(text);
  if (!m) return null;
  const h = Number(m[1]);
  const mi = Number(m[2]);
  if (allow2400 && h === 24 && mi === 0) return 24 * 60;
  if (h > 23 || mi > 59) return null;
  return h * 60 + mi;
}

export function formatHHMM(minutes: number): string {
  return `${pad2(Math.floor(minutes / 60))}:${pad2(minutes % 60)}`;
}
