/**
 * What an edit of a business calendar changes, as pure functions: the check before a save, the
 * merge of an imported .ics file into a calendar, and the difference the audit row records.
 */
import { GafferError } from '../../common/errors';
import { validateCalendar, type Calendar } from './schedule';

/** Refuses a calendar with errors (`bad_request` naming the first field; all issues in the detail). */
export function checkCalendar(c: Calendar): void {
  const issues = validateCalendar(c, '').filter((i) => i.severity === 'error');
  if (issues.length) throw new GafferError('bad_request', `invalid calendar at "${issues[0]!.field}": ${issues[0]!.message}`, { issues });
}

/**
 * The calendar after importing `data`: `merge` adds to what it has, `replace` keeps only what was
 * imported. A day that is a make-up workday is never also a holiday.
 */
export function mergeImported(before: Calendar, data: { holidays: string[]; extraWorkdays: string[] }, mode: 'merge' | 'replace'): Calendar {
  const merge = mode === 'merge';
  const extra = new Set(merge ? [...before.extraWorkdays, ...data.extraWorkdays] : data.extraWorkdays);
  const holidays = new Set([...(merge ? before.holidays : []), ...data.holidays].filter((d) => !extra.has(d)));
  return { id: before.id, name: before.name, timezone: before.timezone, workdays: before.workdays, holidays: [...holidays].sort(), extraWorkdays: [...extra].sort() };
}

/** How many holidays and make-up workdays `after` has that `before` did not. */
export function addedDays(before: Calendar, after: Calendar): { holidays: number; extraWorkdays: number } {
  return {
    holidays: after.holidays.filter((d) => !before.holidays.includes(d)).length,
    extraWorkdays: after.extraWorkdays.filter((d) => !before.extraWorkdays.includes(d)).length,
  };
}

/** The audit row's account of an edit (at most 50 days each way). */
export function calendarDiff(a: Calendar, b: Calendar): Record<string, unknown> {
  const diff = (x: string[], y: string[]) => ({ added: y.filter((d) => !x.includes(d)).slice(0, 50), removed: x.filter((d) => !y.includes(d)).slice(0, 50) });
  return { holidays: diff(a.holidays, b.holidays), extraWorkdays: diff(a.extraWorkdays, b.extraWorkdays), workdays: { from: a.workdays, to: b.workdays } };
}
