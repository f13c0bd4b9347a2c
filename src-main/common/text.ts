/**
 * Text that survives storage. JavaScript strings are UTF-16 and may hold an unpaired surrogate
 * (`"\ud800"`, from a JSON escape, a structured clone or a cut through an emoji); SQLite stores
 * UTF-8, which cannot hold one, so such text comes back changed. Every boundary refuses it (or,
 * for what the outside world hands us — file names, command output — normalises it) with the
 * helpers here, and nowhere else.
 *
 * Invariants:
 * 1. A string is well-formed iff it has no unpaired surrogate; exactly those strings round-trip
 *    through UTF-8 unchanged.
 * 2. `findIllFormedText` looks at every string and every object key of a value, iteratively (any
 *    depth), and names the first offending one by its path, as zod names a field.
 * 3. `toWellFormedText` / `wellFormedDeep` change nothing that is already well-formed (same
 *    string, same object), so calling them on the hot path costs a scan, not a copy.
 */
import type { z } from 'zod';
import { GafferError } from './errors';

/** `\p{Surrogate}` with the `u` flag matches only unpaired surrogates: a pair is one code point. */
const LONE_SURROGATE = /\p{Surrogate}/u;
const LONE_SURROGATES = /\p{Surrogate}/gu;

type WellFormedString = { isWellFormed?(): boolean };

/** Invariant 1. Uses the engine's `String.prototype.isWellFormed` where it exists (Node 20+). */
export function isWellFormedText(s: string): boolean {
  const native = (s as unknown as WellFormedString).isWellFormed;
  return native ? native.call(s) : !LONE_SURROGATE.test(s);
}

/** `s` with each unpaired surrogate replaced by U+FFFD (what a UTF-8 decoder shows for it). */
export function toWellFormedText(s: string): string {
  return isWellFormedText(s) ? s : s.replace(LONE_SURROGATES, '\ufffd');
}

export const ILL_FORMED_TEXT = 'must be valid Unicode text (it holds an unpaired UTF-16 surrogate, which cannot be stored)';

export interface IllFormedText {
  /** Where it is, as zod paths are: `["payload", "items", 2]`. A bad key ends the path with the key itself. */
  path: Array<string | number>;
  /** True when the offending string is an object key rather than a value. */
  key: boolean;
}

/** A container being walked, with the way back to the root (paths are built only for a find). */
interface Walk {
  v: object;
  parent: Walk | undefined;
  at: string | number;
}

function pathOf(w: Walk | undefined, last: string | number): Array<string | number> {
  const path = [last];
  for (let x = w; x?.parent !== undefined; x = x.parent) path.push(x.at);
  return path.reverse();
}

/** Invariant 2: the first string or key of `value` that is not well-formed, or undefined. */
export function findIllFormedText(value: unknown): IllFormedText | undefined {
  if (typeof value === 'string') return isWellFormedText(value) ? undefined : { path: [], key: false };
  if (value === null || typeof value !== 'object') return undefined;
  const stack: Walk[] = [{ v: value, parent: undefined, at: '' }];
  while (stack.length > 0) {
    const w = stack.pop()!;
    const { v } = w;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const x: unknown = v[i];
        if (typeof x === 'string') {
          if (!isWellFormedText(x)) return { path: pathOf(w, i), key: false };
        } else if (x !== null && typeof x === 'object') stack.push({ v: x, parent: w, at: i });
      }
      continue;
    }
    for (const k of Object.keys(v)) {
      if (!isWellFormedText(k)) return { path: pathOf(w, toWellFormedText(k)), key: true };
      const x: unknown = (v as Record<string, unknown>)[k];
      if (typeof x === 'string') {
        if (!isWellFormedText(x)) return { path: pathOf(w, k), key: false };
      } else if (x !== null && typeof x === 'object') stack.push({ v: x, parent: w, at: k });
    }
  }
  return undefined;
}

/** The zod-style issue for the first ill-formed string or key of `value`, or undefined. */
export function illFormedTextIssue(value: unknown): { path: Array<string | number>; message: string } | undefined {
  const bad = findIllFormedText(value);
  return bad && { path: bad.path, message: bad.key ? `a key ${ILL_FORMED_TEXT}` : ILL_FORMED_TEXT };
}

/** A zod refinement (`.superRefine(refineWellFormedText)`): an issue at the offending field. */
export function refineWellFormedText(value: unknown, ctx: z.RefinementCtx): void {
  const issue = illFormedTextIssue(value);
  if (issue) ctx.addIssue({ code: 'custom', ...issue });
}

/** Throws `bad_request` naming the offending field of `value` (`what` says whose: "body", …). */
export function assertWellFormedText(value: unknown, what: string): void {
  const issue = illFormedTextIssue(value);
  if (!issue) return;
  const path = issue.path.join('.');
  throw new GafferError('bad_request', `invalid ${what}${path ? ` at "${path}"` : ''}: ${issue.message}`, { issues: [{ path, message: issue.message }] });
}

/**
 * Invariant 3: `value` with every string and key made well-formed (U+FFFD for an unpaired
 * surrogate). For text the outside world gives us and we must keep as evidence, not refuse.
 */
export function wellFormedDeep<T>(value: T): T {
  if (!findIllFormedText(value)) return value;
  return mapText(value) as T;
}

function mapText(v: unknown): unknown {
  if (typeof v === 'string') return toWellFormedText(v);
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map(mapText);
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) out[toWellFormedText(k)] = mapText(x);
  return out;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const utf8 = new TextDecoder('utf-8', { ignoreBOM: true });

/**
 * Bytes → text as a received frame is read (Node's `Buffer#toString('utf8')`): bad sequences become
 * U+FFFD and a leading byte-order mark is kept (so it still fails a JSON parse, as it always did).
 */
export function decodeUtf8(bytes: Uint8Array): string {
  return utf8.decode(bytes);
}

/** Bytes → text, or undefined when they are not valid UTF-8 (never silently replaced). */
export function decodeUtf8Strict(bytes: Uint8Array): string | undefined {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return undefined;
  }
}
