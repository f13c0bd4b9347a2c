/** A slot's outcome in a runs table: its disposition as a badge, and a line under it. */
import { Badge } from '../../components/Badge';
import { dispositionMeta, type LedgerDisposition } from '../../lib/run-words';
import type { Run } from '../../../src-main/common/job-schema';

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

/** "failed · run by hand": a run's status, and how it was triggered when not by the schedule. */
export function runLine(r: Pick<Run, 'status' | 'trigger'>): string {
  return `${r.status}${r.trigger === 'manual' ? ' · run by hand' : r.trigger === 'catch_up' ? ' · caught up' : ''}`;
}
