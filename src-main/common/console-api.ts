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
import {
  budgetsInput,
  deliveriesListInput,
  inboxListInput,
  inboxSnoozeInput,
  notificationsInput,
  webhookId,
  type BudgetsView,
  type Delivery,
  type InboxCounts,
  type InboxItem,
  type InboxKind,
  type InboxSeverity,
  type InboxState,
  type NotificationSettingsView,
  type WebhookSecret,
  type WebhookTestResult,
} from './attention';
import type { SchedulerConfig } from './config';
import type { ErrorBody } from './errors';
import {
  BACKFILL_ACTIONS,
  calendarId,
  calendarInput,
  calendarReplaceInput,
  icsImportInput,
  jobSpecInput,
  listBackfillsInput,
  listJobsInput,
  listRunsInput,
  type Backfill,
  type BusinessCalendar,
  type CheckRecord,
  type DowntimeSimulation,
  type Explanation,
  type Job,
  type JobIssue,
  type JobSummary,
  type LedgerBucketsResult,
  type LedgerResult,
  type PreviewResult,
  type Run,
  type RolePause,
  type RunStep,
  type TriggerChoices,
} from './job-schema';
import {
  LOG_SETTINGS_LIMITS,
  LOG_STREAMS,
  USAGE_GROUPS,
  type CostlyRun,
  type DailyUsage,
  type LogAttempt,
  type LogLine,
  type LogPage,
  type LogSettings,
  type LogStorageStats,
  type UsageRow,
  type UsageTotals,
} from './logs';
import { MANAGED_ACTIONS, MAX_MANAGED_INSTANCES, managedAgentInput, managedAgentPatch, type ManagedAgent } from './managed-agents';
import { rehearseInput, type RehearsalResult } from './rehearsal';
import type {
  AuditChainProblem,
  AuditEvent,
  AuditLegacyTextRow,
  AuditPage,
  BulkTaskResult,
  Instance,
  Page,
  Signal,
  StorageStatus,
  Task,
  TaskCount,
  TaskPage,
  TaskStatus,
  TokenInfo,
} from './model';
import {
  auditFilterShape,
  auditQueryInput,
  bulkTaskShape,
  checkBulkShape,
  countTasksInput,
  jsonValue,
  listSignalsInput,
  listTasksInput,
  reason,
  roleName,
  signalKey,
  signalName,
  taskId,
} from './schemas';

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
  /** Present while the whole role is paused: its jobs start nothing, its tasks are not handed out. */
  paused?: RolePause;
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
  /** Who turned the kill switch on, when and why (null while it is off). */
  killSwitchBy: { by: string; at: string; reason: string } | null;
  roles: RoleSummary[];
  throughput: ThroughputPoint[];
  /** Filled by the jobs module: upcoming triggers, soonest first. */
  nextTriggers: Array<{ jobId: string; job: string; slot: string; at: string }>;
  /** What waits for the operator in the inbox. */
  inbox: InboxCounts;
  /** Today's spend against each daily cap (and when they reset). */
  budgets: BudgetsView;
  /** Why writes are being refused (shown as a banner on every view), or null. */
  storage: StorageStatus | null;
}

export interface InstanceView extends Instance {
  /** Titles of the tasks whose locks it holds. */
  held: Array<{ taskId: number; title: string; expiresAt: string }>;
  /**
   * Tasks whose lock was taken away from it (force-release, expiry, cancel) while it was connected:
   * it was told (`lock_lost`) and has not reported since. Empty once it reports them or disconnects.
   */
  lostLocks: Array<{ taskId: number; title: string; reason: string; at: string }>;
  /** Job runs it has started and not finished (`runs.status = running`). */
  currentRuns: Array<{ runId: string; jobId: string; job: string; slot: string }>;
}

/** An agent token as the console lists it (the core's `TokenInfo`: never the secret). */
export type TokenView = TokenInfo;

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
  /** The first problem's row and reason. */
  brokenAt?: number;
  reason?: string;
  /** Every problem (the first 1000), when there is one; `problemCount` counts them all. */
  problems?: AuditChainProblem[];
  problemCount?: number;
  /** Rows from before text was checked that verify over their stored bytes; `legacyTextCount` counts them all. */
  legacyText?: AuditLegacyTextRow[];
  legacyTextCount?: number;
}

/** `jobs.trigger`: what "run now" did (one run per slot: an existing run is reported, not doubled). */
export interface TriggerResult {
  run: Run;
  created: boolean;
  dispatched: boolean;
  message: string;
}

