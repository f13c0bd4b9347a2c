/**
 * The console store: a vanilla zustand store plus the actions that fill it. Components read
 * state through the React binding (`store/react.tsx`) and change things only through these
 * actions; nothing in a component calls the ConsoleApi.
 *
 * Invariants:
 * 1. Each server resource has one loader: never two requests for it in flight, bursts collapse.
 * 2. Live events are coalesced (store/live.ts) and refresh only topics a mounted view watches.
 * 3. Responses for a superseded query (role switched, audit filter changed) are dropped by
 *    generation number, so a slow old answer never overwrites a newer one.
 * 4. A safety refresh of watched topics runs every `safetyRefreshMs`, in case events were lost
 *    across a reconnect.
 */
import { createStore, type StoreApi } from 'zustand/vanilla';
import type { AuditExportArgs, ConsoleApi, ConsoleArgs, ConsoleMethod, ConsoleResult, ConsoleEvent, ConsoleView } from '../../src-main/common/console-api';
import { TASK_STATUSES, type Task, type TaskStatus } from '../../src-main/common/model';
import { realTimers, type Timers } from '../lib/debounce';
import { AUDIT_PAGE_SIZE, EMPTY_AUDIT_FORM, MAX_LIVE_ROWS, formToQuery, isFiltered, prependNewer, sameQuery } from '../features/audit/logic';
import type { TaskActionKind } from '../features/queues/logic';
import { guarded, isConnectionError, toUiError, type UiError } from '../lib/errors';
import { createJobsSlice, initialJobsState, type JobsActions } from './jobs-slice';
import { createCoalescer, type Invalidation, type Topic } from './live';
import { createLoader, emptyResource, type Loader, type Resource } from './resource';
import type { AuditFilterForm, AuditState, ColumnState, ConsoleState, ExportState, QueueState, Toast, ToastTone } from './types';

export interface ConsoleStoreOptions {
  timers?: Timers;
  now?: () => number;
  /** How often coalesced live events are applied. */
  liveIntervalMs?: number;
  /** Minimum spacing of live refreshes per resource. */
  refreshIntervalMs?: number;
  safetyRefreshMs?: number;
  toastMs?: number;
  /** Debounce for typed audit filters. */
  filterDebounceMs?: number;
  /** The shell asked to show a view (Electron's Go menu). */
  onNavigate?: (view: ConsoleView) => void;
}

export const QUEUE_PAGE = 200;
const QUEUE_REFRESH_MAX = 1000;

const emptyColumn = (): ColumnState => ({ items: [], next: null, loading: false, error: null, loadedAt: null });
const emptyColumns = () => Object.fromEntries(TASK_STATUSES.map((s) => [s, emptyColumn()])) as Record<TaskStatus, ColumnState>;

const emptyExport = (): ExportState => ({
  running: false,
  format: null,
  rows: 0,
  bytes: 0,
  total: null,
  startedAt: null,
  finishedAt: null,
  result: null,
  cancelled: false,
  error: null,
});

const initialAudit = (): AuditState => ({
  form: { ...EMPTY_AUDIT_FORM },
  query: {},
  formError: null,
  items: [],
  next: null,
  loading: false,
  error: null,
  partial: false,
  pages: 0,
  selectedId: null,
  unseen: 0,
  following: true,
  total: null,
  firstPageMs: null,
  generation: 0,
  export: emptyExport(),
  verify: { running: false, result: null, error: null, at: null },
});

export function initialState(shell: 'electron' | 'browser' = 'browser'): ConsoleState {
  return {
    shell,
    conn: { status: 'connecting', lastError: null, eventsReceived: 0, lastEventAt: null },
    dashboard: emptyResource(),
    roles: emptyResource(),
    expiredLocks: emptyResource(),
    instances: emptyResource(),
    tokens: emptyResource(),
    settings: emptyResource(),
    queue: { role: null, columns: emptyColumns() },
    audit: initialAudit(),
    jobs: initialJobsState(),
    toasts: [],
    watched: {},
  };
}

export interface CreateTaskInput {
  title: string;
  role: string;
  priority?: number;
  dependsOn?: number[];
  payload?: unknown;
}

