/**
 * Save-time validation of a job: shape (zod), contradictions between settings (common/job-schema),
 * and the schedule library's checks (cron, zone, window vs cron, calendar, DST).
 *
 * Invariants:
 * 1. One validator: create, update (the patched spec as a whole), `validate` and the editor's
 *    server check all call `validateJobInput`; a spec with an issue of severity `error` is refused,
 *    warnings are returned with the saved job.
 * 2. One notion of severity: issues depend on the normalised spec only (defaults are values, not
 *    choices), so a stored job validates exactly as the input it was created from, and a job saved
 *    with warnings can be edited as long as the edit adds no error.
 */
import { GafferError } from '../../common/errors';
import {
  jobContradictions,
  jobSpecInput,
  normalizeJobSpec,
  retryReachIssue,
  toleranceTooLong,
  zodIssues,
  type JobIssue,
  type JobSpec,
} from '../../common/job-schema';
import { JobPlan, unknownPlaceholders } from './plan';
import { validateSchedule, type Calendar, type Schedule } from './schedule';

export interface JobValidation {
  spec: JobSpec | null;
  issues: JobIssue[];
  ok: boolean;
}

export function validateJobInput(input: unknown, calendarOf: (id: string) => Calendar | undefined, now: number): JobValidation {
  const parsed = jobSpecInput.safeParse(input);
  if (!parsed.success) return { spec: null, issues: zodIssues(parsed.error, '', input), ok: false };
  const spec = normalizeJobSpec(parsed.data);
  const issues: JobIssue[] = [...jobContradictions(spec)];
  const calendar = spec.calendar !== undefined ? calendarOf(spec.calendar) : undefined;
  if (spec.calendar !== undefined && !calendar) {
    issues.push({ field: 'calendar', message: `there is no calendar '${spec.calendar}'; create it first (Calendars) or pick an existing one`, severity: 'error' });
  }
  const sched = validateSchedule(spec.schedule as Schedule, spec.window, calendar, spec.calendarPolicy, { fromMs: now });
  for (const i of sched) {
    // Reported once, by jobContradictions (or as an unknown calendar above).
    if (i.field === 'calendarPolicy' && calendar === undefined) continue;
    issues.push({ field: i.field, message: i.message, severity: i.severity });
  }
  spec.preconditions.forEach((p, idx) => {
    const texts: Array<[string, string]> =
      p.kind === 'file' ? [['path', p.path]] : p.kind === 'http' ? [['url', p.url]] : p.kind === 'command' ? p.argv.map((a, k) => [`argv.${k}`, a] as [string, string]) : p.kind === 'signal' && p.key ? [['key', p.key]] : [];
    for (const [field, text] of texts) {
      const bad = unknownPlaceholders(text);
      if (bad.length) issues.push({ field: `preconditions.${idx}.${field}`, message: `unknown placeholder ${bad.join(', ')}; use {slot}, {date}, {yesterday}, {tomorrow}, {date-N}, {date+N} or {month}`, severity: 'error' });
    }
  });
  const scheduleOk = !issues.some((i) => i.severity === 'error' && (i.field.startsWith('schedule') || i.field === 'calendar' || i.field.startsWith('calendar.')));
  if (scheduleOk) {
    try {
      const plan = new JobPlan(spec, calendar);
      const period = plan.periodMs(now);
      if (spec.schedule.cron !== undefined && spec.toleranceS !== undefined && spec.toleranceS * 1000 > period) {
        issues.push({ field: 'toleranceS', message: toleranceTooLong(spec.toleranceS, period / 1000), severity: 'error' });
      }
      if (!spec.window && spec.schedule.cron !== undefined) {
        const reach = retryReachIssue(spec, period / 1000, `the ${period / 1000} s between two slots`);
        if (reach) issues.push(reach);
      }
      if (plan.slots(now, now + 1).length === 0 && !plan.after(now)) {
        issues.push({ field: 'schedule', message: 'the schedule has no slot in the next ten years', severity: 'error' });
      }
    } catch (e) {
      issues.push({ field: 'schedule', message: (e as Error).message, severity: 'error' });
    }
  }
  const ok = !issues.some((i) => i.severity === 'error');
  return { spec, issues, ok };
}

/** Throws `bad_request` with `{issues}` when the validation has errors. */
export function assertValid(v: JobValidation): JobSpec {
  if (v.ok && v.spec) return v.spec;
  const errors = v.issues.filter((i) => i.severity === 'error');
  const first = errors[0];
  throw new GafferError('bad_request', `invalid job${first ? ` at "${first.field}": ${first.message}` : ''}`, { issues: errors.length ? errors : v.issues });
}
