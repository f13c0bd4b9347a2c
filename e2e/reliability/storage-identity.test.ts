/**
 * Scenario 4b — storage pulled out from under a running server: its WAL deleted, its lock file
 * deleted (and a second server started on the directory), its database's header marking the file
 * read-only. Real server processes, files changed under them.
 *
 * Expected outcomes:
 * - WAL deleted: noticed by the write path within its look interval (100 ms), what was committed is
 *   rescued into the database; from then on every write is refused with 503
 *   `unavailable` (never a false ok), `/status` says `ok: false` with the fault, one log line says
 *   what happened; after a kill -9 and a restart every acknowledged write is there.
 * - lock deleted: a second server refuses to start (exit ≠ 0, one line: the database is open in
 *   another process); the first stops acknowledging writes within a couple of seconds and says so.
 * - header write version > 2: the server refuses to start with one clear line, the file untouched.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { recordCreate } from './lib/agents';
import { api, createAgentToken, request } from './lib/http';
import { assertNoProblems, checkDatabaseFile, newLedger, type Ledger } from './lib/invariants';
import { figures, until } from './lib/mode';
import { killAllChildren } from './lib/procs';
import { freePort, newOperatorToken, runToExit, startServer, tempDir, removeTempDirs, type Server } from './lib/server';
import { RawAgent } from './lib/wire';

afterAll(async () => {
  await killAllChildren();
  removeTempDirs();
});

interface Tally {
  acked: number;
  refused: number;
  problems: string[];
}

/** One HTTP create and one agent create: each acknowledged (→ ledger) or refused with 503, nothing else. */
async function createBoth(s: Server, agent: RawAgent, label: string, ledger: Ledger, t: Tally): Promise<void> {
  const h = await request(s.port, { method: 'POST', path: '/api/v1/tasks', token: s.operatorToken, headers: { 'idempotency-key': `${label}-h` }, body: { title: `${label} http`, role: 'dev' } });
  if (h.status === 201) {
    recordCreate(ledger, t.problems, `${label}-h`, `${label} http`, h.json.task.id);
    t.acked++;
  } else if (h.status === 503 && h.json?.error?.code === 'unavailable') t.refused++;
  else t.problems.push(`HTTP create answered ${h.status}: ${h.text.slice(0, 200)}`);
  const c = await agent.request('create_task', { title: `${label} agent`, role: 'dev', idempotencyKey: `${label}-a` });
  if (c.ok) {
    recordCreate(ledger, t.problems, `${label}-a`, `${label} agent`, c.result.task.id);
    t.acked++;
  } else if (c.error?.code === 'unavailable' && c.error.status === 503) t.refused++;
  else t.problems.push(`agent create answered ${JSON.stringify(c.error)}`);
}

const faultLines = (s: Server) => s.log().split('\n').filter((l) => /storage fault:/.test(l));

describe('the WAL deleted under a running server', () => {
  it('writes stop being acknowledged within 100 ms, /status and the log say so, and after a kill -9 nothing acknowledged is lost', async () => {
    const opts = { dataDir: tempDir('wal-gone'), port: await freePort(), operatorToken: newOperatorToken() };
    let s = await startServer(opts);
    const ledger = newLedger();
    const agent = await RawAgent.hello(s.agentUrl, (await createAgentToken(s.port, s.operatorToken, 'worker', 'dev')).token, 'dev', 'worker');
    const before: Tally = { acked: 0, refused: 0, problems: [] };
    for (let i = 0; i < 10; i++) await createBoth(s, agent, `before-${i}`, ledger, before);
    expect(before).toEqual({ acked: 20, refused: 0, problems: [] });

    fs.rmSync(path.join(opts.dataDir, 'gaffer.db-wal'));
    const deletedAt = Date.now();
    // Commits within the write path's look interval (100 ms) are acknowledged and then rescued
    // into the database with everything else; from the first refusal on, nothing is acknowledged.
    const after: Tally = { acked: 0, refused: 0, problems: [] };
    let n = 0;
    await until(
      async () => {
        await createBoth(s, agent, `after-${n++}`, ledger, after);
        return after.refused > 0;
      },
      'writes to be refused',
      5000,
      0,
    );
    const noticedMs = Date.now() - deletedAt;
    const ackedUntilNoticed = after.acked;
    for (let i = 0; i < 5; i++) await createBoth(s, agent, `later-${i}`, ledger, after);
    expect(after.problems).toEqual([]);
    expect(after.acked).toBe(ackedUntilNoticed);
    const status = await api(s.port, s.operatorToken, 'GET', '/status');
    expect(status.json).toMatchObject({ ok: false, storage: { state: 'fault', message: expect.stringMatching(/gaffer\.db-wal was deleted while Gaffer was running; everything committed was copied into gaffer\.db/) } });
    expect((await api(s.port, s.operatorToken, 'GET', '/tasks?limit=5')).status).toBe(200); // reads work
    expect(faultLines(s), s.log()).toHaveLength(1);

    await s.kill9();
    agent.kill();
    s = await startServer(opts);
    expect((await api(s.port, s.operatorToken, 'GET', '/status')).json).toMatchObject({ ok: true, storage: null });
    await s.stop();
    assertNoProblems(checkDatabaseFile(s.dbPath, ledger).problems, 'after the WAL was deleted and a kill -9');
    figures('wal-deleted', { ackedBefore: before.acked, ackedAfterDeletion: after.acked, noticedWithinMs: noticedMs, refusedAfter: after.refused, lost: 0 });
  }, 90_000);
});

