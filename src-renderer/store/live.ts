/**
 * Live updates: console events arrive in bursts (50 agents at full speed make hundreds a second).
 * They are buffered and turned into a small set of invalidations once per flush interval, so the
 * UI refreshes each affected resource at most once per interval, never once per event.
 */
import type { ConsoleEvent } from '../../src-main/common/console-api';
import type { Timers } from '../lib/debounce';

/** What a view can watch; each topic is owned by one slice of the store. */
export const TOPICS = ['dashboard', 'inbox', 'notifications', 'roles', 'queue', 'tasks', 'expiredLocks', 'instances', 'tokens', 'settings', 'audit', 'jobs', 'runs', 'calendars', 'logs', 'usage', 'logSettings', 'managed', 'signals'] as const;
export type Topic = (typeof TOPICS)[number];

export interface Invalidation {
  topics: Set<Topic>;
  /** Roles whose queues changed (for `queue`). */
  roles: Set<string>;
  /** New audit rows seen in this burst, and the newest id among them. */
  auditAppended: number;
  newestAuditId: number | null;
  alerts: Array<Extract<ConsoleEvent, { type: 'alert' }>>;
  /** Logs that grew: subject → its newest attempt and seq (for `logs`). */
  logTails: Map<string, { attempt: number; lastSeq: number }>;
}

export function emptyInvalidation(): Invalidation {
  return { topics: new Set(), roles: new Set(), auditAppended: 0, newestAuditId: null, alerts: [], logTails: new Map() };
}

/** Folds one event into an invalidation (pure). */
export function applyEvent(inv: Invalidation, e: ConsoleEvent): Invalidation {
  switch (e.type) {
    case 'task.changed':
      inv.topics.add('dashboard').add('roles').add('queue').add('usage').add('tasks');
      inv.roles.add(e.role);
      break;
    case 'instance.changed':
      inv.topics.add('dashboard').add('instances');
      break;
    case 'lock.expired':
      inv.topics.add('dashboard').add('expiredLocks').add('queue').add('instances').add('roles');
      break;
    case 'audit.appended':
      inv.auditAppended++;
      inv.topics.add('audit');
      if (inv.newestAuditId === null || e.event.id > inv.newestAuditId) inv.newestAuditId = e.event.id;
      // Token and signal changes are only visible through the audit stream.
      if (e.event.type.startsWith('token.')) inv.topics.add('tokens');
      if (e.event.type.startsWith('signal.')) inv.topics.add('signals');
      // A re-claim fills in "re-claimed by" on an expired-lock card.
      if (e.event.type === 'lock.claim' && isReclaim(e.event.detail)) inv.topics.add('expiredLocks');
      break;
    case 'run.changed':
    case 'job.changed':
      inv.topics.add('jobs').add('runs').add('dashboard').add('usage');
      // A calendar change is announced as `job.changed` for `calendar:<id>` (it moves jobs' slots).
      if (e.type === 'job.changed' && e.jobId.startsWith('calendar:')) inv.topics.add('calendars');
      // A role pause is announced as `job.changed` for `role:<name>` (its queue shows the pause).
      if (e.type === 'job.changed' && e.jobId.startsWith('role:')) inv.topics.add('roles');
      break;
    case 'settings.changed':
      inv.topics.add('settings').add('dashboard').add('notifications');
      break;
    case 'inbox.changed':
      // The rail's badge and the dashboard's card count the inbox too.
      inv.topics.add('inbox').add('dashboard');
      break;
    case 'alert':
      inv.alerts.push(e);
      // Something changed that the header may show (a storage fault's banner comes with the dashboard).
      if (e.level === 'critical') inv.topics.add('dashboard');
      break;
    case 'log.appended': {
      inv.topics.add('logs');
      const prev = inv.logTails.get(e.subject);
      if (!prev || e.lastSeq > prev.lastSeq) inv.logTails.set(e.subject, { attempt: e.attempt, lastSeq: e.lastSeq });
      break;
    }
    case 'managed.changed':
      inv.topics.add('managed');
      break;
    default: {
      const _never: never = e;
      void _never;
    }
  }
  return inv;
}

function isReclaim(detail: unknown): boolean {
  if (!detail || typeof detail !== 'object') return false;
  const d = detail as { previouslyExpired?: unknown; attempt?: unknown };
  return d.previouslyExpired === true || (typeof d.attempt === 'number' && d.attempt > 1);
}

export interface Coalescer {
  push(e: ConsoleEvent): void;
  flush(): void;
  dispose(): void;
  /** Events received since start (for the status line). */
  readonly received: number;
}

/** Buffers events and hands one `Invalidation` to `onFlush` at most every `intervalMs`. */
export function createCoalescer(onFlush: (inv: Invalidation) => void, intervalMs: number, timers: Timers): Coalescer {
  let inv: Invalidation | null = null;
  let handle: unknown;
  let received = 0;
  let disposed = false;
  const flush = () => {
    if (handle !== undefined) timers.clearTimeout(handle);
    handle = undefined;
    const out = inv;
    inv = null;
    if (out && !disposed) onFlush(out);
  };
  return {
    push(e) {
      if (disposed) return;
      received++;
      inv = applyEvent(inv ?? emptyInvalidation(), e);
      if (handle === undefined) handle = timers.setTimeout(flush, intervalMs);
    },
    flush,
    dispose() {
      disposed = true;
      if (handle !== undefined) timers.clearTimeout(handle);
      handle = undefined;
      inv = null;
    },
    get received() {
      return received;
    },
  };
}
