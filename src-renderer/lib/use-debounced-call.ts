/**
 * A server check that follows what is being edited (validation, preview): once the input has
 * stood still for `delayMs`, it is sent, and the outcome is handed over stamped with the `key`
 * it was asked for. An answer that arrives after the input changed, or after unmount, is dropped.
 */
import { useEffect, useLayoutEffect, useRef } from 'react';

export const DEBOUNCE_MS = 350;

export type CallOutcome<T> = { ok: true; value: T } | { ok: false; error: unknown };

export interface DebouncedCallOptions {
  delayMs?: number;
  /** Runs at each change of the input, before the wait (e.g. to show "updating"). */
  onStart?: () => void;
}

/**
 * Calls `call(input)` `delayMs` after `key` / `input` / `call` last changed and passes the outcome
 * to `onAnswer` with that key. `call` should be stable (a store action or a `useCallback`):
 * a change restarts the wait. `onAnswer` and `onStart` may change at every render.
 */
export function useDebouncedCall<I, T>(key: string, input: I, call: (input: I) => Promise<T>, onAnswer: (key: string, outcome: CallOutcome<T>) => void, options: DebouncedCallOptions = {}): void {
  const { delayMs = DEBOUNCE_MS, onStart } = options;
  const handlers = useRef({ onAnswer, onStart });
  useLayoutEffect(() => {
    handlers.current = { onAnswer, onStart };
  });
  useEffect(() => {
    let live = true;
    handlers.current.onStart?.();
    const t = window.setTimeout(() => {
      call(input).then(
        (value) => {
          if (live) handlers.current.onAnswer(key, { ok: true, value });
        },
        (error: unknown) => {
          if (live) handlers.current.onAnswer(key, { ok: false, error });
        },
      );
    }, delayMs);
    return () => {
      live = false;
      window.clearTimeout(t);
    };
  }, [key, input, call, delayMs]);
}
