/**
 * Manual timers for renderer tests (the `Timers` the store, debounce and the coalescer take), over
 * the same `ManualClock` the core's tests use: `advance(ms)` runs what falls due, in order. The
 * console kit hands the store the clock of its core, so the store, the event hub and the core
 * share one time.
 */
import { ManualClock, type TimerHandle } from '../../src-main/common/clock';
import type { Timers } from '../lib/debounce';

export class ManualTimers implements Timers {
  constructor(readonly clock: ManualClock = new ManualClock(0)) {}
  now = (): number => this.clock.now();
  setTimeout = (fn: () => void, ms: number): unknown => this.clock.setTimeout(fn, ms);
  clearTimeout = (h: unknown): void => (h as TimerHandle | undefined)?.cancel();
  /** Timers armed and not yet run or cleared. */
  get pending(): number {
    return this.clock.pendingTimers();
  }
  advance(ms: number): void {
    this.clock.advance(ms);
  }
}
