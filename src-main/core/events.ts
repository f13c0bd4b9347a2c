/**
 * Typed events out of the core. The console stream and the tests observe the same events.
 * Emitted only after the transaction that caused them has committed.
 */
import type { AuditEvent, Instance, StorageStatus, Task, TokenInfo } from '../common/model';
import type { LockLostReason } from '../common/protocol';
import type { Backfill, BusinessCalendar, Job, JobSettings, RolePause, Run, RunStatus } from '../common/job-schema';
import type { BudgetSettings, InboxItem } from '../common/attention';

export interface CoreEventMap {
  'task.created': { task: Task };
  'task.claimed': { task: Task; instanceId: string; fence: number };
  'task.renewed': { taskId: number; instanceId: string; fence: number; expiresAt: number };
  'task.changed': { task: Task; from: string; to: string; actor: string };
  'lock.expired': { taskId: number; instanceId: string; fence: number; reason: string };
  /** A lock was taken away from its holder by anything but its own report (expiry, force-release, cancel). */
  'lock.lost': { taskId: number; instanceId: string; fence: number; reason: LockLostReason };
  'instance.changed': { instance: Instance };
  'audit.appended': { event: AuditEvent };
  /** A gap in time, applied once (core/time/gap-detector.ts): a stall, a sleep, a step back. */
  'clock.jumped': { from: number; to: number; gapMs: number; kind?: 'stall' | 'sleep' | 'step_back'; loopGapMs?: number };
  'token.revoked': { token: TokenInfo };
  /** Writes started or stopped being refused (db/store.ts); not tied to a transaction. */
  'storage.changed': { storage: StorageStatus | null };
  // Agent hub (core/hub). Not tied to a transaction: emitted when they happen.
  'session.opened': { sessionId: string; remoteAddress: string | null; tokenId: string | null };
  'session.hello': { sessionId: string; instanceId: string; role: string; resumed: boolean; takesRuns: boolean };
  'session.closed': { sessionId: string; instanceId: string | null; code: number; reason: string };
  /** The tasks a live instance was told it lost (`lock_lost`) and has not reported since changed. */
  'session.lost_locks': { sessionId: string; instanceId: string; taskIds: number[] };
  'trigger.offered': { runId: string; role: string; instanceId: string; offer: number };
  'trigger.acknowledged': { runId: string; role: string; instanceId: string; offers: number };
  'trigger.undeliverable': { runId: string; role: string; reason: string; offeredTo: string[] };
  // Central jobs (core/jobs).
  'job.changed': { job: Job; action: string; actor: string };
  /** A run status transition (one per edge of the run state machine). */
  'run.changed': { run: Run; from: RunStatus | null; to: RunStatus; cause: string };
  /** A run changed without a status edge: dispatched, retry scheduled, lost, disposition changed, … */
  'run.updated': { run: Run; what: string };
  /** A run reached success, failed or skipped. */
  'run.finished': { run: Run };
  /** Something the operator should look at: a missed slot, a held run, an exhausted retry. */
  'run.alert': { run: Run; kind: 'missed' | 'not_ready' | 'failed' | 'held' | 'needs_human' | 'attempt_ceiling'; message: string };
  /** A run needs a human (money, account, security): notify at once. */
  'run.needs_human': { run: Run; message: string };
  'backfill.changed': { backfill: Backfill; action: string };
  'jobs.settings': { settings: JobSettings; actor: string };
  'calendar.changed': { calendar: BusinessCalendar; action: string };
  /** A whole role was paused (`paused`) or resumed. */
  'role.paused': { pause: RolePause; paused: boolean; actor: string };
  /** The daily spend caps changed (core/budgets). */
  'budgets.changed': { settings: BudgetSettings; actor: string };
  // The operator's attention (core/inbox).
  /** An inbox item was raised, absorbed one more occurrence, or changed state. */
  'inbox.changed': { item: InboxItem; action: 'raised' | 'repeated' | 'acked' | 'snoozed' | 'reopened' | 'resolved' };
  /** A webhook delivery ended: delivered, or dead (gave up). Emitted after its commit. */
  'webhook.delivery': { webhookId: string; deliveryId: number; status: 'delivered' | 'dead'; attempts: number; error: string | null; url: string | null; itemTitle: string | null; itemKind: string };
  // Logs (core/logs). Emitted once the lines are on disk; not tied to a main-database transaction.
  'log.appended': { subject: string; attempt: number; lastSeq: number };
  // Managed agents (core/managed): a definition changed, or one of its processes did.
  'managed.changed': { managedAgentId: string; action: string; message?: string };
}

export type CoreEventType = keyof CoreEventMap;
export type CoreEvent = { [K in CoreEventType]: { type: K } & CoreEventMap[K] }[CoreEventType];
export type CoreEventOf<K extends CoreEventType> = Extract<CoreEvent, { type: K }>;

export interface Disposable {
  dispose(): void;
}

type Listener = (e: CoreEvent) => void;

export class EventBus {
  private listeners = new Map<string, Set<Listener>>();
  private any = new Set<Listener>();

  constructor(private readonly onListenerError: (e: unknown) => void = () => {}) {}

  on<K extends CoreEventType>(type: K, fn: (e: CoreEventOf<K>) => void): Disposable {
    let set = this.listeners.get(type);
    if (!set) this.listeners.set(type, (set = new Set()));
    const l = fn as Listener;
    set.add(l);
    return { dispose: () => set.delete(l) };
  }

  onAny(fn: Listener): Disposable {
    this.any.add(fn);
    return { dispose: () => this.any.delete(fn) };
  }

  /** True when someone listens to `type` (so an event nobody would receive need not be built). */
  has(type: CoreEventType): boolean {
    return this.any.size > 0 || (this.listeners.get(type)?.size ?? 0) > 0;
  }

  emit(e: CoreEvent): void {
    for (const l of [...(this.listeners.get(e.type) ?? []), ...this.any]) {
      try {
        l(e);
      } catch (err) {
        this.onListenerError(err);
      }
    }
  }
}
