/**
 * Opening the database.
 *
 * Invariants:
 * 1. WAL with synchronous=FULL: a commit Gaffer has acknowledged survives a crash *and* a power
 *    loss (WAL + NORMAL may lose the last commits on power loss).
 * 2. A file that is not a valid database, or that cannot be written, is reported with a clear
 *    error, never recreated or opened half-way.
 * 3. Migrations run in order, each in its own transaction, and `user_version` records the last one.
 * 4. A new database uses NEW_DATABASE_PAGE_SIZE; an existing one keeps the page size it was made with.
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import { GafferError } from '../../common/errors';
import { MIGRATIONS } from './migrations';

export type Db = Database.Database;

/**
 * Page size of a new database. A claim writes four B-tree pages (task row, claimable index, lock
 * row, audit row) and a report three, each a WAL frame that is checksummed, written and fsynced at
 * commit; 2 KiB frames cost less than the default 4 KiB ones on every commit (`npm run bench`,
 * core: about 2 points of the bare-pair ratio). A typical task or audit row is a few hundred
 * bytes; a big payload spills to overflow pages, as it would at 4 KiB, only sooner. SQLite
 * ignores the setting for a database that already has pages.
 */
export const NEW_DATABASE_PAGE_SIZE = 2048;

export interface OpenOptions {
  /** Path to the native binding (Electron ships its own ABI build). */
  nativeBinding?: string;
  readonly?: boolean;
  /** How long a writer waits for another process's write lock (ms). */
  busyTimeoutMs?: number;
}

export function openDatabase(file: string, opts: OpenOptions = {}): Db {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
  if (file !== ':memory:' && !opts.readonly) assertWritable(file);
  // SQLite takes an empty file for a new database: a truncated one would be silently replaced.
  if (file !== ':memory:' && fs.existsSync(file) && fs.statSync(file).size === 0 && !fs.existsSync(`${file}-wal`)) {
    throw new GafferError(
      'unavailable',
      `database ${file} is empty (0 bytes): it may have been truncated. It was left untouched; restore a backup, or delete it to start a new database.`,
    );
  }
  let db: Db;
  try {
    db = new Database(file, {
      readonly: opts.readonly ?? false,
      ...(opts.nativeBinding ? { nativeBinding: opts.nativeBinding } : {}),
    });
  } catch (e) {
    throw new GafferError('unavailable', `cannot open database ${file}: ${(e as Error).message}`);
  }
  try {
    db.pragma(`busy_timeout = ${opts.busyTimeoutMs ?? 5000}`);
    db.pragma('foreign_keys = ON');
    // Forces a read of the header and schema: a corrupt or foreign file fails here, loudly, before
    // anything (even the journal mode in the header) is written to it.
    const check = db.pragma('quick_check', { simple: true });
    if (check !== 'ok') throw new Error(`integrity check failed: ${String(check)}`);
    if (!opts.readonly) {
      db.pragma(`page_size = ${NEW_DATABASE_PAGE_SIZE}`);
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = FULL');
      migrate(db);
    }
  } catch (e) {
    db.close();
    if (e instanceof GafferError) throw e;
    // One line: quick_check reports span several lines.
    const msg = (e as Error).message.replace(/\s*\n\s*/g, '; ').slice(0, 300);
    throw new GafferError(
      'unavailable',
      `database ${file} is not usable (${msg}). It was left untouched; restore a backup or move it aside.`,
    );
  }
  return db;
}

/**
 * SQLite silently falls back to a read-only connection when it cannot write the file; Gaffer would
 * then start and refuse every write. Say so at start instead (invariant 2: the file is untouched).
 */
function assertWritable(file: string): void {
  for (const p of [path.dirname(file), file, `${file}-wal`, `${file}-shm`]) {
    if (p !== path.dirname(file) && !fs.existsSync(p)) continue;
    try {
      fs.accessSync(p, fs.constants.W_OK);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code ?? 'error';
      throw new GafferError(
        'unavailable',
        `database ${file} is read-only: ${p} is not writable (${code}). It was left untouched; make it writable for this user (or mount the disk read-write) and start again.`,
      );
    }
  }
}

export function migrate(db: Db): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > MIGRATIONS.length) {
    throw new GafferError(
      'unavailable',
      `database schema version ${current} is newer than this Gaffer (${MIGRATIONS.length}); upgrade Gaffer`,
    );
  }
  for (let v = current; v < MIGRATIONS.length; v++) {
    const step = MIGRATIONS[v]!;
    db.transaction(() => {
      db.exec(step.sql);
      step.run?.(db);
      db.pragma(`user_version = ${v + 1}`);
    }).immediate();
  }
}
