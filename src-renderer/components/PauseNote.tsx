import type { PauseInfo } from '../../src-main/common/job-schema';
import { formatDateTime } from '../lib/format';
import { RelativeTime } from './Time';

/**
 * A pause in full, wherever a job appears: who, since when, why, and until when (or "until
 * resumed"), whether the work already started finishes first, and whether it is the role's pause.
 * Wraps instead of being cut off.
 */
export function PauseNote({ pause, testId }: { pause: PauseInfo; testId?: string }) {
  return (
    <span className="pause-note small" data-testid={testId} title={`paused ${formatDateTime(pause.at)} by ${pause.by}: ${pause.reason}`}>
      {pause.role ? 'Role paused by ' : 'Paused by '}
      <strong>{pause.by}</strong> <RelativeTime at={pause.at} granularityMs={30_000} />: <span className="pause-reason">{pause.reason}</span>
      <span className="muted">
        {' '}
        · {pause.until ? <>until {formatDateTime(pause.until)} (resumes by itself)</> : 'until resumed'}
        {pause.drain ? ' · runs already started finish' : ''}
      </span>
    </span>
  );
}
