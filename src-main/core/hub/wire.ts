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

export function okReply(id: string | number, result: unknown): string {
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
