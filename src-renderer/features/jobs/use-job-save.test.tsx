// @vitest-environment happy-dom
import { act, renderHook } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Job } from '../../../src-main/common/job-schema';
import { ConsoleKit } from '../../testing/console-kit';
import { emptyJobForm, validateForm, type JobForm } from './form';
import { useJobSave, type JobSaveInput } from './use-job-save';
import type { JobValidation } from './use-job-validation';

let kit: ConsoleKit;
beforeEach(() => (kit = new ConsoleKit()));
afterEach(() => kit.dispose());

/** The validation as the save sees it: the client check of `form`, with spies for what the save sets. */
function validationOf(form: JobForm): Pick<JobValidation, 'cv' | 'allIssues' | 'specKey' | 'setSubmitted' | 'setSaveError'> {
  const cv = validateForm(form);
  return { cv, allIssues: cv.issues, specKey: JSON.stringify(cv.spec), setSubmitted: vi.fn(), setSaveError: vi.fn() };
}

function saver(p: Partial<JobSaveInput> & Pick<JobSaveInput, 'validation'>) {
  const input: JobSaveInput = {
    isNew: true,
    job: null,
    rehearsalSeen: false,
    saveJob: (i) => kit.call(i.id ? 'jobs.update' : 'jobs.create', i.id ? ({ id: i.id, expectedVersion: i.expectedVersion, spec: i.spec, reason: i.reason } as never) : ({ spec: i.spec, reason: i.reason } as never)) as never,
    showError: vi.fn(),
    showReason: vi.fn(),
    onCreated: vi.fn(),
    onUpdated: vi.fn(),
    ...p,
  };
  return { input, hook: renderHook(() => useJobSave(input)) };
}

const daily = { ...emptyJobForm('UTC'), name: 'daily', role: 'reporter' };

describe('useJobSave', () => {
  it('refuses while there is an error and shows where', async () => {
    const { input, hook } = saver({ validation: validationOf({ ...daily, name: '' }) });
    await act(() => hook.result.current.save());
    expect(input.showError).toHaveBeenCalledWith('name');
    expect(kit.countCalls('jobs.create')).toBe(0);
  });

  it('a new job not rehearsed as it stands: offers a rehearsal first; "create without" creates it', async () => {
    const { input, hook } = saver({ validation: validationOf(daily) });
    await act(() => hook.result.current.save());
    expect(hook.result.current.offerRehearsal).toBe(true);
    expect(kit.countCalls('jobs.create')).toBe(0);
    await act(() => hook.result.current.save({ skipRehearsalOffer: true }));
    expect(hook.result.current.offerRehearsal).toBe(false);
    expect(input.onCreated).toHaveBeenCalledWith(expect.objectContaining({ name: 'daily', version: 1 }));
    expect(kit.core.jobs.list().items.map((j) => j.name)).toEqual(['daily']);
  });

  it('an edit needs a reason; it saves at the version loaded, and a stale version is refused into the fields', async () => {
    const { job } = await kit.call('jobs.create', { spec: validateForm(daily).valid!, reason: 'new' });
    const changed = { ...daily, cron: '0 10 * * *' };
    const edit = saver({ isNew: false, job: job as Job, validation: validationOf(changed) });
    await act(() => edit.hook.result.current.save());
    expect(edit.input.showReason).toHaveBeenCalled();
    act(() => edit.hook.result.current.setReason('later start'));
    await act(() => edit.hook.result.current.save());
    expect(edit.input.onUpdated).toHaveBeenCalledWith(expect.objectContaining({ version: 2 }));
    expect(edit.hook.result.current).toMatchObject({ savedVersion: 2, reason: '', busy: false });
    // Saving again from version 1 (someone saved meanwhile): refused, nothing changed.
    const stale = saver({ isNew: false, job: job as Job, validation: validationOf({ ...daily, cron: '0 11 * * *' }) });
    act(() => stale.hook.result.current.setReason('mine'));
    await act(() => stale.hook.result.current.save());
    expect(stale.input.validation.setSaveError).toHaveBeenLastCalledWith(expect.objectContaining({ error: expect.objectContaining({ code: 'conflict' }) }));
    expect(kit.core.jobs.get(job.id).version).toBe(2);
  });
});
