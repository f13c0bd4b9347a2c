/**
 * The console API: the one interface the renderer talks to. Two transports implement it — the
 * Electron preload (allow-listed IPC) and the browser build (HTTP + WebSocket to the headless
 * server) — and one method table on the main side serves both (`src-main/server/console/`).
 *
 * Every method takes one JSON argument object and returns a JSON result; arguments are validated
 * on the main side with the schemas below (the IPC/HTTP boundary). Errors come back as
 * `ErrorBody` ({code, status, message}) because classes do not survive serialisation.
 * Operator actions always carry a `reason`; the main side records the actor.
 */
import { z } from 'zod';
import type { InboxKind, InboxSeverity, InboxState } from './attention';
import type { ErrorBody } from './errors';
import type { AuditEvent, TaskStatus } from './model';
import { OPS, opsFor, type OpArgs, type OpReturn, type OpsFor } from './ops';
import { auditFilterShape } from './schemas';

// Result shapes of console-only operations live with their operations (common/ops); re-exported
// here because the renderer names them from its one interface.
export type { AuditCount, AuditVerifyResult } from './ops/audit';
export type { IcsImportResult, RunDetail, TriggerResult } from './ops/jobs';
export type { LogAttemptsResult, LogAttemptView, LogSearchHit, LogSettingsView, SubjectUsage, TimelineEntry } from './ops/logs';
export type { ConsoleSettings, Dashboard, ThroughputPoint } from './ops/status';
export type { ExpiredLockCard, InstanceView, RoleSummary, TokenView } from './ops/tasks';

// ---------------------------------------------------------------------------------------------
// The console's methods: the catalogue's operations the console may call (common/ops).

/** A method of the console: an operation whose `callers` include `console`. */
export type ConsoleMethod = OpsFor<'console'>;
export type ConsoleArgs<M extends ConsoleMethod> = z.input<(typeof OPS)[M]['input']>;
/** The arguments as the handlers receive them (parsed). */
export type ConsoleInput<M extends ConsoleMethod> = OpArgs<M>;
export type ConsoleResult<M extends ConsoleMethod> = OpReturn<M>;
/** Every console method's result type (a mapped type over the catalogue). */
export type ConsoleResults = { [M in ConsoleMethod]: ConsoleResult<M> };
export const CONSOLE_METHODS = opsFor('console') as ConsoleMethod[];
const CONSOLE_METHOD_SET: ReadonlySet<string> = new Set(CONSOLE_METHODS);
/** Each console method's argument schema (the catalogue entry's `input`). */
export const consoleArgs = Object.fromEntries(CONSOLE_METHODS.map((m) => [m, OPS[m].input])) as { [M in ConsoleMethod]: (typeof OPS)[M]['input'] };

export function isConsoleMethod(m: unknown): m is ConsoleMethod {
  return typeof m === 'string' && CONSOLE_METHOD_SET.has(m);
}

/** Filters for an export (same as a query, without paging). */
export const auditExportArgs = z.strictObject({ ...auditFilterShape, format: z.enum(['jsonl', 'csv']) });
export type AuditExportArgs = z.infer<typeof auditExportArgs>;

// ---------------------------------------------------------------------------------------------
// Live events pushed to the console (a serialisable subset of the core's events)

export type ConsoleEvent =
  | { type: 'task.changed'; taskId: number; role: string; status: TaskStatus }
  | { type: 'instance.changed'; instanceId: string; status: string }
  | { type: 'lock.expired'; taskId: number; instanceId: string }
  /**
   * A new audit row. Under load the stream is sampled (the newest rows of each ~100 ms batch are
   * kept): ids are dense, so a jump in `event.id` means rows were not pushed — page them if needed.
   */
  | { type: 'audit.appended'; event: AuditEvent }
  | { type: 'run.changed'; runId: string; jobId: string; status: string }
  | { type: 'job.changed'; jobId: string }
  | { type: 'settings.changed' }
  /**
   * An inbox item changed: `raised` is a new item, `reopened` a snoozed one whose time came (the
   * desktop shell notifies for both, by kind), `repeated` one more occurrence folded into it.
   */
  | { type: 'inbox.changed'; itemId: number; action: 'raised' | 'repeated' | 'acked' | 'snoozed' | 'reopened' | 'resolved'; kind: InboxKind; severity: InboxSeverity; state: InboxState; title: string; detail: string }
  /** New lines of a task's or run's log are stored (coalesced: the newest seq per subject). */
  | { type: 'log.appended'; subject: string; attempt: number; lastSeq: number }
  /** A managed agent's definition or one of its processes changed (started, exited, said hello). */
  | { type: 'managed.changed'; managedAgentId: string }
  | { type: 'alert'; level: 'info' | 'warning' | 'critical'; title: string; body: string };

