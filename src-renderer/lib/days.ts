/** Calendar days as `YYYY-MM-DD` text (no zone) and the ISO weekdays. */

/** ISO weekday numbers (1 = Monday … 7 = Sunday) with their short names, Monday first. */
export const WEEKDAYS: Array<{ iso: number; short: string }> = [
  { iso: 1, short: 'Mon' },
  { iso: 2, short: 'Tue' },
  { iso: 3, short: 'Wed' },
  { iso: 4, short: 'Thu' },
  { iso: 5, short: 'Fri' },
  { iso: 6, short: 'Sat' },
  { iso: 7, short: 'Sun' },
];

/** Adds `n` days to a `YYYY-MM-DD` (calendar arithmetic, no zone). */
export function addDays(day: string, n: number): string {
  const [y, m, d] = day.split('-').map(Number) as [number, number, number];
  const t = new Date(Date.UTC(y, m - 1, d + n));
  return t.toISOString().slice(0, 10);
}

/** ISO weekday 1 (Monday) … 7 (Sunday) of a `YYYY-MM-DD`. */
export function isoWeekday(day: string): number {
  const [y, m, d] = day.split('-').map(Number) as [number, number, number];
  return ((new Date(Date.UTC(y, m - 1, d)).getUTCDay() + 6) % 7) + 1;
}