export interface ConsoleActions extends JobsActions {
  /** Starts live updates; returns a stop function. */
  start(): () => void;
  /** A mounted view watches a topic: it is loaded now and refreshed live. Returns unwatch. */
  watch(topic: Topic): () => void;
  refresh(topic: Topic): Promise<void>;

  selectRole(role: string | null): void;
  loadMoreTasks(status: TaskStatus): Promise<void>;
  getTask(taskId: number): Promise<Task>;
  createTask(input: CreateTaskInput): Promise<Task>;
  taskAction(kind: TaskActionKind, taskId: number, reason: string, priority?: number): Promise<Task>;

  createToken(name: string, role: string | null): Promise<{ id: string; token: string }>;
  revokeToken(id: string, reason: string): Promise<void>;
  setKillSwitch(on: boolean, reason: string): Promise<void>;

  setAuditForm(patch: Partial<AuditFilterForm>, opts?: { immediate?: boolean }): void;
  resetAuditFilter(): void;
  applyAuditFilterNow(): void;
  reloadAudit(): Promise<void>;
  loadMoreAudit(): Promise<void>;
  selectAudit(id: number | null): void;
  setAuditFollowing(following: boolean): void;
  showUnseenAudit(): Promise<void>;
  verifyAudit(): Promise<void>;
  exportAudit(format: 'jsonl' | 'csv'): Promise<void>;
  clearExport(): void;

  toast(tone: ToastTone, title: string, body?: string, code?: string): void;
  dismissToast(id: number): void;
}

export interface ConsoleStore {
  store: StoreApi<ConsoleState>;
  actions: ConsoleActions;
  /** Applies an invalidation at once (tests). */
  applyInvalidation(inv: Invalidation): void;
  dispose(): void;
}

