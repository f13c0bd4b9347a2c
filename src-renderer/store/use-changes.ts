/**
 * "+12 −3 in 2 files" for the rows of a list (Tasks, Runs): the latest workspace figures of the
 * subjects shown, asked for once per set of rows (one call for the whole page).
 */
import { useEffect, useState } from 'react';
import type { ChangeSummary } from '../../src-main/common/logs';
import { useActions } from './react';

export function useChanges(subjects: readonly string[]): Record<string, ChangeSummary> {
  const { changes } = useActions();
  const [found, setFound] = useState<Record<string, ChangeSummary>>({});
  const key = subjects.join(',');
  useEffect(() => {
    let live = true;
    changes(key ? key.split(',') : []).then(
      (c) => live && setFound(c),
      () => live && setFound({}),
    );
    return () => {
      live = false;
    };
  }, [key, changes]);
  return found;
}
