/**
 * The write path. Every state change goes through `write()`.
 *
 * Invariants:
 * 1. The outermost write is one IMMEDIATE transaction: it takes the write lock up front, so two
 *    processes never interleave read-then-write (no lost updates, no double claims).
 * 2. A nested write is a SAVEPOINT: it rolls back alone, so a group commit can fail one request
 *    without failing its neighbours.
 * 3. Events are emitted only after the outermost commit; events from a rolled-back write vanish.
 * 4. Storage failures (disk full, read-only file, I/O error) surface as `unavailable`: the write
 *    did not happen and nothing was acknowledged. The first failure of an episode, and the first
 *    commit after it, are reported through `onStorage` (the core logs them).
 * 5. `epoch` changes whenever what this process last wrote may no longer be the database's state:
 *    after every rollback (outer or savepoint) and, when other processes may write too
 *    (`sharedWriters`), when one of them committed since our last write. Caches of rows this
 *    process wrote (the audit tail) are valid only within one epoch.
 * 6. A storage fault (a file pulled out from under us: storage-watch.ts) is sticky: from the moment
 *    it is declared every write is refused with `unavailable` until the process restarts. The
 *    write path asks the watch about the WAL after each outermost commit, before the write is
 *    acknowledged (the watch stats it every WAL_CHECK_MS): a commit found to have gone to a
 *    deleted WAL is acknowledged only if the rescue made it durable.
 * 7. `writeUnguarded` is the group committer's fast path: its nested writes open no savepoint. A
 *    nested write that throws there (even one its caller catches) would have needed its savepoint,
 *    so the whole transaction is rolled back and the caller told to run it again, guarded.
 */
import { GafferError } from '../../common/errors';
import type { StorageStatus } from '../../common/model';
import type { Db } from './open';
import type { StorageFault } from './storage-watch';
import type { CoreEvent, CoreEventType, EventBus } from '../events';

const STORAGE_ERRORS = new Set(['SQLITE_FULL', 'SQLITE_READONLY', 'SQLITE_IOERR', 'SQLITE_CANTOPEN', 'SQLITE_CORRUPT', 'SQLITE_NOTADB']);

export function isStorageError(e: unknown): boolean {
  const code = (e as { code?: unknown })?.code;
  return typeof code === 'string' && [...STORAGE_ERRORS].some((c) => code.startsWith(c));
}

/** What the operator should do about a storage error (disk full resumes by itself; the rest need a hand). */
export function storageFailureHint(error: unknown): string {
  const code = (error as { code?: string } | undefined)?.code ?? '';
  return code.startsWith('SQLITE_FULL')
    ? 'free some disk space: writes resume by themselves'
    : 'the disk or the file is read-only or failing: fix it, then restart Gaffer';
}

export type StorageState = 'failing' | 'recovered' | 'fault';

/** The parts of StorageWatch the store uses (storage-watch.ts). */
export interface StorageCheck {
  checkOnWrite(): StorageFault | undefined;
  check(): StorageFault | undefined;
}

/** Thrown inside an unguarded write to roll it back (invariant 7); never leaves the store. */
const NEEDS_GUARD = Symbol('needs a savepoint');

export class Store {
  private pending: CoreEvent[] = [];
  private depth = 0;
  /** Invariant 7: inside `writeUnguarded`, and whether a nested write threw there. */
  private unguarded = false;
  private unguardedFailed = false;
  private tx: (((f: () => unknown) => unknown) & { immediate(f: () => unknown): unknown }) | undefined;

  /** Set after a storage failure, until a write commits again. */
  private failing: { error: Error; since: number } | undefined;
  /** Invariant 6. */
  private faultValue: { fault: StorageFault; since: number } | undefined;
  private watch: StorageCheck | undefined;
  private changesStmt: ReturnType<Db['prepare']> | undefined;
  private epochValue = 0;
  private readonly dataVersion: { get(): unknown } | undefined;
  private lastDataVersion = -1;
  private readonly commitListeners: Array<() => void> = [];

