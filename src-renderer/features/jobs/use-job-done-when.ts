/**
 * The job editor's "Done when…" section (the shared components/done-when): its drafts start from
 * the job's saved declaration, and each change the operator makes is written into the form's
 * `verify` — the declaration when it is complete, or as typed (so the spec's validation names
 * what is missing and the save waits). Opening a job changes nothing: the form is not dirty until
 * the operator edits a check.
 */
import { useEffect, useRef, useState } from 'react';
import { verifySpec } from '../../../src-main/common/verify';
import { draftsOf, draftToCheck, useDoneWhen, type DoneWhenState } from '../../components/done-when/use-done-when';
import { stableJson } from '../../lib/format';
import type { JobForm } from './form';

export function useJobDoneWhen(verify: JobForm['verify'], patch: (p: Partial<JobForm>) => void): DoneWhenState {
  const [initial] = useState(() => draftsOf(verifySpec.safeParse(verify).data));
  const state = useDoneWhen(initial);
  const declared =
    state.checks.length === 0
      ? undefined
      : (state.spec ?? (JSON.parse(JSON.stringify({ checks: state.checks.map(draftToCheck), onFail: state.onFail, ...(state.before ? { before: true } : {}) })) as Record<string, unknown>));
  const key = stableJson(declared ?? null);
  const last = useRef(key);
  useEffect(() => {
    if (key === last.current) return;
    last.current = key;
    patch({ verify: declared });
  }, [key, declared, patch]);
  return state;
}
