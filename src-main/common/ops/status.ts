/** Health and the operator's overview: `GET /status`, the console's dashboard and settings. */
import { z } from 'zod';
import type { BudgetsView, InboxCounts } from '../attention';
import type { SchedulerConfig } from '../config';
import type { LogRefusal } from '../logs';
import { INSTANCE_STATUSES, TASK_STATUSES, type InstanceStatus, type StorageStatus, type TaskStatus } from '../model';
import { reason } from '../schemas';
import { op } from './define';
import { budgetsView, inboxCounts, logRefusal, storageStatus } from './shapes';
import { empty, roleSummary, type RoleSummary } from './tasks';

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

export interface ConsoleSettings {
  config: SchedulerConfig;
  killSwitch: boolean;
  /** "Require a reason for actions": off (default) lets a solo operator leave a reason out. */
  requireReason: boolean;
  port: number | null;
  dataDir: string | null;
  version: string;
}

/** `GET /status`. */
export interface StatusInfo {
  /** False while writes are refused (see `storage`). */
  ok: boolean;
  /** Addition: why writes are refused (a storage fault, or a disk that refuses writes), or null. */
  storage: StorageStatus | null;
  /** Addition: why agents' log lines are refused right now (the disk reached its free-space floor), or null. Does not make `ok` false: the scheduler itself still writes. */
  logs: { refusing: LogRefusal | null };
  version: string;
  protocolVersion: number;
  serverTime: string;
  /** Start of "today" (server's local zone) used for `expiredToday`. */
  todayStart: string;
  counts: {
    onlineInstances: number;
    instances: Record<InstanceStatus, number>;
    tasks: Record<TaskStatus, number>;
    liveLocks: number;
    expiredToday: number;
    signals: number;
    auditEvents: number;
  };
  /** min(lock window, heartbeat timeout) + sweep interval: how long an abandoned task can stay stuck. */
  recoveryBoundS: number;
  config: SchedulerConfig;
}

const n = z.number();
const schedulerConfig = z.object({
  lockWindowS: n,
  heartbeatTimeoutS: n,
  heartbeatIntervalMs: n,
  sweepIntervalS: n,
  idempotencyWindowS: n,
  reconnectGraceS: n,
  triggerAckTimeoutS: n,
  clockJumpThresholdS: n,
  /** Addition: the nice value of the processes Gaffer starts for agents (`--agent-nice`). */
  agentNice: n,
});
const countsBy = (names: readonly string[]) => z.object(Object.fromEntries(names.map((k) => [k, n])) as Record<string, z.ZodNumber>);
const statusInfo = z.object({
  ok: z.boolean(),
  storage: storageStatus.nullable(),
  logs: z.object({ refusing: logRefusal.nullable() }),
  version: z.string(),
  protocolVersion: n,
  serverTime: z.string(),
  todayStart: z.string(),
  counts: z.object({
    onlineInstances: n,
    instances: countsBy(INSTANCE_STATUSES),
    tasks: countsBy(TASK_STATUSES),
    liveLocks: n,
    expiredToday: n,
    signals: n,
    auditEvents: n,
  }),
  recoveryBoundS: n,
  config: schedulerConfig,
});
const consoleSettings = z.object({ config: schedulerConfig, killSwitch: z.boolean(), requireReason: z.boolean(), port: n.nullable(), dataDir: z.string().nullable(), version: z.string() });
const dashboard = z.object({
  serverTime: z.string(),
  onlineInstances: n,
  completedThisWeek: n,
  expiredLocksToday: n,
  runsNeedingAttention: n,
  recoveryBoundS: n,
  killSwitch: z.boolean(),
  killSwitchBy: z.object({ by: z.string(), at: z.string(), reason: z.string() }).nullable(),
  roles: z.array(roleSummary),
  throughput: z.array(z.object({ day: z.string(), done: n, failed: n, expired: n })),
  nextTriggers: z.array(z.object({ jobId: z.string(), job: z.string(), slot: z.string(), at: z.string() })),
  inbox: inboxCounts,
  budgets: budgetsView,
  storage: storageStatus.nullable(),
});

export const statusOps = {
  'status.get': op<StatusInfo>()({
    summary: 'Health, version and counts: instances by status, tasks by status, live locks, locks expired today, the recovery bound.',
    input: empty,
    result: statusInfo,
    callers: ['operator'],
    reason: 'none',
    rest: [{ method: 'GET', path: '/status', status: { 200: 'the status object' } }],
  }),
  'openapi.get': op<Record<string, unknown>>()({
    summary: 'This document: OpenAPI 3.1 of every route, generated from the schemas the server validates with.',
    input: empty,
    result: z.record(z.string(), z.unknown()),
    callers: ['operator'],
    reason: 'none',
    rest: [{ method: 'GET', path: '/openapi.json', status: { 200: 'the OpenAPI document' } }],
  }),
  'dashboard.get': op<Dashboard>()({
    summary: 'The console’s overview: roles, throughput, expired locks, runs needing attention, next triggers, inbox, spend, storage.',
    input: empty,
    result: dashboard,
    callers: ['console'],
    reason: 'none',
  }),
  'settings.get': op<ConsoleSettings>()({
    summary: 'The scheduler’s settings as the console shows them (config, kill switch, port, data directory, version).',
    input: empty,
    result: consoleSettings,
    callers: ['console'],
    reason: 'none',
  }),
  'settings.setKillSwitch': op<ConsoleSettings>()({
    summary: 'Turn the kill switch on (no job is dispatched) or off (audited with the reason).',
    input: z.strictObject({ on: z.boolean(), reason }),
    result: consoleSettings,
    callers: ['console'],
    reason: 'required',
  }),
  'settings.setRequireReason': op<ConsoleSettings>()({
    summary: 'Turn "Require a reason for actions" on (every action declared with a required reason demands one) or off (it may be left out and is audited as "no reason given").',
    input: z.strictObject({ on: z.boolean(), reason: reason.optional() }),
    result: consoleSettings,
    callers: ['console'],
    reason: 'optional',
  }),
} as const;
