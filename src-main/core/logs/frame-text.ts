/**
 * A `log` frame read from its text, or from its bytes (decoded here), in the log worker: parsed,
 * checked by the wire schema's rules and turned into the entry the store appends. The main thread
 * only read its header (frame-header.ts) and checked that the sender holds the work; the cost of
 * the lines — their string included — is here.
 *
 * Invariants:
 * 1. A frame is taken exactly when the parsed path would take it, and a refused one gets the
 *    answer that path gives: the schema's message (`badRequest`) first, then "exactly one of
 *    taskId and runId", then a stale `fence` (`not_holder`, against the fence of the lock the
 *    main thread found). The quick checks decide only the common case; anything they do not
 *    pass is judged by the schema itself.
 * 2. The parsed frame names the request and the work the main thread checked, else it is
 *    refused whole (frame-header invariant 2): a frame cannot name one task for the holder
 *    check and another for its lines.
 */
import { agentRequest, isLogLine, MAX_LOG_LINES_PER_FRAME, type LogLineInput } from '../../common/protocol';
import { decodeUtf8, findIllFormedText, isWellFormedText } from '../../common/text';
import { badRequest } from '../hub';
import { REPEATED_HEADER, type LogFrameHeader } from './frame-header';
import { EXACTLY_ONE_SUBJECT, staleFence } from './holders';
import type { AppendEntry } from './log-store';

/**
 * One frame as it crosses to the worker: its text, or its UTF-8 bytes when the main thread never
 * decoded it (it read the header from the first bytes: service.ts `logBytes`), and what the main
 * thread established.
 */
export type LogFrameText = FrameFacts & ({ text: string; bytes?: undefined } | { bytes: Uint8Array; text?: undefined });

interface FrameFacts {
  header: LogFrameHeader;
  subject: string;
  attempt: number;
  /** When it arrived (epoch ms): the `at` of lines that carry none. */
  receivedAt: number;
  /** A task's: the fence of the lock its sender holds (a `fence` after the lines is checked against it). */
  lockFence?: number | undefined;
}

export type ReadFrame = { ok: true; entry: AppendEntry } | { ok: false; code: 'bad_request' | 'not_holder'; message: string };

/** A JSON escape that could spell half a surrogate pair; without one, parsed strings are as well-formed as the text. */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

type Frame = Record<string, unknown> & { lines: LogLineInput[] };

const isFence = (v: unknown) => Number.isSafeInteger(v) && (v as number) >= 1;

function sameHeader(msg: Record<string, unknown>, h: LogFrameHeader): boolean {
  return msg.id === h.id && msg.type === 'log' && msg.taskId === h.taskId && msg.runId === h.runId;
}

/** The common case, without the schema's per-object cost (a frame may hold 10 000 lines). */
function quickCheck(msg: unknown, text: string, f: LogFrameText): msg is Frame {
  if (typeof msg !== 'object' || msg === null || Array.isArray(msg)) return false;
  const m = msg as Record<string, unknown>;
  if (!sameHeader(m, f.header) || (m.fence !== undefined && !isFence(m.fence))) return false;
  const lines = m.lines;
  if (!Array.isArray(lines) || lines.length < 1 || lines.length > MAX_LOG_LINES_PER_FRAME) return false;
  for (const l of lines) if (!isLogLine(l)) return false;
  if (isWellFormedText(text) && !SURROGATE_ESCAPE.test(text)) return true;
  return findIllFormedText(msg) === undefined;
}

const refuse = (message: string, code: 'bad_request' | 'not_holder' = 'bad_request'): ReadFrame => ({ ok: false, code, message });

export function readLogFrame(f: LogFrameText): ReadFrame {
  // Decoded as the socket would have (Buffer#toString): a frame reads the same on either path.
  const text = f.text ?? decodeUtf8(f.bytes);
  let msg: unknown;
  try {
    msg = JSON.parse(text);
  } catch {
    return refuse('malformed JSON');
  }
  if (!quickCheck(msg, text, f)) {
    const r = agentRequest.safeParse(msg);
    if (!r.success) return refuse(badRequest(msg, r.error).message);
    const m = msg as Record<string, unknown>;
    if (m.type === 'log' && (m.taskId === undefined) === (m.runId === undefined)) return refuse(EXACTLY_ONE_SUBJECT);
    if (!sameHeader(m, f.header)) return refuse(REPEATED_HEADER);
  }
  const frame = msg as Frame;
  if (f.lockFence !== undefined && frame.fence !== undefined && frame.fence !== f.lockFence) {
    return refuse(staleFence(frame.fence as number, f.header.taskId!, f.lockFence).message, 'not_holder');
  }
  // Lines logged in the same millisecond share their `at`: parsed once for the run of them.
  let lastAt = '';
  let lastMs = f.receivedAt;
  const msOf = (at: string | undefined) => (at === undefined ? f.receivedAt : at === lastAt ? lastMs : ((lastAt = at), (lastMs = Date.parse(at))));
  return {
    ok: true,
    entry: {
      subject: f.subject,
      attempt: f.attempt,
      lines: frame.lines.map((l) => ({ text: l.text, stream: l.stream, level: l.level, seq: l.seq, at: msOf(l.at), kind: l.kind, data: l.data })),
    },
  };
}
