/**
 * Checkpoints off the commit path. SQLite's automatic checkpoint runs inside the commit that takes
 * the WAL past its threshold (1 000 pages by default): that commit copies the WAL into the
 * database file and fsyncs it, on the thread that serves claims (a 1 000-job burst writes ~5 MB of
 * WAL, so at least one of its commits did, bench/REPORT.md "burst5"). Here a thread of its own
 * (checkpoint-worker.ts), on its own connection, does that copy and fsync with PASSIVE checkpoints
 * once commits have stopped for 500 ms, or the oldest not yet copied has waited 2 s. Not sooner: a
 * checkpoint after every short pause (50 ms / 250 ms, tried first) ran many small ones — each two
 * fsyncs and pages copied again and again — and cost the spread shape ~1.3× the CPU per trigger.
 *
 * Invariants:
 * 1. A checkpoint never blocks or fails a commit: the thread's checkpoints are PASSIVE (they take
 *    only the checkpoint lock, which a commit never waits for; a commit meanwhile goes on in the
 *    WAL), and what it sees go wrong is logged, never thrown into the write path.
 * 2. The WAL stays bounded: the main connection keeps an automatic checkpoint as a backstop, at
 *    WAL_BACKSTOP_BYTES instead of ~2 MB. The thread alone would not bound it: under writes that
 *    never pause each of its checkpoints ends behind the newest commit, and SQLite starts the WAL
 *    over only once a checkpoint copied all of it (a test without the backstop: 45 MB of WAL after
 *    40 MB written). With it, the thread copies most of the WAL and the backstop's checkpoint (in a
 *    commit) the rest; it is skipped while the thread holds the checkpoint lock, so the WAL file
 *    stays under the backstop plus what commits write during one of the thread's checkpoints —
 *    under twice the backstop (checkpointer.test.ts). While a reader holds an old snapshot no
 *    checkpoint can finish, as before.
 * 3. Durability is SQLite's: the thread's connection is synchronous=FULL (the WAL is synced before
 *    the copy and the database file after it, before any frame may be written over); a crash at any
 *    point (kill -9) leaves a WAL that the next open recovers.
 * 4. The main connection closes last: `stop()` waits for the thread to close its connection, so the
 *    main connection's close folds the WAL back, deletes it and leaves the clean-close mark (open.ts).
 * 5. Without the thread (it could not start, or it died) the main connection's automatic checkpoint
 *    is put back at SQLite's default.
 * 6. The commit path's only cost is one atomic add per outermost commit (`Store.afterCommit`).
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { CTL_SLOTS, Ctl, State, type CheckpointWorkerData } from './checkpoint-ctl';
import { CHECKPOINT_WORKER_JS } from './checkpoint-worker';
import type { Db } from './open';

/** The main connection's automatic checkpoint while the thread runs (invariant 2), in bytes of WAL. */
export const WAL_BACKSTOP_BYTES = 16 * 1024 * 1024;
/** SQLite's default automatic checkpoint (pages), put back without the thread (invariant 5). */
export const DEFAULT_AUTOCHECKPOINT_PAGES = 1000;
/**
 * The thread's nice value on Linux: none. It is nearly all I/O wait, and it holds locks of the WAL
 * index (shared with the main connection) while it works: a niced thread preempted while holding one
 * on a busy machine would make the thread that serves claims wait for it (priority inversion).
 */
export const CHECKPOINT_NICE = 0;

export interface CheckpointOptions {
  tickMs?: number;
  idleMs?: number;
  maxDelayMs?: number;
  /** The backstop (invariant 2), bytes of WAL. */
  backstopBytes?: number;
  /** Tests: each checkpoint that copied frames. */
  onCheckpoint?: (c: { log: number; copied: number; ms: number }) => void;
}

export interface CheckpointerDeps {
  db: Db;
  dbPath: string;
  nativeBinding?: string | undefined;
  /** Registers the commit hook (Store.afterCommit). */
  afterCommit: (fn: () => void) => void;
  /** What went wrong in the thread (one line each; logged, never thrown). */
  onError: (message: string) => void;
}

/** How long `stop()` waits for the thread to close its connection (invariant 4; then the main one closes anyway, leaving the WAL for the next open). */
const STOP_WAIT_MS = 10_000;

export class Checkpointer {
  private readonly ctl = new Int32Array(new SharedArrayBuffer(CTL_SLOTS * 4));
  private worker: Worker | undefined;
  private stopped = false;

  constructor(
    private readonly deps: CheckpointerDeps,
    private readonly opts: CheckpointOptions = {},
  ) {
    const ctl = this.ctl;
    deps.afterCommit(() => void Atomics.add(ctl, Ctl.Commits, 1));
  }

  start(): void {
    if (this.worker || this.stopped || this.deps.dbPath === ':memory:') return;
    const { db, dbPath, nativeBinding } = this.deps;
    const data: CheckpointWorkerData = {
      dbPath,
      sqlitePath: createRequire(import.meta.url).resolve('better-sqlite3'),
      ...(nativeBinding ? { nativeBinding } : {}),
      ctl: this.ctl.buffer as SharedArrayBuffer,
      tickMs: this.opts.tickMs ?? 50,
      idleMs: this.opts.idleMs ?? 500,
      maxDelayMs: this.opts.maxDelayMs ?? 2000,
      report: this.opts.onCheckpoint !== undefined,
      nice: CHECKPOINT_NICE,
    };
    const pageSize = db.pragma('page_size', { simple: true }) as number;
    db.pragma(`wal_autocheckpoint = ${Math.max(DEFAULT_AUTOCHECKPOINT_PAGES, Math.floor((this.opts.backstopBytes ?? WAL_BACKSTOP_BYTES) / pageSize))}`);
    const w = new Worker(CHECKPOINT_WORKER_JS, { eval: true, workerData: data });
    this.worker = w;
    w.unref();
    w.on('message', (m: { done?: { log: number; copied: number; ms: number }; error?: string }) => {
      if (m.done) this.opts.onCheckpoint?.(m.done);
      if (m.error) this.deps.onError(`checkpoints: ${m.error}`);
    });
    w.on('error', (e) => this.deps.onError(`checkpoint thread failed: ${e.message}`));
    w.on('exit', () => {
      if (this.stopped || this.worker !== w) return;
      // Invariant 5: SQLite's own checkpoint in the commit again.
      this.worker = undefined;
      try {
        db.pragma(`wal_autocheckpoint = ${DEFAULT_AUTOCHECKPOINT_PAGES}`);
      } catch {
        /* the connection is closed */
      }
    });
  }

  /** Invariant 4: returns once the thread's connection is closed (or it never opened one). */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    if (!this.worker) return;
    const ctl = this.ctl;
    Atomics.store(ctl, Ctl.Stop, 1);
    Atomics.notify(ctl, Ctl.Stop);
    if (Atomics.compareExchange(ctl, Ctl.State, State.Starting, State.Cancelled) === State.Starting) {
      void this.worker.terminate();
      return;
    }
    const until = Date.now() + STOP_WAIT_MS;
    while (Atomics.load(ctl, Ctl.State) !== State.Closed && Date.now() < until) Atomics.wait(ctl, Ctl.State, State.Open, 100);
  }
}
