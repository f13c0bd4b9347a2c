/**
 * Single writer per data directory. A second Gaffer on the same directory must refuse to start.
 *
 * The lock is an exclusive SQLite lock on `gaffer.lock` held for the life of the process: the OS
 * drops it when the process dies (even on kill -9), so there is no stale-pid cleanup to get wrong.
 * The pid file is only there to make the refusal message useful.
 *
 * A lock file can be deleted under a running Gaffer; a second one would then lock a new file of
 * the same name. Two defences: the running Gaffer watches the lock file's identity and stops
 * writing when it changes (storage-watch.ts), and a starting Gaffer refuses a database another
 * process still has open (`refuseIfOpenElsewhere` in open.ts).
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import { GafferError } from '../../common/errors';
import { makePrivate, makePrivateDir, PRIVATE_FILE_MODE } from './data-dir';

export interface WriterLock {
  /** The locked file (its identity is watched for as long as the lock is held). */
  readonly path: string;
  release(): void;
}

export function acquireWriterLock(dataDir: string, nativeBinding?: string): WriterLock {
  makePrivateDir(dataDir);
  const lockPath = path.join(dataDir, 'gaffer.lock');
  const pidPath = path.join(dataDir, 'gaffer.pid');
  const db = new Database(lockPath, nativeBinding ? { nativeBinding } : {});
  makePrivate(lockPath);
  try {
    db.pragma('busy_timeout = 0');
    db.pragma('journal_mode = DELETE');
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('CREATE TABLE IF NOT EXISTS holder (pid INTEGER)');
    db.exec('BEGIN EXCLUSIVE');
    db.exec('DELETE FROM holder');
    db.prepare('INSERT INTO holder (pid) VALUES (?)').run(process.pid);
    db.exec('COMMIT');
  } catch (e) {
    db.close();
    let other = '';
    try {
      other = ` (pid ${fs.readFileSync(pidPath, 'utf8').trim()})`;
    } catch {
      /* no pid file: message without it */
    }
    const code = (e as { code?: string }).code ?? '';
    if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) {
      throw new GafferError('unavailable', `another Gaffer is already running on ${dataDir}${other}; stop it or use --data-dir`);
    }
    throw new GafferError('unavailable', `cannot lock data directory ${dataDir}: ${(e as Error).message}`);
  }
  fs.writeFileSync(pidPath, `${process.pid}\n`, { mode: PRIVATE_FILE_MODE });
  return {
    path: lockPath,
    release() {
      if (!db.open) return;
      db.close();
      try {
        fs.rmSync(pidPath, { force: true });
      } catch {
        /* best effort */
      }
    },
  };
}
