/** The console store's state: one slice per domain, plus connection status and toasts. */
import type {
  AuditVerifyResult,
  ConsoleArgs,
  ConsoleSettings,
  Dashboard,
  ExpiredLockCard,
  InstanceView,
  RoleSummary,
  TokenView,
} from '../../src-main/common/console-api';
import type { AuditEvent, Task, TaskStatus } from '../../src-main/common/model';
import type { UiError } from '../lib/errors';
import type { JobsState } from './jobs-slice';
import type { Resource } from './resource';
import type { Topic } from './live';

export type AuditQueryArgs = ConsoleArgs<'audit.query'>;

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

export interface ColumnState {
  items: Task[];
  /** Cursor for the next page (task id), or null when everything is loaded. */
  next: number | null;
  loading: boolean;
  error: UiError | null;
  loadedAt: number | null;
}

export interface QueueState {
  role: string | null;
  columns: Record<TaskStatus, ColumnState>;
}

/** The audit filter as typed in the form (strings), before mapping to a query. */
export interface AuditFilterForm {
  type: string;
  actor: string;
  subject: string;
  /** `datetime-local` values (local time) or ''. */
  from: string;
  to: string;
  text: string;
}

export interface ExportState {
  running: boolean;
  format: 'jsonl' | 'csv' | null;
  rows: number;
  bytes: number;
  /** Rows expected, when known (an unfiltered range); null shows an indeterminate bar. */
  total: number | null;
  startedAt: number | null;
  finishedAt: number | null;
  result: { file: string; rows: number } | null;
  cancelled: boolean;
  error: UiError | null;
}

export interface AuditState {
  form: AuditFilterForm;
  /** The query the list shows (mapped from the form), without paging fields. */
  query: AuditQueryArgs;
  formError: string | null;
  items: AuditEvent[];
  /** `before` cursor for the next (older) page; null when the end was reached. */
  next: number | null;
  loading: boolean;
  error: UiError | null;
  /** The last page stopped at the scan budget: more matches may lie further back. */
  partial: boolean;
  /** Pages fetched for the current query (the first page counts as 1). */
  pages: number;
  selectedId: number | null;
  /** Rows appended since the list was loaded that are not shown yet. */
  unseen: number;
  /** The list is scrolled to the top: new rows are prepended live. */
  following: boolean;
  /** Matching rows for the current query (counted up to a cap), once known. */
  total: { count: number; exact: boolean } | null;
  /** Milliseconds the last first page took (request → state), for the status line. */
  firstPageMs: number | null;
  generation: number;
  export: ExportState;
  verify: { running: boolean; result: AuditVerifyResult | null; error: UiError | null; at: number | null };
}

export type ToastTone = 'info' | 'success' | 'warning' | 'error';
export interface Toast {
  id: number;
  tone: ToastTone;
  title: string;
  body?: string;
  code?: string;
}

export interface ConsoleState {
  /** Which shell the console runs in (from the transport). */
  shell: 'electron' | 'browser';
  conn: ConnectionState;
  dashboard: Resource<Dashboard>;
  roles: Resource<RoleSummary[]>;
  expiredLocks: Resource<ExpiredLockCard[]>;
  instances: Resource<InstanceView[]>;
  tokens: Resource<TokenView[]>;
  settings: Resource<ConsoleSettings>;
  queue: QueueState;
  audit: AuditState;
  /** Jobs, slot ledger, backfill queue, calendars (store/jobs-slice.ts). */
  jobs: JobsState;
  toasts: Toast[];
  /** Topics some mounted view is watching (live refresh goes only there). */
  watched: Partial<Record<Topic, number>>;
}
