/**
 * `ctx.usage` for one attempt (a task's claim or a run's attempt): the reports a handler makes are
 * sent as at most one `usage` frame per `intervalMs`, each summing the increments made meanwhile.
 * A CLI adapter reports usage per message; each frame is a durable write at Gaffer (its commit
 * shares the disk with every claim), so a burst of reports costs one frame, not one per message.
 * The wire format is unchanged: a coalesced frame is an ordinary `usage` frame.
 *
 * Invariants:
 * 1. Nothing is lost or counted twice: the increments of one frame are the sum of the reports it
 *    stands for, and Gaffer's totals after the frames equal its totals after the reports one by one.
 *    Increments are summed only with others of the same model and the same kind (a cost given or
 *    not, estimated or not), so a frame that Gaffer prices (tokens, no cost) never hides a given cost.
 * 2. A `final` report (the attempt's totals) is a barrier: the increments before it go first, it goes
 *    alone, the ones after it go after it — the order Gaffer sees them in is the order they were made.
 * 3. The first report after a quiet `intervalMs` goes at once; one frame is in flight at a time.
 * 4. Each report's promise settles with the frame that carried it: the attempt's running total
 *    Gaffer answered, or that frame's refusal.
 * 5. `flush()` sends everything waiting now, without the interval, and resolves once every report
 *    made before it settled: the attempt calls it before its report / `run_result`.
 */
import type { UsageTotals } from '../common/logs';

/** A `usage` report: increments, summed by Gaffer. */
export interface UsageInput {
  inputTokens?: number;
  outputTokens?: number;
  costUsd?: number;
  model?: string;
  /** The part of `inputTokens` read from / written to the prompt cache (PROTOCOL §14). */
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
  /** The cost is an estimate; Gaffer prices tokens with a `model` and no `costUsd` from its price table. */
  estimated?: boolean;
  /** The attempt's totals: they replace what was reported so far (a CLI's own final cost), once. */
  final?: boolean;
}

const SUMMED = ['inputTokens', 'outputTokens', 'costUsd', 'cacheReadTokens', 'cacheWriteTokens'] as const;

interface Waiting {
  u: UsageInput;
  settle: Array<{ resolve: (t: UsageTotals) => void; reject: (e: unknown) => void }>;
}

/** One group of the queue: increments by kind (invariant 1), or one final report (invariant 2). */
type Group = { final: false; byKind: Map<string, Waiting> } | { final: true; item: Waiting };

/**
 * What increments may be summed into one frame: the same model, priced the same way (a cost of
 * their own, or tokens for Gaffer to price) and equally estimated. A frame's cost stands for all its
 * tokens, so summing a priced and an unpriced increment would leave part of them unpriced.
 */
export const usageKind = (u: UsageInput) => `${u.model ?? ''}\u0000${u.costUsd !== undefined ? 1 : 0}${u.estimated ? 1 : 0}`;

function add(into: UsageInput, u: UsageInput): void {
  for (const k of SUMMED) {
    const v = u[k];
    if (v !== undefined) into[k] = (into[k] ?? 0) + v;
  }
}

export interface UsageCoalescerOptions {
  /** Least time between two frames of the attempt (default 250 ms). */
  intervalMs?: number;
  /** Timers (default the global ones): tests pass their own. */
  now?: () => number;
  setTimer?: (fn: () => void, ms: number) => { cancel(): void };
}

export const USAGE_INTERVAL_MS = 250;

export class UsageCoalescer {
  private readonly groups: Group[] = [];
  private pump: Promise<void> | undefined;
  private lastSentAt = -Infinity;
  private flushing = 0;
  private wake: (() => void) | undefined;
  private readonly intervalMs: number;
  private readonly now: () => number;
  private readonly setTimer: (fn: () => void, ms: number) => { cancel(): void };
  /** Frames sent so far (for tests and the bench). */
  frames = 0;

  constructor(
    private readonly send: (u: UsageInput) => Promise<UsageTotals>,
    opts: UsageCoalescerOptions = {},
  ) {
    this.intervalMs = opts.intervalMs ?? USAGE_INTERVAL_MS;
    this.now = opts.now ?? (() => performance.now());
    this.setTimer =
      opts.setTimer ??
      ((fn, ms) => {
        const t = setTimeout(fn, ms);
        return { cancel: () => clearTimeout(t) };
      });
  }

  /** Queues one report; settles with the frame that carries it (invariant 4). */
  report(u: UsageInput): Promise<UsageTotals> {
    return new Promise<UsageTotals>((resolve, reject) => {
      const who = { resolve, reject };
      const last = this.groups[this.groups.length - 1];
      if (u.final) this.groups.push({ final: true, item: { u: { ...u }, settle: [who] } });
      else {
        let g = last && !last.final ? last : undefined;
        if (!g) this.groups.push((g = { final: false, byKind: new Map() }));
        const key = usageKind(u);
        const w = g.byKind.get(key);
        if (w) {
          add(w.u, u);
          w.settle.push(who);
        } else g.byKind.set(key, { u: { ...u }, settle: [who] });
      }
      this.pump ??= this.drain();
    });
  }

  /** Invariant 5. */
  async flush(): Promise<void> {
    this.flushing++;
    try {
      this.wake?.();
      while (this.pump) await this.pump;
    } finally {
      this.flushing--;
    }
  }

  private next(): Waiting | undefined {
    const g = this.groups[0];
    if (!g) return undefined;
    if (g.final) {
      this.groups.shift();
      return g.item;
    }
    const first = g.byKind.entries().next();
    if (first.done) {
      this.groups.shift();
      return this.next();
    }
    g.byKind.delete(first.value[0]);
    if (g.byKind.size === 0) this.groups.shift();
    return first.value[1];
  }

  /** Waits out the rest of the interval since the last frame, unless flushing (invariant 3). */
  private pause(): Promise<void> {
    const left = this.lastSentAt + this.intervalMs - this.now();
    if (left <= 0 || this.flushing > 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = this.setTimer(() => done(), left);
      const done = () => {
        timer.cancel();
        this.wake = undefined;
        resolve();
      };
      this.wake = done;
    });
  }

  private async drain(): Promise<void> {
    try {
      for (;;) {
        if (this.groups.length === 0) return;
        await this.pause();
        const w = this.next();
        if (!w) return;
        this.lastSentAt = this.now();
        this.frames++;
        try {
          const totals = await this.send(w.u);
          for (const s of w.settle) s.resolve(totals);
        } catch (e) {
          for (const s of w.settle) s.reject(e);
        }
      }
    } finally {
      this.pump = undefined;
    }
  }
}
