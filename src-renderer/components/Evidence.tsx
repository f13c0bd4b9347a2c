import { evidenceLabel, evidenceRows } from '../lib/evidence';
import { LocalTime } from './Time';

/** The evidence a verdict recorded, as label/value rows (Why and the run detail); instants in local time, ISO on hover. */
export function Evidence({ evidence }: { evidence: unknown }) {
  const rows = evidenceRows(evidence);
  if (!rows.length) return null;
  return (
    <dl className="evidence" data-testid="evidence">
      {rows.map((r) => (
        <div key={r.key} className="evidence-row">
          <dt title={r.key}>{evidenceLabel(r.key)}</dt>
          <dd className="mono">{r.instant ? <LocalTime at={r.instant} /> : r.value}</dd>
        </div>
      ))}
    </dl>
  );
}
