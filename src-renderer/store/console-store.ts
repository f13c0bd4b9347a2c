/**
 * The console store: a vanilla zustand store composed of one slice per feature (`slices/*.ts`),
 * plus what the root keeps itself: the connection status, the watched topics, live updates.
 * Components read state through the React binding (`store/react.tsx`) and change things only
 * through the actions; nothing in a component calls the ConsoleApi.
 *
 * Invariants:
 * 1. Each slice is given its own get/set (its keys only) and reaches other slices only by topic;
 *    every topic has exactly one owning slice (checked when the store is built).
 * 2. Each server resource has one loader: never two requests for it in flight, bursts collapse.
 * 3. Live events are coalesced (store/live.ts) and refresh only topics a mounted view watches.
 * 4. Responses for a superseded query (role switched, audit filter changed) are dropped by
 *    generation number, so a slow old answer never overwrites a newer one.
 * 5. A safety refresh of watched topics runs every `safetyRefreshMs`, in case events were lost
 *    across a reconnect: one topic at a time, SAFETY_STAGGER_MS apart.
 */
import { createStore, type StoreApi } from 'zustand/vanilla';
import type { ConsoleApi, ConsoleArgs, ConsoleEvent, ConsoleMethod, ConsoleResult, ConsoleView } from '../../src-main/common/console-api';
import { realTimers, type Timers } from '../lib/debounce';
import { isConnectionError, toUiError, type UiError } from '../lib/errors';
import { createCoalescer, TOPICS, type Invalidation, type Topic } from './live';
import type { Slice, SliceContext, TopicHandler } from './slice';
import { createAuditSlice, initialAuditState, type AuditActions, type AuditSliceState } from './slices/audit';
import { createCalendarsSlice, initialCalendarsState, type CalendarsActions, type CalendarsState } from './slices/calendars';
import { createDashboardSlice, initialDashboardState, type DashboardActions, type DashboardState } from './slices/dashboard';
import { createInboxSlice, initialInboxState, type InboxActions, type InboxState } from './slices/inbox';
import { createInstancesSlice, initialInstancesState, type InstancesActions, type InstancesState } from './slices/instances';
import { createJobsSlice, initialJobsState, type JobsActions, type JobsState } from './slices/jobs';
import { createLocksSlice, initialLocksState, type LocksState } from './slices/locks';
import { createLogsSlice, initialLogsState, type LogsActions, type LogsState } from './slices/logs';
import { createManagedSlice, initialManagedState, type ManagedActions, type ManagedState } from './slices/managed';
import { createQueuesSlice, initialQueuesState, type QueuesActions, type QueuesState } from './slices/queues';
import { createRunsSlice, initialRunsState, type RunsActions, type RunsState } from './slices/runs';
import { createSettingsSlice, initialSettingsState, type SettingsActions, type SettingsState } from './slices/settings';
import { createSignalsSlice, initialSignalsState, type SignalsActions, type SignalsState } from './slices/signals';
import { createTasksSlice, initialTasksState, type TasksActions, type TasksState } from './slices/tasks';
import { createToastsSlice, initialToastsState, type ToastsActions, type ToastsState } from './slices/toasts';
import type { ConsoleState } from './types';

/** Between two topics of one safety refresh (invariant 5). */
export const SAFETY_STAGGER_MS = 100;

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

export function initialState(shell: 'electron' | 'browser' = 'browser'): ConsoleState {
  return {
    shell,
    conn: { status: 'connecting', lastError: null, eventsReceived: 0, lastEventAt: null },
    watched: {},
    ...initialToastsState(),
    ...initialDashboardState(),
    ...initialInboxState(),
    ...initialQueuesState(),
    ...initialLocksState(),
    ...initialInstancesState(),
    ...initialSettingsState(),
    ...initialAuditState(),
    ...initialJobsState(),
    ...initialRunsState(),
    ...initialCalendarsState(),
    ...initialLogsState(),
    ...initialManagedState(),
    ...initialTasksState(),
    ...initialSignalsState(),
  };
}

/** What the root store does itself (the rest are the slices' actions). */
export interface RootActions {
  /** Starts live updates; returns a stop function. */
  start(): () => void;
  /** A mounted view watches a topic: it is loaded now and refreshed live. Returns unwatch. */
  watch(topic: Topic): () => void;
  refresh(topic: Topic): Promise<void>;
  /** Browser: use a pasted operator token (this tab only) and load what is on screen again. */
  signIn(token: string): void;
}

