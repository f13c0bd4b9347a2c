/**
 * The agent socket's ingest queue: frames that only feed Gaffer's logs and spend (`log`, `usage`,
 * `artifact`, and any large frame) are not handled where they are read, but queued and handled
 * in time-bounded slices, each a turn of the event loop of its own. Between two slices the loop
 * reads the other sockets and commits what they asked for, so another agent's `claim` waits
 * behind at most one short slice of a log flood, never behind a whole loop turn of it (bench/
 * REPORT.md, "ingest-isolation").
 *
 * Invariants:
 * 1. Nothing is dropped and nothing is reordered: items run in the order they were pushed. A
 *    source (one agent connection) that has items waiting has ALL its later items queued behind
 *    them (`holds`), its close included, so each connection's frames reach the hub in the order
 *    they were sent, as before. What a frame promises (a `log` acknowledged once its lines are
 *    on disk) is unchanged: the queue only delays when the hub sees the frame.
 * 2. A slice runs items until `sliceMs` have passed since it began, or until the next item would
 *    take it past `sliceBytes` (at least one item: a frame larger than that is a slice alone), then
 *    yields — bounded in time on a quiet machine and in work whatever the machine's load; the next slice is scheduled at once (`setImmediate` by default: after the loop's
 *    pending I/O, not before it).
 * 3. Back-pressure: while more than `highWaterBytes` wait, each source that pushes is paused (its
 *    socket is no longer read: TCP fills and the sender slows, instead of Gaffer falling behind
 *    in memory); once the queue is at or below `lowWaterBytes` every paused source is resumed.
 *    A source is paused and resumed at most once per episode.
 * 4. Claims' commits go first: a slice that finds work of theirs waiting (`yieldTo`: the group
 *    committer has ops queued, scheduled in the same way, possibly behind this slice) steps aside
 *    once and runs after it — so a claim read in the same turn as a flood's frame commits before
 *    the slice, not behind it. Once only: a steady stream of claims cannot starve the logs.
 */

export interface IngestSource {
  pause(): void;
  resume(): void;
}

export interface IngestQueueOptions {
  /** Longest a slice goes on running items, in ms (default 1: about one 224 KiB log frame). */
  sliceMs?: number;
  /** Most bytes of frames one slice takes, unless its first frame alone is larger (default 256 KiB: one full SDK log frame). */
  sliceBytes?: number;
  /** Above this many bytes waiting, sources that push are paused (default 1 MiB). */
  highWaterBytes?: number;
  /** At or below this many bytes waiting, paused sources are resumed (default 256 KiB). */
  lowWaterBytes?: number;
  /** Milliseconds, monotonic (default `performance.now`). */
  now?: () => number;
  /** Runs `fn` in a later turn of the event loop (default `setImmediate`). */
  schedule?: (fn: () => void) => void;
  /**
   * Work that goes first is waiting (invariant 4: the claims' group commit); the slice steps aside
   * once, behind it.
   */
  yieldTo?: () => boolean;
}

export interface IngestQueueStats {
  /** Items run so far. */
  items: number;
  /** Slices run so far. */
  slices: number;
  /** Times a source was paused (invariant 3). */
  pauses: number;
  /** Most bytes that waited at once. */
  peakBytes: number;
  /** Slices that stepped aside for the claims' commit (invariant 4). */
  stepsAside: number;
}

interface Item {
  source: IngestSource;
  bytes: number;
  run: () => void;
}

export class IngestQueue {
  private items: Item[] = [];
  private head = 0;
  private bytes = 0;
  /** Items waiting per source (invariant 1). */
  private readonly waiting = new Map<IngestSource, number>();
  private readonly paused = new Set<IngestSource>();
  private scheduled = false;
  /** Invariant 4: the slice now scheduled has stepped aside once already. */
  private steppedAside = false;
  private readonly sliceMs: number;
  private readonly sliceBytes: number;
  private readonly high: number;
  private readonly low: number;
  private readonly now: () => number;
  private readonly schedule: (fn: () => void) => void;
  private readonly yieldTo: () => boolean;
  private readonly runSlice = () => this.slice();
  readonly stats: IngestQueueStats = { items: 0, slices: 0, pauses: 0, peakBytes: 0, stepsAside: 0 };

