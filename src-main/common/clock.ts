/**
 * Time is injected. Core code never calls Date.now() or setTimeout directly: it takes a Clock,
 * so tests can travel hours in milliseconds with `ManualClock` and jumps can be simulated.
 *
 * A Clock has two timelines, like the operating system:
 * - the wall clock (`now()`), which can be stepped (NTP, an operator, a laptop waking up);
 * - a monotonic clock (`monotonic()`, and every timer), which never steps. On Linux and macOS it
 *   does not advance while the machine is suspended; it does advance while the process is
 *   stopped (SIGSTOP) or the event loop is blocked.
 */
export interface TimerHandle {
  cancel(): void;
}

export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** Milliseconds on a timeline that never steps (arbitrary origin, one per process). */
  monotonic(): number;
  /** Runs `fn` once after `ms` of monotonic time. */
  setTimeout(fn: () => void, ms: number): TimerHandle;
  /**
   * Runs `fn` once the input that had already arrived when it was called has been read, and the
   * writes that input caused (group commit) have committed. A timer that decides liveness or a
   * deadline defers its decision with this: after a stall, Node runs every expired timer before
   * it reads the sockets, so without it a timer would judge an agent whose answer is waiting in
   * the socket.
   */
  afterIo(fn: () => void): void;
}

/** Wall time that follows the monotonic clock from `clock.now()` at the call: immune to steps within this process. */
export function steadyTime(clock: Pick<Clock, 'now' | 'monotonic'>): () => number {
  const wall = clock.now();
  const mono = clock.monotonic();
  return () => wall + (clock.monotonic() - mono);
}

export const systemClock: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
  afterIo(fn) {
    // An immediate queued now (timers phase) runs after this loop turn's poll phase, which reads
    // the sockets; the group commit of what was read is itself an immediate queued during that
    // poll phase, so it runs after ours. The second hop lands in the next turn, after both.
    setImmediate(() => setImmediate(fn));
  },
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
 * - `advance(ms)` lets time pass: every timer that falls due runs, in due order, each seeing
 *   `now()` at its due instant; what it deferred with `afterIo` runs right after it (no input
 *   was waiting).
 * - `jump(ms)` steps the wall clock only (a laptop sleep, an NTP step, a manual change): no timer
 *   runs, just as Node's monotonic timers do not fire during suspend. Timers set before the jump
 *   still fire after their original monotonic delay.
 * - `stall(ms, io)` blocks the event loop for `ms` (SIGSTOP, a long synchronous task): both clocks
 *   move, then — as Node does on waking — every expired timer runs late, then `io` (what the
 *   sockets delivered meanwhile), then what that input queued on the real loop (the hub's group
 *   commit is an immediate), and only then — two real turns later, like `systemClock.afterIo` —
 *   what the timers deferred with `afterIo`. The promise it returns settles after that.
 */
export class ManualClock implements Clock {
  private mono = 0;
  private offset: number;
  private seq = 0;
  private timers: ManualTimer[] = [];
  private deferred: Array<() => void> = [];
  /** Inside `advance`/`stall`: deferred work runs at the end of the current phase. */
  private dispatching = false;

  constructor(start: number | string = '2026-11-30T08:00:00.000Z') {
    this.offset = typeof start === 'number' ? start : Date.parse(start);
  }

  now(): number {
    return this.mono + this.offset;
  }

  monotonic(): number {
    return this.mono;
  }

  afterIo(fn: () => void): void {
    this.deferred.push(fn);
    // Called outside a timer (a socket callback of a test): run it once the real loop is free.
    if (!this.dispatching && this.deferred.length === 1) setImmediate(() => this.runDeferred());
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
    this.runDue(target);
    this.mono = Math.max(this.mono, target);
  }

  /** Blocks the event loop for `ms`, then wakes as Node does (see the class comment). */
  stall(ms: number, io: () => void = () => {}): Promise<void> {
    this.mono += Math.max(0, ms);
    this.dispatch(() => {
      for (;;) {
        const next = this.nextDue(this.mono);
        if (!next) break;
        this.fire(next);
      }
      io();
    });
    // The deferred decisions wait for what `io` queued: as the real clock's, two real immediates.
    return new Promise((resolve) =>
      setImmediate(() =>
        setImmediate(() => {
          this.runDeferred();
          resolve();
        }),
      ),
    );
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
    return this.runDue(this.mono + limitMs);
  }

  /** Runs the timers due up to monotonic `limit` on time, in due order; returns how many ran. */
  private runDue(limit: number): number {
    let ran = 0;
    this.dispatch(() => {
      for (;;) {
        const next = this.nextDue(limit);
        if (!next) return;
        this.mono = Math.max(this.mono, next.at);
        this.fire(next);
        this.runDeferred();
        ran++;
      }
    });
    return ran;
  }

  private dispatch(body: () => void): void {
    const outer = this.dispatching;
    this.dispatching = true;
    try {
      body();
    } finally {
      this.dispatching = outer;
    }
  }

  private fire(t: ManualTimer): void {
    this.timers = this.timers.filter((x) => x !== t);
    t.fn();
  }

  private runDeferred(): void {
    while (this.deferred.length > 0) {
      const batch = this.deferred;
      this.deferred = [];
      for (const fn of batch) fn();
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
