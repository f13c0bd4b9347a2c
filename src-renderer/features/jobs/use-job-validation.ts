/**
 * The job editor's validation (JobEditor invariants 1 and 2): the form checked at once on the
 * client (the shared zod schema and contradiction checks), the server's schedule checks
 * (`jobs.validate`, debounced, for the settings as they stand), and the issues the last save was
 * refused with. A field shows its own issues once touched; name and role start empty on a new
 * job, so theirs wait for a touch or a save.
 */
import { useCallback, useMemo, useState } from 'react';
import type { JobIssue } from '../../../src-main/common/job-schema';
import type { UiError } from '../../lib/errors';
import { dedupeIssues } from '../../lib/field-issues';
import { stableJson } from '../../lib/format';
import { useDebouncedCall } from '../../lib/use-debounced-call';
import { isValidZone } from '../../lib/zones';
import type { JobsActions } from '../../store/slices/jobs';
import { validateForm, type ClientValidation, type JobForm } from './form';

/** Fields that start empty on a new job: their "required" messages wait until touched or saved. */
export const BLANK_AT_START = new Set(['name', 'role']);

export interface SaveRefusal {
  /** The settings it was refused for: shown only while they stand. */
  key: string;
  error: UiError;
  issues: JobIssue[];
}

export interface JobValidation {
  cv: ClientValidation;
  /** The settings as they stand (stable JSON of the spec): what every answer is stamped with. */
  specKey: string;
  /** Every issue there is, errors and warnings. */
  allIssues: JobIssue[];
  /** The issues fields show (not yet the blank-at-start ones of an untouched new job). */
  shown: JobIssue[];
  errors: JobIssue[];
  warnings: JobIssue[];
  /** The server has not yet answered for these settings. */
  serverPending: boolean;
  touch(field: string): void;
  submitted: boolean;
  setSubmitted(v: boolean): void;
  saveError: SaveRefusal | null;
  setSaveError(e: SaveRefusal | null): void;
}

export function useJobValidation(form: JobForm, isNew: boolean, validateJob: JobsActions['validateJob']): JobValidation {
  const [touched, setTouched] = useState<Set<string>>(new Set());
  const [submitted, setSubmitted] = useState(false);
  const [server, setServer] = useState<{ key: string; issues: JobIssue[] } | null>(null);
  const [saveError, setSaveError] = useState<SaveRefusal | null>(null);

  const cv = useMemo(() => validateForm(form), [form]);
  const specKey = useMemo(() => stableJson(cv.spec), [cv.spec]);
  const tz = form.timezone.trim();
  const zoneIssue = useMemo<JobIssue[]>(() => (tz && !isValidZone(tz) ? [{ field: 'schedule.timezone', message: `“${tz}” is not a known IANA time zone: pick one from the list`, severity: 'error' }] : []), [tz]);
  useDebouncedCall(specKey, cv.spec, validateJob, (key, r) => setServer(r.ok ? { key, issues: r.value.issues } : null));
  const allIssues = useMemo(
    () =>
      dedupeIssues([
        ...cv.issues,
        ...zoneIssue,
        // The zone message of the form replaces the server's one for the same field.
        ...(server && server.key === specKey ? server.issues.filter((i) => !(zoneIssue.length && i.field === 'schedule.timezone')) : []),
        ...(saveError && saveError.key === specKey ? saveError.issues : []),
      ]),
    [cv.issues, zoneIssue, server, saveError, specKey],
  );
  const shown = allIssues.filter((i) => !(isNew && !submitted && BLANK_AT_START.has(i.field) && !touched.has(i.field)));
  const touch = useCallback((field: string) => setTouched((t) => (t.has(field) ? t : new Set(t).add(field))), []);
  return {
    cv,
    specKey,
    allIssues,
    shown,
    errors: allIssues.filter((i) => i.severity === 'error'),
    warnings: allIssues.filter((i) => i.severity === 'warning'),
    serverPending: !server || server.key !== specKey,
    touch,
    submitted,
    setSubmitted,
    saveError,
    setSaveError,
  };
}
