/**
 * The loop breaker's comparison of errors (PROTOCOL §14): ISO times, UUIDs, long hex ids and every
 * run of digits masked, case and spacing ignored — "rate limit, retry in 31 s" and "… 12 s" are
 * the same error. Pure: the live breaker (core/budgets/loop-breaker.ts) and the rehearsal's use it.
 */
export function normaliseError(text: string): string {
  return text
    .toLowerCase()
    .replace(/\d{4}-\d\d-\d\d[t ]\d\d:\d\d(:\d\d(\.\d+)?)?(z|[+-]\d\d:?\d\d)?/g, '<time>')
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<id>')
    .replace(/\b(?=[0-9a-f]*\d)[0-9a-f]{8,}\b/g, '<id>')
    .replace(/\b[a-z]+_[a-z0-9]{6,}\b/g, '<id>')
    .replace(/\d+/g, '#')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 500);
}

