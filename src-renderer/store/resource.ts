/**
 * A loaded piece of server state, and a loader that never runs twice at once: a refresh asked
 * for while one is in flight is remembered and run once afterwards (so bursts of live events
 * collapse into at most one extra request), and refreshes are spaced by `minIntervalMs`.
 */
import type { UiError } from '../lib/errors';
import { toUiError } from '../lib/errors';
import type { Timers } from '../lib/debounce';
import { keepEqual } from '../lib/keep-equal';

export interface Resource<T> {
  data: T | null;
  loading: boolean;
  error: UiError | null;
  /** Epoch ms of the last successful load. */
  loadedAt: number | null;
}

export const emptyResource = <T>(): Resource<T> => ({ data: null, loading: false, error: null, loadedAt: null });

export interface Loader {
  /** Loads now (or right after the one in flight). Resolves when the data asked for is in. */
  refresh(): Promise<void>;
  /** Asks for a refresh, respecting the minimum interval (used by live updates). */
  invalidate(): void;
  readonly inFlight: boolean;
  dispose(): void;
}

export interface LoaderOptions<T> {
  fetch: () => Promise<T>;
  get: () => Resource<T>;
  set: (r: Resource<T>) => void;
  now: () => number;
  timers: Timers;
  minIntervalMs?: number;
  onError?: (e: UiError) => void;
  onSuccess?: () => void;
}

export function createLoader<T>(o: LoaderOptions<T>): Loader {
  let running: Promise<void> | null = null;
  let again = false;
  let lastStart = -Infinity;
  let timer: unknown;
  let disposed = false;
  const minInterval = o.minIntervalMs ?? 0;

  const runOnce = async () => {
    lastStart = o.now();
    o.set({ ...o.get(), loading: true });
    try {
      // Parts equal to what is held keep their identity: an unchanged refresh re-renders nothing that reads the data.
      const data = keepEqual(o.get().data, await o.fetch());
      if (disposed) return;
      o.set({ data, loading: false, error: null, loadedAt: o.now() });
      o.onSuccess?.();
    } catch (e) {
      if (disposed) return;
      const err = toUiError(e);
      o.set({ ...o.get(), loading: false, error: err });
      o.onError?.(err);
    }
  };

  const refresh = (): Promise<void> => {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      do {
        again = false;
        await runOnce();
      } while (again && !disposed);
      running = null;
    })();
    return running;
  };

  return {
    refresh,
    invalidate() {
      if (disposed || timer !== undefined) return;
      if (running) {
        again = true;
        return;
      }
      const wait = lastStart + minInterval - o.now();
      if (wait <= 0) {
        void refresh();
        return;
      }
      timer = o.timers.setTimeout(() => {
        timer = undefined;
        void refresh();
      }, wait);
    },
    get inFlight() {
      return running !== null;
    },
    dispose() {
      disposed = true;
      if (timer !== undefined) o.timers.clearTimeout(timer);
    },
  };
}
