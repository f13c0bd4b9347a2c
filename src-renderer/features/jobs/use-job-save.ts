/**
 * The job editor's save: refuses while there is an error (and says where), offers a rehearsal
 * before creating a job whose settings were not rehearsed as they stand, asks for the reason an
 * edit needs (it is audited with the new version), then saves with the version it was loaded at
 * (an edit made meanwhile elsewhere is refused, not overwritten). A refusal's issues go back to
 * the fields (`setSaveError`).
 */
import { useState } from 'react';
import type { Job, JobIssue } from '../../../src-main/common/job-schema';
import { useReasonRequired } from '../../components/Dialog';
import { toUiError } from '../../lib/errors';
import { issuesFromError } from '../../lib/field-issues';
import type { JobsActions } from '../../store/slices/jobs';
import type { JobValidation } from './use-job-validation';

export interface JobSaveInput {
  isNew: boolean;
  job: Job | null;
  validation: Pick<JobValidation, 'cv' | 'allIssues' | 'specKey' | 'setSubmitted' | 'setSaveError'>;
  /** The operator has looked at the rehearsal of these settings. */
  rehearsalSeen: boolean;
  saveJob: JobsActions['saveJob'];
  /** Shows the field of the first error (or the name, when the form cannot be read at all). */
  showError(field: string): void;
  /** Shows the reason field (an edit without a reason). */
  showReason(): void;
  onCreated(job: Job): void;
  onUpdated(job: Job): void;
}

export interface JobSave {
  reason: string;
  setReason(r: string): void;
  busy: boolean;
  /** The version the last save made, for "saved as version N". */
  savedVersion: number | null;
  /** The "rehearse it first?" offer is open. */
  offerRehearsal: boolean;
  setOfferRehearsal(open: boolean): void;
  save(opts?: { skipRehearsalOffer?: boolean }): Promise<void>;
}

export function useJobSave(p: JobSaveInput): JobSave {
  const [reason, setReason] = useState('');
  // An edit takes a reason unless the operator made reasons optional (then "no reason given").
  const reasonRequired = useReasonRequired();
  const [busy, setBusy] = useState(false);
  const [savedVersion, setSavedVersion] = useState<number | null>(null);
  const [offerRehearsal, setOfferRehearsal] = useState(false);
  const { cv, allIssues, specKey, setSubmitted, setSaveError } = p.validation;

  const save = async (opts: { skipRehearsalOffer?: boolean } = {}) => {
    if (busy) return;
    setSubmitted(true);
    const firstError = allIssues.find((i: JobIssue) => i.severity === 'error');
    if (firstError || !cv.valid) {
      p.showError(firstError?.field ?? 'name');
      return;
    }
    if (p.isNew && !p.rehearsalSeen && !opts.skipRehearsalOffer) {
      setOfferRehearsal(true);
      return;
    }
    setOfferRehearsal(false);
    if (!p.isNew && reasonRequired && !reason.trim()) {
      p.showReason();
      return;
    }
    setBusy(true);
    setSaveError(null);
    try {
      const r = await p.saveJob({ ...(p.job ? { id: p.job.id, expectedVersion: p.job.version } : {}), spec: cv.valid, ...(reason.trim() ? { reason: reason.trim() } : {}) });
      setSavedVersion(r.job.version);
      setReason('');
      setSubmitted(false);
      if (p.isNew) p.onCreated(r.job);
      else p.onUpdated(r.job);
    } catch (e) {
      const err = toUiError(e);
      setSaveError({ key: specKey, error: err, issues: issuesFromError(err.detail) });
    } finally {
      setBusy(false);
    }
  };
  return { reason, setReason, busy, savedVersion, offerRehearsal, setOfferRehearsal, save };
}
