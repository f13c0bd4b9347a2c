/**
 * Pure logic of the Calendars view: the editor's form ↔ a business calendar, validated with the
 * shared zod schema (common/job-schema.ts) at each field, plus the checks that need no server
 * (a date both a holiday and a make-up workday, a date listed twice).
 */
import { calendarInput, zodIssues, type BusinessCalendar, type CalendarInput, type JobIssue } from '../../../src-main/common/job-schema';

export interface CalendarForm {
  id: string;
  name: string;
  timezone: string;
  workdays: number[];
  /** One date per line (or separated by commas/spaces). */
  holidays: string;
  extraWorkdays: string;
}


export function emptyCalendarForm(timezone = 'UTC'): CalendarForm {
  return { id: '', name: '', timezone, workdays: [1, 2, 3, 4, 5], holidays: '', extraWorkdays: '' };
}

export function formFromCalendar(c: BusinessCalendar | CalendarInput): CalendarForm {
  return { id: c.id, name: c.name, timezone: c.timezone, workdays: [...c.workdays].sort((a, b) => a - b), holidays: c.holidays.join('\n'), extraWorkdays: c.extraWorkdays.join('\n') };
}

export function parseDates(text: string): string[] {
  return text
    .split(/[\s,;]+/)
    .map((s) => s.trim())
    .filter(Boolean);
}

export interface CalendarValidation {
  calendar: CalendarInput;
  valid: boolean;
  issues: JobIssue[];
}

export function validateCalendarForm(f: CalendarForm): CalendarValidation {
  const holidays = parseDates(f.holidays);
  const extraWorkdays = parseDates(f.extraWorkdays);
  const calendar: CalendarInput = { id: f.id.trim(), name: f.name.trim(), timezone: f.timezone.trim(), workdays: [...new Set(f.workdays)].sort((a, b) => a - b), holidays, extraWorkdays };
  const issues: JobIssue[] = [];
  const r = calendarInput.safeParse(calendar);
  if (!r.success) {
    for (const i of zodIssues(r.error)) {
      // "holidays.3" → the holidays field, naming the value.
      const m = /^(holidays|extraWorkdays)\.(\d+)$/.exec(i.field);
      if (m) issues.push({ field: m[1]!, message: `“${(m[1] === 'holidays' ? holidays : extraWorkdays)[Number(m[2])]}”: ${i.message}`, severity: 'error' });
      else issues.push(i);
    }
  }
  // The schema checks the shape; a real calendar date is checked here (2026-02-30 is not one).
  const realDate = (list: string[], field: string) => {
    for (const d of list) {
      const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(d);
      if (!m) continue;
      const t = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
      if (t.toISOString().slice(0, 10) !== d) issues.push({ field, message: `“${d}” is not a date of the calendar`, severity: 'error' });
    }
  };
  realDate(holidays, 'holidays');
  realDate(extraWorkdays, 'extraWorkdays');
  const dup = (list: string[], field: string) => {
    const seen = new Set<string>();
    for (const d of list) {
      if (seen.has(d)) issues.push({ field, message: `${d} is listed twice`, severity: 'warning' });
      seen.add(d);
    }
  };
  dup(holidays, 'holidays');
  dup(extraWorkdays, 'extraWorkdays');
  const both = holidays.filter((d) => extraWorkdays.includes(d));
  if (both.length) issues.push({ field: 'extraWorkdays', message: `${both.slice(0, 3).join(', ')} ${both.length === 1 ? 'is' : 'are'} both a holiday and a make-up workday; keep it in one list`, severity: 'error' });
  if (calendar.workdays.length === 0) issues.push({ field: 'workdays', message: 'no workday at all: only make-up workdays would count', severity: 'warning' });
  return { calendar, valid: !issues.some((i) => i.severity === 'error'), issues };
}

/** Upcoming holidays and make-up workdays (for the list), nearest first. */
export function upcomingDates(c: Pick<BusinessCalendar, 'holidays' | 'extraWorkdays'>, today: string, n = 3): Array<{ day: string; kind: 'holiday' | 'extra_workday' }> {
  return [...c.holidays.map((day) => ({ day, kind: 'holiday' as const })), ...c.extraWorkdays.map((day) => ({ day, kind: 'extra_workday' as const }))]
    .filter((x) => x.day >= today)
    .sort((a, b) => (a.day < b.day ? -1 : 1))
    .slice(0, n);
}