export function createConsoleStore(api: ConsoleApi, opts: ConsoleStoreOptions = {}): ConsoleStore {
  const timers = opts.timers ?? realTimers;
  const now = opts.now ?? (() => Date.now());
  const refreshMs = opts.refreshIntervalMs ?? 1000;
  const store = createStore<ConsoleState>()(() => initialState(api.shell));
  const { getState: get, setState: set } = store;
  let toastSeq = 0;
  const disposers: Array<() => void> = [];

  // ---- connection status, derived from call outcomes -----------------------------------------
  const callOk = () => {
    const c = get().conn;
    if (c.status !== 'live') set({ conn: { ...c, status: 'live', lastError: null } });
  };
  const callFailed = (err: UiError) => {
    if (!isConnectionError(err)) return;
    set({ conn: { ...get().conn, status: 'offline', lastError: err } });
  };

  async function call<M extends ConsoleMethod>(method: M, args: ConsoleArgs<M>): Promise<ConsoleResult<M>> {
    try {
      const r = await api.call(method, args);
      callOk();
      return r;
    } catch (e) {
      const err = toUiError(e);
      callFailed(err);
      throw Object.assign(new Error(err.message), err);
    }
  }

  // ---- simple resources -------------------------------------------------------------------------
  type ResKey = 'dashboard' | 'roles' | 'expiredLocks' | 'instances' | 'tokens' | 'settings';
  const resource = <K extends ResKey, M extends ConsoleMethod>(key: K, method: M, minIntervalMs = refreshMs): Loader =>
    createLoader<ConsoleState[K] extends Resource<infer T> ? T : never>({
      fetch: () => call(method, {} as ConsoleArgs<M>) as never,
      get: () => get()[key] as never,
      set: (r) => set({ [key]: r } as unknown as Partial<ConsoleState>),
      now,
      timers,
      minIntervalMs,
    });

  const loaders: Record<ResKey, Loader> = {
    dashboard: resource('dashboard', 'dashboard.get'),
    roles: resource('roles', 'roles.summary'),
    expiredLocks: resource('expiredLocks', 'locks.expiredToday'),
    instances: resource('instances', 'instances.list'),
    tokens: resource('tokens', 'tokens.list', 0),
    settings: resource('settings', 'settings.get', 0),
  };
  disposers.push(() => Object.values(loaders).forEach((l) => l.dispose()));

  // ---- jobs, runs, backfills, calendars (store/jobs-slice.ts) --------------------------------------
  const jobsSlice = createJobsSlice({
    get,
    set,
    call,
    toast: (...a) => actions.toast(...a),
    invalidateDashboard: () => loaders.dashboard.invalidate(),
    now,
    timers,
    refreshMs,
  });
  disposers.push(() => jobsSlice.dispose());

  // ---- queue --------------------------------------------------------------------------------------
  let queueGen = 0;
  const setColumn = (status: TaskStatus, patch: Partial<ColumnState>) => {
    const q = get().queue;
    set({ queue: { ...q, columns: { ...q.columns, [status]: { ...q.columns[status], ...patch } } } });
  };

  async function loadColumn(status: TaskStatus, mode: 'reload' | 'more'): Promise<void> {
    const role = get().queue.role;
    if (!role) return;
    const gen = queueGen;
    const col = get().queue.columns[status];
    if (mode === 'more' && (col.next === null || col.loading)) return;
    setColumn(status, { loading: true });
    const limit = mode === 'reload' ? Math.min(QUEUE_REFRESH_MAX, Math.max(QUEUE_PAGE, col.items.length)) : QUEUE_PAGE;
    try {
      // Finished work is read newest first; live work oldest first (the order agents take it).
      const desc = status === 'done' || status === 'cancelled';
      const cursor = mode === 'more' && col.next !== null ? (desc ? { before: col.next } : { after: col.next }) : {};
      const page = await call('tasks.list', { role, status, limit, ...(desc ? { order: 'desc' as const } : {}), ...cursor });
      if (gen !== queueGen) return;
      const next = page.next === null ? null : Number(page.next);
      const items = mode === 'more' ? [...get().queue.columns[status].items, ...page.items] : page.items;
      setColumn(status, { items, next, loading: false, error: null, loadedAt: now() });
    } catch (e) {
      if (gen !== queueGen) return;
      setColumn(status, { loading: false, error: toUiError(e) });
    }
  }

  const queueLoader = createLoader<null>({
    fetch: async () => {
      await Promise.all(TASK_STATUSES.map((s) => loadColumn(s, 'reload')));
      return null;
    },
    get: () => emptyResource<null>(),
    set: () => {},
    now,
    timers,
    minIntervalMs: refreshMs,
  });
  disposers.push(() => queueLoader.dispose());

  // ---- audit ---------------------------------------------------------------------------------------
  const setAudit = (patch: Partial<AuditState>) => set({ audit: { ...get().audit, ...patch } });

  /** Loads pages until the list has enough rows to fill the screen (partial pages may be short). */
  async function auditPage(mode: 'first' | 'more'): Promise<void> {
    const a = get().audit;
    if (mode === 'more' && (a.loading || a.next === null)) return;
    const gen = mode === 'first' ? a.generation + 1 : a.generation;
    const started = now();
    if (mode === 'first') setAudit({ generation: gen, items: [], next: null, loading: true, error: null, partial: false, pages: 0, unseen: 0, selectedId: null, total: null });
    else setAudit({ loading: true });
    let fetched = 0;
    try {
      for (let round = 0; round < 8; round++) {
        const cur = get().audit;
        const before = mode === 'first' && round === 0 ? undefined : (cur.next ?? undefined);
        const page = await call('audit.query', { ...cur.query, order: 'desc', limit: AUDIT_PAGE_SIZE, ...(before === undefined ? {} : { before }) });
        if (get().audit.generation !== gen) return;
        const items = [...get().audit.items, ...page.items];
        fetched += page.items.length;
        const next = page.next === null ? null : Number(page.next);
        setAudit({
          items,
          next,
          partial: page.partial,
          pages: get().audit.pages + 1,
          ...(mode === 'first' && round === 0 ? { firstPageMs: now() - started } : {}),
        });
        if (mode === 'first' && round === 0) void countAudit(gen);
        // A partial page (scan budget) with few matches: keep going a little so the screen fills.
        if (next === null || fetched >= AUDIT_PAGE_SIZE / 2 || !page.partial) break;
      }
      setAudit({ loading: false });
    } catch (e) {
      if (get().audit.generation !== gen) return;
      setAudit({ loading: false, error: toUiError(e) });
    }
  }

  /** The total for the status line and the export's progress; never blocks the list. */
  async function countAudit(gen: number): Promise<void> {
    try {
      const { limit: _l, order: _o, ...filter } = get().audit.query;
      const total = await call('audit.count', filter);
      if (get().audit.generation === gen) setAudit({ total });
    } catch {
      // The count is a nicety: the list works without it.
    }
  }

  /** Following the live tail: fetch rows newer than the top of the list. */
  const tailLoader = createLoader<null>({
    fetch: async () => {
      const a = get().audit;
      if (a.loading || !a.following) return null;
      const gen = a.generation;
      const top = a.items[0]?.id ?? 0;
      const page = await call('audit.query', { ...a.query, order: 'desc', limit: AUDIT_PAGE_SIZE, after: top });
      const cur = get().audit;
      if (cur.generation !== gen) return null;
      const gap = page.next !== null;
      let items = prependNewer(cur.items, page.items, gap);
      let next = gap ? Number(page.next) : cur.next;
      if (items.length > MAX_LIVE_ROWS) {
        items = items.slice(0, MAX_LIVE_ROWS);
        next = items[items.length - 1]!.id;
      }
      setAudit({ items, next, unseen: 0, ...(gap ? { partial: page.partial } : {}) });
      return null;
    },
    get: () => emptyResource<null>(),
    set: () => {},
    now,
    timers,
    minIntervalMs: refreshMs,
  });
  disposers.push(() => tailLoader.dispose());

  let filterTimer: unknown;
  const applyFilter = () => {
    if (filterTimer !== undefined) timers.clearTimeout(filterTimer);
    filterTimer = undefined;
    const a = get().audit;
    const { query, error } = formToQuery(a.form);
    setAudit({ formError: error });
    if (sameQuery(query, a.query) && a.pages > 0) return;
    setAudit({ query });
    void auditPage('first');
  };
  disposers.push(() => {
    if (filterTimer !== undefined) timers.clearTimeout(filterTimer);
  });

  // ---- watching and live updates -----------------------------------------------------------------
  const refreshTopic = (topic: Topic): Promise<void> => {
    switch (topic) {
      case 'dashboard':
      case 'roles':
      case 'expiredLocks':
      case 'instances':
      case 'tokens':
      case 'settings':
        return loaders[topic].refresh();
      case 'queue':
        return queueLoader.refresh();
      case 'audit':
        return get().audit.pages === 0 ? auditPage('first') : Promise.resolve();
      case 'jobs':
      case 'runs':
      case 'calendars':
        return jobsSlice.refresh(topic);
    }
  };
  const invalidateTopic = (topic: Topic) => {
    switch (topic) {
      case 'dashboard':
      case 'roles':
      case 'expiredLocks':
      case 'instances':
      case 'tokens':
      case 'settings':
        loaders[topic].invalidate();
        return;
      case 'queue':
        queueLoader.invalidate();
        return;
      case 'audit':
        if (get().audit.following && get().audit.pages > 0) tailLoader.invalidate();
        return;
      case 'jobs':
      case 'runs':
      case 'calendars':
        jobsSlice.invalidate(topic);
        return;
    }
  };
  const isWatched = (t: Topic) => (get().watched[t] ?? 0) > 0;

  const applyInvalidation = (inv: Invalidation) => {
    for (const topic of inv.topics) {
      if (!isWatched(topic)) continue;
      if (topic === 'queue') {
        const role = get().queue.role;
        if (!role || !inv.roles.has(role)) continue;
      }
      invalidateTopic(topic);
    }
    if (inv.auditAppended > 0 && isWatched('audit')) {
      const a = get().audit;
      if (!a.following) setAudit({ unseen: a.unseen + inv.auditAppended });
    }
    for (const al of inv.alerts) actions.toast(al.level === 'critical' ? 'error' : al.level === 'warning' ? 'warning' : 'info', al.title, al.body);
  };

  const actions: ConsoleActions = {
    ...jobsSlice.actions,
    start() {
      const co = createCoalescer(applyInvalidation, opts.liveIntervalMs ?? 250, timers);
      const unsub = api.subscribe((e: ConsoleEvent) => {
        co.push(e);
        const c = get().conn;
        // Cheap: only the counters change per event; the coalescer does the real work.
        set({ conn: { ...c, status: 'live', lastError: c.status === 'live' ? c.lastError : null, eventsReceived: co.received, lastEventAt: now() } });
      });
      // The event stream reconnects on its own; events may have been missed meanwhile.
      let wasDown = false;
      const offConn = api.onConnectionChange?.((up) => {
        const c = get().conn;
        if (!up) {
          wasDown = true;
          if (c.status === 'live') set({ conn: { ...c, status: 'reconnecting' } });
          return;
        }
        set({ conn: { ...c, status: 'live', lastError: null } });
        if (wasDown) for (const t of Object.keys(get().watched) as Topic[]) if (isWatched(t)) void refreshTopic(t);
        wasDown = false;
      });
      const offNav = opts.onNavigate ? api.onNavigate?.(opts.onNavigate) : undefined;
      let safety: unknown;
      const safetyTick = () => {
        for (const t of Object.keys(get().watched) as Topic[]) if (isWatched(t)) invalidateTopic(t);
        // While offline, probe so the status recovers on its own.
        if (get().conn.status === 'offline') void loaders.dashboard.refresh();
        safety = timers.setTimeout(safetyTick, get().conn.status === 'offline' ? 3000 : (opts.safetyRefreshMs ?? 15_000));
      };
      safety = timers.setTimeout(safetyTick, opts.safetyRefreshMs ?? 15_000);
      const stop = () => {
        unsub();
        offConn?.();
        offNav?.();
        co.dispose();
        timers.clearTimeout(safety);
      };
      disposers.push(stop);
      return stop;
    },

    watch(topic) {
      const w = get().watched;
      set({ watched: { ...w, [topic]: (w[topic] ?? 0) + 1 } });
      void refreshTopic(topic);
      return () => {
        const cur = get().watched;
        set({ watched: { ...cur, [topic]: Math.max(0, (cur[topic] ?? 1) - 1) } });
      };
    },

    refresh: refreshTopic,

    selectRole(role) {
      if (get().queue.role === role) return;
      queueGen++;
      set({ queue: { role, columns: emptyColumns() } satisfies QueueState });
      if (role) void queueLoader.refresh();
    },

    loadMoreTasks: (status) => loadColumn(status, 'more'),

    getTask: (taskId) => call('tasks.get', { taskId }),

    createTask(input) {
      return guarded(actions.toast, 'create the task', async () => {
        const r = await call('tasks.create', input);
        actions.toast('success', r.replayed ? `Task #${r.task.id} already existed` : `Created task #${r.task.id}`, r.task.title);
        if (get().queue.role === r.task.role) void queueLoader.refresh();
        loaders.roles.invalidate();
        loaders.dashboard.invalidate();
        return r.task;
      });
    },

    taskAction(kind, taskId, reason, priority) {
      return guarded(actions.toast, `${kind === 'forceRelease' ? 'force-release' : kind} task #${taskId}`, async () => {
        let task: Task;
        switch (kind) {
          case 'reprioritise':
            task = await call('tasks.reprioritise', { taskId, priority: priority ?? 0, reason });
            break;
          case 'cancel':
            task = await call('tasks.cancel', { taskId, reason });
            break;
          case 'forceRelease':
            task = await call('tasks.forceRelease', { taskId, reason });
            break;
          case 'retry':
            task = await call('tasks.retry', { taskId, reason });
            break;
          case 'unblock':
            task = await call('tasks.unblock', { taskId, reason });
            break;
        }
        const label = { reprioritise: 'Reprioritised', cancel: 'Cancelled', forceRelease: 'Force-released', retry: 'Retrying', unblock: 'Unblocked' }[kind];
        actions.toast('success', `${label} task #${taskId}`, `Reason: ${reason}`);
        void queueLoader.refresh();
        loaders.roles.invalidate();
        loaders.dashboard.invalidate();
        if (kind === 'forceRelease') loaders.expiredLocks.invalidate();
        return task;
      });
    },

    createToken(name, role) {
      return guarded(actions.toast, 'create the token', async () => {
        const r = await call('tokens.create', { name, role });
        void loaders.tokens.refresh();
        return r;
      });
    },

    revokeToken(id, reason) {
      return guarded(actions.toast, 'revoke the token', async () => {
        const t = await call('tokens.revoke', { id, reason });
        actions.toast('success', `Revoked token “${t.name}”`, 'Agents using it are refused from now on.');
        void loaders.tokens.refresh();
      });
    },

    setKillSwitch(on, reason) {
      return guarded(actions.toast, 'change the kill switch', async () => {
        const s = await call('settings.setKillSwitch', { on, reason });
        set({ settings: { data: s, loading: false, error: null, loadedAt: now() } });
        actions.toast(on ? 'warning' : 'success', on ? 'Kill switch ON: nothing new is triggered' : 'Kill switch off: triggering resumes', `Reason: ${reason}`);
        void loaders.dashboard.refresh();
      });
    },

    setAuditForm(patch, o) {
      setAudit({ form: { ...get().audit.form, ...patch } });
      if (filterTimer !== undefined) timers.clearTimeout(filterTimer);
      filterTimer = undefined;
      if (o?.immediate) applyFilter();
      else filterTimer = timers.setTimeout(applyFilter, opts.filterDebounceMs ?? 250);
    },
    resetAuditFilter() {
      setAudit({ form: { ...EMPTY_AUDIT_FORM } });
      applyFilter();
    },
    applyAuditFilterNow: applyFilter,
    reloadAudit: () => auditPage('first'),
    loadMoreAudit: () => auditPage('more'),
    selectAudit(id) {
      setAudit({ selectedId: id });
    },
    setAuditFollowing(following) {
      const a = get().audit;
      if (a.following === following) return;
      setAudit({ following });
      if (following && a.unseen > 0) tailLoader.invalidate();
    },
    async showUnseenAudit() {
      setAudit({ following: true });
      await tailLoader.refresh();
    },

    async verifyAudit() {
      setAudit({ verify: { ...get().audit.verify, running: true, error: null } });
      try {
        const result = await call('audit.verify', {});
        setAudit({ verify: { running: false, result, error: null, at: now() } });
      } catch (e) {
        setAudit({ verify: { running: false, result: null, error: toUiError(e), at: now() } });
      }
    },

    async exportAudit(format) {
      const a = get().audit;
      if (a.export.running) return;
      const args: AuditExportArgs = { ...stripPaging(a.query), format };
      // The count when known; without filters, ids are dense, so the newest id bounds the export.
      const total = a.total ? a.total.count : !isFiltered(a.query) ? (a.items[0]?.id ?? null) : null;
      setAudit({ export: { ...emptyExport(), running: true, format, total, startedAt: now() } });
      let lastPaint = 0;
      try {
        const r = await api.exportAudit(args, (p) => {
          const t = now();
          if (!p.done && t - lastPaint < 100) return;
          lastPaint = t;
          setAudit({ export: { ...get().audit.export, rows: p.rows, bytes: p.bytes } });
        });
        callOk();
        const ex = get().audit.export;
        setAudit({ export: { ...ex, running: false, finishedAt: now(), result: r, cancelled: r === null, rows: r?.rows ?? ex.rows } });
        if (r) actions.toast('success', `Exported ${r.rows.toLocaleString('en-US')} rows`, r.file);
      } catch (e) {
        const err = toUiError(e);
        callFailed(err);
        setAudit({ export: { ...get().audit.export, running: false, finishedAt: now(), error: err } });
        actions.toast('error', 'Export failed', err.message, err.code);
      }
    },
    clearExport() {
      setAudit({ export: emptyExport() });
    },

    toast(tone, title, body, code) {
      const id = ++toastSeq;
      const t: Toast = { id, tone, title, ...(body ? { body } : {}), ...(code ? { code } : {}) };
      set({ toasts: [...get().toasts.slice(-2), t] });
      const ms = opts.toastMs ?? (tone === 'error' ? 10_000 : 5000);
      timers.setTimeout(() => actions.dismissToast(id), ms);
    },
    dismissToast(id) {
      set({ toasts: get().toasts.filter((t) => t.id !== id) });
    },
  };

  return {
    store,
    actions,
    applyInvalidation,
    dispose() {
      for (const d of disposers.splice(0)) d();
    },
  };
}

function stripPaging<T extends { limit?: unknown; order?: unknown; after?: unknown; before?: unknown }>(q: T): Omit<T, 'limit' | 'order'> {
  const { limit: _l, order: _o, ...rest } = q;
  return rest;
}
