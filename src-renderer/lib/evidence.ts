/** Evidence recorded with a verdict, as rows to show; instants in it and in reasons, found to show in local time. */

/** An ISO-8601 instant with a zone (`2026-11-30T01:00:00.000Z`, `…+08:00`), as the server writes them. */
export const ISO_INSTANT = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})/g;

/** Text with the instants in it set apart (to show each in the operator's local time). */
export function splitInstants(text: string): Array<string | { iso: string }> {
  const out: Array<string | { iso: string }> = [];
  let last = 0;
  for (const m of text.matchAll(ISO_INSTANT)) {
    if (m.index > last) out.push(text.slice(last, m.index));
    out.push({ iso: m[0] });
    last = m.index + m[0].length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

function isInstant(v: unknown): v is string {
  if (typeof v !== 'string') return false;
  const m = v.match(ISO_INSTANT);
  return m !== null && m[0] === v;
}

/**
 * Evidence as label/value rows: nested objects are flattened one level (`window.opensAt`), deeper
 * values and arrays are compact JSON, nulls read "—".
 */
export interface EvidenceRow {
  key: string;
  value: string;
  /** Set when the value is an instant: shown in local time, the ISO text on hover. */
  instant?: string;
}

export function evidenceRows(evidence: unknown): EvidenceRow[] {
  if (evidence === null || evidence === undefined) return [];
  if (typeof evidence !== 'object' || Array.isArray(evidence)) return [{ key: 'value', value: JSON.stringify(evidence) }];
  const out: EvidenceRow[] = [];
  const text = (v: unknown) => (v === null ? '—' : typeof v === 'object' ? JSON.stringify(v) : String(v));
  const row = (key: string, v: unknown): EvidenceRow => (isInstant(v) ? { key, value: v, instant: v } : { key, value: text(v) });
  for (const [k, v] of Object.entries(evidence as Record<string, unknown>)) {
    if (v === undefined) continue;
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
      const entries = Object.entries(v as Record<string, unknown>).filter(([, x]) => x !== undefined);
      if (entries.length === 0) out.push({ key: k, value: '{}' });
      for (const [k2, v2] of entries) out.push(row(`${k}.${k2}`, v2));
    } else out.push(row(k, v));
  }
  return out;
}

/** An evidence key in words (`window.opensAt` → "window · opens at", `setNow` → "set now", `timeoutS` → "timeout (s)"); the key itself stays on hover. */
export function evidenceLabel(key: string): string {
  return key
    .split('.')
    .map((part) =>
      part
        .replace(/([a-z])Ms$/, '$1 (ms)')
        .replace(/([a-z])S$/, '$1 (s)')
        .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
        .replace(/_/g, ' ')
        .toLowerCase(),
    )
    .join(' · ');
}