export type ConsoleReply<T> = { ok: true; value: T } | { ok: false; error: ErrorBody };

export interface ExportProgress {
  rows: number;
  bytes: number;
  done: boolean;
}

/** What the renderer sees. Implemented by the preload bridge and by the browser transport. */
export interface ConsoleApi {
  call<M extends ConsoleMethod>(method: M, args: ConsoleArgs<M>): Promise<ConsoleResult<M>>;
  /** Live events; returns an unsubscribe function. */
  subscribe(listener: (event: ConsoleEvent) => void): () => void;
  /**
   * Exports the filtered audit log to a file the operator chooses (native save dialog in Electron,
   * a download in the browser), reporting progress. Resolves with where it went, or null if cancelled.
   */
  exportAudit(args: AuditExportArgs, onProgress: (p: ExportProgress) => void): Promise<{ file: string; rows: number } | null>;
  /** Which shell the console runs in. */
  readonly shell: 'electron' | 'browser';
  /**
   * Live-event connection state (the browser's WebSocket reconnects; IPC is always connected).
   * After a reconnect, events may have been missed: refetch what is on screen. Returns an unsubscribe.
   */
  onConnectionChange?(listener: (connected: boolean) => void): () => void;
  /** The shell asks the UI to show a view (Electron's Go menu, Ctrl/Cmd+1…9). Returns an unsubscribe. */
  onNavigate?(listener: (view: ConsoleView) => void): () => void;
  /**
   * Browser only: use this operator token from now on (pasted by the operator in a tab that has
   * none, or whose token was refused). Kept for this tab only, never put in the URL.
   */
  signIn?(token: string): void;
}

/**
 * The console's views, in menu order (Electron's Go menu binds Ctrl/Cmd+1…9 to the first nine).
 * New views are appended, so the digits operators learned keep their views.
 */
export const CONSOLE_VIEWS = ['dashboard', 'queues', 'expired-locks', 'instances', 'jobs', 'runs', 'why', 'audit', 'settings', 'calendars', 'managed-agents', 'tasks', 'signals', 'inbox'] as const;
export type ConsoleView = (typeof CONSOLE_VIEWS)[number];

// ---------------------------------------------------------------------------------------------
// Electron transport: fixed IPC channel names and the bridge the sandboxed preload exposes as
// `window.gaffer`. Replies cross IPC as `ConsoleReply` (classes do not survive serialisation);
// the renderer's transport turns them back into values or `ConsoleCallError`s.

export const CONSOLE_IPC = {
  /** renderer → main (invoke): `{ method, args }` → `ConsoleReply`. */
  call: 'gaffer:console:call',
  /** main → renderer (send): `ConsoleEvent[]`, one batch per ~100 ms at most. */
  events: 'gaffer:console:events',
  /** renderer → main (invoke): `{ id, args }` → `ConsoleReply<{ file, rows } | null>` (native save dialog). */
  exportAudit: 'gaffer:console:export',
  /** main → renderer (send): `{ id, progress: ExportProgress }`. */
  exportProgress: 'gaffer:console:export-progress',
  /** main → renderer (send): a `ConsoleView` to show. */
  navigate: 'gaffer:console:navigate',
} as const;

export interface GafferBridge {
  readonly shell: 'electron';
  call(method: ConsoleMethod, args: unknown): Promise<ConsoleReply<unknown>>;
  /** Live event batches are delivered one event at a time; returns an unsubscribe. */
  subscribe(listener: (event: ConsoleEvent) => void): () => void;
  exportAudit(args: AuditExportArgs, onProgress: (p: ExportProgress) => void): Promise<ConsoleReply<{ file: string; rows: number } | null>>;
  onNavigate(listener: (view: ConsoleView) => void): () => void;
}

/** Error thrown by transports when a call fails: carries the stable code. */
export class ConsoleCallError extends Error {
  constructor(readonly body: ErrorBody) {
    super(body.message);
    this.name = 'ConsoleCallError';
  }
  get code() {
    return this.body.code;
  }
}
