import { describe, expect, it } from 'vitest';
import { normalizeJobSpec, type JobSpecInput } from '../../../src-main/common/job-schema';
import { emptyJobForm, emptyPrecondition, formFromSpec, formToSpec, sameSpec, validateForm, type JobForm } from './form';

const filled = (p: Partial<JobForm> = {}): JobForm => ({ ...emptyJobForm('Asia/Shanghai'), name: 'daily-report', role: 'reporter', ...p });

describe('job editor form ↔ job spec', () => {
  it('a new form leaves defaults out of the spec, so explicit choices stay explicit', () => {
    const { spec, issues } = formToSpec(filled());
    expect(issues).toEqual([]);
    expect(spec).toEqual({ name: 'daily-report', role: 'reporter', schedule: { cron: '0 9 * * *', timezone: 'Asia/Shanghai' } });
    const withRetry = formToSpec(filled({ retryMaxAttempts: '5' })).spec;
    expect(withRetry.retry).toEqual({ maxAttempts: 5, firstDelayS: 300, backoff: 'fixed' });
  });

  it('round-trips every field of a stored job', () => {
    const input: JobSpecInput = {
      name: 'nightly',
      role: 'etl',
      description: 'load the warehouse',
      schedule: { cron: '0 2 * * *', timezone: 'Europe/Berlin' },
      window: { start: '02:00', end: '05:00', recheckEveryS: 600 },
      calendar: 'de',
      calendarPolicy: 'next_workday',
      preconditions: [
        { kind: 'file', path: '/data/{yesterday}.csv', check: 'modified_after', after: 'yesterday', label: 'export' },
        { kind: 'http', url: 'http://127.0.0.1:9/p/{date}', expectStatus: 204, jsonField: 'a.b', equals: { x: 1 }, timeoutS: 5 },
        { kind: 'command', argv: ['test', '-s', '/x/{date}'], cwd: '/tmp', timeoutS: 3 },
        { kind: 'signal', name: 'data-ready', key: '{date-1}' },
        { kind: 'agent', check: 'inbox', role: 'mailer', timeoutS: 20 },
      ],
      retry: { maxAttempts: 2, firstDelayS: 120, backoff: 'exponential' },
      missedWindow: 'run_now',
      toleranceS: 3600,
      overlap: 'queue_one',
      payload: { report: 'daily', n: [1, 2] },
      enabled: false,
      executionConditions: { maxConcurrentPerRole: 3, maintenanceWindows: [{ start: '03:00', end: '03:30', days: [7] }, { start: '04:00', end: '04:10' }] },
      dstGapPolicy: 'skip',
      backfillCapPerTick: 1,
      runTimeoutS: 900,
    };
    const stored = normalizeJobSpec(input);
    const v = validateForm(formFromSpec(stored));
    expect(v.issues).toEqual([]);
    expect(v.valid).not.toBeNull();
    expect(normalizeJobSpec(v.valid!)).toEqual(stored);
    expect(sameSpec(normalizeJobSpec(v.valid!), stored)).toBe(true);
  });

  it('an interval schedule, with and without a zone', () => {
    const f = filled({ scheduleKind: 'interval', everyS: '300', timezone: '' });
    expect(formToSpec(f).spec.schedule).toEqual({ everyS: 300 });
    expect(formToSpec({ ...f, timezone: 'UTC' }).spec.schedule).toEqual({ everyS: 300, timezone: 'UTC' });
    expect(formFromSpec(normalizeJobSpec({ name: 'x', role: 'r', schedule: { everyS: 60 } }))).toMatchObject({ scheduleKind: 'interval', everyS: '60', timezone: '' });
  });

  it('unreadable values are reported at their field', () => {
    const f = filled({ toleranceS: 'soon', payload: '{oops', windowOn: true, recheckEveryS: '' });
    f.preconditions = [{ ...emptyPrecondition('http'), url: 'http://x', expectStatus: '2xx', equals: 'not json' }];
    const { issues } = formToSpec(f);
    const fields = issues.map((i) => i.field);
    expect(fields).toEqual(expect.arrayContaining(['toleranceS', 'payload', 'window.recheckEveryS', 'preconditions.0.expectStatus', 'preconditions.0.equals']));
    expect(issues.find((i) => i.field === 'toleranceS')!.message).toBe('“soon” is not a whole number');
  });

  it('validates with the shared zod schema and contradiction checks, at the field', () => {
    const empty = validateForm(emptyJobForm('UTC'));
    expect(empty.valid).toBeNull();
    expect(empty.issues.map((i) => i.field)).toEqual(expect.arrayContaining(['name', 'role']));

    const contradictory = validateForm(filled({ missedWindow: 'run_now' }));
    expect(contradictory.valid).not.toBeNull(); // shape is fine…
    expect(contradictory.issues).toContainEqual(expect.objectContaining({ field: 'toleranceS', severity: 'error' })); // …but it contradicts itself
    expect(validateForm(filled({ missedWindow: 'run_now', toleranceS: '1800' })).issues).toEqual([]);

    const fold = validateForm(filled({ missedWindow: 'fold_into_next', overlap: 'allow' }));
    expect(fold.issues.map((i) => i.field)).toContain('overlap');
    const pre = validateForm(filled({ preconditions: [{ ...emptyPrecondition('http'), url: 'ftp://x', equals: '1' }] }));
    expect(pre.issues.map((i) => i.field)).toEqual(expect.arrayContaining(['preconditions.0.url', 'preconditions.0.jsonField']));
    const mw = validateForm(filled({ maintenanceWindows: [{ start: '05:00', end: '04:00', days: [] }] }));
    expect(mw.issues.map((i) => i.field)).toContain('executionConditions.maintenanceWindows.0.end');
  });
});
