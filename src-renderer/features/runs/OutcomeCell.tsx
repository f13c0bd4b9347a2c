/** A slot's outcome in a runs table: its disposition as a badge, and a line under it. */
import { Badge } from '../../components/Badge';
import { dispositionMeta, settledWords, type LedgerDisposition } from '../../lib/run-words';
import type { Backfill, Run } from '../../../src-main/common/job-schema';

export function OutcomeCell({ disposition, detail }: { disposition: LedgerDisposition; detail: string }) {
  const m = dispositionMeta(disposition);
  return (
    <div className="two-line">
      <span>
        <Badge tone={m.tone}>{m.label}</Badge>
      </span>
      <span className="muted small">{detail}</span>
    </div>
  );
}

/**
 * "failed · run by hand": a run's status, and how it was triggered when not by the schedule. A run
 * that ran again and succeeded reads as such ("approved by you, then succeeded"), not as its
 * status, which stays `failed` next to "backfilled".
 */
export function runLine(r: Pick<Run, 'status' | 'trigger' | 'disposition'>, backfills: ReadonlyArray<Pick<Backfill, 'status' | 'dispatchedAt' | 'approval' | 'actor' | 'reason'>> = []): string {
  const how = r.trigger === 'manual' ? ' · run by hand' : r.trigger === 'catch_up' ? ' · caught up' : '';
  return `${settledWords(r, backfills) ?? r.status}${how}`;
}
