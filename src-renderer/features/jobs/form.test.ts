import { describe, expect, it } from 'vitest';
import { normalizeJobSpec, type JobSpecInput } from '../../../src-main/common/job-schema';
import { emptyJobForm, emptyPrecondition, formFromSpec, formToSpec, sameSpec, validateForm, type JobForm } from './form';

const filled = (p: Partial<JobForm> = {}): JobForm => ({ ...emptyJobForm('Asia/Shanghai'), name: 'daily-report', role: 'reporter', ...p });

describe('job editor form ↔ job spec', () => {
  it('a new form leaves defaults out of the spec; a changed setting is written out', () => {
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

  it('keeps a job\'s "done when…" checks through the editor (saving does not drop them)', () => {
    const verify = { checks: [{ kind: 'command' as const, name: 'tests', command: ['npm', 'test'] }], onFail: 'needs_human' as const, before: true };
    const stored: JobSpecInput = { name: 'daily-report', role: 'reporter', schedule: { cron: '0 9 * * *', timezone: 'UTC' }, verify };
    expect(formToSpec(formFromSpec(stored)).spec.verify).toEqual(verify);
    expect(formToSpec(filled()).spec).not.toHaveProperty('verify');
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

  it('gives the same issues for the form and for the stored job it becomes (defaults filled in)', () => {
    const f = filled({ scheduleKind: 'interval', everyS: '60', timezone: '' });
    const v = validateForm(f);
    expect(v.issues).toEqual([expect.objectContaining({ field: 'retry', severity: 'warning' })]);
    // What the server stores, shown in the editor again: the same single warning, not an error.
    expect(validateForm(formFromSpec(normalizeJobSpec(v.valid!))).issues).toEqual(v.issues);
  });

  it('speaks in the editor’s words: labels for policies, field names for schema errors', () => {
    const tol = validateForm(filled({ missedWindow: 'run_now' })).issues.find((i) => i.field === 'toleranceS')!;
    expect(tol.message).toBe('“Run now (within a tolerance)” needs a tolerance: how long after the window closed a missed slot may still start');
    const fold = validateForm(filled({ missedWindow: 'fold_into_next', overlap: 'allow' })).issues.find((i) => i.field === 'overlap')!;
    expect(fold.message).not.toMatch(/fold_into_next|overlap 'allow'/);
    expect(fold.message).toMatch(/“Fold into the next run”.*“allow both”/);
    const pre = validateForm(filled({ preconditions: [emptyPrecondition('file'), { ...emptyPrecondition('agent') }, { ...emptyPrecondition('signal'), name: 'ok', label: 'x'.repeat(101) }] }));
    const at = (field: string) => pre.issues.find((i) => i.field === field)?.message;
    expect(at('preconditions.0.path')).toBe('Path cannot be empty');
    expect(at('preconditions.1.check')).toBe('Precheck name cannot be empty');
    expect(at('preconditions.2.label')).toBe('Label is at most 100 characters long');
    for (const i of pre.issues) expect(i.message).not.toMatch(/Too small|Too big|expected string|Invalid input/);
    const attempts = validateForm(filled({ retryMaxAttempts: '0' })).issues.find((i) => i.field === 'retry.maxAttempts');
    expect(attempts?.message).toBe('Attempts in total must be at least 1');
  });

});
