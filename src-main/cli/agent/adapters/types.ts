/**
 * What an output adapter (`--parse FORMAT`) does with a CLI's JSON output on stdout: turns each
 * event it knows into readable log lines and usage increments, and remembers the final answer.
 * Lines it does not recognise (not JSON, or an unknown event) are logged as they are by the caller,
 * so nothing the CLI printed is ever lost to an adapter.
 */
import { cutText } from '../../../common/line-splitter';
import type { LogLineKind } from '../../../common/logs';
import type { LogLevel } from '../log-sink';
import type { UsageIncrement } from '../usage';

/** PROTOCOL §16: what a line is in the conversation, and its structured detail. */
export interface LineExtra {
  kind: LogLineKind;
  data?: Record<string, unknown>;
}

export interface AdapterSink {
  log(text: string, level?: LogLevel, extra?: LineExtra): void;
  usage(u: UsageIncrement): void;
  /** PROTOCOL §16: the CLI's own conversation id (reported as a `session` artifact, used to resume). */
  session(cli: string, sessionId: string): void;
}

export interface OutputAdapter {
  /** One stdout line; true when the adapter consumed it (then it is not logged raw). */
  line(text: string, sink: AdapterSink): boolean;
  /** Called once when stdout ends: flush anything buffered. */
  end?(sink: AdapterSink): void;
  /** The CLI's final answer, used as the output when the command wrote no output file. */
  result(): Record<string, unknown> | undefined;
  /**
   * The CLI's own words when it reported an error result (Claude Code's `result` with `is_error`,
   * Codex's `turn.failed` / `error`, Gemini's failed `result`): the failure's note, not "exit 1".
   */
  error?(): string | undefined;
}

export interface AdapterDefinition {
  /** One line for `gaffer agent --help`. */
  summary: string;
  /** `model`: the model the CLI runs when its output does not name it (the agent's `--model`), to price its tokens. */
  create(opts?: { model?: string | undefined }): OutputAdapter;
}

/** Parses a line as a JSON object, or undefined. */
export function jsonObject(text: string): Record<string, unknown> | undefined {
  const t = text.trim();
  if (!t.startsWith('{')) return undefined;
  try {
    const v: unknown = JSON.parse(t);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

export const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
export const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined);
export const obj = (v: unknown): Record<string, unknown> | undefined =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;

/** A value in one short line (tool inputs, results). */
export function brief(v: unknown, max = 200): string {
  const text = typeof v === 'string' ? v : JSON.stringify(v) ?? '';
  return cutText(text.replace(/\s+/g, ' ').trim(), max, '…');
}

/**
 * Logs multi-line text one line at a time (blank lines left out). With `extra`, the first line
 * carries its kind and data and the others its kind only (the store's convention for a line it
 * splits), so a reader joins them back into one message.
 */
export function logText(sink: AdapterSink, text: string, level?: LogLevel, extra?: LineExtra): void {
  let first = true;
  for (const line of text.split(/\r?\n/)) {
    if (!line.trim()) continue;
    sink.log(line, level, extra && (first ? extra : { kind: extra.kind }));
    first = false;
  }
}

/** A tool's input or output for a line's `data`: as it is when small, else cut to a text (a line's data is ≤ 64 KiB). */
export function capData(v: unknown, max = 16 * 1024): unknown {
  if (v === undefined) return undefined;
  const json = typeof v === 'string' ? v : (JSON.stringify(v) ?? '');
  if (json.length <= max) return v;
  return cutText(json, max, '…');
}

/** A data object without its undefined fields. */
export function dataOf(fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(fields)) if (v !== undefined) out[k] = v;
  return out;
}

/** The final answer kept for the output, capped well below Gaffer's 64 KiB limit on JSON values. */
export function capText(text: string, max = 16 * 1024): string {
  return cutText(text, max, '…');
}