  constructor(opts: IngestQueueOptions = {}) {
    this.sliceMs = opts.sliceMs ?? 1;
    this.sliceBytes = opts.sliceBytes ?? 256 * 1024;
    this.high = opts.highWaterBytes ?? 1024 * 1024;
    this.low = Math.min(opts.lowWaterBytes ?? 256 * 1024, this.high);
    this.now = opts.now ?? (() => performance.now());
    this.schedule = opts.schedule ?? ((fn) => void setImmediate(fn));
    this.yieldTo = opts.yieldTo ?? (() => false);
  }

  /** Bytes waiting. */
  get queuedBytes(): number {
    return this.bytes;
  }

  /** True while `source` has items waiting: its next item must be pushed too (invariant 1). */
  holds(source: IngestSource): boolean {
    return this.waiting.has(source);
  }

  /** Queues `run` (one frame of `bytes`, or 0 for a close) from `source`. */
  push(source: IngestSource, bytes: number, run: () => void): void {
    this.items.push({ source, bytes, run });
    this.bytes += bytes;
    this.waiting.set(source, (this.waiting.get(source) ?? 0) + 1);
    if (this.bytes > this.stats.peakBytes) this.stats.peakBytes = this.bytes;
    if (this.bytes > this.high && !this.paused.has(source)) {
      this.paused.add(source);
      this.stats.pauses++;
      source.pause();
    }
    if (!this.scheduled) {
      this.scheduled = true;
      this.schedule(this.runSlice);
    }
  }

  /** Forgets a source that is gone (its items still run; it is not resumed). */
  drop(source: IngestSource): void {
    this.paused.delete(source);
  }

  private slice(): void {
    if (!this.steppedAside && this.yieldTo()) {
      this.steppedAside = true; // invariant 4: still scheduled, now behind what goes first
      this.stats.stepsAside++;
      this.schedule(this.runSlice);
      return;
    }
    this.steppedAside = false;
    this.scheduled = false;
    const start = this.now();
    this.stats.slices++;
    let taken = 0;
    try {
      do {
        const item = this.items[this.head]!;
        taken += item.bytes;
        this.items[this.head++] = undefined as unknown as Item;
        this.bytes -= item.bytes;
        const left = this.waiting.get(item.source)! - 1;
        if (left === 0) this.waiting.delete(item.source);
        else this.waiting.set(item.source, left);
        this.stats.items++;
        // A handler that throws fails as it would have where the frame was read; the queue goes on.
        item.run();
      } while (this.head < this.items.length && taken + this.items[this.head]!.bytes <= this.sliceBytes && this.now() - start < this.sliceMs);
    } finally {
      this.afterSlice();
    }
  }

  private afterSlice(): void {
    if (this.head === this.items.length) {
      this.items = [];
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    if (this.bytes <= this.low && this.paused.size > 0) {
      const resumed = [...this.paused];
      this.paused.clear();
      for (const s of resumed) s.resume();
    }
    if (this.head < this.items.length && !this.scheduled) {
      this.scheduled = true;
      this.schedule(this.runSlice);
    }
  }
}

/** Bytes of a frame's start searched for its `type` (the SDK writes `id` and `type` first). */
const TYPE_WINDOW = 256;
/** Frames at least this large are queued whatever their type: reading them is the cost. */
const LARGE_FRAME_BYTES = 16 * 1024;
const INGEST_TYPES = ['"type":"log"', '"type":"usage"', '"type":"artifact"'].map((t) => Buffer.from(t));

/**
 * Whether a frame only feeds logs / spend and may wait for a slice: a `log`, `usage` or
 * `artifact` frame (found in its first bytes, without parsing it), or any large frame. A frame
 * this misreads is still handled exactly as before, only earlier or later (invariant 1).
 */
export function isIngestFrame(bytes: Buffer): boolean {
  if (bytes.length >= LARGE_FRAME_BYTES) return true;
  const head = bytes.length > TYPE_WINDOW ? bytes.subarray(0, TYPE_WINDOW) : bytes;
  for (const t of INGEST_TYPES) if (head.includes(t)) return true;
  return false;
}
