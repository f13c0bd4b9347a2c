/** Encoding of replies and the few wire rules that are not schema rules. */
import type { z } from 'zod';
import { ERROR_STATUS, GafferError, type ErrorCode } from '../../common/errors';
import { AGENT_REQUEST_TYPES, type AgentPush } from '../../common/protocol';

export type WireId = string | number | null;

/** Close reasons are limited to 123 bytes by RFC 6455; keep them short and ASCII. */
export function closeReason(text: string): string {
  const ascii = text.replace(/[^\x20-\x7e]/g, '?');
  return ascii.length > 120 ? `${ascii.slice(0, 117)}...` : ascii;
}

export function okReply(id: WireId, result: unknown): string {
  return JSON.stringify({ id, ok: true, result });
}

/** The one encoder of pushes: only values of the push schemas' types (common/protocol.ts) go out. */
export function encodePush(p: AgentPush): string {
  return JSON.stringify(p);
}

export function errorReply(id: WireId, code: ErrorCode, message: string): string {
  return JSON.stringify({ id, ok: false, error: { code, status: ERROR_STATUS[code], message } });
}

/** The request id, if the frame has a usable one (so even a refused request gets its own id back). */
export function readId(msg: unknown): WireId {
  if (typeof msg !== 'object' || msg === null) return null;
  const id = (msg as { id?: unknown }).id;
  // 1..100 characters counted as the schema counts them (code points: an emoji is one, not two).
  if (typeof id === 'string' && id.length >= 1 && (id.length <= 100 || [...id].length <= 100)) return id;
  if (typeof id === 'number' && Number.isSafeInteger(id)) return id;
  return null;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const isSpace = (c: number | undefined) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;

/** Index just past the string whose opening quote is at `i`, or -1 if it does not close. */
function stringEnd(buf: Uint8Array, i: number): number {
  for (let j = i + 1; j < buf.length; j++) {
    const c = buf[j];
    if (c === BACKSLASH) j++;
    else if (c === QUOTE) return j + 1;
  }
  return -1;
}

/** Index just past the JSON value starting at `i` (without checking it), or -1. */
function valueEnd(buf: Uint8Array, i: number): number {
  const c = buf[i];
  if (c === QUOTE) return stringEnd(buf, i);
  if (c === 0x7b || c === 0x5b) {
    let depth = 0;
    for (let j = i; j < buf.length; j++) {
      const d = buf[j];
      if (d === QUOTE) {
        j = stringEnd(buf, j) - 1;
        if (j < 0) return -1;
      } else if (d === 0x7b || d === 0x5b) depth++;
      else if (d === 0x7d || d === 0x5d) {
        if (--depth === 0) return j + 1;
      }
    }
    return -1;
  }
  // A number or literal: up to the next delimiter.
  let j = i;
  while (j < buf.length && buf[j] !== 0x2c && buf[j] !== 0x7d && buf[j] !== 0x5d && !isSpace(buf[j])) j++;
  return j > i ? j : -1;
}

/**
 * The top-level `id` of a JSON object frame, read without parsing the frame (an oversize frame is
 * refused unparsed, but its `too_large` reply should still carry its id). Walks the top-level keys
 * once, skipping values byte by byte (no allocation); only the id's own bytes are decoded. Returns
 * null when the frame is not an object, has no usable id, or is cut off.
 */
export function peekId(buf: Uint8Array): WireId {
  const skip = (i: number) => {
    while (isSpace(buf[i])) i++;
    return i;
  };
  let i = skip(0);
  if (buf[i] !== 0x7b) return null;
  i = skip(i + 1);
  while (buf[i] === QUOTE) {
    const keyEnd = stringEnd(buf, i);
    if (keyEnd < 0) return null;
    const isId = keyEnd - i === 4 && buf[i + 1] === 0x69 && buf[i + 2] === 0x64; // "id"
    i = skip(keyEnd);
    if (buf[i] !== 0x3a) return null;
    i = skip(i + 1);
    const end = valueEnd(buf, i);
    if (end < 0) return null;
    if (isId) {
      try {
        return readId({ id: JSON.parse(new TextDecoder().decode(buf.subarray(i, end))) });
      } catch {
        return null;
      }
    }
    i = skip(end);
    if (buf[i] !== 0x2c) return null;
    i = skip(i + 1);
  }
  return null;
}

const KNOWN_TYPES = new Set<string>(AGENT_REQUEST_TYPES);

/** A `bad_request` naming the first offending field, like `parseOrThrow` does. */
export function badRequest(msg: unknown, error: z.ZodError): GafferError {
  if (typeof msg !== 'object' || msg === null || Array.isArray(msg)) {
    return new GafferError('bad_request', 'a request must be a JSON object');
  }
  const type = (msg as { type?: unknown }).type;
  if (typeof type !== 'string') return new GafferError('bad_request', 'missing "type"');
  if (!KNOWN_TYPES.has(type)) return new GafferError('bad_request', `unknown message type "${type.slice(0, 50)}"`);
  const first = error.issues[0];
  const where = first && first.path.length > 0 ? ` at "${first.path.join('.')}"` : '';
  return new GafferError('bad_request', `invalid ${type}${where}: ${first?.message ?? 'invalid value'}`);
}
