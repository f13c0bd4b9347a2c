/**
 * Checkpoints off the commit path (checkpointer.ts): commits do not copy the WAL into the database
 * file, a thread of its own does; the WAL stays bounded under writes that never pause; the main
 * connection still closes last (the WAL folded back and deleted, the clean-close mark left).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createCore, type Core } from '../create-core';
import { tempDir } from '../tests/test-core';
import type { CheckpointOptions } from './checkpointer';
import { cleanMarkPath } from './open';

const opened: Core[] = [];
afterEach(() => {
  for (const c of opened.splice(0)) c.close();
});

function start(checkpoints?: CheckpointOptions) {
  const dir = tempDir();
  const errors: string[] = [];
  const core = createCore({ dataDir: dir, logger: { info() {}, warn() {}, error: (m) => void errors.push(m) }, ...(checkpoints ? { checkpoints } : {}) });
  opened.push(core);
  core.start();
  core.db.exec('CREATE TABLE IF NOT EXISTS filler (id INTEGER PRIMARY KEY, body BLOB NOT NULL)');
  const dbFile = path.join(dir, 'gaffer.db');
  /** One commit of `kb` KB of new rows (each row its own pages). */
  const commit = (kb: number) =>
    core.store.write(() => {
      const ins = core.db.prepare('INSERT INTO filler (body) VALUES (randomblob(?))');
      for (let i = 0; i < kb; i++) ins.run(1000);
    });
  return { core, dir, dbFile, errors, commit };
}

const size = (f: string) => fs.statSync(f, { throwIfNoEntry: false })?.size ?? 0;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: () => boolean, ms = 10_000): Promise<void> {
  for (const end = Date.now() + ms; !what(); ) {
    if (Date.now() > end) throw new Error('timed out');
    await sleep(10);
  }
}

describe('checkpoints off the commit path', () => {
  it('commits writing 6 MB of WAL (three times SQLite’s default checkpoint) leave the database file alone: no commit copies the WAL into it', () => {
    // The thread never checkpoints here (it would only after a 1000 s pause): what the database file gets, a commit put there.
    const { dbFile, commit } = start({ idleMs: 1e6, maxDelayMs: 1e6 });
    commit(1);
    const before = fs.statSync(dbFile);
    for (let i = 0; i < 60; i++) commit(100);
    const after = fs.statSync(dbFile);
    expect(after.size).toBe(before.size);
    expect(after.mtimeMs).toBe(before.mtimeMs);
  });

  it('the thread copies everything once commits pause, and the WAL starts over at the next commit', async () => {
    const done: Array<{ log: number; copied: number }> = [];
    const { core, dbFile, commit } = start({ idleMs: 50, maxDelayMs: 1e6, onCheckpoint: (c) => void done.push(c) });
    await sleep(300); // the thread is up
    const before = size(dbFile);
    for (let i = 0; i < 20; i++) commit(100); // ~2 MB of WAL, no pause of 50 ms
    await until(() => done.length > 0);
    const last = done.at(-1)!;
    expect(last.copied).toBe(last.log);
    expect(last.log).toBeGreaterThan(900);
    expect(size(dbFile)).toBeGreaterThan(before + 1_500_000);
    commit(1);
    // Fully copied, so this commit's frames went to the start of the WAL: a PASSIVE checkpoint now sees only them.
    const [row] = core.db.pragma('wal_checkpoint(PASSIVE)') as Array<{ log: number }>;
    expect(row!.log).toBeLessThan(10);
  });

  it('under writes that never pause the WAL file stays bounded: under twice the backstop (the backstop, plus what commits wrote while the thread held the checkpoint lock)', async () => {
    const { dir, commit, errors } = start({ backstopBytes: 4 * 1024 * 1024 });
    await sleep(300);
    const wal = path.join(dir, 'gaffer.db-wal');
    let largest = 0;
    for (let i = 0; i < 400; i++) {
      commit(100); // 40 MB in all, ~100 KB a commit
      largest = Math.max(largest, size(wal));
      if (i % 20 === 0) await sleep(0); // the test's own timers; no pause the thread could take for idle
    }
    expect(largest).toBeGreaterThan(1_000_000);
    expect(largest).toBeLessThan(2 * 4 * 1024 * 1024);
    expect(errors).toEqual([]);
  });

  it('a close waits for the thread: the main connection closes last, the WAL is folded back and deleted, the clean-close mark left', async () => {
    const { core, dir, dbFile, commit } = start({ idleMs: 1, maxDelayMs: 1, tickMs: 1 });
    await sleep(300);
    for (let i = 0; i < 50; i++) commit(10);
    opened.splice(opened.indexOf(core), 1);
    core.close();
    expect(fs.existsSync(path.join(dir, 'gaffer.db-wal'))).toBe(false);
    expect(fs.existsSync(cleanMarkPath(dbFile))).toBe(true);
  });

  it('a core closed before its thread ran closes cleanly too', () => {
    const { core, dir, dbFile, commit } = start();
    commit(10);
    opened.splice(opened.indexOf(core), 1);
    core.close();
    expect(fs.existsSync(path.join(dir, 'gaffer.db-wal'))).toBe(false);
    expect(fs.existsSync(cleanMarkPath(dbFile))).toBe(true);
  });
});
