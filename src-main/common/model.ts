/**
 * Domain objects as they cross boundaries (agent socket, HTTP, IPC). Instants are ISO-8601 UTC
 * strings on the wire; the core stores epoch milliseconds.
 */
import type { Verification, VerifySpec } from './verify';

/** `verifying`: the holder reported done and Gaffer runs the task's checks (PROTOCOL §13); nobody holds it. */
export const TASK_STATUSES = ['backlog', 'in_progress', 'verifying', 'blocked', 'done', 'failed', 'cancelled'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

/** Statuses a holder may report (PROTOCOL `report`). */
export const REPORT_STATUSES = ['done', 'failed', 'blocked', 'backlog'] as const;
export type ReportStatus = (typeof REPORT_STATUSES)[number];

export interface TaskLock {
  instanceId: string;
  fence: number;
  claimedAt: string;
  expiresAt: string;
}

export interface Task {
  id: number;
  title: string;
  role: string;
  status: TaskStatus;
  priority: number;
  payload: unknown;
  dependsOn: number[];
  /** Number of claims so far: 1 on the first claim. */
  attempt: number;
  /** True when an earlier holder's lock expired: the work may be half done. */
  previouslyExpired: boolean;
  /** The fence of the latest claim (0 before the first claim). */
  fence: number;
  /** Dependencies not yet done; the task is invisible to claimers while > 0 (P3). */
  unmetDependencies: number;
  note: string | null;
  output: unknown;
  createdAt: string;
  updatedAt: string;
  lock: TaskLock | null;
  /** Carried by every audit event about this task (creation, claims, renewals, releases, expiries). */
  traceId: string | null;
  /** Its "done when…" declaration (PROTOCOL §13), when it has one. */
  verify?: VerifySpec;
  /** Why the last attempt did not count ("verification failed: tests: exited with 1"), for the next holder. */
  previousError?: string;
  /** `already_done`: the "already done?" checks passed before a new attempt was handed out. */
  disposition?: 'already_done';
  /** The latest attempt's verification, where one ran (HTTP and the console; not on claims). */
  verification?: Verification;
  /**
   * PROTOCOL §16: the operator's answer to the question the task was blocked with (the note it was
   * unblocked with), until the next holder reports. The command agent passes it as GAFFER_APPROVAL_NOTE.
   */
  answer?: string;
  /**
   * PROTOCOL §16: with `answer`, the CLI session the attempt that asked reported (its stored
   * `session` artifact), to continue the same conversation — the command agent's GAFFER_RESUME_SESSION.
   */
  resumeSession?: string;
}

export const INSTANCE_STATUSES = ['online', 'disconnected', 'offline'] as const;
export type InstanceStatus = (typeof INSTANCE_STATUSES)[number];

export interface Instance {
  id: string;
  role: string;
  name: string;
  version: string | null;
  status: InstanceStatus;
  connectedAt: string;
  lastHeartbeatAt: string;
  disconnectedAt: string | null;
  tokenId: string | null;
  heldTaskIds: number[];
}

/** An agent token as the core reports it (never the secret; the hash stays in the database). */
export interface TokenInfo {
  id: string;
  name: string;
  role: string | null;
  createdAt: string;
  revokedAt: string | null;
}

export interface AuditEvent {
  id: number;
  at: string;
  type: string;
  actor: string;
  subject: string;
  detail: unknown;
  traceId: string | null;
  prevHash: string;
  hash: string;
}

export interface Page<T> {
  items: T[];
  next: string | null;
}

/**
 * A page of tasks. A text search reads a bounded number of rows per call: `partial` is true when
 * it stopped there before `limit` matches (keep paging with `next`). Always false without a text.
 */
export interface TaskPage extends Page<Task> {
  partial: boolean;
}

/**
 * What an operator can do to many tasks at once. `backlog` puts failed and blocked tasks back in
 * the backlog (retry / unblock); `unblock` only blocked ones.
 */
export const BULK_TASK_ACTIONS = ['cancel', 'reprioritise', 'backlog', 'unblock'] as const;
export type BulkTaskAction = (typeof BULK_TASK_ACTIONS)[number];

/** Which statuses each bulk action applies to (a task in another status is skipped, never changed). */
export const BULK_APPLIES_TO: Record<BulkTaskAction, readonly TaskStatus[]> = {
  cancel: ['backlog', 'in_progress', 'verifying', 'blocked', 'failed'],
  reprioritise: ['backlog', 'in_progress', 'blocked', 'failed'],
  backlog: ['blocked', 'failed'],
  unblock: ['blocked'],
};

/** What one call of a bulk action did. */
export interface BulkTaskResult {
  /** Names every call of this bulk action; pass it back on the next call. */
  bulkId: string;
  changed: number[];
  /** Tasks left as they were, with why (another status by now, unknown id, …). */
  skipped: Array<{ taskId: number; code: string; message: string }>;
  /** Filter mode: pass as `after` for the next chunk; null once the filter is exhausted. */
  next: number | null;
  /** Filter mode: the highest task id the selection covers (pass it back as `through`). */
  through: number | null;
}

/** Tasks a filter selects now, counted over a bounded scan (`exact` false: at least `count`). */
export interface TaskCount {
  count: number;
  exact: boolean;
  /** The highest task id now: a bulk action over the filter covers tasks up to it. */
  through: number;
}

/** A readiness flag for a business key (SPEC §5 signal preconditions), e.g. `data-ready` for `2026-11-30`. */
export interface Signal {
  name: string;
  key: string;
  setAt: string;
  actor: string;
  /** Optional JSON value given when the signal was set (evidence, a row count, …). */
  value?: unknown;
}

/** Audit browser: one page plus how far the bounded scan went (additions to `Page`). */
export interface AuditPage extends Page<AuditEvent> {
  /** True when the page stopped at the scan budget before `limit` matches: keep paging with `next`. */
  partial: boolean;
}

/**
 * Why the scheduler is refusing writes, when it is (the console shows it as a banner; `GET /status`
 * reports it and says `ok: false`).
 * - `fault`: a file Gaffer writes (the database, its WAL, the data directory's lock) was deleted or
 *   replaced under it. Writes stay refused until Gaffer is restarted.
 * - `failing`: the disk refuses writes (full, read-only, I/O errors); they resume by themselves
 *   once a write succeeds again.
 */
export interface StorageStatus {
  /**
   * `fault`: a file was pulled out from under Gaffer, writes are refused until a restart;
   * `failing`: the disk refuses writes; `tampered`: the audit log was changed outside Gaffer
   * (found at start; writes go on), until its `storage_fault` inbox item is acknowledged.
   */
  state: 'fault' | 'failing' | 'tampered';
  /** One sentence for the operator: what happened and what to do. */
  message: string;
  /** When it started (ISO-8601). */
  since: string;
}

/** One bad row found by verifying the audit chain (every one is reported, not only the first). */
export interface AuditChainProblem {
  /** The row at fault (for a gap: the first missing id). */
  id: number;
  kind: 'gap' | 'link' | 'content';
  reason: string;
}

/**
 * A row written by a Gaffer from before text was checked: it holds an unpaired UTF-16 surrogate
 * that the database keeps as invalid UTF-8. It verifies over its bytes as stored (it was not
 * altered) but reads back with U+FFFD in its place.
 */
export interface AuditLegacyTextRow {
  id: number;
  /** The columns holding such text. */
  fields: string[];
  reason: string;
}
