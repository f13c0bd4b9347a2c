/** Small, allocation-free limiters used by the hub. Time comes from the caller (the core clock). */

/** A token bucket: `ratePerSecond` sustained, `burst` at once. */
export class TokenBucket {
  private tokens: number;
  private last: number;

  constructor(
    private readonly ratePerSecond: number,
    private readonly burst: number,
    now: number,
  ) {
    this.tokens = burst;
    this.last = now;
  }

  /** Takes `n` tokens (default one) if there are that many; otherwise takes none. */
  take(now: number, n = 1): boolean {
    // A wall clock stepping backwards must not drain or overfill the bucket.
    const elapsed = Math.max(0, now - this.last);
    this.last = now;
    this.tokens = Math.min(this.burst, this.tokens + (elapsed * this.ratePerSecond) / 1000);
    if (this.tokens < n) return false;
    this.tokens -= n;
    return true;
  }
}

/**
 * Caps how many audit rows one kind of unauthenticated noise (a foreign page knocking, a bad
 * token retried in a loop) can write: at most `max` per `windowMs` per key. What is suppressed is
 * counted and reported on the next row that gets through, so the log still tells the whole story.
 */
export class AuditThrottle {
  private readonly windows = new Map<string, { start: number; used: number; suppressed: number }>();

  constructor(
    private readonly max = 30,
    private readonly windowMs = 60_000,
  ) {}

  /** Returns the number of suppressed rows to report if this one may be written, else undefined. */
  admit(key: string, now: number): number | undefined {
    let w = this.windows.get(key);
    if (!w || now - w.start >= this.windowMs || now < w.start) {
      const suppressed = w?.suppressed ?? 0;
      w = { start: now, used: 0, suppressed };
      this.windows.set(key, w);
    }
    if (w.used >= this.max) {
      w.suppressed++;
      return undefined;
    }
    w.used++;
    const s = w.suppressed;
    w.suppressed = 0;
    return s;
  }
}

/**
 * Live connections per key (an agent token) under a cap (PROTOCOL §17: 64 sockets per token), so
 * one valid token cannot take every place of the global cap. `take` and `release` pair up: the
 * caller releases exactly the places it took.
 */
export class PerKeyCap {
  private readonly counts = new Map<string, number>();

  constructor(readonly max: number) {}

  count(key: string): number {
    return this.counts.get(key) ?? 0;
  }

  full(key: string): boolean {
    return this.count(key) >= this.max;
  }

  /** Takes a place for `key`; false (nothing taken) when it already holds `max`. */
  take(key: string): boolean {
    const n = this.count(key);
    if (n >= this.max) return false;
    this.counts.set(key, n + 1);
    return true;
  }

  release(key: string): void {
    const n = this.count(key) - 1;
    if (n > 0) this.counts.set(key, n);
    else this.counts.delete(key);
  }
}

/** The refusal of a token's socket past its cap (HTTP 429 at the upgrade, or close 4429 at `hello`). */
export const tooManyForToken = (max: number) => `this agent token already holds ${max} sockets, the most one token may hold at once: close one, or give this agent a token of its own`;
