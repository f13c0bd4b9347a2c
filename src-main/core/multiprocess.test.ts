/**
 * Races and crashes between real OS processes sharing one database file.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createCore, type Core } from './create-core';
import { integrityCheck, openDatabase } from './db/open';
import { checkInvariants } from './tests/invariants';
import { tempDir } from './tests/test-core';

const WORKER = path.resolve(__dirname, 'tests/claim-worker.ts');
let core: Core | undefined;
afterEach(() => core?.close());

async function until(cond: () => boolean, timeoutMs = 60_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out waiting for a worker');
    await new Promise((r) => setTimeout(r, 5));
  }
}

function runWorker(dbPath: string, name: string, mode: 'drain' | 'load') {
  const child = spawn(process.execPath, ['--import', 'tsx', WORKER, dbPath, name, mode], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, done, out: () => out, err: () => err };
}

describe('claims raced by several OS processes', () => {
  it('every task is claimed exactly once per attempt and never has two live holders', async () => {
    const dir = tempDir();
    const dbPath = path.join(dir, 'gaffer.db');
    core = createCore({ dbPath, singleWriter: false });
    const N = 1500;
    core.store.write(() => {
      for (let i = 0; i < N; i++) core!.tasks.create({ title: `t${i}`, role: 'dev', priority: i % 5 }, { actor: 'seed' });
    });
    core.close();
    core = undefined;

    const workers = ['w1', 'w2', 'w3'].map((n) => runWorker(dbPath, n, 'drain'));
    await Promise.all(workers.map((w) => until(() => w.out().startsWith('ready\n'))));
    for (const w of workers) w.child.stdin!.end('go\n');
    const exits = await Promise.all(workers.map((w) => w.done));
    for (const [i, e] of exits.entries()) expect(e.code, workers[i]!.err()).toBe(0);

    const claims = workers.flatMap((w, i) =>
      w
        .out()
        .trim()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => ({ ...(JSON.parse(l) as { task: number; fence: number }), worker: i })),
    );
    // each (task, fence) pair — one attempt — was handed to exactly one process
    const keys = claims.map((c) => `${c.task}/${c.fence}`);
    expect(new Set(keys).size).toBe(keys.length);
    // a real race, not one process draining alone: several processes took work (SQLite's busy
    // handler does not promise fairness, so one of three may be starved by the other two)
    const active = workers.filter((_, i) => claims.some((c) => c.worker === i)).length;
    expect(active).toBeGreaterThanOrEqual(2);

    const db = openDatabase(dbPath);
    try {
      const byStatus = db.prepare('SELECT status, count(*) AS n FROM tasks GROUP BY status').all();
      expect(byStatus).toEqual([{ status: 'done', n: N }]);
      const auditClaims = db.prepare(`SELECT count(*) AS n FROM audit WHERE type = 'lock.claim'`).get() as { n: number };
      expect(auditClaims.n).toBe(claims.length);
      // re-attempted tasks (reported back to backlog) got fence 2, 3, … — never a duplicate
      expect(claims.length).toBeGreaterThan(N);
      expect(checkInvariants(db)).toEqual([]);
    } finally {
      db.close();
    }
  }, 120_000);
});

describe('crash: SIGKILL mid-load', () => {
  it('leaves a database that opens cleanly with no committed audit row missing and no task with two holders', async () => {
    const dir = tempDir();
    const dbPath = path.join(dir, 'gaffer.db');
    for (let round = 0; round < 5; round++) {
      const w = runWorker(dbPath, `crash${round}`, 'load');
      // let it commit for a while, then kill it without warning
      await until(() => (w.out().match(/committed/g)?.length ?? 0) > 50 + round * 37);
      w.child.kill('SIGKILL');
      const exit = await w.done;
      expect(exit.signal).toBe('SIGKILL');
      const acknowledged = Math.max(...[...w.out().matchAll(/committed (\d+)/g)].map((m) => Number(m[1])));

      const db = openDatabase(dbPath);
      try {
        integrityCheck(db); // every page reads back cleanly
        const maxId = (db.prepare('SELECT max(id) AS id FROM audit').get() as { id: number }).id;
        expect(maxId).toBeGreaterThanOrEqual(acknowledged);
        expect(checkInvariants(db)).toEqual([]);
      } finally {
        db.close();
      }
    }
  }, 120_000);
});
