/**
 * What a log pane and a timeline need from the store, for one task or run (`task:<id>`,
 * `run:<id>`): stable loaders bound to the subject, and its live tail.
 */
import { useEffect, useMemo, useState } from 'react';
import type { TimelineEntry } from '../../src-main/common/console-api';
import type { LogStream } from '../../src-main/common/logs';
import { saveText } from '../lib/save-text';
import { useActions, useConsole, useWatch } from './react';

export function useLogSource(subject: string) {
  useWatch('logs');
  const a = useActions();
  const tail = useConsole((s) => s.logTails[subject]);
  const loaders = useMemo(
    () => ({
      subject,
      loadAttempts: () => a.logAttempts(subject),
      loadPage: (args: { attempt: number; after: number; limit: number; stream?: LogStream; contains?: string }) => a.logPage({ subject, ...args }),
      loadText: (attempt: number) => a.logText(subject, attempt),
      follow: () => a.followLog(subject),
      save: saveText,
    }),
    [a, subject],
  );
  return { ...loaders, tail };
}

/** The timeline of a task or run, reloaded when `version` changes (e.g. the task's status). */
export function useTimeline(subject: string, version: unknown): { entries: TimelineEntry[] | null; error: string | null } {
  const { timeline } = useActions();
  const [state, setState] = useState<{ entries: TimelineEntry[] | null; error: string | null }>({ entries: null, error: null });
  useEffect(() => {
    let live = true;
    timeline(subject).then(
      (entries) => live && setState({ entries, error: null }),
      (e: unknown) => live && setState({ entries: null, error: e instanceof Error ? e.message : String(e) }),
    );
    return () => {
      live = false;
    };
  }, [timeline, subject, version]);
  return state;
}

/** Both at once: what `ActivitySection` takes for a task or run. */
export function useActivity(subject: string, version: unknown) {
  return { log: useLogSource(subject), timeline: useTimeline(subject, version) };
}
