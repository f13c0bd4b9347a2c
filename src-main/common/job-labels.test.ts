/** The editor's words for job settings, and schema errors translated into them. */
import { describe, expect, it } from 'vitest';
import { jobFieldLabel, jobSectionLabel } from './job-labels';
import { jobSpecInput, zodIssues } from './job-schema';

describe('job field labels', () => {
  it('names settings, precondition fields by kind, and maintenance windows as the editor does', () => {
    expect(jobFieldLabel('toleranceS')).toBe('Tolerance (s)');
    expect(jobFieldLabel('preconditions.1.check', () => 'file')).toBe('Ready when');
    expect(jobFieldLabel('preconditions.1.check', () => 'agent')).toBe('Precheck name');
    expect(jobFieldLabel('preconditions.0')).toBe('Check 1');
    expect(jobFieldLabel('executionConditions.maintenanceWindows.2.end')).toBe('To');
    expect(jobFieldLabel('schedule.cron.extra')).toBe('Cron (5 fields)'); // unknown sub-path: its parent's label
    expect(jobSectionLabel('retry.firstDelayS')).toBe('Retry');
    expect(jobSectionLabel('preconditions.3.url')).toBe('Check 4');
    expect(jobSectionLabel('toleranceS')).toBe('Missed window');
    expect(jobSectionLabel('(body)')).toBe('Job');
  });
});

describe('schema errors in field-specific words', () => {
  const issues = (input: unknown) => {
    const r = jobSpecInput.safeParse(input);
    return r.success ? [] : zodIssues(r.error, '', input);
  };

  it('missing, empty, out of range, unknown and mistyped values', () => {
    const got = issues({ role: 'r', schedule: { cron: '0 9 * * *', timezone: 'UTC', every: 1 }, missedWindow: 'later', retry: { maxAttempts: 30 }, toleranceS: 1.5, preconditions: [{ kind: 'psychic' }], nope: true });
    expect(Object.fromEntries(got.map((i) => [i.field, i.message]))).toEqual({
      name: 'Name is required',
      schedule: "unknown setting 'every' in Schedule",
      missedWindow: 'When a slot could not start in time must be one of “Run now (within a tolerance)”, “Fold into the next run”, “Skip and alert”',
      'retry.maxAttempts': 'Attempts in total must be at most 20',
      toleranceS: 'Tolerance (s) must be a whole number',
      'preconditions.0.kind': "Kind must be one of 'file', 'http', 'command', 'signal', 'agent'",
      '(body)': "unknown setting 'nope'",
    });
  });
});
