/**
 * The console store's state: the shell's own keys (which shell, connection, watched topics) and
 * one slice per feature (`slices/*.ts`), each owning its keys.
 */
import type { UiError } from '../lib/errors';
import type { Topic } from './live';
import type { AuditSliceState } from './slices/audit';
import type { CalendarsState } from './slices/calendars';
import type { ManagedState } from './slices/managed';
import type { DashboardState } from './slices/dashboard';
import type { InboxState } from './slices/inbox';
import type { InstancesState } from './slices/instances';
import type { JobsState } from './slices/jobs';
import type { LocksState } from './slices/locks';
import type { LogsState } from './slices/logs';
import type { QueuesState } from './slices/queues';
import type { RunsState } from './slices/runs';
import type { SettingsState } from './slices/settings';
import type { SignalsState } from './slices/signals';
import type { TasksState } from './slices/tasks';
import type { ToastsState } from './slices/toasts';

export interface ConnectionState {
  /**
   * `live`: calls succeed and events flow; `reconnecting`: the event stream dropped (the
   * transport reconnects on its own); `offline`: the last call could not reach Gaffer.
   */
  status: 'connecting' | 'live' | 'reconnecting' | 'offline';
  lastError: UiError | null;
  eventsReceived: number;
  lastEventAt: number | null;
}

/** The keys the root store keeps itself. */
export interface ShellState {
  /** Which shell the console runs in (from the transport). */
  shell: 'electron' | 'browser';
  conn: ConnectionState;
  /** Topics some mounted view is watching (live refresh goes only there). */
  watched: Partial<Record<Topic, number>>;
}

export interface ConsoleState
  extends ShellState,
    ToastsState,
    DashboardState,
    InboxState,
    QueuesState,
    LocksState,
    InstancesState,
    SettingsState,
    AuditSliceState,
    JobsState,
    RunsState,
    CalendarsState,
    LogsState,
    ManagedState,
    TasksState,
    SignalsState {}
