/** Evidence recorded with a verdict, as rows to show. */

/**
 * Evidence as label/value rows: nested objects are flattened one level (`window.opensAt`), deeper
 * values and arrays are compact JSON, nulls read "—".
 */
export function evidenceRows(evidence: unknown): Array<{ key: string; value: string }> {
  if (evidence === null || evidence === undefined) return [];
  if (typeof evidence !== 'object' || Array.isArray(evidence)) return [{ key: 'value', value: JSON.stringify(evidence) }];
  const out: Array<{ key: string; value: string }> = [];
  const text = (v: unknown) => (v === null ? '—' : typeof v === 'object' ? JSON.stringify(v) : String(v));
  for (const [k, v] of Object.entries(evidence as Record<string, unknown>)) {
    if (v === undefined) continue;
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
      const entries = Object.entries(v as Record<string, unknown>).filter(([, x]) => x !== undefined);
      if (entries.length === 0) out.push({ key: k, value: '{}' });
      for (const [k2, v2] of entries) out.push({ key: `${k}.${k2}`, value: text(v2) });
    } else out.push({ key: k, value: text(v) });
  }
  return out;
}
