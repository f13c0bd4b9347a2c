/**
 * The job editor's live preview of the next slots: `jobs.preview` of the unsaved settings that
 * decide slots (schedule, window, calendar and its policy, the DST gap policy), debounced. An
 * answer for older settings stays on screen, marked stale, until the new one comes.
 */
import { useCallback, useMemo, useState } from 'react';
import type { PreviewResult } from '../../../src-main/common/job-schema';
import { toUiError, type UiError } from '../../lib/errors';
import { stableJson } from '../../lib/format';
import { useDebouncedCall } from '../../lib/use-debounced-call';
import type { JobsActions } from '../../store/slices/jobs';

export const PREVIEW_COUNT = 10;

export interface SlotPreview {
  result: PreviewResult | null;
  error: UiError | null;
  /** A call is under way (or waiting for the settings to stand still). */
  loading: boolean;
  /** What is shown was asked for other settings than these. */
  stale: boolean;
}

export function useSlotPreview(spec: Record<string, unknown>, previewJob: JobsActions['previewJob']): SlotPreview {
  const [preview, setPreview] = useState<{ key: string; result: PreviewResult | null; error: UiError | null } | null>(null);
  const [loading, setLoading] = useState(false);
  // Only the slot-relevant settings: editing a retry policy does not make the slots shown stale.
  const previewSpec = useMemo(() => {
    const out: Record<string, unknown> = { name: 'preview', role: 'preview', schedule: spec.schedule };
    for (const k of ['window', 'calendar', 'calendarPolicy', 'dstGapPolicy'] as const) if (spec[k] !== undefined) out[k] = spec[k];
    return out;
  }, [spec]);
  const previewKey = useMemo(() => stableJson(previewSpec), [previewSpec]);
  const previewOf = useCallback((s: Record<string, unknown>) => previewJob({ spec: s, count: PREVIEW_COUNT }), [previewJob]);
  useDebouncedCall(
    previewKey,
    previewSpec,
    previewOf,
    (key, r) => {
      setPreview(r.ok ? { key, result: r.value, error: null } : { key, result: null, error: toUiError(r.error) });
      setLoading(false);
    },
    { onStart: () => setLoading(true) },
  );
  return { result: preview?.result ?? null, error: preview?.error ?? null, loading, stale: !!preview && preview.key !== previewKey };
}
