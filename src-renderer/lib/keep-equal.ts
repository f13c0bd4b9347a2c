/**
 * Structural sharing for refreshed server data: `next`, with every part that deep-equals the same
 * part of `prev` replaced by `prev`'s own object. A refresh that brings the same rows back then
 * changes no reference, so selectors compare equal and nothing re-renders; a refresh that changed
 * one row gives that row (and the arrays and objects holding it) a new identity and keeps every
 * other row's. The console refreshes each watched view every 15 s and on live events: before, each
 * refresh re-rendered the whole board and the open task pane even when nothing had changed, tens of
 * milliseconds in one task — a dropped frame in whatever the operator was scrolling.
 *
 * For JSON-shaped data (plain objects, arrays, primitives); anything else is taken from `next`.
 */
export function keepEqual<T>(prev: unknown, next: T): T {
  if (Object.is(prev, next)) return prev as T;
  if (Array.isArray(prev) && Array.isArray(next)) {
    let same = prev.length === next.length;
    const out = next.map((v: unknown, i) => {
      const kept = keepEqual(prev[i], v);
      if (kept !== prev[i]) same = false;
      return kept;
    });
    return (same ? prev : out) as T;
  }
  if (isPlainObject(prev) && isPlainObject(next)) {
    const keys = Object.keys(next);
    let same = keys.length === Object.keys(prev).length;
    const out: Record<string, unknown> = {};
    for (const k of keys) {
      const kept = keepEqual(prev[k], next[k]);
      if (kept !== prev[k] || !Object.prototype.hasOwnProperty.call(prev, k)) same = false;
      out[k] = kept;
    }
    return (same ? prev : out) as T;
  }
  return next;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}
