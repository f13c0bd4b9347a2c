/**
 * Live console events: core events mapped to `ConsoleEvent`s, coalesced into batches so that 50
 * agents at full speed do not flood the UI (or the IPC channel / WebSocket).
 *
 * 1. At most one batch per `intervalMs` (default 100 ms) per hub; a batch goes to every
 *    subscriber. The hub listens to the core only while it has subscribers.
 * 2. Within a batch, state-change events are deduplicated by subject (the last one wins): the UI
 *    refetches what changed, so ten changes of one task are one `task.changed`.
 * 3. `audit.appended` is sampled: only the newest `maxAuditPerBatch` rows of a batch are pushed
 *    (ids are dense, so the UI can tell that rows were skipped).
 * 4. Alerts with the same title in one batch are merged into one ("3 locks expired"), so an agent
 *    that dies holding ten locks raises one notification, not ten.
 * 5. A subscriber that throws is logged and kept; it cannot break the others or the core.
 */
import type { ConsoleEvent } from '../../common/console-api';
import type { Logger } from '../../common/logger';
import type { CoreEvent, Disposable, EventBus } from '../../core/events';

export interface EventTimers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const realTimers: EventTimers = {
  setTimeout: (fn, ms) => {
    const t = setTimeout(fn, ms);
    t.unref?.();
    return t;
  },
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
};

export interface ConsoleEventHubOptions {
  intervalMs?: number;
  maxAuditPerBatch?: number;
  timers?: EventTimers;
  logger?: Logger;
  /** Maps core events this file does not know (the jobs module's run events, needs_human holds). */
  mapExtra?: (e: CoreEvent) => ConsoleEvent[] | undefined;
}

const LOCK_EXPIRY_WORDS: Record<string, string> = {
  lock_window: 'its lock window ran out',
  heartbeat_timeout: 'its holder stopped sending heartbeats',
  disconnected: 'its holder disconnected and did not come back',
  force_release: 'an operator force-released it',
};

const RUN_ALERT_TITLES: Record<'missed' | 'not_ready' | 'failed' | 'held' | 'attempt_ceiling', string> = {
  attempt_ceiling: 'Attempts a day used up',
  missed: 'Slot missed',
  not_ready: 'Run not ready',
  failed: 'Run failed',
  held: 'Run held for review',
};

