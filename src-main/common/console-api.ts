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
import type { SchedulerConfig } from './config';
import type { ErrorBody } from './errors';
import type { AuditEvent, AuditPage, Instance, Page, Task, TaskStatus } from './model';
import { auditFilterShape, auditQueryInput, listTasksInput, reason, roleName, taskId } from './schemas';

// ---------------------------------------------------------------------------------------------
// Result shapes

export interface RoleSummary {
  role: string;
  /** Backlog with every dependency done: claimable now. */
  ready: number;
  /** Backlog waiting on dependencies. */
  waiting: number;
  inProgress: number;
  blocked: number;
  failed: number;
  done: number;
  onlineInstances: number;
  /** The oldest claimable task's age in ms (how long the queue has been stuck), or null. */
  oldestReadyAgeMs: number | null;
}

export interface ExpiredLockCard {
  id: number;
  taskId: number;
  title: string;
  role: string;
  holder: string;
  holderName: string | null;
  fence: number;
  reason: string;
  expiredAt: string;
  reclaimedBy: string | null;
  reclaimedByName: string | null;
  reclaimedAt: string | null;
}

export interface ThroughputPoint {
  /** Local calendar day `YYYY-MM-DD`. */
  day: string;
  done: number;
  failed: number;
  expired: number;
}

export interface Dashboard {
  serverTime: string;
  onlineInstances: number;
  completedThisWeek: number;
  expiredLocksToday: number;
  runsNeedingAttention: number;
  recoveryBoundS: number;
  killSwitch: boolean;
  roles: RoleSummary[];
  throughput: ThroughputPoint[];
  /** Filled by the jobs module: upcoming triggers, soonest first. */
  nextTriggers: Array<{ jobId: string; job: string; slot: string; at: string }>;
}

export interface InstanceView extends Instance {
  /** Titles of the tasks whose locks it holds. */
  held: Array<{ taskId: number; title: string; expiresAt: string }>;
}

export interface TokenView {
  id: string;
  name: string;
  role: string | null;
  createdAt: string;
  revokedAt: string | null;
}

export interface ConsoleSettings {
  config: SchedulerConfig;
  killSwitch: boolean;
  port: number | null;
  dataDir: string | null;
  version: string;
}

/** `exact` is false when counting stopped at the cap: the true count is at least `count`. */
export interface AuditCount {
  count: number;
  exact: boolean;
}

export interface AuditVerifyResult {
  ok: boolean;
  checked: number;
  brokenAt?: number;
  reason?: string;
}

// ---------------------------------------------------------------------------------------------
// Argument schemas (validated on the main side)

const empty = z.strictObject({});

export const consoleArgs = {
  'dashboard.get': empty,
  'tasks.list': listTasksInput,
  'tasks.get': z.strictObject({ taskId }),
  'tasks.create': z.strictObject({
    title: z.string().trim().min(1).max(500),
    role: roleName,
    priority: z.number().int().min(-1_000_000).max(1_000_000).optional(),
    payload: z.unknown().optional(),
    dependsOn: z.array(taskId).max(100).optional(),
  }),
  'tasks.reprioritise': z.strictObject({ taskId, priority: z.number().int().min(-1_000_000).max(1_000_000), reason }),
  'tasks.cancel': z.strictObject({ taskId, reason }),
  'tasks.retry': z.strictObject({ taskId, reason }),
  'tasks.unblock': z.strictObject({ taskId, reason }),
  'tasks.forceRelease': z.strictObject({ taskId, reason }),
  'roles.summary': empty,
  'locks.expiredToday': empty,
  'instances.list': empty,
  'tokens.list': empty,
  'tokens.create': z.strictObject({ name: z.string().trim().min(1).max(200), role: roleName.nullable().optional() }),
  'tokens.revoke': z.strictObject({ id: z.string().min(1).max(100), reason }),
  'audit.query': auditQueryInput,
  /** Matching rows for a filter (the audit browser's total and the export's progress), counted up to a cap. */
  'audit.count': z.strictObject(auditFilterShape),
  'audit.verify': empty,
  'settings.get': empty,
  'settings.setKillSwitch': z.strictObject({ on: z.boolean(), reason }),
} as const;

/** Filters for an export (same as a query, without paging). */
export const auditExportArgs = z.strictObject({ ...auditFilterShape, format: z.enum(['jsonl', 'csv']) });
export type AuditExportArgs = z.infer<typeof auditExportArgs>;

export interface ConsoleResults {
  'dashboard.get': Dashboard;
  'tasks.list': Page<Task>;
  'tasks.get': Task;
  'tasks.create': { task: Task; replayed: boolean };
  'tasks.reprioritise': Task;
  'tasks.cancel': Task;
  'tasks.retry': Task;
  'tasks.unblock': Task;
  'tasks.forceRelease': Task;
  'roles.summary': RoleSummary[];
  'locks.expiredToday': ExpiredLockCard[];
  'instances.list': InstanceView[];
  'tokens.list': TokenView[];
  'tokens.create': { id: string; token: string };
  'tokens.revoke': TokenView;
  'audit.query': AuditPage;
  'audit.count': AuditCount;
  'audit.verify': AuditVerifyResult;
  'settings.get': ConsoleSettings;
  'settings.setKillSwitch': ConsoleSettings;
}

export type ConsoleMethod = keyof typeof consoleArgs & keyof ConsoleResults;
export type ConsoleArgs<M extends ConsoleMethod> = z.input<(typeof consoleArgs)[M]>;
export type ConsoleResult<M extends ConsoleMethod> = ConsoleResults[M];
export const CONSOLE_METHODS = Object.keys(consoleArgs) as ConsoleMethod[];

export function isConsoleMethod(m: unknown): m is ConsoleMethod {
  return typeof m === 'string' && Object.prototype.hasOwnProperty.call(consoleArgs, m);
}

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
}

/** The console's views, in menu order (Electron's Go menu binds Ctrl/Cmd+1…9 to the first nine). */
export const CONSOLE_VIEWS = ['dashboard', 'queues', 'expired-locks', 'instances', 'jobs', 'runs', 'why', 'audit', 'settings', 'calendars'] as const;
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
