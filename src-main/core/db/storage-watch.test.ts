/**
 * Storage pulled out from under a running core: the WAL, the database file or the lock file
 * deleted or replaced. Each is noticed, writes stop being acknowledged, and nothing that was
 * acknowledged is lost.
 */
import Database from 'better-sqlite3';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../common/clock';
import type { Logger } from '../../common/logger';
import type { StorageStatus } from '../../common/model';
import { createCore, type Core } from '../create-core';
import { errorOf, tempDir } from '../tests/test-core';
import { STORAGE_CHECK_MS, WAL_CHECK_MS } from './storage-watch';
import { checkInvariants } from '../tests/invariants';

const opened: Core[] = [];
afterEach(() => {
  for (const c of opened.splice(0)) c.close();
});

function recordingLogger(): Logger & { errors: string[] } {
  const errors: string[] = [];
  return { errors, info() {}, warn() {}, error: (m) => void errors.push(m) };
}

function start(dir = tempDir()) {
  const clock = new ManualClock();
  const logger = recordingLogger();
  const core = createCore({ clock, dataDir: dir, logger });
  opened.push(core);
  const changes: Array<StorageStatus | null> = [];
  core.events.on('storage.changed', (e) => changes.push(e.storage));
  core.start();
  const create = (title: string) => core.tasks.create({ title, role: 'dev' }, { actor: 'test' }).task;
  return { core, clock, logger, changes, create, dir };
}


/** A core on `dir` that must refuse to start: its error. */
const startRefused = (dir: string) => errorOf(() => opened.push(createCore({ dataDir: dir })));

describe('a healthy database is never taken for a faulty one', () => {
  it('writes, checkpoints and timer checks leave the files as they are', () => {
    const { core, clock, create } = start();
    for (let i = 0; i < 50; i++) create(`t${i}`);
    core.db.pragma('wal_checkpoint(TRUNCATE)'); // empties the WAL, keeps the file
    for (let i = 0; i < 50; i++) create(`u${i}`);
    clock.advance(10_000);
    expect(core.store.fault).toBeUndefined();
    expect(core.store.status()).toBeNull();
  });
});

describe('the WAL deleted while running', () => {
  it('is noticed by the write path within WAL_CHECK_MS: what was committed is rescued into the database, every later write refused; one log line, one event', () => {
    const { core, clock, logger, changes, create, dir } = start();
    create('before');
    fs.rmSync(path.join(dir, 'gaffer.db-wal'));
    // Within WAL_CHECK_MS of the last look, a commit goes to the WAL SQLite still has open, unnoticed …
    expect(create('unnoticed').title).toBe('unnoticed');
    expect(core.store.fault).toBeUndefined();
    // … the next commit after it looks, finds the WAL gone and rescues both into the database.
    clock.advance(WAL_CHECK_MS);
    expect(create('first after').title).toBe('first after');
    expect(core.store.fault).toMatchObject({ role: 'wal', what: 'deleted', safe: true });
    const err = errorOf(() => create('second after'));
    expect(err.code).toBe('unavailable');
    expect(err.message).toMatch(/^storage fault: gaffer\.db-wal was deleted while Gaffer was running; everything committed was copied into gaffer\.db, nothing acknowledged is lost; writes are refused until Gaffer is restarted$/);
    expect(core.tasks.list({}).items.map((t) => t.title)).toEqual(['before', 'unnoticed', 'first after']); // reads work
    expect(logger.errors).toEqual([
      'storage fault: gaffer.db-wal was deleted while Gaffer was running; everything committed was copied into gaffer.db, nothing acknowledged is lost; writes are refused with 503 unavailable until Gaffer is restarted, reads still work',
    ]);
    expect(changes).toEqual([{ state: 'fault', message: expect.stringMatching(/Writes are refused until Gaffer is restarted\.$/), since: expect.any(String) }]);
    expect(core.store.status()).toEqual(changes[0]);
  });

  it('after a kill -9, every acknowledged write is there (a real process)', () => {
    const dir = tempDir();
    const script = `import fs from 'node:fs';
      import { createCore } from ${JSON.stringify(path.resolve(__dirname, '../create-core.ts'))};
      const core = createCore({ dataDir: ${JSON.stringify(dir)} });
      const acked = [];
      const create = (t) => { try { core.tasks.create({ title: t, role: 'dev' }, { actor: 'x' }); acked.push(t); } catch (e) { console.log('REFUSED ' + t + ' ' + e.code); } };
      for (let i = 0; i < 5; i++) create('before ' + i);
      fs.rmSync(${JSON.stringify(path.join(dir, 'gaffer.db-wal'))});
      create('right after'); // noticed or not (the last look may be under WAL_CHECK_MS ago): acknowledged either way
      await new Promise((r) => setTimeout(r, ${WAL_CHECK_MS + 20}));
      create('after the look'); // refused if 'right after' noticed; else it notices, is rescued and acknowledged
      create('later');
      console.log('ACKED ' + JSON.stringify(acked));
      process.kill(process.pid, 'SIGKILL');`;
    const out = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(out.signal, out.stderr).toBe('SIGKILL');
    const acked = JSON.parse(/ACKED (.*)/.exec(out.stdout)![1]!) as string[];
    expect(acked.slice(0, 6)).toEqual(['before 0', 'before 1', 'before 2', 'before 3', 'before 4', 'right after']);
    expect(acked.length).toBeLessThanOrEqual(7);
    expect(out.stdout).toContain('REFUSED later unavailable');
    const again = createCore({ dataDir: dir });
    opened.push(again);
    expect(again.tasks.list({}).items.map((t) => t.title)).toEqual(acked);
    expect(checkInvariants(again.db)).toEqual([]);
  });
});

