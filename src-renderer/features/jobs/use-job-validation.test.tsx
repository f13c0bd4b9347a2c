// @vitest-environment happy-dom
import { act, renderHook } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConsoleKit } from '../../testing/console-kit';
import { emptyJobForm, type JobForm } from './form';
import { useJobValidation } from './use-job-validation';

let kit: ConsoleKit;
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  kit = new ConsoleKit();
});
afterEach(() => {
  vi.useRealTimers();
  kit.dispose();
});

const wait = (ms = 400) => act(async () => vi.advanceTimersByTimeAsync(ms));
const fields = (issues: Array<{ field: string }>) => issues.map((i) => i.field);

function validate(form: JobForm, isNew = true) {
  const validateJob = (spec: Record<string, unknown>) => kit.call('jobs.validate', { spec });
  return renderHook(({ f }) => useJobValidation(f, isNew, validateJob), { initialProps: { f: form } });
}

describe('useJobValidation', () => {
  it('a new job: name and role are required, but say so only once touched (or on save)', () => {
    const { result } = validate(emptyJobForm('UTC'));
    expect(fields(result.current.errors)).toEqual(expect.arrayContaining(['name', 'role']));
    expect(fields(result.current.shown)).not.toContain('name');
    act(() => result.current.touch('name'));
    expect(fields(result.current.shown)).toContain('name');
    expect(fields(result.current.shown)).not.toContain('role');
    act(() => result.current.setSubmitted(true));
    expect(fields(result.current.shown)).toContain('role');
  });

  it('adds the server’s schedule checks for the settings as they stand', async () => {
    const { result, rerender } = validate({ ...emptyJobForm('UTC'), name: 'daily', role: 'reporter', cron: '61 9 * * *' });
    expect(result.current.serverPending).toBe(true);
    expect(fields(result.current.errors)).not.toContain('schedule.cron');
    await wait();
    expect(result.current.serverPending).toBe(false);
    expect(fields(result.current.errors)).toContain('schedule.cron');
    // A fixed cron: the old answer no longer counts, and the new one has no error.
    rerender({ f: { ...emptyJobForm('UTC'), name: 'daily', role: 'reporter', cron: '0 9 * * *' } });
    expect(result.current.serverPending).toBe(true);
    expect(fields(result.current.errors)).not.toContain('schedule.cron');
    await wait();
    expect(result.current.errors).toEqual([]);
  });

  it('an unknown zone is said once, in the form’s words', async () => {
    const { result } = validate({ ...emptyJobForm('Mars/Olympus'), name: 'daily', role: 'reporter' });
    await wait();
    const zone = result.current.errors.filter((i) => i.field === 'schedule.timezone');
    expect(zone.map((i) => i.message)).toEqual(['“Mars/Olympus” is not a known IANA time zone: pick one from the list']);
  });

  it('a refused save’s issues show while the settings it was refused for stand', () => {
    const { result, rerender } = validate({ ...emptyJobForm('UTC'), name: 'daily', role: 'reporter' }, false);
    act(() => result.current.setSaveError({ key: result.current.specKey, error: { code: 'conflict', status: 409, message: 'exists' }, issues: [{ field: 'name', message: 'a job with this name exists', severity: 'error' }] }));
    expect(fields(result.current.errors)).toEqual(['name']);
    rerender({ f: { ...emptyJobForm('UTC'), name: 'daily-2', role: 'reporter' } });
    expect(result.current.errors).toEqual([]);
  });
});
