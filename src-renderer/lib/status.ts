/**
 * One place for status names and colours, so a status looks the same in every view.
 * Colours are CSS variables defined in styles/app.css (dark and light).
 */
import type { ManagedProcessStatus } from '../../src-main/common/managed-agents';
import type { InstanceStatus, Task, TaskStatus } from '../../src-main/common/model';

/** Board status as the operator sees it: `backlog` splits into Ready (claimable) and Backlog (waiting, P3). */
export type BoardStatus = 'backlog' | 'ready' | 'in_progress' | 'verifying' | 'blocked' | 'failed' | 'done' | 'cancelled';

export const BOARD_STATUS_META: Record<BoardStatus, { label: string; tone: string; hint: string }> = {
  backlog: { label: 'Backlog', tone: 'backlog', hint: 'waiting on dependencies: invisible to claimers until they are done (P3)' },
  ready: { label: 'Ready', tone: 'ready', hint: 'claimable now, taken by priority then age' },
  in_progress: { label: 'In progress', tone: 'progress', hint: 'held by one instance under a claim lock (P1)' },
  verifying: { label: 'Checking', tone: 'progress', hint: 'its agent said done: Gaffer is running its checks' },
  blocked: { label: 'Blocked', tone: 'blocked', hint: 'reported blocked by its holder: needs an unblock' },
  failed: { label: 'Failed', tone: 'failed', hint: 'reported failed: retry puts it back in the backlog' },
  done: { label: 'Done', tone: 'done', hint: 'finished' },
  cancelled: { label: 'Cancelled', tone: 'cancelled', hint: 'cancelled by the operator' },
};

export function boardStatus(t: Pick<Task, 'status' | 'unmetDependencies'>): BoardStatus {
  if (t.status === 'backlog') return t.unmetDependencies > 0 ? 'backlog' : 'ready';
  return t.status;
}

export const TASK_STATUS_LABEL: Record<TaskStatus, string> = {
  backlog: 'Backlog',
  in_progress: 'In progress',
  verifying: 'Checking',
  blocked: 'Blocked',
  failed: 'Failed',
  done: 'Done',
  cancelled: 'Cancelled',
};

export const INSTANCE_STATUS_META: Record<InstanceStatus, { label: string; tone: string }> = {
  online: { label: 'Online', tone: 'online' },
  disconnected: { label: 'Disconnected', tone: 'disconnected' },
  offline: { label: 'Offline', tone: 'offline' },
};

export function instanceTone(status: string): string {
  return (INSTANCE_STATUS_META as Record<string, { tone: string } | undefined>)[status]?.tone ?? 'offline';
}

/** Audit event types grouped by a tone so the list reads at a glance. */
export function auditTone(type: string): string {
  if (/expire|reject|fail|revoke|kill|undeliverable|jump/.test(type)) return 'failed';
  if (type.startsWith('operator.') || type.startsWith('settings.')) return 'blocked';
  if (/claim|renew/.test(type)) return 'progress';
  if (/release|done|success/.test(type)) return 'done';
  if (/create/.test(type)) return 'ready';
  return 'backlog';
}

/** A managed agent's process, in plain words. */
export const PROCESS_STATUS_META: Record<ManagedProcessStatus, { label: string; tone: string; hint: string }> = {
  starting: { label: 'Starting', tone: 'progress', hint: 'started; waiting for it to connect' },
  running: { label: 'Running', tone: 'online', hint: 'connected and working' },
  stopping: { label: 'Stopping', tone: 'disconnected', hint: 'asked to stop: finishing or handing back its work' },
  draining: { label: 'Draining', tone: 'disconnected', hint: 'replaced by a newer process: finishing or handing back its work' },
  backoff: { label: 'Restarting', tone: 'blocked', hint: 'it exited; started again after a growing pause' },
  crash_looping: { label: 'Crash looping', tone: 'failed', hint: 'it keeps exiting right after it starts; retried only every few minutes' },
  failed: { label: 'Cannot start', tone: 'failed', hint: 'the command cannot be started; not restarted until you start or change it' },
  stopped: { label: 'Stopped', tone: 'offline', hint: 'not running' },
};
