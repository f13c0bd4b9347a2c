/**
 * Where an attempt's log lines and usage go: the task's or run's log and usage in Gaffer
 * (PROTOCOL §5), through the SDK's `ctx.log` / `ctx.usage` of the work the attempt belongs to. The
 * SDK numbers the lines, batches them into `log` frames, resends what was not acknowledged, and
 * makes `log` wait when Gaffer is behind (the attempt then stops reading the command's pipes).
 *
 * Invariants:
 * 1. Every line goes to Gaffer; with `--verbose` it is also echoed to the agent's own stderr,
 *    prefixed (`[task 12 #1] stdout | …`); without it the agent's stderr holds only the agent's
 *    own messages.
 * 2. Lines are sent as given (colour codes kept): Gaffer validates, caps and stores them.
 * 3. `lines` counts what went to the log, so the agent knows whether an attempt's log is empty.
 */
import type { LogLevel, LogLineKind, LogStream } from '../../common/logs';
import type { LogOptions, UsageInput } from '../../sdk';

export type { LogLevel, LogStream } from '../../common/logs';

/** The work a line belongs to. */
export interface WorkRef {
  kind: 'task' | 'job';
  /** Task id, or run id. */
  id: string;
  attempt: number;
}

/** PROTOCOL §5 `log` line fields. */
export interface LogLine {
  text: string;
  stream: LogStream;
  level?: LogLevel;
  /** PROTOCOL §16, from an output adapter. */
  kind?: LogLineKind;
  data?: Record<string, unknown>;
}

/** One attempt's way to Gaffer. */
export interface AttemptOutput {
  /** Adds a line to the attempt's log; resolves when there is room for more (back-pressure). */
  log(line: LogLine): Promise<void>;
  /** Reports a usage increment; rejects when Gaffer refuses it. */
  usage(u: UsageInput): Promise<unknown>;
}

/** What the SDK hands a task or job handler (`WorkContext`, `JobContext`): its log and usage. */
export interface LogTarget {
  log(text: string, opts?: LogOptions): Promise<void>;
  usage(u: UsageInput): Promise<unknown>;
}

export type LogEcho = (ref: WorkRef, line: LogLine) => void;

export function workLabel(ref: WorkRef): string {
  return `${ref.kind === 'task' ? `task ${ref.id}` : `run ${ref.id}`} #${ref.attempt}`;
}

/** An attempt's output that counts its log lines (invariant 3). */
export interface CountedOutput extends AttemptOutput {
  readonly lines: number;
}

/** Invariant 1: an attempt's lines and usage to the SDK's handler context, echoed when asked. */
export function attemptOutput(ref: WorkRef, target: LogTarget, echo?: LogEcho): CountedOutput {
  let lines = 0;
  return {
    log(line) {
      lines++;
      echo?.(ref, line);
      return target.log(line.text, {
        stream: line.stream,
        ...(line.level ? { level: line.level } : {}),
        ...(line.kind ? { kind: line.kind } : {}),
        ...(line.data ? { data: line.data } : {}),
      });
    },
    usage: (u) => target.usage(u),
    get lines() {
      return lines;
    },
  };
}

/** `--verbose`: `[task 12 #1] stdout | text`, one line each, written to `write` (the agent's stderr). */
export function stderrEcho(write: (text: string) => void): LogEcho {
  return (ref, line) => {
    const level = line.level && line.level !== 'info' ? ` ${line.level}` : '';
    write(`[${workLabel(ref)}] ${line.stream}${level} | ${line.text.replace(/[\r\n]+/g, ' ')}\n`);
  };
}
