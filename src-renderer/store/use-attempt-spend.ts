/**
 * A task's or run's latest attempt against its spend cap, for the panes' spend bar. It ticks as
 * the agent works: read again when the subject's log grows (its tail is followed, as the log pane
 * does; an agent's usage comes with its messages), when `version` changes (a claim, a new attempt,
 * a status), and every 10 s while `live` (usage without log lines).
 */
import { useEffect, useState } from 'react';
import type { AttemptSpend } from '../../src-main/common/prices';
import { useNow } from '../lib/now';
import { useActions, useConsole, useWatch } from './react';

const POLL_MS = 10_000;

export function useAttemptSpend(subject: string, version: string, live: boolean): AttemptSpend | null {
  useWatch('logs');
  const { attemptSpend, followLog } = useActions();
  useEffect(() => followLog(subject), [followLog, subject]);
  const tail = useConsole((s) => s.logTails[subject]?.lastSeq ?? 0);
  const now = useNow(POLL_MS);
  const tick = live ? Math.floor(now / POLL_MS) : 0;
  const [spend, setSpend] = useState<AttemptSpend | null>(null);
  useEffect(() => {
    let on = true;
    attemptSpend(subject).then(
      (s) => on && setSpend(s),
      () => {}, // the bar is left out; the pane itself still works
    );
    return () => {
      on = false;
    };
  }, [subject, version, tail, tick, attemptSpend]);
  return spend?.subject === subject ? spend : null;
}