export interface RunDetail {
  run: Run;
  steps: RunStep[];
  checks: CheckRecord[];
  backfills: Backfill[];
}

export interface IcsImportResult {
  calendar: BusinessCalendar;
  warnings: string[];
  added: { holidays: number; extraWorkdays: number };
}

/** One attempt tab of a log pane: its lines' range and what it spent. */
export interface LogAttemptView extends LogAttempt {
  usage: UsageTotals;
}

/** A list row's usage (all attempts) and its latest attempt's span, first to last log line (null: no line). */
export interface SubjectUsage {
  usage: UsageTotals;
  latestAttemptMs: number | null;
}

export interface LogAttemptsResult {
  attempts: LogAttemptView[];
  /** All attempts together. */
  usage: UsageTotals;
}

export interface LogSearchHit extends LogLine {
  subject: string;
  /** Whose log: enough to show it and to open it. Null when the task or run is gone. */
  owner: { kind: 'task'; taskId: number; role: string; title: string } | { kind: 'run'; runId: string; jobId: string; job: string; slot: string } | null;
}

/** One row of the timeline of a task or run: from the audit trail, the log and the usage. */
export interface TimelineEntry {
  at: string;
  kind: 'created' | 'claim' | 'renew' | 'release' | 'expire' | 'refused' | 'step' | 'retry' | 'approval' | 'trigger' | 'result' | 'log' | 'usage' | 'other';
  /** Plain words for the row. */
  title: string;
  attempt: number | null;
  /** Who did it (an instance, the operator, Gaffer itself). */
  actor: string | null;
  /** The audit row's id, when the row comes from the audit. */
  auditId: number | null;
  detail: string | null;
}

export interface LogSettingsView {
  settings: LogSettings;
  storage: LogStorageStats;
}

// ---------------------------------------------------------------------------------------------
// Argument schemas (validated on the main side)

const empty = z.strictObject({});
/** A job by id or name. */
const jobRef = z.string().min(1).max(200);
const instant = z.iso.datetime({ offset: true });
/**
 * An unsaved job spec as the editor holds it (`jobs.validate`, `jobs.preview`): any object, since
 * the point is to get its issues back field by field; the core validates it with `jobSpecInput`.
 */
const jobDraft = z.record(z.string(), z.unknown());
const inboxId = z.number().int().positive();
const inboxNote = z.string().trim().max(2000);