export type ConsoleActions = RootActions &
  ToastsActions &
  DashboardActions &
  InboxActions &
  QueuesActions &
  InstancesActions &
  SettingsActions &
  AuditActions &
  JobsActions &
  RunsActions &
  CalendarsActions &
  LogsActions &
  ManagedActions &
  TasksActions &
  SignalsActions;

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
  const store = createStore<ConsoleState>()(() => initialState(api.shell));
  const { getState: get, setState: set } = store;
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

  // ---- the slices, each with its own get/set; topics route between them ------------------------
  const owners: Partial<Record<Topic, TopicHandler>> = {};
  const ownerOf = (topic: Topic): TopicHandler => {
    const h = owners[topic];
    if (!h) throw new Error(`no slice owns the topic ${topic}`);
    return h;
  };
  const refreshTopic = (topic: Topic): Promise<void> => ownerOf(topic).refresh();
  const invalidateTopic = (topic: Topic, inv?: Invalidation): void => ownerOf(topic).invalidate(inv);

  // The slice context: the keys `K` the slice owns, plus the shared services.
  const contextFor = <K extends keyof ConsoleState>(): SliceContext<Pick<ConsoleState, K>> => ({
    get,
    set: (patch) => set(patch),
    call,
    async exportAudit(args, onProgress) {
      try {
        const r = await api.exportAudit(args, onProgress);
        callOk();
        return r;
      } catch (e) {
        callFailed(toUiError(e));
        throw e;
      }
    },
    toast: (...a) => toasts.actions.toast(...a),
    refresh: refreshTopic,
    invalidate: (topic) => invalidateTopic(topic),
    now,
    timers,
    refreshMs: opts.refreshIntervalMs ?? 1000,
  });

  // The audit filter reads an instance's name as its id (the newest of that name): the root,
  // which sees every slice's state, lends the audit slice this one lookup.
  const instanceIdByName = (name: string): string | null => {
    const all = (get().instances.data ?? []).filter((i) => i.name.toLowerCase() === name.toLowerCase());
    all.sort((a, b) => Date.parse(b.connectedAt) - Date.parse(a.connectedAt));
    return all[0]?.id ?? null;
  };

  const toasts = createToastsSlice(contextFor<keyof ToastsState>(), opts.toastMs);
  disposers.push(() => toasts.dispose());
  const slices = {
    dashboard: createDashboardSlice(contextFor<keyof DashboardState>()),
    inbox: createInboxSlice(contextFor<keyof InboxState>()),
    queues: createQueuesSlice(contextFor<keyof QueuesState>()),
    locks: createLocksSlice(contextFor<keyof LocksState>()),
    instances: createInstancesSlice(contextFor<keyof InstancesState>()),
    settings: createSettingsSlice(contextFor<keyof SettingsState>()),
    audit: createAuditSlice(contextFor<keyof AuditSliceState>(), { filterDebounceMs: opts.filterDebounceMs, actorAlias: instanceIdByName }),
    jobs: createJobsSlice(contextFor<keyof JobsState>()),
    runs: createRunsSlice(contextFor<keyof RunsState>()),
    calendars: createCalendarsSlice(contextFor<keyof CalendarsState>()),
    logs: createLogsSlice(contextFor<keyof LogsState>()),
    managed: createManagedSlice(contextFor<keyof ManagedState>()),
    tasks: createTasksSlice(contextFor<keyof TasksState>()),
    signals: createSignalsSlice(contextFor<keyof SignalsState>()),
  } satisfies Record<string, Slice<object>>;
  for (const [name, slice] of Object.entries(slices)) {
    for (const [topic, handler] of Object.entries(slice.topics) as Array<[Topic, TopicHandler]>) {
      if (owners[topic]) throw new Error(`the topic ${topic} has two owners (${name} and another slice)`);
      owners[topic] = handler;
    }
    disposers.push(() => slice.dispose());
  }
  for (const t of TOPICS) ownerOf(t);

  // ---- watching and live updates -----------------------------------------------------------------
  const isWatched = (t: Topic) => (get().watched[t] ?? 0) > 0;

  const applyInvalidation = (inv: Invalidation) => {
    for (const topic of inv.topics) if (isWatched(topic)) invalidateTopic(topic, inv);
    for (const al of inv.alerts) toasts.actions.toast(al.level === 'critical' ? 'error' : al.level === 'warning' ? 'warning' : 'info', al.title, al.body);
  };

  const root: RootActions = {
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
      const staggered = new Set<unknown>();
      const safetyTick = () => {
        // One topic per task, SAFETY_STAGGER_MS apart: a refresh starts its requests synchronously
        // (a few ms each in the browser), and every watched topic's in one task was a long frame
        // every safetyRefreshMs (a scroll dropped frames on it).
        (Object.keys(get().watched) as Topic[]).filter(isWatched).forEach((t, i) => {
          if (i === 0) return invalidateTopic(t);
          const h = timers.setTimeout(() => {
            staggered.delete(h);
            if (isWatched(t)) invalidateTopic(t);
          }, i * SAFETY_STAGGER_MS);
          staggered.add(h);
        });
        // While offline, probe so the status recovers on its own.
        if (get().conn.status === 'offline') void refreshTopic('dashboard');
        safety = timers.setTimeout(safetyTick, get().conn.status === 'offline' ? 3000 : (opts.safetyRefreshMs ?? 15_000));
      };
      safety = timers.setTimeout(safetyTick, opts.safetyRefreshMs ?? 15_000);
      const stop = () => {
        unsub();
        offConn?.();
        offNav?.();
        co.dispose();
        timers.clearTimeout(safety);
        staggered.forEach((h) => timers.clearTimeout(h));
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

    signIn(token) {
      if (!api.signIn) return;
      api.signIn(token);
      set({ conn: { ...get().conn, status: 'connecting', lastError: null } });
      for (const t of Object.keys(get().watched) as Topic[]) if (isWatched(t)) void refreshTopic(t);
    },
  };

  const actions: ConsoleActions = {
    ...root,
    ...toasts.actions,
    ...slices.dashboard.actions,
    ...slices.inbox.actions,
    ...slices.queues.actions,
    ...slices.instances.actions,
    ...slices.settings.actions,
    ...slices.audit.actions,
    ...slices.jobs.actions,
    ...slices.runs.actions,
    ...slices.calendars.actions,
    ...slices.logs.actions,
    ...slices.managed.actions,
    ...slices.tasks.actions,
    ...slices.signals.actions,
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
