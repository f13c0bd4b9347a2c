/**
 * The job editor's plain words for each policy, next to its section: the settings as they stand
 * (read leniently, so that one bad field does not silence the others), with the business
 * calendar named as the operator knows it. Also the zone the preview is shown in.
 */
import { useMemo } from 'react';
import type { BusinessCalendar, JobSpecInput } from '../../../src-main/common/job-schema';
import { normalizeJobSpec } from '../../../src-main/common/job-schema';
import type { JobForm } from './form';
import { policySentences } from './logic';

export function usePolicyWords(spec: Record<string, unknown>, form: Pick<JobForm, 'calendar' | 'timezone'>, calendars: BusinessCalendar[] | null | undefined) {
  const lenient = useMemo(() => {
    try {
      return normalizeJobSpec(spec as unknown as JobSpecInput);
    } catch {
      return null;
    }
  }, [spec]);
  const calName = calendars?.find((c) => c.id === form.calendar)?.name;
  return {
    sentences: lenient ? policySentences(lenient, calName) : null,
    /** The job's zone (an interval job may have none: UTC). */
    zone: form.timezone.trim() || 'UTC',
  };
}
