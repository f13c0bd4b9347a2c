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
 * A clock for tests, modelled like the real thing: timers run on a monotonic timeline, and the
 * wall clock (`now()`) is that timeline plus an offset that can be stepped.
 * - `advance(ms)` lets time pass: every timer that falls due runs, in due order.
 * - `jump(ms)` steps the wall clock only (a laptop sleep, an NTP step, a manual change): no timer
 *   runs, just as Node's monotonic timers do not fire during suspend. Timers set before the jump
 *   still fire after their original monotonic delay.
 */
export class ManualClock implements Clock {
  private mono = 0;
  private offset: number;
  private seq = 0;
  private timers: ManualTimer[] = [];

  constructor(start: number | string = '2026-11-30T08:00:00.000Z') {
    this.offset = typeof start === 'number' ? start : Date.parse(start);
  }

  now(): number {
    return this.mono + this.offset;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const timer: ManualTimer = { at: this.mono + Math.max(0, ms), seq: this.seq++, fn, cancelled: false };
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

  /** Lets `ms` pass, running due timers in order, each seeing `now()` at its due instant. */
  advance(ms: number): void {
    const target = this.mono + ms;
    for (;;) {
      const next = this.nextDue(target);
      if (!next) break;
      this.mono = Math.max(this.mono, next.at);
      this.timers = this.timers.filter((t) => t !== next);
      next.fn();
    }
    this.mono = Math.max(this.mono, target);
  }

  /** Lets time pass until the wall clock reads `wall`. */
  advanceTo(wall: number): void {
    this.advance(wall - this.now());
  }

  /** Steps the wall clock by `ms` (negative: backwards) without letting time pass. */
  jump(ms: number): void {
    this.offset += ms;
  }

  /** Runs every timer due within `limitMs`; returns how many ran. */
  runUntilIdle(limitMs = 24 * 3600_000): number {
    const end = this.mono + limitMs;
    let ran = 0;
    for (;;) {
      const next = this.nextDue(end);
      if (!next) return ran;
      this.mono = Math.max(this.mono, next.at);
      this.timers = this.timers.filter((t) => t !== next);
      next.fn();
      ran++;
    }
  }

  private nextDue(limit: number): ManualTimer | undefined {
    this.timers = this.timers.filter((t) => !t.cancelled);
    let best: ManualTimer | undefined;
    for (const t of this.timers) {
      if (t.at > limit) continue;
      if (!best || t.at < best.at || (t.at === best.at && t.seq < best.seq)) best = t;
    }
    return best;
  }
}

export function iso(ms: number): string {
  return new Date(ms).toISOString();
}
