/**
 * The data directory is private to its user (PROTOCOL §17): the directory 0700, Gaffer's files in
 * it 0600 — the database and its WAL and shared-memory files, the lock and pid files, the
 * clean-close mark, the secrets key, the log segments.
 *
 * Invariants:
 * 1. At start, the directory and every file Gaffer keeps there (names `gaffer.*`, `secrets.key*`,
 *    and everything under `logs/`) are narrowed to those modes if an older version (or a copy)
 *    left them wider. Other files someone put in the directory are left alone.
 * 2. Files are made private when they are created: with an explicit mode, or — for a file SQLite
 *    creates — by `makePrivate` before anything is written to it; SQLite creates a database's
 *    -wal and -shm files with the database file's mode. The shells also run with umask 077
 *    (scripts/lib/umask.mjs), so a file no code here knows of is private as well.
 * 3. Only what this user owns is narrowed, and never a directory with the sticky bit (a shared
 *    directory such as /tmp given as the data directory: its mode is not Gaffer's to change; the
 *    files in it still are 0600). Windows has no such modes.
 */
import fs from 'node:fs';
import path from 'node:path';

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

const posix = process.platform !== 'win32';

const uid = process.getuid?.();

function narrow(p: string, mode: number): void {
  try {
    const st = fs.statSync(p);
    if (st.uid !== uid || (st.isDirectory() && (st.mode & 0o1000) !== 0)) return; // invariant 3
    if ((st.mode & 0o777 & ~mode) !== 0) fs.chmodSync(p, st.mode & mode);
  } catch {
    /* gone meanwhile */
  }
}

/** Invariant 2: a file just created (by SQLite) becomes 0600 before it holds anything. */
export function makePrivate(file: string): void {
  if (posix) narrow(file, PRIVATE_FILE_MODE);
}

/** Creates the directory 0700 if needed (parents as mkdir -p makes them). */
export function makePrivateDir(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  if (posix) narrow(dir, PRIVATE_DIR_MODE);
}

const OURS = /^(gaffer\.|secrets\.key)/;

/** Invariant 1. */
export function secureDataDir(dir: string): void {
  makePrivateDir(dir);
  if (!posix) return;
  const walk = (d: string, all: boolean) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const p = path.join(d, e.name);
      if (e.isDirectory() && (all || e.name === 'logs')) {
        narrow(p, PRIVATE_DIR_MODE);
        walk(p, true);
      } else if (e.isFile() && (all || OURS.test(e.name))) narrow(p, PRIVATE_FILE_MODE);
    }
  };
  walk(dir, false);
}
