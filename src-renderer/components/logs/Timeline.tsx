/**
 * The history of one task or run in one list: claims, renewals, steps, retries, expiry,
 * approvals and results from the audit, each attempt's log milestones and what it spent.
 */
import type { TimelineEntry } from '../../../src-main/common/console-api';
import { formatDateTime } from '../../lib/format';

const MARK: Record<TimelineEntry['kind'], string> = {
  created: '○',
  claim: '▶',
  renew: '↻',
  release: '■',
  expire: '⌛',
  refused: '⊘',
  step: '✓',
  retry: '↺',
  approval: '✋',
  trigger: '→',
  result: '■',
  log: '≡',
  usage: '$',
  other: '·',
};

export function Timeline({ entries, error, now }: { entries: TimelineEntry[] | null; error: string | null; now: number }) {
  if (error) return <p className="small error-text">The timeline could not be loaded: {error}</p>;
  if (!entries) return <p className="small muted">Loading the timeline…</p>;
  if (entries.length === 0) return <p className="small muted">Nothing has happened yet.</p>;
  // Renewals are many on a long task: shown once per run of them.
  const shown: Array<TimelineEntry & { times: number }> = [];
  for (const e of entries) {
    const prev = shown[shown.length - 1];
    if (prev && e.kind === 'renew' && prev.kind === 'renew' && prev.attempt === e.attempt) prev.times++;
    else shown.push({ ...e, times: 1 });
  }
  return (
    <ol className="timeline" aria-label="Timeline" data-testid="timeline">
      {shown.map((e, i) => (
        <li key={e.auditId ?? `x${i}`} className={`tl-${e.kind}`}>
          <span className="tl-mark" aria-hidden="true">
            {MARK[e.kind]}
          </span>
          <span className="tl-when small muted">{e.at ? formatDateTime(e.at, now) : ''}</span>
          <span className="tl-what">
            {e.title}
            {e.times > 1 ? ` ×${e.times}` : ''}
            {e.attempt !== null ? <span className="small muted"> · attempt {e.attempt}</span> : null}
            {e.actor && e.actor !== 'gaffer' ? <span className="small muted"> · by {e.actor}</span> : null}
            {e.detail ? <div className="small muted tl-detail">{e.detail}</div> : null}
          </span>
        </li>
      ))}
    </ol>
  );
}
