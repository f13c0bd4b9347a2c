import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { GafferError } from '../../common/errors';
import { createCore } from '../create-core';
import { tempDir } from '../tests/test-core';
import { MIGRATIONS } from './migrations';
import { cleanMarkPath, closeDatabase, integrityCheck, NEW_DATABASE_PAGE_SIZE, openDatabase } from './open';

const opened: Array<{ close(): void }> = [];
afterEach(() => {
  while (opened.length) opened.pop()!.close();
});

describe('database', () => {
  it('runs every migration in order, records user_version, and reopening is a no-op', () => {
    const file = path.join(tempDir(), 'g.db');
    const db = openDatabase(file);
    expect(db.pragma('user_version', { simple: true })).toBe(MIGRATIONS.length);
    const tables = (db.prepare(`SELECT name FROM sqlite_master WHERE type='table' ORDER BY name`).all() as { name: string }[]).map((t) => t.name);
    expect(tables).toEqual(expect.arrayContaining(['tasks', 'locks', 'instances', 'audit', 'idempotency', 'tokens', 'lock_expiries']));
    db.close();
    const again = openDatabase(file);
    expect(again.pragma('user_version', { simple: true })).toBe(MIGRATIONS.length);
    again.close();
  });

  it('020 (inbox state resolved) keeps the items, their occurrences and deliveries, and the references between them', () => {
    const file = path.join(tempDir(), 'before-020.db');
    const raw = new Database(file);
    const at = MIGRATIONS.findIndex((m) => m.name.endsWith('_inbox_resolved'));
    for (const m of MIGRATIONS.slice(0, at)) {
      raw.exec(m.sql);
      m.run?.(raw);
    }
    raw.pragma(`user_version = ${at}`);
    raw.exec(`INSERT INTO inbox_items (id, kind, severity, subject, title, detail, evidence, state, count, first_at, last_at, updated_at)
              VALUES (7, 'missed', 'warning', 'job:j', 't', 'd', '{"about":{},"entries":[]}', 'acked', 2, 1, 2, 3)`);
    raw.exec(`INSERT INTO inbox_occurrences (key, item_id, at) VALUES ('slot:j:1', 7, 1)`);
    raw.exec(`INSERT INTO webhook_deliveries (webhook_id, item_id, kind, status, created_at, updated_at) VALUES ('wh_a', 7, 'missed', 'delivered', 1, 1)`);
    raw.close();
    const db = openDatabase(file);
    opened.push(db);
    expect(db.prepare('SELECT id, state, count, resolved_at FROM inbox_items').all()).toEqual([{ id: 7, state: 'acked', count: 2, resolved_at: null }]);
    expect(db.pragma('foreign_key_check')).toEqual([]);
    expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
    // The rebuilt table still has what points at it, and takes the new state.
    const sql = (db.prepare(`SELECT sql FROM sqlite_master WHERE name = 'webhook_deliveries'`).pluck().get() as string);
    expect(sql).toContain('REFERENCES inbox_items(id)');
    db.exec(`UPDATE inbox_items SET state = 'resolved', resolved_at = 9, resolution = 'gone' WHERE id = 7`);
    expect(() => db.exec(`INSERT INTO inbox_occurrences (key, item_id, at) VALUES ('x', 999, 1)`)).toThrow(/FOREIGN KEY/);
  });

  /**
   * A file at the schema just before migration `name` (`user_version` says so), plus the `extra`
   * steps a development branch may have run there; still open for rows to be put in.
   */
  function fileBefore(name: string, extra: Array<(typeof MIGRATIONS)[number]> = []): { file: string; raw: Database.Database } {
    const file = path.join(tempDir(), `before-${name}.db`);
    const raw = new Database(file);
    const at = MIGRATIONS.findIndex((m) => m.name === name);
    expect(at).toBeGreaterThan(0);
    for (const m of [...MIGRATIONS.slice(0, at), ...extra]) {
      raw.exec(m.sql);
      m.run?.(raw);
    }
    raw.pragma(`user_version = ${at}`);
    return { file, raw };
  }

  const TASK_COLUMNS = 'id, title, role, status, priority, payload, depends_on, trace_id, unmet_deps, attempt, previously_expired, fence, last_holder, note, output, created_at, updated_at';

  it('022..025 (artifacts, verification, spend, answers) upgrade a file made before them and keep its rows and the references between them', () => {
    const { file, raw } = fileBefore('022_artifacts');
    raw.exec(`
      INSERT INTO tasks (${TASK_COLUMNS}) VALUES
        (1, 'first', 'dev', 'done', 0, '{"a":1}', '[]', 'aaaaaaaaaaaaaaaa', 0, 2, 1, 3, 'inst-1', 'ok', '{"out":true}', 10, 20),
        (2, 'second', 'dev', 'blocked', 5, 'null', '[1]', 'bbbbbbbbbbbbbbbb', 0, 1, 0, 1, 'inst-2', 'why?', NULL, 11, 21),
        (3, 'third', 'ops', 'in_progress', 1, 'null', '[]', NULL, 0, 1, 0, 4, 'inst-1', NULL, NULL, 12, 22);
      INSERT INTO task_deps (task_id, depends_on) VALUES (2, 1);
      INSERT INTO locks (task_id, instance_id, fence, claimed_at, expires_at) VALUES (3, 'inst-1', 4, 30, 40);
      INSERT INTO lock_expiries (task_id, instance_id, fence, reason, expired_at) VALUES (1, 'inst-0', 2, 'heartbeat', 15);
      INSERT INTO task_budgets (task_id, max_cost_usd, max_tokens) VALUES (2, 1.5, 1000);
      INSERT INTO usage (subject, attempt, role, instance_id, input_tokens, output_tokens, cost_nusd, at) VALUES ('task:1', 2, 'dev', 'inst-1', 10, 5, 7000, 16);
      INSERT INTO managed_agents (id, name, role, command, mode, instances, desired, created_at, updated_at, updated_by)
        VALUES ('ma_1', 'coder', 'dev', '["claude","-p"]', 'per_task', 1, 'running', 1, 1, 'operator:test');
    `);
    const before = raw.prepare(`SELECT ${TASK_COLUMNS} FROM tasks ORDER BY id`).all();
    raw.close();

    const db = openDatabase(file);
    opened.push(db);
    expect(db.pragma('user_version', { simple: true })).toBe(MIGRATIONS.length);
    expect(db.prepare(`SELECT ${TASK_COLUMNS} FROM tasks ORDER BY id`).all()).toEqual(before);
    // The columns the migrations added, with their defaults on the old rows.
    expect(db.prepare('SELECT id, verify, previous_error, prechecked_attempt, disposition, answer FROM tasks ORDER BY id').all()).toEqual(
      [1, 2, 3].map((id) => ({ id, verify: null, previous_error: null, prechecked_attempt: 0, disposition: null, answer: null })),
    );
    expect(db.prepare('SELECT task_id, depends_on FROM task_deps').all()).toEqual([{ task_id: 2, depends_on: 1 }]);
    expect(db.prepare('SELECT task_id, fence FROM locks').all()).toEqual([{ task_id: 3, fence: 4 }]);
    expect(db.prepare('SELECT task_id, reason FROM lock_expiries').all()).toEqual([{ task_id: 1, reason: 'heartbeat' }]);
    expect(db.prepare('SELECT task_id, max_cost_usd, max_tokens FROM task_budgets').all()).toEqual([{ task_id: 2, max_cost_usd: 1.5, max_tokens: 1000 }]);
    expect(db.prepare('SELECT subject, cost_nusd, cache_read_tokens, estimated, final FROM usage').all()).toEqual([{ subject: 'task:1', cost_nusd: 7000, cache_read_tokens: 0, estimated: 0, final: 0 }]);
    expect(db.prepare('SELECT name, workspace FROM managed_agents').all()).toEqual([{ name: 'coder', workspace: null }]);
    // The rebuilt tasks table: the references into it hold, its indexes are back, it takes the new status.
    expect(db.pragma('foreign_key_check')).toEqual([]);
    const indexes = db.prepare(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'tasks' ORDER BY name`).pluck().all();
    expect(indexes).toEqual(['tasks_claimable', 'tasks_verifying']);
    db.exec(`UPDATE tasks SET status = 'verifying' WHERE id = 3`);
    expect(() => db.exec(`INSERT INTO locks (task_id, instance_id, fence, claimed_at, expires_at) VALUES (99, 'x', 1, 1, 2)`)).toThrow(/FOREIGN KEY/);
    for (const table of ['artifacts', 'verifications', 'error_streaks', 'job_attempt_days']) {
      expect(db.prepare(`SELECT count(*) FROM ${table}`).pluck().get(), table).toBe(0);
    }
  });

  it('023 keeps a tasks column it does not list: a file where 025 (answer) ran first keeps the answers', () => {
    // A development database made on a branch that had 025 before 023 (the order they were written in).
    const answer = MIGRATIONS.find((m) => m.name === '025_task_answer')!;
    const { file, raw } = fileBefore('023_verification', [answer]);
    raw.exec(`INSERT INTO tasks (${TASK_COLUMNS}, answer) VALUES (1, 't', 'dev', 'blocked', 0, 'null', '[]', NULL, 0, 1, 0, 1, NULL, 'which branch?', NULL, 1, 2, 'use main')`);
    raw.close();
    // 023 and 024 run on it, then 025 again (a no-op).
    const db = openDatabase(file);
    opened.push(db);
    expect(db.prepare('SELECT id, status, note, answer, prechecked_attempt FROM tasks').all()).toEqual([{ id: 1, status: 'blocked', note: 'which branch?', answer: 'use main', prechecked_attempt: 0 }]);
    expect(db.prepare(`SELECT sql FROM sqlite_master WHERE name = 'tasks'`).pluck().get()).toContain(`'verifying'`);
    expect(db.pragma('foreign_key_check')).toEqual([]);
  });

  const sqlMigrations = MIGRATIONS.map((m, i) => [m.name, i] as const).filter(([, i]) => !MIGRATIONS[i]!.run);
  it.each(sqlMigrations)('migration %s creates its objects and upgrades to the latest', (_name, i) => {
    const file = path.join(tempDir(), 'm.db');
    const raw = new Database(file);
    for (const m of MIGRATIONS.slice(0, i + 1)) {
      raw.exec(m.sql);
      m.run?.(raw);
    }
    raw.pragma(`user_version = ${i + 1}`);
    const names = new Set((raw.prepare('SELECT name FROM sqlite_master').all() as { name: string }[]).map((r) => r.name));
    const created = [...MIGRATIONS[i]!.sql.matchAll(/CREATE (?:TABLE|INDEX|TRIGGER) (?:IF NOT EXISTS )?(\w+)/g)].map((m) => m[1]!);
    const added = [...MIGRATIONS[i]!.sql.matchAll(/ALTER TABLE (\w+) ADD COLUMN (\w+)/g)].map((m) => [m[1]!, m[2]!] as const);
    expect(created.length + added.length).toBeGreaterThan(0);
    for (const name of created) expect(names.has(name), name).toBe(true);
    for (const [table, column] of added) {
      const columns = (raw.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).map((c) => c.name);
      expect(columns, `${table}.${column}`).toContain(column);
    }
    raw.close();
    const upgraded = openDatabase(file);
    expect(upgraded.pragma('user_version', { simple: true })).toBe(MIGRATIONS.length);
    upgraded.close();
  });

  it('adds tasks.trace_id to a database made before migration 001 had it, and leaves a newer one as it is', () => {
    const build = (withTraceId: boolean) => {
      const file = path.join(tempDir(), 'pre.db');
      const raw = new Database(file);
      const first = MIGRATIONS[0]!.sql.replace(/^\s*trace_id TEXT,.*$/m, '');
      expect(first === MIGRATIONS[0]!.sql).toBe(false);
      raw.exec(withTraceId ? MIGRATIONS[0]!.sql : first);
      for (const m of MIGRATIONS.slice(1, 8)) raw.exec(m.sql);
      raw.pragma('user_version = 8');
      raw.close();
      return file;
    };
    for (const withTraceId of [false, true]) {
      const dir = path.dirname(build(withTraceId));
      const core = createCore({ dataDir: dir, dbPath: path.join(dir, 'pre.db') });
      const columns = (core.db.prepare('PRAGMA table_info(tasks)').all() as { name: string }[]).map((c) => c.name);
      expect(columns.filter((c) => c === 'trace_id')).toEqual(['trace_id']);
      const task = core.tasks.create({ title: 'after upgrade', role: 'dev' }, { actor: 'operator:test' });
      expect(core.tasks.get(task.task.id)?.traceId).toMatch(/^[0-9a-f]{16}$/);
      core.close();
    }
  });

  it('uses WAL with synchronous=FULL (durable on power loss)', () => {
    const db = openDatabase(path.join(tempDir(), 'g.db'));
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('synchronous', { simple: true })).toBe(2); // FULL
    db.close();
  });

  it('makes a new database with the small page size and keeps an existing database as it was made', () => {
    const fresh = openDatabase(path.join(tempDir(), 'g.db'));
    expect(fresh.pragma('page_size', { simple: true })).toBe(NEW_DATABASE_PAGE_SIZE);
    fresh.close();
    const file = path.join(tempDir(), 'old.db');
    const raw = new Database(file);
    raw.pragma('page_size = 4096');
    raw.exec('CREATE TABLE kept (v TEXT)');
    raw.prepare('INSERT INTO kept (v) VALUES (?)').run('still here');
    raw.close();
    const old = openDatabase(file);
    expect(old.pragma('page_size', { simple: true })).toBe(4096);
    expect(old.prepare('SELECT v FROM kept').pluck().get()).toBe('still here');
    expect(old.pragma('user_version', { simple: true })).toBe(MIGRATIONS.length);
    old.close();
  });

  it('refuses a corrupt file with a clear message and leaves it untouched', () => {
    const file = path.join(tempDir(), 'g.db');
    const junk = Buffer.from('this is not a database at all '.repeat(200));
    fs.writeFileSync(file, junk);
    expect(() => openDatabase(file)).toThrow(/not usable.*left untouched/);
    expect(fs.readFileSync(file).equals(junk)).toBe(true);
  });

  it('a file changed after a clean close, or left by a crash, is read whole at open: damage deep in a table is refused, untouched', () => {
    const file = path.join(tempDir(), 'g.db');
    const db = openDatabase(file);
    db.exec('CREATE TABLE big (v TEXT)');
    const ins = db.prepare('INSERT INTO big (v) VALUES (?)');
    db.transaction(() => {
      for (let i = 0; i < 2000; i++) ins.run(`row ${i} `.padEnd(400, 'x'));
    })();
    closeDatabase(db, file, { clean: true }); // checkpoints the WAL into the file, leaves the mark
    expect(fs.existsSync(cleanMarkPath(file))).toBe(true);
    const bytes = fs.readFileSync(file);
    const page = NEW_DATABASE_PAGE_SIZE;
    const middle = Math.floor(bytes.length / page / 2) * page;
    bytes.fill(0xa5, middle, middle + page); // one leaf page of `big`, scrambled
    fs.writeFileSync(file, bytes); // a new modification time: the mark no longer names this file
    expect(() => openDatabase(file)).toThrow(/is not usable \(damaged: .*left untouched/);
    expect(fs.readFileSync(file).equals(bytes)).toBe(true);
  });

  it('a file exactly as a clean close left it is opened without the whole-file read (its mark is taken away at open)', () => {
    const file = path.join(tempDir(), 'g.db');
    const db = openDatabase(file);
    db.exec('CREATE TABLE big (v TEXT)');
    db.prepare('INSERT INTO big (v) VALUES (?)').run('x'.repeat(400));
    closeDatabase(db, file, { clean: true });
    // Damage the file, then make it look exactly as it was left (same size and modification
    // time): the open trusts the mark, so only a query that reaches the page finds it.
    const before = fs.statSync(file);
    const bytes = fs.readFileSync(file);
    const page = NEW_DATABASE_PAGE_SIZE;
    bytes.fill(0xa5, bytes.length - page, bytes.length);
    fs.writeFileSync(file, bytes);
    fs.utimesSync(file, before.atimeMs / 1000, before.mtimeMs / 1000);
    const reopened = openDatabase(file);
    opened.push(reopened);
    expect(fs.existsSync(cleanMarkPath(file))).toBe(false); // a crash from here on leaves no mark
    expect(() => integrityCheck(reopened)).toThrow(/integrity check failed/);
  });

  it('no mark after an unclean close (a storage fault) or without closeDatabase', () => {
    const file = path.join(tempDir(), 'g.db');
    closeDatabase(openDatabase(file), file, { clean: false });
    expect(fs.existsSync(cleanMarkPath(file))).toBe(false);
    openDatabase(file).close();
    expect(fs.existsSync(cleanMarkPath(file))).toBe(false);
  });

  it('refuses a database written by a newer Gaffer', () => {
    const file = path.join(tempDir(), 'g.db');
    const db = openDatabase(file);
    db.pragma(`user_version = ${MIGRATIONS.length + 5}`);
    db.close();
    expect(() => openDatabase(file)).toThrow(/newer than this Gaffer/);
  });
});

describe('single writer', () => {
  it('a second core on the same data directory refuses to start with a clear message', () => {
    const dir = tempDir();
    const first = createCore({ dataDir: dir });
    opened.push(first);
    let err: unknown;
    try {
      createCore({ dataDir: dir });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(GafferError);
    expect((err as Error).message).toMatch(new RegExp(`another Gaffer is already running on .*\\(pid ${process.pid}\\)`));
  });

  it('another process is refused too, and the lock is free again once the holder closes', () => {
    const dir = tempDir();
    const first = createCore({ dataDir: dir });
    const script = `import { createCore } from ${JSON.stringify(path.resolve(__dirname, '../create-core.ts'))};
      try { createCore({ dataDir: ${JSON.stringify(dir)} }).close(); console.log('STARTED'); } catch (e) { console.log('REFUSED ' + e.message); }`;
    const run = () => spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' }).stdout.trim();
    expect(run()).toMatch(/^REFUSED another Gaffer is already running/);
    first.close();
    expect(run()).toBe('STARTED');
  });
});