  constructor(
    readonly db: Db,
    private readonly bus: EventBus,
    /**
     * Called once when storage starts refusing writes (with the error), once when it recovers, and
     * once when a storage fault is declared (with the fault).
     */
    private readonly onStorage: (state: StorageState, error?: Error, fault?: StorageFault) => void = () => {},
    /** True when other processes may write to the same database (tests racing processes). */
    sharedWriters = false,
    /** The core's clock (when a failure or fault began). */
    private readonly now: () => number = () => 0,
  ) {
    // `data_version` changes when another connection commits; read inside our write transaction.
    if (sharedWriters) this.dataVersion = db.prepare('PRAGMA data_version').pluck();
  }

  /** See invariant 5. */
  get epoch(): number {
    return this.epochValue;
  }

  private totalChanges(): number {
    return (this.changesStmt ??= this.db.prepare('SELECT total_changes()').pluck()).get() as number;
  }

  /** Watches the database, WAL and lock files (invariant 6); the write path checks the WAL from now on. */
  watchStorage(watch: StorageCheck): void {
    this.watch = watch;
  }

  /** Checks every watched file (a timer calls this); true while storage is sound. */
  checkStorage(): boolean {
    if (this.faultValue) return false;
    const fault = this.watch?.check();
    if (fault) this.declareFault(fault);
    return fault === undefined;
  }

  /** The storage fault, once declared (invariant 6). */
  get fault(): StorageFault | undefined {
    return this.faultValue?.fault;
  }

  /** Why writes are being refused right now, or null. */
  status(): StorageStatus | null {
    if (this.faultValue) {
      return { state: 'fault', message: `${this.faultValue.fault.message}. Writes are refused until Gaffer is restarted.`, since: new Date(this.faultValue.since).toISOString() };
    }
    if (this.failing) {
      return { state: 'failing', message: `Storage refuses writes (${this.failing.error.message}): ${storageFailureHint(this.failing.error)}.`, since: new Date(this.failing.since).toISOString() };
    }
    return null;
  }

  private declareFault(fault: StorageFault): void {
    if (this.faultValue) return;
    this.faultValue = { fault, since: this.now() };
    this.onStorage('fault', undefined, fault);
    this.storageChanged();
  }

  /** Not tied to a transaction: the console hears at once that writes are (no longer) refused. */
  private storageChanged(): void {
    this.bus.emit({ type: 'storage.changed', storage: this.status() });
  }

  /** True when an event of `type` would reach a listener (see EventBus.has). */
  wants(type: CoreEventType): boolean {
    return this.bus.has(type);
  }

  /**
   * Calls `fn` after every outermost commit, before its events are emitted (the audit head record,
   * head-record.ts). It must be cheap and must not throw: the commit is already acknowledged.
   */
  afterCommit(fn: () => void): void {
    this.commitListeners.push(fn);
  }

  /** Queues an event to be emitted once the surrounding transaction commits. */
  emit(event: CoreEvent): void {
    if (this.depth === 0) throw new Error('Store.emit outside a write');
    this.pending.push(event);
  }

  write<T>(fn: () => T): T {
    const mark = this.pending.length;
    const outermost = this.depth === 0;
    // One wrapper for every write: better-sqlite3 decides BEGIN vs SAVEPOINT at call time, and
    // building a wrapper per call was a tenth of the hub's hot path.
    const tx = (this.tx ??= this.db.transaction((f: () => unknown) => {
      if (this.dataVersion && this.depth === 1) this.noticeOtherWriters();
      return f();
    }));
    if (outermost && this.faultValue) {
      throw new GafferError('unavailable', `storage fault: ${this.faultValue.fault.message}; writes are refused until Gaffer is restarted`);
    }
    if (!outermost && this.unguarded) return this.nestedUnguarded(fn);
    let value: T;
    // While storage is failing, only a commit that really wrote something proves it recovered.
    const probe = outermost && this.failing ? this.totalChanges() : undefined;
    this.depth++;
    try {
      value = (outermost ? tx.immediate(fn) : tx(fn)) as T;
    } catch (e) {
      this.pending.length = mark;
      this.epochValue++;
      if (!isStorageError(e)) throw e;
      if (!this.failing) {
        this.failing = { error: e as Error, since: this.now() };
        this.onStorage('failing', e as Error);
        this.storageChanged();
      }
      throw new GafferError('unavailable', `storage refused the write: ${(e as Error).message}`);
    } finally {
      this.depth--;
    }
    if (outermost) {
      this.checkStorageAfterCommit();
      if (probe !== undefined && this.totalChanges() > probe) {
        this.failing = undefined;
        this.onStorage('recovered');
        this.storageChanged();
      }
      for (const fn of this.commitListeners) fn();
      this.flush();
    }
    return value;
  }

