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
 * 5. A writable open proves it can write before it returns: a file SQLite would only read (its
 *    header says a newer format, or the OS refuses) is refused with one clear line, untouched.
 * 6. With `refuseIfOpenElsewhere`, a database another connection holds open (another Gaffer whose
 *    lock file was deleted, or a tool reading it) is refused before anything is read or written.
 * 7. Opening a database Gaffer itself closed cleanly costs the same with ten rows or ten million:
 *    it reads the header and the schema, never a whole table or index (start-up stays under 2 s on
 *    a big database, `npm run bench -- startup`). Any other file — one left by a crash, written by
 *    something else, or changed since — is read whole first (`quick_check`) and refused, untouched,
 *    when it is damaged (invariant 2). Which is which: `closeDatabase` leaves a clean-close mark
 *    naming the file exactly as it was left (inode, size, modification time); a writable open
 *    removes the mark before it writes, so a crash from then on leaves none.
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import { GafferError } from '../../common/errors';
import { makePrivate, makePrivateDir, PRIVATE_FILE_MODE } from './data-dir';
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
  /** Invariant 6: the caller is meant to be the only process with this database open. */
  refuseIfOpenElsewhere?: boolean;
}

export function openDatabase(file: string, opts: OpenOptions = {}): Db {
  if (file !== ':memory:') makePrivateDir(path.dirname(file));
  if (file !== ':memory:' && !opts.readonly) assertWritable(file);
  // SQLite takes an empty file for a new database: a truncated one would be silently replaced.
  if (file !== ':memory:' && fs.existsSync(file) && fs.statSync(file).size === 0 && !fs.existsSync(`${file}-wal`)) {
    throw new GafferError(
      'unavailable',
      `database ${file} is empty (0 bytes): it may have been truncated. It was left untouched; restore a backup, or delete it to start a new database.`,
    );
  }
  if (file !== ':memory:' && opts.refuseIfOpenElsewhere && !opts.readonly && fs.existsSync(file)) assertNotOpenElsewhere(file, opts.nativeBinding);
  // Invariant 7: only a file exactly as Gaffer left it at a clean close skips the whole-file check.
  const deepCheck = file !== ':memory:' && !opts.readonly && fs.existsSync(file) && !leftCleanly(file);
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
    // Forces a read of the header and the whole schema (invariant 7: nothing more): a foreign or
    // damaged file fails here, loudly, before anything (even the journal mode) is written to it.
    db.prepare('SELECT count(*) FROM sqlite_schema').pluck().get();
    if (deepCheck) {
      const check = db.pragma('quick_check', { simple: true });
      if (check !== 'ok') throw new Error(`damaged: ${String(check)}`);
    }
    if (!opts.readonly) {
      if (file !== ':memory:') fs.rmSync(cleanMarkPath(file), { force: true });
      // 0600 before anything is written: the WAL and shared-memory files take this mode (data-dir.ts).
      if (file !== ':memory:') makePrivate(file);
      db.pragma(`page_size = ${NEW_DATABASE_PAGE_SIZE}`);
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = FULL');
      assertWritesWork(db, file);
      migrate(db);
    }
  } catch (e) {
    db.close();
    if (e instanceof GafferError) throw e;
    // One line: SQLite's messages may span several lines.
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

/**
 * Invariant 6. A connection in exclusive locking mode must take an exclusive lock on the file to
 * begin a transaction; every other connection to the database (in WAL mode, for as long as it is
 * open) holds a shared lock, so BUSY means someone else has it open. Nothing is written.
 */
function assertNotOpenElsewhere(file: string, nativeBinding?: string): void {
  let probe: Db | undefined;
  try {
    probe = new Database(file, { fileMustExist: true, ...(nativeBinding ? { nativeBinding } : {}) });
    probe.pragma('busy_timeout = 0');
    probe.pragma('locking_mode = EXCLUSIVE');
    probe.exec('BEGIN EXCLUSIVE');
    probe.exec('ROLLBACK');
  } catch (e) {
    const code = (e as { code?: string }).code ?? '';
    if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) {
      throw new GafferError(
        'unavailable',
        `database ${file} is open in another process (another Gaffer whose gaffer.lock was deleted, or a tool such as sqlite3): stop it, then start again`,
      );
    }
    // Anything else (a corrupt file, …) is for the real open to report.
  } finally {
    probe?.close();
  }
}

