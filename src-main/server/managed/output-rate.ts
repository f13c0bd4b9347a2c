/**
 * What Gaffer reads of a managed process's output, per second: a chatty command (`yes`) must not
 * cost Gaffer a core. Gaffer keeps only the last lines of each process (the supervisor's
 * `outputLines`), so most of a flood would be thrown away anyway — at the price of splitting it.
 *
 * Invariants (one OutputRate per process, both streams together; a window is one second of `now`):
 * 1. Of each window's bytes, the first `keepBytesPerS` are kept (split into lines as usual); the
 *    rest is dropped unread-as-lines and counted.
 * 2. Once `readBytesPerS` were read in a window, reading pauses until the window ends: the pipe
 *    fills and the command waits on its own writes (back-pressure), so a flood costs Gaffer a
 *    bounded number of reads per second. Below that rate the command never waits.
 * 3. What was dropped is said, once, in a line of its own ("N bytes of output dropped …") before
 *    the next kept output, or when the stream ends.
 */

export interface OutputRateLimits {
  keepBytesPerS: number;
  readBytesPerS: number;
}

export const DEFAULT_OUTPUT_RATE: OutputRateLimits = { keepBytesPerS: 64 * 1024, readBytesPerS: 1024 * 1024 };

const WINDOW_MS = 1000;

export interface Admitted {
  /** How many bytes of the chunk, from its start, to keep. */
  keep: number;
  /** > 0: pause reading for this long (invariant 2). */
  pauseMs: number;
}

export class OutputRate {
  private windowStart = -Infinity;
  private read = 0;
  private kept = 0;
  /** Dropped and not yet said (invariant 3). */
  private unsaid = 0;
  /** Totals, for the operator and the tests. */
  totalKept = 0;
  totalDropped = 0;

  constructor(
    private readonly now: () => number,
    private readonly limits: OutputRateLimits = DEFAULT_OUTPUT_RATE,
  ) {}

  admit(bytes: number): Admitted {
    const t = this.now();
    if (t - this.windowStart >= WINDOW_MS) {
      this.windowStart = t;
      this.read = 0;
      this.kept = 0;
    }
    this.read += bytes;
    const keep = Math.max(0, Math.min(bytes, this.limits.keepBytesPerS - this.kept));
    this.kept += keep;
    this.totalKept += keep;
    this.totalDropped += bytes - keep;
    this.unsaid += bytes - keep;
    const pauseMs = this.read >= this.limits.readBytesPerS ? Math.max(1, this.windowStart + WINDOW_MS - t) : 0;
    return { keep, pauseMs };
  }

  /** The line that says what was dropped since it was last said, if anything was (invariant 3). */
  takeDroppedNotice(): string | undefined {
    if (this.unsaid === 0) return undefined;
    const n = this.unsaid;
    this.unsaid = 0;
    return `[gaffer: ${n} bytes of output dropped: more than ${this.limits.keepBytesPerS} bytes a second is not kept]`;
  }
}