describe('the database file deleted or replaced while running', () => {
  it('is noticed by the timer; a copy of everything committed is saved beside it, nothing is overwritten', () => {
    const { core, clock, create, dir } = start();
    for (let i = 0; i < 3; i++) create(`t${i}`);
    const dbPath = path.join(dir, 'gaffer.db');
    fs.renameSync(dbPath, `${dbPath}.moved-away`);
    fs.writeFileSync(dbPath, 'someone else put a file here');
    clock.advance(STORAGE_CHECK_MS);
    const fault = core.store.fault!;
    expect(fault).toMatchObject({ role: 'database', what: 'replaced', safe: true });
    const copy = /saved as (\S+):/.exec(fault.message)![1]!;
    expect(path.dirname(copy)).toBe(dir);
    expect(fs.readFileSync(dbPath, 'utf8')).toBe('someone else put a file here');
    const rescued = new Database(copy, { readonly: true });
    expect(rescued.prepare('SELECT title FROM tasks ORDER BY id').pluck().all()).toEqual(['t0', 't1', 't2']);
    rescued.close();
    expect(errorOf(() => create('later')).code).toBe('unavailable');
  });
});

describe('the database file replaced while writes go on', () => {
  it('is noticed by the next commit, not only by the timer', () => {
    const { core, clock, create, dir } = start();
    create('t0');
    const dbPath = path.join(dir, 'gaffer.db');
    fs.renameSync(dbPath, `${dbPath}.moved-away`);
    fs.writeFileSync(dbPath, 'someone else put a file here');
    clock.advance(WAL_CHECK_MS); // the write path's look interval, far short of the timer's
    create('t1');
    expect(core.store.fault).toMatchObject({ role: 'database', what: 'replaced', safe: true });
    expect(errorOf(() => create('later')).code).toBe('unavailable');
  });
});

describe('the lock file deleted while running', () => {
  it('is noticed by the timer and writes stop; a second core cannot open the database meanwhile', () => {
    const { core, clock, create, dir, logger } = start();
    create('kept');
    fs.rmSync(path.join(dir, 'gaffer.lock'));
    // A second Gaffer now gets a lock of its own, but the database is still open here: refused.
    expect(startRefused(dir).message).toMatch(/gaffer\.db is open in another process \(another Gaffer whose gaffer\.lock was deleted, or a tool such as sqlite3\): stop it, then start again$/);
    clock.advance(STORAGE_CHECK_MS);
    // The refused second core made a new gaffer.lock: the one this core locked is gone either way.
    expect(core.store.fault).toMatchObject({ role: 'lock', what: 'replaced' });
    expect(errorOf(() => create('not kept')).code).toBe('unavailable');
    const faultLines = () => logger.errors.filter((l) => l.startsWith('storage fault'));
    expect(faultLines()).toEqual([expect.stringMatching(/^storage fault: gaffer\.lock was replaced by another file while Gaffer was running: another Gaffer could now open this data directory, so this one stops writing;/)]);
    // One line per fault: the check stops once it has found one.
    clock.advance(60_000);
    expect(faultLines()).toHaveLength(1);
  });
});

describe('refusing to start on a database that cannot be written', () => {
  const sha = (f: string) => createHash('sha256').update(fs.readFileSync(f)).digest('hex');

  it('a header that marks the file read-only (write version byte 18 > 2): one clear line, the file untouched', () => {
    const dir = tempDir();
    const first = createCore({ dataDir: dir });
    first.tasks.create({ title: 'kept', role: 'dev' }, { actor: 'test' });
    first.close();
    const dbPath = path.join(dir, 'gaffer.db');
    const bytes = fs.readFileSync(dbPath);
    bytes[18] = 3;
    fs.writeFileSync(dbPath, bytes);
    const digest = sha(dbPath);
    const err = startRefused(dir);
    expect(err.code).toBe('unavailable');
    expect(err.message).toBe(
      `database ${dbPath} is read-only: its header says file format write version 3 (byte 18), which this SQLite cannot write. It was left untouched; open it with the SQLite that wrote it, or restore a backup.`,
    );
    expect(sha(dbPath)).toBe(digest);
    // The lock was given back: with the header mended, it starts.
    bytes[18] = 2;
    fs.writeFileSync(dbPath, bytes);
    const mended = createCore({ dataDir: dir });
    opened.push(mended);
    expect(mended.tasks.list({}).items.map((t) => t.title)).toEqual(['kept']);
  });

  it('a database a tool has open (not only another Gaffer) is refused too, and starts once it is closed', () => {
    const dir = tempDir();
    createCore({ dataDir: dir }).close();
    const tool = new Database(path.join(dir, 'gaffer.db'), { readonly: true });
    tool.prepare('SELECT count(*) FROM tasks').get();
    expect(startRefused(dir).message).toMatch(/is open in another process/);
    tool.close();
    opened.push(createCore({ dataDir: dir }));
  });
});