/** One core event → zero or more console events (pure). */
export function mapCoreEvent(e: CoreEvent): ConsoleEvent[] {
  switch (e.type) {
    case 'task.created':
    case 'task.claimed':
    case 'task.changed':
      return [{ type: 'task.changed', taskId: e.task.id, role: e.task.role, status: e.task.status }];
    case 'lock.expired': {
      const why = LOCK_EXPIRY_WORDS[e.reason] ?? e.reason;
      return [
        { type: 'lock.expired', taskId: e.taskId, instanceId: e.instanceId },
        { type: 'alert', level: 'warning', title: 'Lock expired', body: `Task ${e.taskId} went back to the backlog: ${why} (holder ${e.instanceId}).` },
      ];
    }
    case 'instance.changed':
      return [{ type: 'instance.changed', instanceId: e.instance.id, status: e.instance.status }];
    case 'session.lost_locks':
      // The instance's "lost its lock" list changed; only a live (online) instance has one.
      return [{ type: 'instance.changed', instanceId: e.instanceId, status: 'online' }];
    case 'audit.appended': {
      const out: ConsoleEvent[] = [{ type: 'audit.appended', event: e.event }];
      if (e.event.type === 'operator.kill_switch' || e.event.type === 'operator.settings' || e.event.type === 'notifications.update') out.push({ type: 'settings.changed' });
      return out;
    }
    // Central jobs (core/jobs).
    case 'job.changed':
      return [{ type: 'job.changed', jobId: e.job.id }];
    case 'run.changed':
    case 'run.updated':
    case 'run.finished':
      return [{ type: 'run.changed', runId: e.run.id, jobId: e.run.jobId, status: e.run.status }];
    case 'run.alert': {
      // needs_human has its own event below (one alert, not two).
      if (e.kind === 'needs_human') return [];
      const level = e.kind === 'held' || e.kind === 'failed' ? 'warning' : 'info';
      return [{ type: 'alert', level, title: RUN_ALERT_TITLES[e.kind], body: `${e.run.job} ${e.run.slot}: ${e.message}` }];
    }
    case 'run.needs_human':
      return [{ type: 'alert', level: 'critical', title: 'Needs a human', body: `${e.run.job} ${e.run.slot} is held for a human and will not be retried: ${e.message}` }];
    case 'backfill.changed':
      return [{ type: 'job.changed', jobId: e.backfill.jobId }, { type: 'run.changed', runId: e.backfill.runId, jobId: e.backfill.jobId, status: e.backfill.status }];
    case 'jobs.settings':
      return [{ type: 'settings.changed' }];
    case 'calendar.changed':
      // Calendars change every job that uses them: the jobs views refetch.
      return [{ type: 'job.changed', jobId: `calendar:${e.calendar.id}` }];
    case 'clock.jumped': {
      const mins = Math.round(Math.abs(e.gapMs) / 60_000);
      const gap = mins >= 1 ? `${mins} min` : `${Math.round(Math.abs(e.gapMs) / 1000)} s`;
      return [
        {
          type: 'alert',
          level: 'info',
          title: e.kind === 'stall' ? 'Gaffer was paused' : e.gapMs > 0 ? 'Woke up after a pause' : 'Clock stepped backwards',
          body:
            e.kind === 'stall'
              ? `Gaffer itself was paused for ${gap}; lock windows, heartbeats and run deadlines were shifted instead of expiring.`
              : `The clock moved ${gap} ${e.gapMs > 0 ? 'forward' : 'back'}; lock windows were shifted instead of expiring.`,
        },
      ];
    }
    case 'budgets.changed':
      return [{ type: 'settings.changed' }];
    case 'role.paused':
      // A role pause changes its jobs (each announced on its own) and the role's queue.
      return [{ type: 'job.changed', jobId: `role:${e.pause.role}` }];
    case 'inbox.changed':
      return [
        { type: 'inbox.changed', itemId: e.item.id, action: e.action, kind: e.item.kind, severity: e.item.severity, state: e.item.state, title: e.item.title, detail: e.item.detail },
      ];
    case 'managed.changed': {
      const out: ConsoleEvent[] = [{ type: 'managed.changed', managedAgentId: e.managedAgentId }];
      if (e.action === 'crash_looping') out.push({ type: 'alert', level: 'warning', title: 'Managed agent crash looping', body: e.message ?? `Managed agent ${e.managedAgentId} keeps exiting right after it starts.` });
      return out;
    }
    case 'trigger.undeliverable':
      return [{ type: 'alert', level: 'warning', title: 'Job trigger undeliverable', body: `Run ${e.runId} for role ${e.role}: ${e.reason}.` }];
    case 'log.appended':
      return [{ type: 'log.appended', subject: e.subject, attempt: e.attempt, lastSeq: e.lastSeq }];
    case 'storage.changed':
      // Critical alerts also refresh the dashboard, whose `storage` drives the banner.
      return e.storage === null
        ? [{ type: 'alert', level: 'info', title: 'Storage accepts writes again', body: 'Writes are acknowledged again.' }]
        : [{ type: 'alert', level: 'critical', title: e.storage.state === 'fault' ? 'Storage fault' : 'Storage refuses writes', body: e.storage.message }];
    case 'task.renewed':
    case 'lock.lost': // told through lock.expired / task.changed, and session.lost_locks
    case 'token.revoked':
    case 'session.opened':
    case 'session.hello':
    case 'session.closed':
    case 'trigger.offered':
    case 'trigger.acknowledged':
      // Visible through audit.appended / instance.changed; not worth a push of their own.
      return [];
    default:
      return [];
  }
}

function keyOf(e: ConsoleEvent): string | null {
  switch (e.type) {
    case 'task.changed':
      return `task:${e.taskId}`;
    case 'instance.changed':
      return `instance:${e.instanceId}`;
    case 'run.changed':
      return `run:${e.runId}`;
    case 'job.changed':
      return `job:${e.jobId}`;
    case 'settings.changed':
      return 'settings';
    case 'inbox.changed':
      // A raise or a wake is its own notification; later changes of the item in a batch fold into the last.
      return e.action === 'raised' || e.action === 'reopened' ? `inbox:${e.itemId}:${e.action}` : `inbox:${e.itemId}`;
    case 'log.appended':
      // One per subject and batch: the newest seq says how far the log goes.
      return `log:${e.subject}`;
    case 'managed.changed':
      return `managed:${e.managedAgentId}`;
    default:
      return null;
  }
}

