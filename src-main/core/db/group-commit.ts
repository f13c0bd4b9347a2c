/**
 * Group commit: many small writes, one transaction, one fsync.
 *
 * With synchronous=FULL every commit costs an fsync and a WAL write. Agents send many tiny writes
 * (claim, report, heartbeat); committing them one by one would make the disk the bottleneck. The
 * committer collects the operations submitted during one event-loop turn and applies them in ONE
 * immediate transaction (`store.write`), one commit for all of them.
 *
 * Invariants:
 * 1. Operations run in submission order, in one transaction. They are applied sequentially, so a
 *    later op sees every earlier op's effects: two claims in one batch can never take the same task
 *    (P1), a report after a claim sees the lock (P5).
 * 2. A promise settles only after the transaction that ran its op has committed. No caller (and so
 *    no agent) is ever told about a write that could still vanish.
 * 3. Each op is in its own savepoint: the core's `store.write` inside it, which rolls back alone.
 *    A failing op therefore keeps exactly what it would have kept had it run alone: its own write
 *    rolled back, a nested write it committed on purpose (e.g. the `lock.reject` audit row of a
 *    refused report) kept. Its neighbours are not affected; only its own promise rejects.
 *    (`store.batch` adds one more savepoint per op and rolls it back on a throw, which would erase
 *    that audit row; it is not used here. Ops must write through `store.write`, as the core does.)
 * 4. A storage failure (`unavailable`, e.g. disk full) rolls back the whole batch and rejects every
 *    promise in it: nothing in the batch was acknowledged, nothing in it happened.
 * 5. At most `maxBatch` ops go into one transaction, so one commit never holds the write lock long;
 *    the rest follow in the next turn, still in order.
 * 6. A batch of `replayable` ops only (the hub's claim, renew and report) first runs without the
 *    savepoints of invariant 3 (`store.writeUnguarded`: two statements and a sub-journal copy of
 *    every page per op saved). If any op in it fails, that attempt is rolled back whole and the
 *    batch runs again as in invariants 1-4, so what commits and what each promise gets is exactly
 *    what the guarded run gives.
 */
import { GafferError } from '../../common/errors';
import type { Store } from './store';

export interface GroupCommitOptions {
  /** Most ops per transaction (default 256). */
  maxBatch?: number;
  /** How to defer a flush to the end of the current turn (default `setImmediate`). */
  schedule?: (fn: () => void) => void;
}

export interface GroupCommitStats {
  /** Transactions committed (or rolled back) so far. */
  batches: number;
  /** Ops applied so far. */
  ops: number;
  /** Batches of replayable ops that ran guarded after all (invariant 6): one failed, or they were flushed inside a write. */
  replayed: number;
  /** Largest batch seen. */
  largestBatch: number;
}

export interface SubmitOptions {
  /**
   * Invariant 6: the op may run twice, the first time in a transaction that is rolled back: it
   * changes nothing outside the database that a rollback would not undo (caches keyed by the
   * store's epoch are fine), and a failure of one of its writes is never its success.
   */
  replayable?: boolean;
}

interface Pending {
  op: () => unknown;
  replayable: boolean;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}

type Settled = { ok: true; value: unknown } | { ok: false; error: unknown };

/** Invariant 6: after a batch had to run twice, this many batches run guarded at once. */
const GUARDED_AFTER_REPLAY = 16;

const isUnavailable = (e: unknown) => e instanceof GafferError && e.code === 'unavailable';

export class GroupCommitter {
  private queue: Pending[] = [];
  private scheduled = false;
  private closed = false;
  private readonly maxBatch: number;
  private readonly schedule: (fn: () => void) => void;
  private readonly run = () => this.flushOne();
  /** Batches still to run guarded after a replay (invariant 6). */
  private guardedLeft = 0;
  readonly stats: GroupCommitStats = { batches: 0, ops: 0, replayed: 0, largestBatch: 0 };

  constructor(
    private readonly store: Store,
    opts: GroupCommitOptions = {},
  ) {
    this.maxBatch = Math.max(1, opts.maxBatch ?? 256);
    this.schedule = opts.schedule ?? ((fn) => void setImmediate(fn));
  }

  /** Ops waiting for the next commit. */
  get pending(): number {
    return this.queue.length;
  }

  /**
   * Queues `op` (a synchronous function that writes through the store) for the next group commit.
   * Resolves with its return value once that transaction has committed; rejects with what it threw.
   */
  submit<T>(op: () => T, opts?: SubmitOptions): Promise<T> {
    if (this.closed) return Promise.reject(new GafferError('unavailable', 'the scheduler is shutting down'));
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ op, replayable: opts?.replayable === true, resolve: resolve as (v: unknown) => void, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        this.schedule(this.run);
      }
    });
  }

  /** Commits everything queued now, synchronously (used at shutdown). */
  flushAll(): void {
    while (this.queue.length > 0) this.commit(this.queue.splice(0, this.maxBatch));
  }

  /** Commits what is queued, then refuses new ops with `unavailable`. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.flushAll();
    this.closed = true;
  }

  private flushOne(): void {
    this.scheduled = false;
    if (this.queue.length === 0) return;
    const batch = this.queue.length <= this.maxBatch ? this.queue : this.queue.slice(0, this.maxBatch);
    this.queue = batch === this.queue ? [] : this.queue.slice(this.maxBatch);
    // Schedule the remainder before committing, so ops submitted by event listeners during the
    // commit queue up behind it in order.
    if (this.queue.length > 0 && !this.scheduled) {
      this.scheduled = true;
      this.schedule(this.run);
    }
    this.commit(batch);
  }

  private commit(batch: Pending[]): void {
    let results: Settled[];
    try {
      results = this.unguarded(batch) ?? this.guarded(batch);
    } catch (error) {
      this.count(batch.length);
      for (const p of batch) p.reject(error);
      return;
    }
    this.count(batch.length);
    for (let i = 0; i < batch.length; i++) {
      const p = batch[i]!;
      const r = results[i]!;
      if (r.ok) p.resolve(r.value);
      else p.reject(r.error);
    }
  }

  /** Invariant 6: every op of a replayable batch, without savepoints; undefined when one failed (nothing written). */
  private unguarded(batch: Pending[]): Settled[] | undefined {
    if (this.guardedLeft > 0) {
      this.guardedLeft--;
      return undefined;
    }
    for (let i = 0; i < batch.length; i++) if (!batch[i]!.replayable) return undefined;
    const r = this.store.writeUnguarded(() => {
      const out = new Array<Settled>(batch.length);
      for (let i = 0; i < batch.length; i++) out[i] = { ok: true, value: batch[i]!.op() };
      return out;
    });
    if (r === undefined) {
      this.stats.replayed++;
      // An agent whose requests keep failing (stale reports, say) would make every batch run
      // twice: after a failure the next batches go straight to the guarded run.
      this.guardedLeft = GUARDED_AFTER_REPLAY;
    }
    return r?.value;
  }

  private guarded(batch: Pending[]): Settled[] {
    return this.store.write(() => {
      const out = new Array<Settled>(batch.length);
      for (let i = 0; i < batch.length; i++) {
        try {
          out[i] = { ok: true, value: batch[i]!.op() };
        } catch (error) {
          // Invariant 4: a storage failure aborts the whole transaction.
          if (isUnavailable(error)) throw error;
          // Invariant 3: any other failure is this op's alone.
          out[i] = { ok: false, error };
        }
      }
      return out;
    });
  }

  private count(n: number): void {
    this.stats.batches++;
    this.stats.ops += n;
    if (n > this.stats.largestBatch) this.stats.largestBatch = n;
  }
}
