/** A debouncer with explicit timers so tests can drive it. */
export interface Timers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const realTimers: Timers = {
  setTimeout: (fn, ms) => globalThis.setTimeout(fn, ms),
  clearTimeout: (h) => globalThis.clearTimeout(h as ReturnType<typeof setTimeout>),
};

export interface Debounced<A extends unknown[]> {
  (...args: A): void;
  /** Runs a pending call now. */
  flush(): void;
  cancel(): void;
  readonly pending: boolean;
}

export function debounce<A extends unknown[]>(fn: (...args: A) => void, ms: number, timers: Timers = realTimers): Debounced<A> {
  let handle: unknown;
  let lastArgs: A | undefined;
  const run = () => {
    handle = undefined;
    const args = lastArgs;
    lastArgs = undefined;
    if (args) fn(...args);
  };
  const d = ((...args: A) => {
    lastArgs = args;
    if (handle !== undefined) timers.clearTimeout(handle);
    handle = timers.setTimeout(run, ms);
  }) as Debounced<A>;
  d.flush = () => {
    if (handle !== undefined) timers.clearTimeout(handle);
    run();
  };
  d.cancel = () => {
    if (handle !== undefined) timers.clearTimeout(handle);
    handle = undefined;
    lastArgs = undefined;
  };
  Object.defineProperty(d, 'pending', { get: () => handle !== undefined });
  return d;
}
