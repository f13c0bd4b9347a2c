/**
 * The control lines: a command talks to Gaffer by printing, on stdout or stderr, a line that starts
 * with `::gaffer:<token>::` — `<token>` being this attempt's GAFFER_CONTROL_TOKEN — followed by one
 * JSON object (docs/command-agent.md):
 *
 *   ::gaffer:<token>:: {"step":"uploaded","ref":"s3://bucket/report.csv"}     a checkpoint (job runs)
 *   ::gaffer:<token>:: {"usage":{"inputTokens":1200,"outputTokens":340,"costUsd":0.02,"model":"m"}}
 *   ::gaffer:<token>:: {"progress":0.4,"message":"4 of 10 files"}              or {"progress":{"done":4,"total":10}}
 *   ::gaffer:<token>:: {"log":"rate limited, waiting","level":"warn"}
 *   ::gaffer:<token>:: {"link":"https://github.com/o/r/pull/7","name":"pull request"}    an artifact (PROTOCOL §15)
 *   ::gaffer:<token>:: {"file":"/srv/out/report.pdf","name":"report"}
 *
 * One object may carry several of these keys. Unknown keys are ignored (later versions may add
 * some); a line that is not valid JSON, or has none of the keys, is reported as malformed.
 *
 * Invariants:
 * 1. A control line cannot be forged by text the command merely prints (a task's title, a web
 *    page, a file it cats): the token is 128 random bits, new for every attempt, given to the
 *    command in its environment only — never in the task, the trigger, the payload file or a log.
 * 2. Any other line is text, logged as printed: the unsigned `::gaffer::` form of earlier versions
 *    and a line with another attempt's (or a made-up) token alike. Such lines are flagged once per
 *    attempt (`looksLikeControl`), so a command still printing the old form is noticed.
 */
import { randomBytes } from 'node:crypto';
import { cutText } from '../../common/line-splitter';
import type { LogLevel } from './log-sink';
import { usageFrom, type UsageIncrement } from './usage';

/** The variable that carries the attempt's token to the command (invariant 1). */
export const CONTROL_TOKEN_VARIABLE = 'GAFFER_CONTROL_TOKEN';
/** What every control line, and every line trying to look like one, starts with. */
const MARK = '::gaffer:';

export interface ControlMessage {
  step?: { name: string; ref?: string };
  usage?: UsageIncrement;
  progress?: { fraction?: number; done?: number; total?: number; message?: string };
  log?: { text: string; level: LogLevel };
  /** PROTOCOL §15 `artifact` of kind `link` or `file`, sent before the report. */
  artifact?: { kind: 'link' | 'file'; name: string; data: { url: string } | { path: string } };
}

/** A fresh token for one attempt (invariant 1): hex, so any shell can paste it into a line. */
export function newControlToken(): string {
  return randomBytes(16).toString('hex');
}

/** The prefix of the control lines of the attempt holding `token`. */
export function controlPrefix(token: string): string {
  return `${MARK}${token}::`;
}

/** Invariant 2: starts like a control line, but is not one of this attempt's. */
export function looksLikeControl(line: string, prefix: string): boolean {
  return line.startsWith(MARK) && !line.startsWith(prefix);
}

const LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error'];
const MAX_STEP_NAME = 200;
const MAX_REF = 2000;

const finite = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/** Parses what follows a control line's prefix: the message, or why it was refused. */
export function parseControlBody(text: string): { ok: true; message: ControlMessage } | { ok: false; reason: string } {
  const body = text.trim();
  let raw: unknown;
  try {
    raw = JSON.parse(body);
  } catch {
    return { ok: false, reason: 'not valid JSON after the ::gaffer:…:: prefix' };
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return { ok: false, reason: 'expected a JSON object after the ::gaffer:…:: prefix' };
  const r = raw as Record<string, unknown>;
  const message: ControlMessage = {};

  if (r.step !== undefined) {
    if (typeof r.step !== 'string' || !r.step.trim() || r.step.length > MAX_STEP_NAME) return { ok: false, reason: `"step" must be a name of 1 to ${MAX_STEP_NAME} characters` };
    if (r.ref !== undefined && (typeof r.ref !== 'string' || r.ref.length > MAX_REF)) return { ok: false, reason: `"ref" must be a string of at most ${MAX_REF} characters` };
    message.step = { name: r.step.trim(), ...(typeof r.ref === 'string' ? { ref: r.ref } : {}) };
  }
  if (r.usage !== undefined) {
    const u = usageFrom(r.usage);
    if (!u) return { ok: false, reason: '"usage" needs inputTokens, outputTokens or costUsd as non-negative numbers' };
    message.usage = u;
  }
  if (r.progress !== undefined) {
    const p = r.progress;
    const text = typeof r.message === 'string' ? cutText(r.message, 500, '…') : undefined;
    if (finite(p) && p >= 0 && p <= 1) message.progress = { fraction: p, ...(text ? { message: text } : {}) };
    else if (typeof p === 'object' && p !== null && finite((p as { done?: unknown }).done)) {
      const { done, total } = p as { done: number; total?: unknown };
      message.progress = { done, ...(finite(total) && total > 0 ? { total } : {}), ...(text ? { message: text } : {}) };
    } else return { ok: false, reason: '"progress" must be a fraction from 0 to 1 or {"done": n, "total": m}' };
  }
  if (r.log !== undefined) {
    if (typeof r.log !== 'string') return { ok: false, reason: '"log" must be a string' };
    const level = LEVELS.includes(r.level as LogLevel) ? (r.level as LogLevel) : 'info';
    message.log = { text: r.log, level };
  }
  for (const kind of ['link', 'file'] as const) {
    const v = r[kind];
    if (v === undefined) continue;
    if (typeof v !== 'string' || !v.trim() || v.length > MAX_REF) return { ok: false, reason: `"${kind}" must be a ${kind === 'link' ? 'URL' : 'path'} of 1 to ${MAX_REF} characters` };
    if (kind === 'link' && !/^https?:\/\//i.test(v)) return { ok: false, reason: '"link" must be an http(s) URL' };
    if (r.name !== undefined && (typeof r.name !== 'string' || !r.name.trim() || r.name.length > MAX_STEP_NAME)) return { ok: false, reason: `"name" must be 1 to ${MAX_STEP_NAME} characters` };
    const name = typeof r.name === 'string' ? r.name.trim() : v.trim().slice(0, MAX_STEP_NAME);
    message.artifact = { kind, name, data: kind === 'link' ? { url: v.trim() } : { path: v.trim() } };
    break;
  }
  if (!message.step && !message.usage && !message.progress && !message.log && !message.artifact) {
    return { ok: false, reason: 'none of "step", "usage", "progress", "log", "link" or "file" is present' };
  }
  return { ok: true, message };
}

export function describeProgress(p: NonNullable<ControlMessage['progress']>): string {
  const amount = p.fraction !== undefined ? `${Math.round(p.fraction * 100)}%` : p.total !== undefined ? `${p.done} of ${p.total}` : `${p.done} done`;
  return `progress ${amount}${p.message ? ` — ${p.message}` : ''}`;
}
