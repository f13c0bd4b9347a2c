/**
 * Notices when the storage is pulled out from under a running Gaffer: the database file, its WAL
 * or the data directory's lock file deleted or replaced. SQLite keeps writing to the file it has
 * open, so without this Gaffer would go on acknowledging writes that vanish when it stops (a
 * deleted WAL), or share the directory with a second Gaffer (a deleted lock).
 *
 * Invariants:
 * 1. A file's identity is its (device, inode) as taken when Gaffer opened or locked it. A file
 *    that is gone, or whose path now names another inode, is a fault.
 * 2. Only `stat` is used: this module never opens the database or its WAL, because closing any
 *    descriptor of a file drops every POSIX lock the process holds on it, SQLite's included.
 * 3. `checkOnWrite` runs after every commit but stats the watched files at most every WAL_CHECK_MS (a
 *    stat costs several µs under load, a claim+report pair makes two commits); `check` stats them
 *    all at once (a slow timer runs it too: while nothing is written nothing is at risk). A commit
 *    into a deleted WAL or database, or beside a deleted lock, is therefore noticed within
 *    WAL_CHECK_MS, and everything committed until then is rescued (invariant 4): only a crash
 *    inside that window can lose it.
 * 4. Rescue happens once, on the first fault, and only adds: a checkpoint copies what the lost WAL
 *    held into the database file, or a new file receives a copy of a lost database. Nothing
 *    existing is overwritten.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Db } from './open';

/** How often the write path looks at the watched files (ms of the injected clock; see invariant 3). */
export const WAL_CHECK_MS = 100;

/** How often the timer looks at them when nothing is written (invariant 3). */
export const STORAGE_CHECK_MS = 5000;

export interface FileIdentity {
  dev: number;
  ino: number;
}

export type WatchedRole = 'database' | 'wal' | 'lock';

export interface StorageFault {
  role: WatchedRole;
  path: string;
  what: 'deleted' | 'replaced';
  /** One line: what happened, what was rescued, what to do. */
  message: string;
  /** True when writes acknowledged before the fault are safe on disk (rescued, or never at risk). */
  safe: boolean;
}

export function fileIdentity(p: string): FileIdentity | undefined {
  const st = fs.statSync(p, { throwIfNoEntry: false });
  return st ? { dev: st.dev, ino: st.ino } : undefined;
}

interface Watched {
  role: WatchedRole;
  path: string;
  identity: FileIdentity | undefined;
}

export interface StorageWatchOptions {
  dbPath: string;
  /** The lock file held for the life of the process (absent when several writers are allowed). */
  lockPath?: string;
  /** Called to stamp the rescue copy's name (ms since the epoch). */
  now: () => number;
}

export class StorageWatch {
  private readonly files: Watched[];
  private walCheckedAt = -Infinity;

  constructor(
    private readonly db: Db,
    private readonly opts: StorageWatchOptions,
  ) {
    const watched = (role: WatchedRole, p: string): Watched => ({ role, path: p, identity: fileIdentity(p) });
    this.files = [watched('database', opts.dbPath), watched('wal', `${opts.dbPath}-wal`), ...(opts.lockPath ? [watched('lock', opts.lockPath)] : [])];
  }

  /** Invariant 3: every watched file, for the write path (at most every WAL_CHECK_MS; a clock step back checks at once). */
  checkOnWrite(): StorageFault | undefined {
    const now = this.opts.now();
    if (now >= this.walCheckedAt && now - this.walCheckedAt < WAL_CHECK_MS) return undefined;
    this.walCheckedAt = now;
    return this.check();
  }

  /** Invariant 3: every watched file; the first fault found (the database before its WAL). */
  check(): StorageFault | undefined {
    for (const f of this.files) {
      const fault = this.compare(f);
      if (fault) return fault;
    }
    return undefined;
  }

  private compare(f: Watched): StorageFault | undefined {
    const now = fileIdentity(f.path);
    if (f.identity === undefined) {
      // Not there when Gaffer started (a WAL appears with the first write): the first one seen is ours.
      f.identity = now;
      return undefined;
    }
    if (now && now.dev === f.identity.dev && now.ino === f.identity.ino) return undefined;
    return this.rescue(f, now ? 'replaced' : 'deleted');
  }

  /** Invariant 4. */
  private rescue(f: Watched, what: StorageFault['what']): StorageFault {
    const name = path.basename(f.path);
    const gone = `${name} was ${what === 'deleted' ? 'deleted' : 'replaced by another file'} while Gaffer was running`;
    if (f.role === 'lock') {
      return { role: f.role, path: f.path, what, safe: true, message: `${gone}: another Gaffer could now open this data directory, so this one stops writing` };
    }
    if (f.role === 'wal') {
      try {
        // The WAL Gaffer still has open holds every commit since the last checkpoint: copy it all into the database.
        this.db.pragma('wal_checkpoint(TRUNCATE)');
        return { role: f.role, path: f.path, what, safe: true, message: `${gone}; everything committed was copied into ${path.basename(this.opts.dbPath)}, nothing acknowledged is lost` };
      } catch (e) {
        return { role: f.role, path: f.path, what, safe: false, message: `${gone}, and copying what it held into the database failed (${(e as Error).message}): the latest writes may be lost` };
      }
    }
    const copy = `${this.opts.dbPath}.rescued-${new Date(this.opts.now()).toISOString().replace(/[:.]/g, '-')}`;
    try {
      this.db.prepare('VACUUM INTO ?').run(copy);
      return { role: f.role, path: f.path, what, safe: true, message: `${gone}; a copy of everything committed was saved as ${copy}: stop Gaffer and put it back as ${name}` };
    } catch (e) {
      return { role: f.role, path: f.path, what, safe: false, message: `${gone}, and saving a copy failed (${(e as Error).message}): writes since the last backup may be lost` };
    }
  }
}