/**
 * Invariant 5: a write is made and rolled back (nothing reaches the file), or the open fails.
 * BEGIN IMMEDIATE alone is not enough: SQLite grants it on a file it will not write.
 */
function assertWritesWork(db: Db, file: string): void {
  try {
    db.exec('BEGIN IMMEDIATE');
    db.pragma(`user_version = ${db.pragma('user_version', { simple: true }) as number}`);
    db.exec('ROLLBACK');
  } catch (e) {
    if (db.inTransaction) db.exec('ROLLBACK');
    const version = file === ':memory:' ? undefined : headerWriteVersion(file);
    if (version !== undefined && version > 2) {
      throw new GafferError(
        'unavailable',
        `database ${file} is read-only: its header says file format write version ${version} (byte 18), which this SQLite cannot write. It was left untouched; open it with the SQLite that wrote it, or restore a backup.`,
      );
    }
    throw new GafferError('unavailable', `database ${file} is read-only (${(e as Error).message}). It was left untouched; make it writable for this user and start again.`);
  }
}

/**
 * Byte 18 of the header, the format's write version: SQLite opens a file whose write version it
 * does not know (> 2) read-only, without an error. Read only on the way to refusing the file:
 * closing a descriptor drops the process's POSIX locks on it, SQLite's included.
 */
function headerWriteVersion(file: string): number | undefined {
  try {
    const fd = fs.openSync(file, 'r');
    try {
      const header = Buffer.alloc(19);
      return fs.readSync(fd, header, 0, 19, 0) === 19 && header.toString('latin1', 0, 16) === 'SQLite format 3\0' ? header[18] : undefined;
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return undefined;
  }
}

/** Where the clean-close mark of `file` lives (invariant 7). */
export function cleanMarkPath(file: string): string {
  return `${file}-closed`;
}

interface CleanMark {
  ino: number;
  size: number;
  mtimeMs: number;
}

function markOf(file: string): CleanMark {
  const st = fs.statSync(file);
  return { ino: st.ino, size: st.size, mtimeMs: Math.trunc(st.mtimeMs) };
}

/** The file is exactly as a clean close left it: its mark matches, and no WAL is waiting. */
function leftCleanly(file: string): boolean {
  try {
    if (fs.existsSync(`${file}-wal`) && fs.statSync(`${file}-wal`).size > 0) return false;
    const mark = JSON.parse(fs.readFileSync(cleanMarkPath(file), 'utf8')) as CleanMark;
    const now = markOf(file);
    return mark.ino === now.ino && mark.size === now.size && mark.mtimeMs === now.mtimeMs;
  } catch {
    return false; // no mark, or one that cannot be read: check the file
  }
}

/**
 * Closes a writable connection. With `clean` (the caller saw no storage fault) and the WAL folded
 * back into the file, leaves the clean-close mark so the next open may skip the whole-file check.
 */
export function closeDatabase(db: Db, file: string, opts: { clean: boolean }): void {
  db.close();
  if (file === ':memory:' || !opts.clean) return;
  try {
    if (fs.existsSync(`${file}-wal`)) return; // another connection still has it open: no mark
    fs.writeFileSync(cleanMarkPath(file), JSON.stringify(markOf(file)), { mode: PRIVATE_FILE_MODE });
  } catch {
    /* no mark: the next open checks the whole file */
  }
}

/**
 * SQLite's quick_check: reads every page of the database (seconds on a big one), for tools and
 * crash tests; a start runs it only on a file not closed cleanly (invariant 7). Throws a one-line
 * error naming what is damaged.
 */
export function integrityCheck(db: Db): void {
  const check = db.pragma('quick_check', { simple: true });
  if (check !== 'ok') throw new GafferError('unavailable', `integrity check failed: ${String(check).replace(/\s*\n\s*/g, '; ').slice(0, 300)}`);
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
    // PRAGMA foreign_keys is a no-op inside a transaction: it is switched around it.
    if (step.rebuildsReferencedTable) db.pragma('foreign_keys = OFF');
    try {
      db.transaction(() => {
        db.exec(step.sql);
        step.run?.(db);
        if (step.rebuildsReferencedTable && (db.pragma('foreign_key_check') as unknown[]).length > 0) {
          throw new GafferError('unavailable', `migration ${step.name} left rows pointing at nothing; the database was left as it was`);
        }
        db.pragma(`user_version = ${v + 1}`);
      }).immediate();
    } finally {
      if (step.rebuildsReferencedTable) db.pragma('foreign_keys = ON');
    }
  }
}
