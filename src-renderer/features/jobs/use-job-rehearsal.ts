/**
 * The job editor's rehearsal (JobEditor invariant 4): `jobs.rehearse` of the settings as they
 * stand, asked again only when they changed since the last answer (switching tabs alone asks
 * nothing); behind the settings tab it waits longer, so the tab's count follows the edits without
 * a call per keystroke. It also remembers which settings' rehearsal the operator has looked at:
 * creating a job offers a rehearsal unless it is exactly these.
 */
import { useCallback, useEffect, useMemo, useState } from 'react';
import type { JobIssue } from '../../../src-main/common/job-schema';
import type { RehearsalResult } from '../../../src-main/common/rehearsal';
import { toUiError, type UiError } from '../../lib/errors';
import { stableJson } from '../../lib/format';
import { DEBOUNCE_MS, useDebouncedCall } from '../../lib/use-debounced-call';
import type { JobsActions } from '../../store/slices/jobs';
import { BLANK_AT_START } from './use-job-validation';

/** How long the settings stand still before they are rehearsed behind the settings tab. */
export const BACKGROUND_REHEARSAL_MS = 1500;

export interface RehearsalInput {
  spec: Record<string, unknown>;
  errors: JobIssue[];
  isNew: boolean;
  /** The tab open now: the rehearsal tab asks sooner. */
  tab: 'settings' | 'rehearse';
  rehearseJob: JobsActions['rehearseJob'];
}

export interface JobRehearsal {
  /** What would be rehearsed; null while the settings have errors. */
  rehearseSpec: Record<string, unknown> | null;
  /** The last answer (maybe for older settings), or null. */
  result: RehearsalResult | null;
  /** The last answer's error, when it is for these settings. */
  error: UiError | null;
  loading: boolean;
  /** The answer shown is for the settings as they stand. */
  rehearsedNow: boolean;
  /** The operator has looked at the rehearsal of exactly these settings. */
  seen: boolean;
  /** Forgets the answer: the same settings are asked again. */
  retry(): void;
}

export function useJobRehearsal({ spec, errors, isNew, tab, rehearseJob }: RehearsalInput): JobRehearsal {
  const [rehearsal, setRehearsal] = useState<{ key: string; result: RehearsalResult | null; error: UiError | null } | null>(null);
  const [loading, setLoading] = useState(false);
  // A new job's name and role only label the rehearsal: it can run before they are typed (the
  // server validates the spec again and answers its issues).
  const rehearsable = !errors.some((i) => !(isNew && BLANK_AT_START.has(i.field)));
  const rehearseSpec = useMemo(() => (rehearsable ? { ...spec, name: spec.name || 'new-job', role: spec.role || 'agent' } : null), [spec, rehearsable]);
  const rehearseKey = useMemo(() => (rehearseSpec ? stableJson(rehearseSpec) : ''), [rehearseSpec]);
  const rehearseOf = useCallback((s: Record<string, unknown> | null) => (s ? rehearseJob({ spec: s }) : Promise.resolve(null)), [rehearseJob]);
  const want = rehearseSpec !== null && rehearsal?.key !== rehearseKey;
  useDebouncedCall(
    want ? rehearseKey : '',
    want ? rehearseSpec : null,
    rehearseOf,
    (key, r) => {
      if (!key) return;
      setRehearsal(r.ok ? { key, result: r.value, error: null } : { key, result: null, error: toUiError(r.error) });
      setLoading(false);
    },
    { onStart: () => setLoading(want), delayMs: tab === 'rehearse' ? DEBOUNCE_MS : BACKGROUND_REHEARSAL_MS },
  );
  const rehearsedNow = rehearsal !== null && rehearsal.key === rehearseKey && rehearsal.result !== null;
  const [seenKey, setSeenKey] = useState('');
  useEffect(() => {
    if (tab === 'rehearse' && rehearsedNow) setSeenKey(rehearseKey);
  }, [tab, rehearsedNow, rehearseKey]);
  const retry = useCallback(() => setRehearsal(null), []);
  return {
    rehearseSpec,
    result: rehearsal?.result ?? null,
    error: rehearsal && rehearsal.key === rehearseKey ? rehearsal.error : null,
    loading,
    rehearsedNow,
    seen: seenKey === rehearseKey,
    retry,
  };
}
