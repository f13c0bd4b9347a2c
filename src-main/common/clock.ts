/**
 * Time is injected. Core code never calls Date.now() or setTimeout directly: it takes a Clock,
 * so tests can travel hours in milliseconds with `ManualClock` and jumps can be simulated.
 */
export interface TimerHandle {
  cancel(): void;
}

export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** Runs `fn` once after `ms` (as measured by this clock). */
  setTimeout(fn: () => void, ms: number): TimerHandle;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout(fn, ms) {
    // Node caps timers at 2^31-1 ms; longer waits re-arm themselves.
    const MAX = 2_147_483_647;
    let handle: NodeJS.Timeout;
    let cancelled = false;
    const arm = (remaining: number) => {
      handle = setTimeout(() => {
        if (cancelled) return;
        if (remaining > MAX) arm(remaining - MAX);
        else fn();
      }, Math.min(Math.max(0, remaining), MAX));
      handle.unref?.();
    };
    arm(ms);
    return {
      cancel() {
        cancelled = true;
        clearTimeout(handle);
      },
    };
  },
};

interface ManualTimer {
  at: number;
  seq: number;
  fn: () => void;
  cancelled: boolean;
}

/**
 * A clock for tests. `advance(ms)` moves time forward and runs every timer that falls due,
 * in due order, each with `now()` equal to its due instant. `jump(ms)` moves time without
 * running timers first (a sleep or a wall-clock step), then runs what is due.
 */
export class ManualClock implements Clock {
  private current: number;
  private seq = 0;
  private timers: ManualTimer[] = [];

  constructor(start: number | string = '2026-11-30T08:00:00.000Z') {
    this.current = typeof start === 'number' ? start : Date.parse(start);
  }

  now(): number {
    return this.current;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const timer: ManualTimer = { at: this.current + Math.max(0, ms), seq: this.seq++, fn, cancelled: false };
    this.timers.push(timer);
    return {
      cancel: () => {
        timer.cancelled = true;
      },
    };
  }

  /** Number of live timers (for leak checks in tests). */
  pendingTimers(): number {
    return this.timers.filter((t) => !t.cancelled).length;
  }

  advance(ms: number): void {
    this.advanceTo(this.current + ms);
  }

  advanceTo(target: number): void {
    for (;;) {
      const next = this.nextDue(target);
      if (!next) break;
      this.current = Math.max(this.current, next.at);
      this.timers = this.timers.filter((t) => t !== next);
      next.fn();
    }
    this.current = Math.max(this.current, target);
  }

  /** Sets the wall clock to `target` at once (forward or backward), then runs due timers. */
  jumpTo(target: number): void {
    this.current = target;
    this.advanceTo(target);
  }

  /** Runs every timer until none is left due before `limit` (ms from now); returns timers run. */
  runUntilIdle(limitMs = 24 * 3600_000): number {
    const end = this.current + limitMs;
    let ran = 0;
    for (;;) {
      const next = this.nextDue(end);
      if (!next) return ran;
      this.current = Math.max(this.current, next.at);
      this.timers = this.timers.filter((t) => t !== next);
      next.fn();
      ran++;
    }
  }

  private nextDue(limit: number): ManualTimer | undefined {
    let best: ManualTimer | undefined;
    for (const t of this.timers) {
      if (t.cancelled || t.at > limit) continue;
      if (!best || t.at < best.at || (t.at === best.at && t.seq < best.seq)) best = t;
    }
    this.timers = this.timers.filter((t) => !t.cancelled);
    return best;
  }
}

export function iso(ms: number): string {
  return new Date(ms).toISOString();
}
