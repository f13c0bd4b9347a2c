/**
 * Opening the database.
 *
 * Invariants:
 * 1. WAL with synchronous=FULL: a commit Gaffer has acknowledged survives a crash *and* a power
 *    loss (WAL + NORMAL may lose the last commits on power loss).
 * 2. A file that is not a valid database is reported with a clear error, never recreated.
 * 3. Migrations run in order, each in its own transaction, and `user_version` records the last one.
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import { GafferError } from '../../common/errors';
import { MIGRATIONS } from './migrations';

export type Db = Database.Database;

export interface OpenOptions {
  /** Path to the native binding (Electron ships its own ABI build). */
  nativeBinding?: string;
  readonly?: boolean;
  /** How long a writer waits for another process's write lock (ms). */
  busyTimeoutMs?: number;
}

export function openDatabase(file: string, opts: OpenOptions = {}): Db {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
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
    if (!opts.readonly) {
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = FULL');
    }
    db.pragma('foreign_keys = ON');
    // Forces a read of the header and schema: a corrupt or foreign file fails here, loudly.
    const check = db.pragma('quick_check', { simple: true });
    if (check !== 'ok') throw new Error(`integrity check failed: ${String(check)}`);
    if (!opts.readonly) migrate(db);
  } catch (e) {
    db.close();
    if (e instanceof GafferError) throw e;
    const msg = (e as Error).message;
    throw new GafferError(
      'unavailable',
      `database ${file} is not usable (${msg}). It was left untouched; restore a backup or move it aside.`,
    );
  }
  return db;
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
      db.pragma(`user_version = ${v + 1}`);
    }).immediate();
  }
}
