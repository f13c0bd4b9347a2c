/**
 * State of the Managed agents view, self-contained: its own small store over the ConsoleApi.
 *
 * 1. One loader per resource (store/resource.ts): a burst of `managed.changed` events is one
 *    refetch per interval, and only while the view is mounted (`start` … its stop function).
 * 2. The selected agent's detail (processes with recent output) is refetched on its events and
 *    every `pollMs` while selected: output lines arrive without events of their own.
 * 3. An answer for an agent that is no longer selected is dropped.
 * 4. Actions return the updated agent and refresh the list; failures are thrown to the caller
 *    (the dialog that started them stays open and shows why).
 */
import { createStore, type StoreApi } from 'zustand/vanilla';
import type { ConsoleApi, ConsoleArgs, ConsoleMethod, ConsoleResult } from '../../../src-main/common/console-api';
import type { ManagedAction, ManagedAgent, ManagedAgentInput, ManagedAgentPatch } from '../../../src-main/common/managed-agents';
import { realTimers, type Timers } from '../../lib/debounce';
import { toUiError } from '../../store/errors';
import { createLoader, emptyResource, type Resource } from '../../store/resource';

type ManagedMethod = Extract<ConsoleMethod, `managedAgents.${string}`>;

export interface ManagedState {
  list: Resource<ManagedAgent[]>;
  selectedId: string | null;
  detail: Resource<ManagedAgent>;
}

export interface ManagedActions {
  /** Loads and follows live changes; returns the function that stops it. */
  start(): () => void;
  refresh(): Promise<void>;
  select(id: string | null): void;
  create(definition: Omit<ManagedAgentInput, 'reason'>, reason: string): Promise<ManagedAgent>;
  update(id: string, patch: Omit<ManagedAgentPatch, 'reason'>, reason: string): Promise<ManagedAgent>;
  remove(id: string, reason: string): Promise<void>;
  control(id: string, action: ManagedAction, reason: string, instance?: number): Promise<ManagedAgent>;
}

export interface ManagedStore {
  store: StoreApi<ManagedState>;
  actions: ManagedActions;
}

export function createManagedStore(api: ConsoleApi, opts: { timers?: Timers; now?: () => number; pollMs?: number; minIntervalMs?: number } = {}): ManagedStore {
  const timers = opts.timers ?? realTimers;
  const now = opts.now ?? (() => Date.now());
  const pollMs = opts.pollMs ?? 2000;
  const store = createStore<ManagedState>()(() => ({ list: emptyResource(), selectedId: null, detail: emptyResource() }));
  const { getState: get, setState: set } = store;
  const call = async <M extends ManagedMethod>(method: M, args: ConsoleArgs<M>): Promise<ConsoleResult<M>> => {
    try {
      return await api.call(method, args);
    } catch (e) {
      const err = toUiError(e);
      throw Object.assign(new Error(err.message), err);
    }
  };

  const list = createLoader<ManagedAgent[]>({ fetch: () => call('managedAgents.list', {}), get: () => get().list, set: (r) => set({ list: r }), now, timers, minIntervalMs: opts.minIntervalMs ?? 500 });
  let detailFor: string | null = null;
  const detail = createLoader<ManagedAgent>({
    fetch: async () => {
      const id = get().selectedId;
      detailFor = id;
      if (!id) throw new Error('nothing selected');
      return call('managedAgents.get', { id });
    },
    get: () => get().detail,
    // Invariant 3: drop an answer for an agent that is no longer selected.
    set: (r) => {
      if (detailFor === get().selectedId) set({ detail: r });
    },
    now,
    timers,
    minIntervalMs: opts.minIntervalMs ?? 500,
  });

  let poll: unknown;
  const schedulePoll = () => {
    if (poll !== undefined) timers.clearTimeout(poll);
    poll = undefined;
    if (!get().selectedId) return;
    poll = timers.setTimeout(() => {
      poll = undefined;
      detail.invalidate();
      schedulePoll();
    }, pollMs);
  };

  const afterChange = (a: ManagedAgent) => {
    void list.refresh();
    if (get().selectedId === a.id) set({ detail: { data: a, loading: false, error: null, loadedAt: now() } });
    return a;
  };

  const actions: ManagedActions = {
    start() {
      void list.refresh();
      const unsub = api.subscribe((e) => {
        if (e.type !== 'managed.changed' && e.type !== 'instance.changed') return;
        list.invalidate();
        if (get().selectedId && (e.type === 'instance.changed' || e.managedAgentId === get().selectedId)) detail.invalidate();
      });
      const offConn = api.onConnectionChange?.((up) => {
        if (!up) return;
        void list.refresh();
        if (get().selectedId) void detail.refresh();
      });
      schedulePoll();
      return () => {
        unsub();
        offConn?.();
        if (poll !== undefined) timers.clearTimeout(poll);
        poll = undefined;
      };
    },
    refresh: () => list.refresh(),
    select(id) {
      if (get().selectedId === id) return;
      set({ selectedId: id, detail: emptyResource() });
      if (id) void detail.refresh();
      schedulePoll();
    },
    create: async (definition, reason) => afterChange(await call('managedAgents.create', { definition, reason })),
    update: async (id, patch, reason) => afterChange(await call('managedAgents.update', { id, patch, reason })),
    async remove(id, reason) {
      await call('managedAgents.delete', { id, reason });
      if (get().selectedId === id) actions.select(null);
      await list.refresh();
    },
    control: async (id, action, reason, instance) => afterChange(await call('managedAgents.control', { id, action, reason, ...(instance !== undefined ? { instance } : {}) })),
  };
  return { store, actions };
}
