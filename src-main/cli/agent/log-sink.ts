/**
 * Where a task's or run's log lines go. Today: the agent's own log (its stderr), one prefixed line
 * each. The `log` frame of PROTOCOL §5 will replace `stderrLogSink` with a sink that batches lines
 * into frames for the task/run — the callers stay as they are.
 */

/** The work a line belongs to. */
export interface WorkRef {
  kind: 'task' | 'job';
  /** Task id, or run id. */
  id: string;
  attempt: number;
}

export type LogStream = 'stdout' | 'stderr' | 'agent';
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/** PROTOCOL §5 `log` line fields. */
export interface LogLine {
  text: string;
  stream: LogStream;
  level?: LogLevel;
  at?: string;
}

export type LogSink = (ref: WorkRef, line: LogLine) => void;

export function workLabel(ref: WorkRef): string {
  return `${ref.kind === 'task' ? `task ${ref.id}` : `run ${ref.id}`} #${ref.attempt}`;
}

/** `[task 12 #1] stdout | text`, one line each, written to `write` (the agent's stderr). */
export function stderrLogSink(write: (text: string) => void): LogSink {
  return (ref, line) => {
    const level = line.level && line.level !== 'info' ? ` ${line.level}` : '';
    write(`[${workLabel(ref)}] ${line.stream}${level} | ${line.text.replace(/[\r\n]+/g, ' ')}\n`);
  };
}