describe('the lock file deleted under a running server', () => {
  it('a second server refuses to start; the first stops acknowledging writes within seconds and says so', async () => {
    const dataDir = tempDir('lock-gone');
    const first = await startServer({ dataDir, port: await freePort() });
    const ledger = newLedger();
    const agent = await RawAgent.hello(first.agentUrl, (await createAgentToken(first.port, first.operatorToken, 'worker', 'dev')).token, 'dev', 'worker');
    const t: Tally = { acked: 0, refused: 0, problems: [] };
    await createBoth(first, agent, 'before', ledger, t);
    expect(t.refused).toBe(0);

    fs.rmSync(path.join(dataDir, 'gaffer.lock'));
    const second = await runToExit({ dataDir, port: await freePort() });
    expect(second.code, second.output).toBe(1);
    expect(second.stderr, second.output).toHaveLength(1);
    expect(second.stderr[0]).toMatch(/^gaffer: database .*gaffer\.db is open in another process \(another Gaffer whose gaffer\.lock was deleted, or a tool such as sqlite3\): stop it, then start again$/);

    const t0 = Date.now();
    let n = 0;
    await until(
      async () => {
        await createBoth(first, agent, `while-${n++}`, ledger, t);
        return t.refused > 0;
      },
      'the first server to stop acknowledging writes',
      10_000,
      100,
    );
    const noticedMs = Date.now() - t0;
    expect(t.problems).toEqual([]);
    expect((await api(first.port, first.operatorToken, 'GET', '/status')).json).toMatchObject({ ok: false, storage: { state: 'fault', message: expect.stringMatching(/gaffer\.lock was (deleted|replaced by another file) while Gaffer was running/) } });
    expect(faultLines(first), first.log()).toHaveLength(1);

    agent.kill();
    await first.stop();
    const again = await startServer({ dataDir, port: await freePort() });
    expect((await api(again.port, again.operatorToken, 'POST', '/tasks', { title: 'after restart', role: 'dev' })).status).toBe(201);
    await again.stop();
    assertNoProblems(checkDatabaseFile(again.dbPath, ledger).problems, 'after the lock was deleted');
    figures('lock-deleted', { secondServerExit: second.code!, noticedWithinMs: noticedMs, ackedWhileUnnoticed: t.acked - 2 });
  }, 90_000);
});

describe('a database whose header marks it read-only', () => {
  it('is refused at start with one clear line, the file untouched', async () => {
    const opts = { dataDir: tempDir('ro-header'), port: await freePort() };
    const s = await startServer(opts);
    await api(s.port, s.operatorToken, 'POST', '/tasks', { title: 'kept', role: 'dev' });
    await s.stop();
    const fd = fs.openSync(s.dbPath, 'r+');
    fs.writeSync(fd, Buffer.from([3]), 0, 1, 18); // file format write version 3: SQLite opens it read-only, silently
    fs.closeSync(fd);
    const digest = createHash('sha256').update(fs.readFileSync(s.dbPath)).digest('hex');
    const r = await runToExit(opts);
    expect(r.code, r.output).toBe(1);
    expect(r.stderr, r.output).toHaveLength(1);
    expect(r.stderr[0]).toBe(`gaffer: database ${s.dbPath} is read-only: its header says file format write version 3 (byte 18), which this SQLite cannot write. It was left untouched; open it with the SQLite that wrote it, or restore a backup.`);
    expect(createHash('sha256').update(fs.readFileSync(s.dbPath)).digest('hex')).toBe(digest);
    figures('read-only-header', { exitCode: r.code!, stderrLines: r.stderr.length });
  }, 60_000);
});
