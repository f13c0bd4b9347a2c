/**
 * One shared ticking clock for countdowns and relative times: a single interval for the whole
 * app, and each component re-renders only at the granularity it asks for. The value returned
 * is the real time of the last tick that crossed the granularity (never rounded down), so
 * "created 3 s ago" is never shown as "in 6 s".
 */
import { useCallback, useSyncExternalStore } from 'react';

type Listener = () => void;
const listeners = new Map<number, Set<Listener>>();
/** Per granularity: the time of the last notified tick. */
const snaps = new Map<number, number>();
let handle: ReturnType<typeof setInterval> | undefined;

function tick(): void {
  const now = Date.now();
  for (const [g, set] of listeners) {
    const prev = snaps.get(g) ?? 0;
    if (Math.floor(now / g) === Math.floor(prev / g) && now - prev < g) continue;
    snaps.set(g, now);
    for (const fn of set) fn();
  }
}

function subscribeG(g: number, l: Listener): () => void {
  let set = listeners.get(g);
  if (!set) listeners.set(g, (set = new Set()));
  set.add(l);
  if (!handle) handle = setInterval(tick, 1000);
  return () => {
    set.delete(l);
    if (set.size === 0) listeners.delete(g);
    if (listeners.size === 0 && handle) {
      clearInterval(handle);
      handle = undefined;
    }
  };
}

function snapshot(g: number): number {
  let s = snaps.get(g);
  // First reader, or the clock was idle (no listeners): start from the real time.
  if (s === undefined || (!listeners.has(g) && Date.now() - s >= g)) {
    s = Date.now();
    snaps.set(g, s);
  }
  return s;
}

/** Current time (epoch ms), re-rendering about every `granularityMs` (multiples of 1 s). */
export function useNow(granularityMs = 1000): number {
  const g = Math.max(1000, granularityMs);
  const sub = useCallback((l: Listener) => subscribeG(g, l), [g]);
  const get = useCallback(() => snapshot(g), [g]);
  return useSyncExternalStore(sub, get, get);
}