/** `task:<id>` or `run:<id>`: whose log. */
const logSubject = z.string().regex(/^(task:[1-9]\d{0,14}|run:[^\s]{1,100})$/, 'must be task:<id> or run:<id>');
const logSettingsPatch = z.strictObject(
  Object.fromEntries(Object.entries(LOG_SETTINGS_LIMITS).map(([k, l]) => [k, z.number().int().min(l.min).max(l.max).optional()])) as {
    [K in keyof LogSettings]: z.ZodOptional<z.ZodNumber>;
  },
);

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
  /** With `payload`: "retry with changes" (the payload is replaced in the same step). */
  'tasks.retry': z.strictObject({ taskId, reason, payload: jsonValue.optional() }),
  'tasks.unblock': z.strictObject({ taskId, reason, payload: jsonValue.optional() }),
  'tasks.forceRelease': z.strictObject({ taskId, reason }),
  /** Replaces the payload of a task nobody holds and that is not finished. */
  'tasks.editPayload': z.strictObject({ taskId, payload: jsonValue, reason }),
  /** Tasks a filter selects now (for a bulk action: those it applies to), and the highest id it covers. */
  'tasks.count': countTasksInput,
  /** One chunk (at most 200 tasks, one short transaction) of a bulk action; the console pages it with a progress bar. */
  'tasks.bulk': z.strictObject(bulkTaskShape).superRefine(checkBulkShape),
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
  /** Readiness signals, ordered by name then key (filter by name or key). */
  'signals.list': listSignalsInput,
  /** Sets (or refreshes) a signal for a business key, e.g. `data-ready` for `2026-12-01`. */
  'signals.set': z.strictObject({ name: signalName, key: signalKey, value: jsonValue.optional(), reason }),
  'signals.clear': z.strictObject({ name: signalName, key: signalKey, reason }),

  // ---- central jobs (SPEC §5–§7). Saves reuse the shared zod job schema (common/job-schema.ts).
  'jobs.list': listJobsInput,
  'jobs.get': z.strictObject({ id: jobRef }),
  /** Shape, contradictions and schedule checks of an unsaved spec, field by field (nothing saved). */
  'jobs.validate': z.strictObject({ spec: jobDraft }),
  /** The next slots of a saved job (`id`) or of an unsaved spec (`spec`), calendar- and DST-aware. */
  'jobs.preview': z
    .strictObject({ id: jobRef.optional(), spec: jobDraft.optional(), count: z.number().int().min(1).max(200).optional(), after: instant.optional() })
    .refine((a) => (a.id === undefined) !== (a.spec === undefined), { message: 'give either id (a saved job) or spec (an unsaved one)' }),
  'jobs.create': z.strictObject({ spec: jobSpecInput, reason: reason.optional() }),
  /**
   * Replaces the job's spec as the editor shows it (its `enabled` flag is changed only by
   * `jobs.setEnabled`). `expectedVersion` refuses the save when someone edited the job meanwhile.
   */
  'jobs.update': z.strictObject({ id: jobRef, spec: jobSpecInput, reason, expectedVersion: z.number().int().positive().optional() }),
  'jobs.trigger': z.strictObject({ id: jobRef, reason, slot: z.string().min(1).max(40).optional(), checkPreconditions: z.boolean().optional() }),
  /** Which slot "run now" would run (the current one, the previous, the next) and what it would do to each; nothing changes. */
  'jobs.triggerChoices': z.strictObject({ id: jobRef }),
  /** Optionally until a time (it resumes by itself; at most MAX_PAUSE_DAYS ahead), or letting the runs already started finish (`drain`). */
  'jobs.pause': z.strictObject({ id: jobRef, reason, until: instant.nullable().optional(), drain: z.boolean().optional() }),
  'jobs.resume': z.strictObject({ id: jobRef, reason }),
  'jobs.setEnabled': z.strictObject({ id: jobRef, enabled: z.boolean(), reason }),
  /** "Why didn't it run?" / "will it run?" for an instant (default now). */
  'jobs.explain': z.strictObject({ id: jobRef, at: instant.optional() }),
  /** Every expected slot in [from, to) with its disposition (default: the last 8 days to tomorrow). */
  'jobs.ledger': z.strictObject({ id: jobRef, from: instant.optional(), to: instant.optional(), limit: z.number().int().min(1).max(5000).optional() }),
  /** The ledger counted by local day or hour of the job's zone (the heat map; a frequent job's ledger), paged with `next`. */
  'jobs.ledgerBuckets': z.strictObject({ id: jobRef, from: instant.optional(), to: instant.optional(), by: z.enum(['day', 'hour']).optional() }),
  'jobs.simulateDowntime': z.strictObject({ id: jobRef, from: instant, to: instant }),
  /** The job's five-scenario rehearsal on the real engine in a throw-away world (PROTOCOL §11); nothing live is touched. */
  'jobs.rehearse': rehearseInput,
  'runs.list': listRunsInput,
  'runs.get': z.strictObject({ id: z.string().min(1).max(100) }),
  /** A held run is dispatched again; its trigger carries the approval (with the note). */
  'runs.approve': z.strictObject({ id: z.string().min(1).max(100), note: reason }),
  /** A held run stays failed, disposition `rejected`. */
  'runs.reject': z.strictObject({ id: z.string().min(1).max(100), note: reason }),
  /** A failed run's slot runs again now, as a new attempt of the same run. */
  'runs.retry': z.strictObject({ id: z.string().min(1).max(100), reason: reason.optional() }),
  'backfills.list': listBackfillsInput,
  'backfills.action': z.strictObject({ id: z.number().int().positive(), action: z.enum(BACKFILL_ACTIONS), reason }),
  /** Puts a finished slot (failed, missed, skipped) in the backfill queue by hand. */
  'backfills.request': z.strictObject({ jobId: jobRef, slot: z.string().min(1).max(40), reason }),
  'calendars.list': empty,
  'calendars.get': z.strictObject({ id: calendarId }),
  /** Field checks of an unsaved calendar (zone, weekdays, dates, a date both holiday and make-up day). */
  'calendars.validate': z.strictObject({ calendar: z.record(z.string(), z.unknown()) }),
  'calendars.create': z.strictObject({ calendar: calendarInput, reason: reason.optional() }),
  'calendars.update': z.strictObject({ id: calendarId, calendar: calendarReplaceInput, reason }),
  /** Imports holidays and make-up workdays from the text of an .ics file into a saved calendar. */
  'calendars.importIcs': icsImportInput.extend({ id: calendarId, reason }),

  // ---- the operator's attention (PROTOCOL §8): inbox and notifications
  'inbox.list': inboxListInput,
  'inbox.counts': empty,
  'inbox.get': z.strictObject({ id: inboxId }),
  'inbox.ack': z.strictObject({ id: inboxId, note: inboxNote.optional() }),
  /** Acknowledges several items; ones acknowledged meanwhile are reported as skipped. */
  'inbox.ackMany': z.strictObject({ ids: z.array(inboxId).min(1).max(1000), note: inboxNote.optional() }),
  'inbox.snooze': inboxSnoozeInput.extend({ id: inboxId }),
  'budgets.get': empty,
  /** Daily spend caps: a field left out keeps its cap, `null` removes it. */
  'budgets.put': budgetsInput.extend({ reason: reason.optional() }),
  'roles.pauses': empty,
  /** Pauses a whole role: its jobs start nothing new and its tasks are not handed out (optionally until a time, at most MAX_PAUSE_DAYS ahead). */
  'roles.pause': z.strictObject({ role: roleName, reason, until: instant.nullable().optional() }),
  'roles.resume': z.strictObject({ role: roleName, reason: reason.optional() }),
  'notifications.get': empty,
  /** Replaces webhooks and desktop settings; a webhook kept by `id` without `url` keeps its stored URL. */
  'notifications.put': notificationsInput.extend({ reason: reason.optional() }),
  /** Sends a test notice now to one webhook, or to each. */
  'notifications.test': z.strictObject({ webhookId: webhookId.optional() }),
  'notifications.deliveries': deliveriesListInput,
  'notifications.retryDelivery': z.strictObject({ id: z.number().int().positive() }),
  /** A new signing secret for one webhook, shown this once. */
  'notifications.rotateSecret': z.strictObject({ webhookId, reason: reason.optional() }),
  // ---- logs and usage (PROTOCOL §5)
  'logs.attempts': z.strictObject({ subject: logSubject }),
  /** A page of lines, oldest first; `contains` keeps the lines holding the text (any case). */
  'logs.page': z.strictObject({
    subject: logSubject,
    after: z.number().int().min(0).optional(),
    limit: z.number().int().min(1).max(5000).optional(),
    attempt: z.number().int().min(1).optional(),
    stream: z.enum(LOG_STREAMS).optional(),
    contains: z.string().min(1).max(500).optional(),
  }),
  /** A whole attempt as text (for a download). */
  'logs.text': z.strictObject({ subject: logSubject, attempt: z.number().int().min(1) }),
  /** Words across every log, newest first. */
  'logs.search': z.strictObject({ q: z.string().trim().min(1).max(500), limit: z.number().int().min(1).max(500).optional() }),
  'logs.timeline': z.strictObject({ subject: logSubject }),
  'logs.settings': empty,
  'logs.setSettings': z.strictObject({ settings: logSettingsPatch, reason }),
  /** Sums in [from, to) (default: the last 14 days) by role, job or local day. */
  'usage.summary': z.strictObject({ by: z.enum(USAGE_GROUPS), from: instant.optional(), to: instant.optional(), role: roleName.optional(), job: jobRef.optional() }),
  /** Sums per local day, role and job in [from, to) (default: the last 14 days), for charts. */
  'usage.daily': z.strictObject({ from: instant.optional(), to: instant.optional() }),
  /** The runs that cost most in [from, to) (default: this week). */
  'usage.costliestRuns': z.strictObject({ from: instant.optional(), to: instant.optional(), limit: z.number().int().min(1).max(100).optional() }),
  /** Usage (all attempts) and how long the latest attempt ran, for the rows of a list (Tasks, Runs). */
  'usage.ofSubjects': z.strictObject({ subjects: z.array(logSubject).min(1).max(200) }),
  // ---- managed agents (PROTOCOL §7): processes Gaffer starts and keeps running.
  'managedAgents.list': empty,
  /** One agent, with each process's recent output. */
  'managedAgents.get': z.strictObject({ id: z.string().min(1).max(200) }),
  'managedAgents.create': z.strictObject({ definition: managedAgentInput, reason }),
  'managedAgents.update': z.strictObject({ id: z.string().min(1).max(200), patch: managedAgentPatch, reason }),
  'managedAgents.delete': z.strictObject({ id: z.string().min(1).max(200), reason }),
  /** Start / stop / restart the agent, or one of its instances (1-based). */
  'managedAgents.control': z.strictObject({
    id: z.string().min(1).max(200),
    action: z.enum(MANAGED_ACTIONS),
    instance: z.number().int().min(1).max(MAX_MANAGED_INSTANCES).optional(),
    reason,
  }),
} as const;

