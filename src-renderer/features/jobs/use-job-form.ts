/**
 * The job editor's record: the job being edited (loaded by id; none for a new job), the form of
 * its settings, and whether the form differs from what was loaded or last saved.
 */
import { useCallback, useEffect, useState } from 'react';
import type { Job } from '../../../src-main/common/job-schema';
import { toUiError, type UiError } from '../../lib/errors';
import { stableJson } from '../../lib/format';
import { operatorZone } from '../../lib/zones';
import type { JobsActions } from '../../store/slices/jobs';
import { emptyJobForm, formFromSpec, type JobForm } from './form';

export interface JobFormState {
  job: Job | null;
  loadError: UiError | null;
  /** Loads the job again (after an error, or after an action changed it). */
  load(): void;
  form: JobForm;
  patch(p: Partial<JobForm>): void;
  /** The form differs from the job as loaded or saved (a new job: from the blank form). */
  dirty: boolean;
  /** The job as saved: the form starts again from it. */
  reset(job: Job): void;
}

export function useJobForm(jobId: string | null, getJob: JobsActions['getJob']): JobFormState {
  const [job, setJob] = useState<Job | null>(null);
  const [loadError, setLoadError] = useState<UiError | null>(null);
  const [form, setForm] = useState<JobForm>(() => emptyJobForm(operatorZone()));
  const [initial, setInitial] = useState<JobForm>(form);

  const reset = useCallback((j: Job) => {
    setJob(j);
    const f = formFromSpec(j);
    setForm(f);
    setInitial(f);
  }, []);

  const load = useCallback(() => {
    if (!jobId) return;
    setLoadError(null);
    getJob(jobId).then(reset, (e) => setLoadError(toUiError(e)));
  }, [jobId, getJob, reset]);
  useEffect(load, [load]);

  const patch = useCallback((p: Partial<JobForm>) => setForm((f) => ({ ...f, ...p })), []);
  const dirty = stableJson(form) !== stableJson(initial);
  return { job, loadError, load, form, patch, dirty, reset };
}
