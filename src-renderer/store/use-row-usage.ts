/**
 * Duration and cost columns of the Tasks and Runs lists: the rows' usage (all attempts) and
 * their latest attempt's span come in one call for the rows shown, again when they change.
 */
import { useEffect, useState } from 'react';
import type { SubjectUsage } from '../../src-main/common/console-api';
import { useActions } from './react';

/** At most this many rows are asked about at once (the method's limit). */
const MAX_ROWS = 200;

/** Usage of `subjects`, reloaded when `version` (e.g. the rows' update times) changes. */
export function useRowUsage(subjects: string[], version: string): Record<string, SubjectUsage> {
  const { usageOfSubjects } = useActions();
  const [usage, setUsage] = useState<Record<string, SubjectUsage>>({});
  const key = subjects.slice(0, MAX_ROWS).join(',');
  useEffect(() => {
    if (!key) return;
    let live = true;
    usageOfSubjects(key.split(',')).then(
      (u) => live && setUsage(u),
      () => {}, // a column left empty, not an error banner: the list itself still works
    );
    return () => {
      live = false;
    };
  }, [key, version, usageOfSubjects]);
  return usage;
}

