/**
 * Errors of the agent SDK.
 *
 * - Thrown *by the SDK*: `GafferRequestError` (the server refused a request; `code` is the
 *   protocol's error code), `ConnectionLostError`, `RequestTimeoutError`, `AgentClosedError`,
 *   `LockLostError` (the reason a work handler's `signal` is aborted), `RunCancelledError` (the
 *   reason a job handler's `signal` is aborted on `run_cancelled`).
 * - Thrown *by your handlers* to say how work ended:
 *   jobs  (`onJob`):  RetryableError → errorClass `retryable`, FatalError → `fatal`,
 *                     NeedsHumanError → `needs_human`; anything else → the handler's default.
 *   tasks (`work`):   BlockedError / NeedsHumanError → `blocked`, BacklogError / RetryableError →
 *                     `backlog` (give it back), FatalError / TaskFailedError / anything else → `failed`.
 * Classification also works by duck typing (`errorClass` / `reportStatus` properties), so errors
 * from another copy of this package are understood too.
 */
import { ERROR_CLASSES, type ErrorClass } from '../common/protocol';
import type { ReportStatus } from '../common/model';
import { cutText } from '../common/line-splitter';
import { toWellFormedText } from '../common/text';

/** Base of everything the SDK throws; `code` is stable. */
export class GafferSdkError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** The server answered a request with `{ok:false, error}`. */
export class GafferRequestError extends GafferSdkError {
  constructor(
    code: string,
    readonly status: number,
    message: string,
  ) {
    super(code, message);
  }
}

/** The socket closed while the request was in flight: it may or may not have taken effect. */
export class ConnectionLostError extends GafferSdkError {
  constructor(message = 'connection lost before the reply arrived') {
    super('disconnected', message);
  }
}

export class RequestTimeoutError extends GafferSdkError {
  constructor(type: string, ms: number) {
    super('timeout', `no reply to ${type} within ${ms} ms`);
  }
}

export class AgentClosedError extends GafferSdkError {
  constructor(message = 'the agent is closed') {
    super('closed', message);
  }
}

/** Why a work handler's `signal` was aborted: the lock is no longer ours (P5), or the agent is closing. */
export class LockLostError extends GafferSdkError {
  constructor(
    readonly taskId: number,
    message: string,
    /** The `lock_lost` push's reason (`force_release`, `expired`, `cancelled`, `budget`) when the server sent one. */
    readonly lostBecause?: string,
  ) {
    super('lock_lost', message);
  }
}

/** Why a job handler's `signal` was aborted on `run_cancelled`: the attempt is no longer ours. */
export class RunCancelledError extends GafferSdkError {
  constructor(
    readonly runId: string,
    /** `operator`, `deadline`, `budget` or `kill_switch` (PROTOCOL §4). */
    readonly reason: string,
  ) {
    super('run_cancelled', `run ${runId} was cancelled by the server (${reason})`);
  }
}

export class AgentClosingError extends GafferSdkError {
  constructor() {
    super('closing', 'the agent is shutting down');
  }
}

// ---- Outcomes thrown by handlers ----

abstract class OutcomeError extends Error {
  abstract readonly errorClass: ErrorClass;
  abstract readonly reportStatus: Exclude<ReportStatus, 'done'>;
  /** Optional JSON output to report with the outcome. */
  readonly output?: unknown;
  constructor(message: string, opts: { cause?: unknown; output?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = new.target.name;
    if (opts.output !== undefined) this.output = opts.output;
  }
}

/** Transient (timeout, rate limit, a dependency down): retry later. */
export class RetryableError extends OutcomeError {
  readonly errorClass = 'retryable' as const;
  readonly reportStatus = 'backlog' as const;
}

/** Will not succeed by retrying (validation failed, condition not met): hold for review. */
export class FatalError extends OutcomeError {
  readonly errorClass = 'fatal' as const;
  readonly reportStatus = 'failed' as const;
}

/** Money, accounts, security: stop and ask a human at once; never retried automatically. */
export class NeedsHumanError extends OutcomeError {
  readonly errorClass = 'needs_human' as const;
  readonly reportStatus = 'blocked' as const;
}

// The same three outcomes under the names a task handler thinks in.

/** Task outcome: blocked (waiting on something outside). */
export class BlockedError extends NeedsHumanError {}

/** Task outcome: give the task back to the backlog for another attempt. */
export class BacklogError extends RetryableError {}

/** Task outcome: failed. */
export class TaskFailedError extends FatalError {}

export function errorClassOf(e: unknown, fallback: ErrorClass): ErrorClass {
  const c = (e as { errorClass?: unknown } | null)?.errorClass;
  return typeof c === 'string' && (ERROR_CLASSES as readonly string[]).includes(c) ? (c as ErrorClass) : fallback;
}

export function reportStatusOf(e: unknown): Exclude<ReportStatus, 'done'> {
  const s = (e as { reportStatus?: unknown } | null)?.reportStatus;
  if (s === 'failed' || s === 'blocked' || s === 'backlog') return s;
  switch (errorClassOf(e, 'fatal')) {
    case 'retryable':
      return 'backlog';
    case 'needs_human':
      return 'blocked';
    case 'fatal':
      return 'failed';
  }
}

/**
 * A short, single message for the wire (notes and run errors are capped by the protocol). Gaffer
 * refuses text that is not valid Unicode, so the cut never splits a surrogate pair and a lone
 * surrogate in the message itself (from a JSON escape, a cut elsewhere) becomes U+FFFD: a report
 * carrying this message is never refused for it.
 */
export function errorMessage(e: unknown, max = 10_000): string {
  const text = e instanceof Error ? e.message || e.name : typeof e === 'string' ? e : JSON.stringify(e) ?? String(e);
  return cutText(toWellFormedText(text), max, '…');
}
