import { evidenceRows } from '../lib/evidence';

/** The evidence a verdict recorded, as label/value rows (Why and the run detail). */
export function Evidence({ evidence }: { evidence: unknown }) {
  const rows = evidenceRows(evidence);
  if (!rows.length) return null;
  return (
    <dl className="evidence" data-testid="evidence">
      {rows.map((r) => (
        <div key={r.key} className="evidence-row">
          <dt>{r.key}</dt>
          <dd className="mono">{r.value}</dd>
        </div>
      ))}
    </dl>
  );
}
