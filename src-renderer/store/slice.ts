/**
 * What a slice of the console store is given, and what it gives back. The root store
 * (`console-store.ts`) composes one slice per feature (`slices/*.ts`); a slice owns some top-level
 * keys of the state and the topics that refresh them.
 *
 * Invariants:
 * 1. A slice reads and writes only its own keys: its `get`/`set` are typed by its own state, and
 *    `set` merges a patch of those keys.
 * 2. A slice reaches another slice only by topic (`refresh` / `invalidate`), never by its loaders
 *    or its state: "a task changed, the dashboard's counts are stale" is `invalidate('dashboard')`.
 * 3. Every server call goes through `call` (or `exportAudit`), which keeps the connection status
 *    and turns failures into typed errors (`code`, `message`).
 */
import type { AuditExportArgs, ConsoleArgs, ConsoleMethod, ConsoleResult, ExportProgress } from '../../src-main/common/console-api';
import type { Timers } from '../lib/debounce';
import type { RouteLink } from '../lib/routes';
import type { Invalidation, Topic } from './live';
import { createLoader, emptyResource, type Loader, type Resource } from './resource';

export type ToastTone = 'info' | 'success' | 'warning' | 'error';

/** A place in the console a toast offers to open (the run a retry started, …). */
export type ToastLink = RouteLink;

export type Call = <M extends ConsoleMethod>(method: M, args: ConsoleArgs<M>) => Promise<ConsoleResult<M>>;

export interface SliceContext<S> {
  /** This slice's own state (the keys it owns). */
  get(): S;
  /** Merges a patch of this slice's own keys into the store. */
  set(patch: Partial<S>): void;
  call: Call;
  /** Streams an audit export; null when the operator cancelled (see ConsoleApi.exportAudit). */
  exportAudit(args: AuditExportArgs, onProgress: (p: ExportProgress) => void): Promise<{ file: string; rows: number } | null>;
  toast(tone: ToastTone, title: string, body?: string, code?: string, link?: ToastLink): void;
  /** Fetches a topic now, whichever slice owns it (what an operator action touched). */
  refresh(topic: Topic): Promise<void>;
  /** Asks for a refresh of a topic, spaced by its loader's minimum interval. */
  invalidate(topic: Topic): void;
  now(): number;
  timers: Timers;
  /** Minimum spacing of live refreshes per resource. */
  refreshMs: number;
}

/** How the root drives one topic of a slice. */
export interface TopicHandler {
  refresh(): Promise<void>;
  /**
   * Live: something the topic shows changed. `inv` is the burst that says so (absent for the
   * safety refresh), for slices that look closer (the queue refreshes only for its role).
   */
  invalidate(inv?: Invalidation): void;
}

export interface Slice<A> {
  actions: A;
  topics: Partial<Record<Topic, TopicHandler>>;
  dispose(): void;
}

/** A topic that is one loader: refreshed and invalidated as it is. */
export function loaderTopic(loader: Loader): TopicHandler {
  return { refresh: () => loader.refresh(), invalidate: () => loader.invalidate() };
}

/** Where a value lives in a slice's state: how to read it and how to write it back. */
export interface Cell<T> {
  get(): T;
  set(value: T): void;
}

/** The cell of one of the slice's own top-level keys. */
export function keyCell<S, K extends keyof S>(ctx: SliceContext<S>, key: K): Cell<S[K]> {
  // A computed key widens to a string index type; the patch is exactly `{ [key]: value }`.
  return { get: () => ctx.get()[key], set: (value) => ctx.set({ [key]: value } as unknown as Partial<S>) };
}

/**
 * A loader for a `Resource` kept in `cell`: `fetch` fills it, at most once per `minIntervalMs`
 * when invalidated (default: the context's `refreshMs`).
 */
export function resourceLoader<T>(ctx: SliceContext<unknown>, cell: Cell<Resource<T>>, fetch: () => Promise<T>, minIntervalMs = ctx.refreshMs): Loader {
  return createLoader<T>({ fetch, get: cell.get, set: cell.set, now: ctx.now, timers: ctx.timers, minIntervalMs });
}

/** A loader that only runs `fetch` (which writes state itself): single flight, spaced refreshes. */
export function taskLoader(ctx: SliceContext<unknown>, fetch: () => Promise<void>): Loader {
  return createLoader<null>({
    fetch: async () => {
      await fetch();
      return null;
    },
    get: () => emptyResource<null>(),
    set: () => {},
    now: ctx.now,
    timers: ctx.timers,
    minIntervalMs: ctx.refreshMs,
  });
}
