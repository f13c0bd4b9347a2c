// @vitest-environment happy-dom
import { act, renderHook, waitFor } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConsoleKit } from '../../testing/console-kit';
import { emptyJobForm } from './form';
import { useJobForm } from './use-job-form';

let kit: ConsoleKit;
beforeEach(() => (kit = new ConsoleKit()));
afterEach(() => kit.dispose());

const getJob = (id: string) => kit.call('jobs.get', { id });

describe('useJobForm', () => {
  it('a new job starts blank and clean; an edit makes it dirty', () => {
    const { result } = renderHook(() => useJobForm(null, getJob));
    expect(result.current.job).toBeNull();
    expect(result.current.form.name).toBe('');
    expect(result.current.dirty).toBe(false);
    act(() => result.current.patch({ name: 'daily' }));
    expect(result.current).toMatchObject({ dirty: true, form: { name: 'daily' } });
    expect(kit.countCalls('jobs.get')).toBe(0);
  });

  it('an existing job loads into the form; a save resets what counts as clean', async () => {
    const { job } = await kit.call('jobs.create', { spec: { name: 'daily', role: 'reporter', schedule: { cron: '0 9 * * *', timezone: 'UTC' } }, reason: 'new' });
    const { result } = renderHook(() => useJobForm(job.id, getJob));
    await waitFor(() => expect(result.current.job?.id).toBe(job.id));
    expect(result.current.form).toMatchObject({ name: 'daily', role: 'reporter', cron: '0 9 * * *', timezone: 'UTC' });
    expect(result.current.dirty).toBe(false);
    act(() => result.current.patch({ cron: '0 10 * * *' }));
    expect(result.current.dirty).toBe(true);
    const { job: saved } = await kit.call('jobs.update', { id: job.id, expectedVersion: 1, spec: { name: 'daily', role: 'reporter', schedule: { cron: '0 10 * * *', timezone: 'UTC' } }, reason: 'later' });
    act(() => result.current.reset(saved));
    expect(result.current).toMatchObject({ dirty: false, job: { version: 2 }, form: { cron: '0 10 * * *' } });
  });

  it('an unknown job says why, and loads again on demand', async () => {
    const { result } = renderHook(() => useJobForm('job_nope', getJob));
    await waitFor(() => expect(result.current.loadError?.code).toBe('not_found'));
    expect(result.current.form).toEqual(emptyJobForm(result.current.form.timezone));
    act(() => result.current.load());
    await waitFor(() => expect(kit.countCalls('jobs.get')).toBe(2));
  });
});