  /**
   * Invariant 7: an outermost write whose nested writes take no savepoint (a SAVEPOINT and its
   * RELEASE are two statements, and every page a savepoint touches is copied to its sub-journal).
   * Returns `{value}` once committed; `undefined` when called inside a write (nothing ran), or when
   * `fn` or a nested write threw anything but `unavailable`: then nothing was written (rolled back, a new epoch) and the caller runs `fn`
   * again with `write`, where each nested write rolls back alone. So `fn` must be safe to run twice:
   * nothing it changes outside the database may outlive a rollback (caches keyed by the epoch are).
   */
  writeUnguarded<T>(fn: () => T): { value: T } | undefined {
    // Inside a write already (a flush at shutdown from within one): it cannot roll back alone, so
    // the caller runs `fn` the guarded way, nested as it always was.
    if (this.depth !== 0) return undefined;
    this.unguarded = true;
    this.unguardedFailed = false;
    try {
      return this.write(() => {
        let value: T;
        try {
          value = fn();
        } catch (e) {
          if (e instanceof GafferError && e.code === 'unavailable') throw e;
          throw NEEDS_GUARD;
        }
        // A nested write failed and its caller carried on: without its savepoint, what it wrote
        // before the throw would be committed.
        if (this.unguardedFailed) throw NEEDS_GUARD;
        return { value };
      });
    } catch (e) {
      if (e === NEEDS_GUARD) return undefined;
      throw e;
    } finally {
      this.unguarded = false;
      this.unguardedFailed = false;
    }
  }

  private nestedUnguarded<T>(fn: () => T): T {
    const mark = this.pending.length;
    this.depth++;
    try {
      return fn();
    } catch (e) {
      this.unguardedFailed = true;
      this.pending.length = mark;
      throw e;
    } finally {
      this.depth--;
    }
  }

  /**
   * Runs several operations in ONE transaction (one fsync), each in its own savepoint.
   * Returns one settled result per operation, in order. Used for group commit.
   */
  batch<T>(ops: ReadonlyArray<() => T>): Array<{ ok: true; value: T } | { ok: false; error: unknown }> {
    return this.write(() =>
      ops.map((op) => {
        try {
          return { ok: true as const, value: this.write(op) };
        } catch (error) {
          if (error instanceof GafferError && error.code === 'unavailable') throw error;
          return { ok: false as const, error };
        }
      }),
    );
  }

  /** Invariant 6: a commit into a lost WAL is acknowledged only once it was rescued. */
  private checkStorageAfterCommit(): void {
    const fault = this.watch?.checkOnWrite();
    if (!fault) return;
    this.declareFault(fault);
    if (fault.safe) return;
    this.pending = [];
    throw new GafferError('unavailable', `storage fault: ${fault.message}; this write may not survive a restart`);
  }

  private noticeOtherWriters(): void {
    const v = this.dataVersion!.get() as number;
    if (v !== this.lastDataVersion) {
      this.lastDataVersion = v;
      this.epochValue++;
    }
  }

  private flush(): void {
    const events = this.pending;
    this.pending = [];
    for (const e of events) this.bus.emit(e);
  }
}
