/**
 * How an attempt ended, and what that means for the task or the run (PROTOCOL §6):
 *
 * | ending                      | task        | run                                   |
 * |-----------------------------|-------------|---------------------------------------|
 * | exit 0                      | `done`      | `success`                             |
 * | exit 75 (EX_TEMPFAIL)       | `backlog`   | failed, `retryable` (its retry policy)|
 * | exit 65 (EX_DATAERR)        | `failed`    | failed, `fatal` (held for review)     |
 * | exit 77 (EX_NOPERM)         | `blocked`   | failed, `needs_human` (held)          |
 * | any other exit, a signal, the `--timeout-s` limit | `failed` | failed, `retryable`   |
 * | the command could not start | `failed`    | failed, `fatal`                       |
 * | the agent shuts down        | `backlog`   | failed, `retryable` (handed back)     |
 * | taken away (lock lost, run cancelled, deadline) | nothing is reported | nothing is reported |
 * | a `::gaffer::` step could not be recorded | `failed` | failed, `retryable`              |
 */
import type { ReportStatus } from '../../common/model';
import type { ErrorClass } from '../../common/protocol';

export const EXIT = { done: 0, retryable: 75, fatal: 65, needsHuman: 77 } as const;

/** The agent's own exit status when its command cannot be started at all (EX_CONFIG). */
export const EXIT_CANNOT_START = 78;

export type Ending =
  | { kind: 'exited'; code: number }
  | { kind: 'signalled'; signal: string }
  | { kind: 'timeout'; afterS: number }
  | { kind: 'spawn_failed'; reason: string }
  | { kind: 'shutdown' }
  | { kind: 'taken_away'; reason: string }
  /** A `::gaffer::` step could not be recorded (and it was not because the work was taken away). */
  | { kind: 'checkpoint_failed'; reason: string };

export function describeEnding(e: Ending): string {
  switch (e.kind) {
    case 'exited':
      return `exit ${e.code}${EXIT_MEANING[e.code] ? ` (${EXIT_MEANING[e.code]})` : ''}`;
    case 'signalled':
      return `killed by ${e.signal}`;
    case 'timeout':
      return `timed out after ${e.afterS} s (--timeout-s)`;
    case 'spawn_failed':
      return `the command could not start: ${e.reason}`;
    case 'shutdown':
      return 'the agent shut down before the command finished; handed back';
    case 'taken_away':
      return `taken away: ${e.reason}`;
    case 'checkpoint_failed':
      return `stopped: a step could not be recorded (${e.reason})`;
  }
}

const EXIT_MEANING: Record<number, string> = { 0: 'done', 75: 'retryable', 65: 'fatal', 77: 'needs a human' };

/** The task report for an ending; undefined: report nothing (the work was taken away). */
export function taskStatusFor(e: Ending): ReportStatus | undefined {
  switch (e.kind) {
    case 'exited':
      return e.code === EXIT.done ? 'done' : e.code === EXIT.retryable ? 'backlog' : e.code === EXIT.needsHuman ? 'blocked' : 'failed';
    case 'shutdown':
      return 'backlog';
    case 'taken_away':
      return undefined;
    default:
      return 'failed';
  }
}

/** The run result for an ending; undefined: report nothing. */
export function runOutcomeFor(e: Ending): { outcome: 'success' } | { outcome: 'failed'; errorClass: ErrorClass } | undefined {
  switch (e.kind) {
    case 'exited':
      if (e.code === EXIT.done) return { outcome: 'success' };
      return { outcome: 'failed', errorClass: e.code === EXIT.fatal ? 'fatal' : e.code === EXIT.needsHuman ? 'needs_human' : 'retryable' };
    case 'spawn_failed':
      return { outcome: 'failed', errorClass: 'fatal' };
    case 'taken_away':
      return undefined;
    default:
      return { outcome: 'failed', errorClass: 'retryable' };
  }
}