/** Coalesces one batch (pure): dedupe by subject, sample audit rows, merge alerts. */
export function coalesce(events: readonly ConsoleEvent[], maxAudit = 200): ConsoleEvent[] {
  const keyed = new Map<string, ConsoleEvent>();
  const audit: ConsoleEvent[] = [];
  const expired: ConsoleEvent[] = [];
  const alerts = new Map<string, Array<Extract<ConsoleEvent, { type: 'alert' }>>>();
  for (const e of events) {
    if (e.type === 'audit.appended') audit.push(e);
    else if (e.type === 'lock.expired') expired.push(e);
    else if (e.type === 'alert') {
      const k = `${e.level}\u0000${e.title}`;
      const list = alerts.get(k);
      if (list) list.push(e);
      else alerts.set(k, [e]);
    } else {
      const k = keyOf(e)!;
      keyed.delete(k); // re-insert: the map keeps the order of the latest change
      keyed.set(k, e);
    }
  }
  const out: ConsoleEvent[] = [...keyed.values(), ...expired, ...audit.slice(-maxAudit)];
  for (const list of alerts.values()) {
    const first = list[0]!;
    if (list.length === 1) out.push(first);
    else {
      const shown = list.slice(0, 3).map((a) => a.body);
      const more = list.length - shown.length;
      out.push({
        type: 'alert',
        level: first.level,
        title: `${first.title} (×${list.length})`,
        body: `${shown.join(' ')}${more > 0 ? ` …and ${more} more.` : ''}`,
      });
    }
  }
  return out;
}

export type BatchListener = (batch: ConsoleEvent[]) => void;

export class ConsoleEventHub {
  private readonly listeners = new Set<BatchListener>();
  private pending: ConsoleEvent[] = [];
  private timer: unknown;
  private source: Disposable | undefined;
  private disposed = false;
  private readonly intervalMs: number;
  private readonly maxAudit: number;
  private readonly timers: EventTimers;

  constructor(
    private readonly events: Pick<EventBus, 'onAny'>,
    private readonly opts: ConsoleEventHubOptions = {},
  ) {
    this.intervalMs = opts.intervalMs ?? 100;
    this.maxAudit = opts.maxAuditPerBatch ?? 200;
    this.timers = opts.timers ?? realTimers;
  }

  get subscribers(): number {
    return this.listeners.size;
  }

  subscribe(listener: BatchListener): Disposable {
    if (this.disposed) return { dispose() {} };
    this.listeners.add(listener);
    this.source ??= this.events.onAny((e) => this.push(e));
    return {
      dispose: () => {
        this.listeners.delete(listener);
        if (this.listeners.size === 0) this.stop();
      },
    };
  }

  /** Queues console events directly (e.g. from a shell). */
  publish(events: ConsoleEvent[]): void {
    if (this.disposed || this.listeners.size === 0 || events.length === 0) return;
    this.pending.push(...events);
    this.arm();
  }

  /** Sends what is pending now. */
  flush(): void {
    if (this.timer !== undefined) this.timers.clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending.length === 0) return;
    const batch = coalesce(this.pending, this.maxAudit);
    this.pending = [];
    if (batch.length === 0) return;
    for (const l of [...this.listeners]) {
      try {
        l(batch);
      } catch (err) {
        this.opts.logger?.error('console event listener failed', { error: String(err) });
      }
    }
  }

  dispose(): void {
    this.disposed = true;
    this.listeners.clear();
    this.stop();
  }

  private push(e: CoreEvent): void {
    let mapped: ConsoleEvent[];
    try {
      mapped = this.opts.mapExtra?.(e) ?? mapCoreEvent(e);
    } catch (err) {
      this.opts.logger?.error('console event mapping failed', { type: e.type, error: String(err) });
      return;
    }
    if (mapped.length === 0) return;
    this.pending.push(...mapped);
    // Bound memory if the timer is starved (a long synchronous burst): coalesce in place.
    if (this.pending.length > 20_000) this.pending = coalesce(this.pending, this.maxAudit);
    this.arm();
  }

  private arm(): void {
    if (this.timer === undefined) this.timer = this.timers.setTimeout(() => this.flush(), this.intervalMs);
  }

  private stop(): void {
    this.source?.dispose();
    this.source = undefined;
    if (this.timer !== undefined) this.timers.clearTimeout(this.timer);
    this.timer = undefined;
    this.pending = [];
  }
}