/** Filters for an export (same as a query, without paging). */
export const auditExportArgs = z.strictObject({ ...auditFilterShape, format: z.enum(['jsonl', 'csv']) });
export type AuditExportArgs = z.infer<typeof auditExportArgs>;

export interface ConsoleResults {
  'dashboard.get': Dashboard;
  'tasks.list': TaskPage;
  'tasks.get': Task;
  'tasks.create': { task: Task; replayed: boolean };
  'tasks.reprioritise': Task;
  'tasks.cancel': Task;
  'tasks.retry': Task;
  'tasks.unblock': Task;
  'tasks.forceRelease': Task;
  'tasks.editPayload': Task;
  'tasks.count': TaskCount;
  'tasks.bulk': BulkTaskResult;
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
  'signals.list': Page<Signal>;
  'signals.set': { signal: Signal; created: boolean };
  'signals.clear': Signal;
  'jobs.list': Page<JobSummary>;
  'jobs.get': Job;
  'jobs.validate': { ok: boolean; issues: JobIssue[] };
  'jobs.preview': PreviewResult;
  'jobs.create': { job: Job; warnings: JobIssue[] };
  'jobs.update': { job: Job; warnings: JobIssue[] };
  'jobs.trigger': TriggerResult;
  'jobs.triggerChoices': TriggerChoices;
  'jobs.pause': Job;
  'jobs.resume': Job;
  'jobs.setEnabled': Job;
  'jobs.explain': Explanation;
  'jobs.ledger': LedgerResult;
  'jobs.ledgerBuckets': LedgerBucketsResult;
  'jobs.simulateDowntime': DowntimeSimulation;
  'jobs.rehearse': RehearsalResult;
  'runs.list': Page<Run>;
  'runs.get': RunDetail;
  'runs.approve': Run;
  'runs.reject': Run;
  'runs.retry': { run: Run; backfill: Backfill };
  'backfills.list': Page<Backfill>;
  'backfills.action': Backfill;
  'backfills.request': Backfill;
  'calendars.list': BusinessCalendar[];
  'calendars.get': BusinessCalendar;
  'calendars.validate': { ok: boolean; issues: JobIssue[] };
  'calendars.create': BusinessCalendar;
  'calendars.update': BusinessCalendar;
  'calendars.importIcs': IcsImportResult;
  'inbox.list': Page<InboxItem>;
  'inbox.counts': InboxCounts;
  'inbox.get': InboxItem;
  'inbox.ack': InboxItem;
  'inbox.ackMany': { acked: InboxItem[]; skipped: number[] };
  'inbox.snooze': InboxItem;
  'budgets.get': BudgetsView;
  'budgets.put': BudgetsView;
  'roles.pauses': RolePause[];
  'roles.pause': RolePause;
  'roles.resume': RolePause;
  'notifications.get': NotificationSettingsView;
  'notifications.put': NotificationSettingsView;
  'notifications.test': WebhookTestResult[];
  'notifications.rotateSecret': WebhookSecret;
  'notifications.deliveries': Page<Delivery>;
  'notifications.retryDelivery': Delivery;
  'logs.attempts': LogAttemptsResult;
  'logs.page': LogPage;
  'logs.text': { filename: string; text: string; complete: boolean };
  'logs.search': { items: LogSearchHit[] };
  'logs.timeline': TimelineEntry[];
  'logs.settings': LogSettingsView;
  'logs.setSettings': LogSettingsView;
  'usage.summary': UsageRow[];
  'usage.daily': DailyUsage[];
  'usage.costliestRuns': CostlyRun[];
  'usage.ofSubjects': Record<string, SubjectUsage>;
  'managedAgents.list': ManagedAgent[];
  'managedAgents.get': ManagedAgent;
  'managedAgents.create': ManagedAgent;
  'managedAgents.update': ManagedAgent;
  'managedAgents.delete': ManagedAgent;
  'managedAgents.control': ManagedAgent;
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
