/**
 * Scenario 4 — storage failures: a full disk, a disk that turns read-only mid-run, a database
 * that is read-only at start, and corrupt database files.
 *
 * Expected outcomes:
 * - disk full (tmpfs of a few MB): every write is either acknowledged and durable, or refused
 *   with `unavailable` (HTTP 503 / agent error status 503) — never "ok" for a write that did not
 *   commit; reads keep working; the server stays up (its timers keep failing to write); one clear
 *   log line says what is wrong and what to do; when space returns, writes resume by themselves
 *   (logged), refused creates were never committed (repeating their keys creates them fresh), and
 *   a kill -9 + restart finds every acknowledged write and every invariant intact.
 * - disk turns read-only mid-run (ext4 on a loop device, `remount,abort` = the kernel's
 *   errors=remount-ro path): the same refusals, reads and log line; after a repair (e2fsck) and a
 *   restart every acknowledged write is there and writes work again.
 * - read-only at start (read-only mount; a database file the server's user cannot write): exit
 *   code ≠ 0 with one clear line, and the file left byte-for-byte untouched.
 * - corrupt file at start (garbage, truncations, smashed header, damaged pages, zero length): exit
 *   code ≠ 0, exactly one line on stderr naming the file, the file left untouched — never recreated.
 */
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createCore } from '../../src-main/core/create-core';
import { recordCreate } from './lib/agents';
import { api, createAgentToken, request } from './lib/http';
import { assertNoProblems, checkDatabaseFile, newLedger, type Ledger } from './lib/invariants';
import { fillDisk, loopUnavailable, mountExt4Loop, mountTmpfs, mountUnavailable } from './lib/mounts';
import { figures, pick, sleep, until } from './lib/mode';
import { killAllChildren } from './lib/procs';
import { freePort, newOperatorToken, runToExit, startServer, tempDir, type Server, type ServerOptions, removeTempDirs } from './lib/server';
import { RawAgent } from './lib/wire';

afterAll(async () => {
  await killAllChildren();
  removeTempDirs();
});

const sha = (file: string) => createHash('sha256').update(fs.readFileSync(file)).digest('hex');

interface WriteTally {
  acked: number;
  refused: number;
  /** Titles of creates that were refused (they must not exist afterwards). */
  refusedCreates: Array<{ key: string; title: string; via: 'http' | 'agent' }>;
  problems: string[];
}

/**
 * Tries `n` rounds of writes (HTTP create, agent create, claim + report). Each must be either
 * acknowledged (→ ledger) or refused with `unavailable`/503; anything else is a problem.
 */
async function tryWrites(s: Server, agent: RawAgent, label: string, n: number, ledger: Ledger): Promise<WriteTally> {
  const t: WriteTally = { acked: 0, refused: 0, refusedCreates: [], problems: [] };
  for (let i = 0; i < n; i++) {
    const key = `${label}-h${i}`;
    const title = `${label} http ${i}`;
    const h = await request(s.port, { method: 'POST', path: '/api/v1/tasks', token: s.operatorToken, headers: { 'idempotency-key': key }, body: { title, role: 'dev' } });
    if (h.status === 201 || h.status === 200) {
      recordCreate(ledger, t.problems, key, title, h.json.task.id);
      t.acked++;
    } else if (h.status === 503 && h.json?.error?.code === 'unavailable') {
      t.refused++;
      t.refusedCreates.push({ key, title, via: 'http' });
    } else t.problems.push(`HTTP create answered ${h.status}: ${h.text.slice(0, 200)}`);

    const akey = `${label}-a${i}`;
    const atitle = `${label} agent ${i}`;
    const c = await agent.request('create_task', { title: atitle, role: 'dev', idempotencyKey: akey });
    if (c.ok) {
      recordCreate(ledger, t.problems, akey, atitle, c.result.task.id);
      t.acked++;
    } else if (c.error?.code === 'unavailable' && c.error.status === 503) {
      t.refused++;
      t.refusedCreates.push({ key: akey, title: atitle, via: 'agent' });
    } else t.problems.push(`agent create answered ${JSON.stringify(c.error)}`);

    const cl = await agent.request('claim');
    if (cl.ok && cl.result.task) {
      const taskId = cl.result.task.id as number;
      const fence = cl.result.lock.fence as number;
      ledger.claims.push({ taskId, fence, instanceId: agent.instanceId });
      t.acked++;
      const r = await agent.request('report', { taskId, fence, status: 'done' });
      if (r.ok) {
        ledger.reports.push({ taskId, fence, status: 'done', instanceId: agent.instanceId });
        t.acked++;
      } else if (r.error?.code === 'unavailable') t.refused++;
      else t.problems.push(`report answered ${JSON.stringify(r.error)}`);
    } else if (cl.ok) {
      /* nothing to claim */
    } else if (cl.error?.code === 'unavailable' && cl.error.status === 503) t.refused++;
    else t.problems.push(`claim answered ${JSON.stringify(cl.error)}`);
  }
  return t;
}

/** Reads that must keep working while writes are refused. */
async function readsWork(s: Server): Promise<void> {
  for (const p of ['/status', '/tasks?limit=5', '/audit?limit=5', '/instances']) {
    const r = await api(s.port, s.operatorToken, 'GET', p);
    expect(r.status, `GET ${p}: ${r.text.slice(0, 200)}`).toBe(200);
  }
}

/** Creates that were refused must not have committed: repeating them creates them fresh. */
async function refusedNeverCommitted(s: Server, agent: RawAgent, refused: WriteTally['refusedCreates'], ledger: Ledger): Promise<string[]> {
  const problems: string[] = [];
  for (const r of refused) {
    if (r.via === 'http') {
      const h = await request(s.port, { method: 'POST', path: '/api/v1/tasks', token: s.operatorToken, headers: { 'idempotency-key': r.key }, body: { title: r.title, role: 'dev' } });
      if (h.status !== 201) problems.push(`refused HTTP create ${r.key} had committed after all (${h.status} replayed=${h.json?.replayed})`);
      else recordCreate(ledger, problems, r.key, r.title, h.json.task.id);
    } else {
      const c = await agent.request('create_task', { title: r.title, role: 'dev', idempotencyKey: r.key });
      if (!c.ok || c.result.replayed) problems.push(`refused agent create ${r.key} had committed after all (${JSON.stringify(c.error ?? c.result?.replayed)})`);
      else recordCreate(ledger, problems, r.key, r.title, c.result.task.id);
    }
  }
  return problems;
}

const noMounts = mountUnavailable();
const noLoop = loopUnavailable();

describe('disk full', () => {
  it.skipIf(noMounts !== undefined)(`writes are refused with 503 (never a false ok), reads work, the server stays up, logs once, and recovers when space returns${noMounts ? ` [skipped: ${noMounts}]` : ''}`, async () => {
    const t0 = Date.now();
    const m = mountTmpfs(pick(24, 48));
    try {
      const opts: ServerOptions = { dataDir: path.join(m.dir, 'data'), port: await freePort(), operatorToken: newOperatorToken(), lockWindowS: 2, sweepIntervalS: 0.25, heartbeatTimeoutS: 60, reconnectGraceS: 5 };
      let s = await startServer(opts);
      const ledger = newLedger();
      const worker = await RawAgent.hello(s.agentUrl, (await createAgentToken(s.port, s.operatorToken, 'worker', 'dev')).token, 'dev', 'worker');
      const holder = await RawAgent.hello(s.agentUrl, (await createAgentToken(s.port, s.operatorToken, 'holder', 'dev')).token, 'dev', 'holder');
      const before = await tryWrites(s, worker, 'before', 20, ledger);
      expect(before.refused).toBe(0);
      expect(before.problems).toEqual([]);
      // A lock that will run out while the disk is full: the watchdog must try (and fail) to expire it.
      await api(s.port, s.operatorToken, 'POST', '/tasks', { title: 'held through the full disk', role: 'dev' });
      const held = await holder.request('claim');
      expect(held.ok).toBe(true);
      ledger.claims.push({ taskId: held.result.task.id, fence: held.result.lock.fence, instanceId: holder.instanceId });

      const filler = fillDisk(m.dir);
      const during = await tryWrites(s, worker, 'full', pick(15, 40), ledger);
      expect(during.problems).toEqual([]);
      expect(during.refused).toBeGreaterThan(0);
      await readsWork(s);
      await sleep(1500); // six watchdog sweeps that cannot write
      expect(s.alive(), s.log()).toBe(true);
      await readsWork(s);
      // One line per episode (a write that reuses WAL space may succeed in between: then two).
      const failing = s.log().split('\n').filter((l) => /storage refused a write/.test(l));
      expect(failing.length, s.log()).toBeGreaterThanOrEqual(1);
      expect(failing.length, s.log()).toBeLessThanOrEqual(3);
      expect(failing[0]).toMatch(/gaffer\.db \(database or disk is full\): writes are refused with 503 unavailable, reads still work; free some disk space/);

      // Space returns: writes resume without a restart.
      fs.rmSync(filler.file);
      const recoveredAt = Date.now();
      await until(async () => (await api(s.port, s.operatorToken, 'POST', '/tasks', { title: 'after space returned', role: 'dev' })).status === 201, 'writes to work again', 10_000, 50);
      const recoveryMs = Date.now() - recoveredAt;
      await until(() => /storage accepts writes again/.test(s.log()), 'the recovery log line', 5000);
      // The lock that ran out while the disk was full is expired now.
      await until(async () => (await api(s.port, s.operatorToken, 'GET', `/tasks/${held.result.task.id}`)).json.task.status === 'backlog', 'the stale lock to be expired', 5000, 50);
      const after = await tryWrites(s, worker, 'after', 10, ledger);
      expect(after.refused).toBe(0);
      expect(after.problems).toEqual([]);
      expect(await refusedNeverCommitted(s, worker, during.refusedCreates, ledger)).toEqual([]);

      await s.kill9();
      worker.kill();
      holder.kill();
      assertNoProblems(checkDatabaseFile(s.dbPath, ledger).problems, 'after the full disk and a kill -9');
      s = await startServer(opts);
      expect((await api(s.port, s.operatorToken, 'POST', '/tasks', { title: 'after restart', role: 'dev' })).status).toBe(201);
      await s.stop();
      assertNoProblems(checkDatabaseFile(s.dbPath, ledger).problems, 'after the restart');
      figures('disk-full', {
        tmpfsMb: pick(24, 48),
        fillerMb: filler.bytes / (1 << 20),
        writesRefused: during.refused,
        writesAckedWhileFull: during.acked,
        recoveryMs,
        seconds: (Date.now() - t0) / 1000,
      });
    } finally {
      await killAllChildren();
      m.cleanup();
    }
  }, 120_000);
});

describe('disk turns read-only mid-run', () => {
  it.skipIf(noLoop !== undefined)(`writes are refused with 503, reads work, a clear log line; after repair and restart nothing acknowledged is lost${noLoop ? ` [skipped: ${noLoop}]` : ''}`, async () => {
    const m = mountExt4Loop(64);
    try {
      const opts: ServerOptions = { dataDir: path.join(m.dir, 'data'), port: await freePort(), operatorToken: newOperatorToken(), sweepIntervalS: 0.25, heartbeatTimeoutS: 60, reconnectGraceS: 5 };
      let s = await startServer(opts);
      const ledger = newLedger();
      const worker = await RawAgent.hello(s.agentUrl, (await createAgentToken(s.port, s.operatorToken, 'worker', 'dev')).token, 'dev', 'worker');
      const before = await tryWrites(s, worker, 'before', 30, ledger);
      expect(before.refused).toBe(0);

      m.abort(); // ext4 goes emergency read-only under the running server
      const during = await tryWrites(s, worker, 'ro', pick(10, 30), ledger);
      expect(during.problems).toEqual([]);
      expect(during.acked).toBe(0);
      expect(during.refused).toBeGreaterThan(0);
      await readsWork(s);
      await sleep(1000);
      expect(s.alive(), s.log()).toBe(true);
      const failing = s.log().split('\n').filter((l) => /storage refused a write/.test(l));
      expect(failing, s.log()).toHaveLength(1);
      expect(failing[0]).toMatch(/read-only or failing: fix it, then restart Gaffer/);

      // Repair: stop, fsck, mount read-write, restart.
      worker.kill();
      await s.stop(5000);
      const fsck = m.repair();
      s = await startServer(opts);
      const check = checkDatabaseFile(s.dbPath, ledger);
      // checkDatabaseFile opens read-only next to the live server: fine for SQLite WAL readers.
      assertNoProblems(check.problems, 'after the read-only episode');
      const worker2 = await RawAgent.hello(s.agentUrl, (await createAgentToken(s.port, s.operatorToken, 'worker2', 'dev')).token, 'dev', 'worker2');
      const after = await tryWrites(s, worker2, 'after', 10, ledger);
      expect(after.refused).toBe(0);
      expect(await refusedNeverCommitted(s, worker2, during.refusedCreates, ledger)).toEqual([]);
      worker2.kill();
      await s.stop();
      assertNoProblems(checkDatabaseFile(s.dbPath, ledger).problems, 'final');
      figures('disk-read-only', { ackedBefore: before.acked, refusedWhileReadOnly: during.refused, fsckCorrected: /FILE SYSTEM WAS MODIFIED/.test(fsck) });
    } finally {
      await killAllChildren();
      m.cleanup();
    }
  }, 120_000);
});

describe('read-only at start', () => {
  it.skipIf(noMounts !== undefined)('a read-only mount: exit ≠ 0 with one clear line, the database untouched', async () => {
    const m = mountTmpfs(16);
    try {
      const opts: ServerOptions = { dataDir: path.join(m.dir, 'data'), port: await freePort() };
      const s = await startServer(opts);
      await api(s.port, s.operatorToken, 'POST', '/tasks', { title: 'kept', role: 'dev' });
      await s.stop();
      const digest = sha(s.dbPath);
      execFileSync('mount', ['-o', 'remount,ro', m.dir]);
      const r = await runToExit(opts);
      expect(r.code).not.toBe(0);
      expect(r.code).not.toBeNull();
      expect(r.stderr, r.output).toHaveLength(1);
      expect(r.stderr[0]).toMatch(/^gaffer: .*(read-only|readonly)/);
      expect(sha(s.dbPath)).toBe(digest);
      execFileSync('mount', ['-o', 'remount,rw', m.dir]);
      const again = await startServer(opts);
      expect((await api(again.port, again.operatorToken, 'GET', '/tasks')).json.items.map((t: { title: string }) => t.title)).toEqual(['kept']);
      await again.stop();
      figures('read-only-mount', { exitCode: r.code!, message: JSON.stringify(r.stderr[0]) });
    } finally {
      await killAllChildren();
      m.cleanup();
    }
  }, 60_000);

  it.skipIf(process.getuid?.() !== 0)('a database file its user cannot write: exit ≠ 0 with one clear line, the file untouched', async () => {
    const dataDir = tempDir('ro-file');
    const opts: ServerOptions = { dataDir, port: await freePort() };
    const s = await startServer(opts);
    await api(s.port, s.operatorToken, 'POST', '/tasks', { title: 'kept', role: 'dev' });
    await s.kill9(); // leaves -wal and -shm behind, as a crash would
    const nobody = 65534;
    execFileSync('chown', ['-R', `${nobody}:${nobody}`, dataDir]);
    fs.chmodSync(dataDir, 0o755);
    fs.chmodSync(s.dbPath, 0o444);
    const digest = sha(s.dbPath);
    const r = await runToExit({ ...opts, uid: nobody, gid: nobody });
    expect(r.code, r.output).toBe(1);
    expect(r.stderr, r.output).toHaveLength(1);
    expect(r.stderr[0]).toMatch(/^gaffer: database .*gaffer\.db is read-only: .* is not writable \(EACCES\)/);
    expect(sha(s.dbPath)).toBe(digest);
    fs.chmodSync(s.dbPath, 0o644);
    const again = await startServer({ ...opts, uid: nobody, gid: nobody });
    expect((await api(again.port, again.operatorToken, 'GET', '/tasks')).json.items).toHaveLength(1);
    await again.stop();
    assertNoProblems(checkDatabaseFile(s.dbPath).problems, 'after the read-only file');
  }, 60_000);
});

describe('a corrupt database file at start', () => {
  it('is refused with exit ≠ 0 and one clear line naming it, and left byte-for-byte untouched (never recreated)', async () => {
    const seedDir = tempDir('corrupt-seed');
    const core = createCore({ dataDir: seedDir });
    const inst = core.instances.register({ role: 'dev', name: 'seed' }).id;
    for (let i = 0; i < 3000; i++) core.tasks.create({ title: `seed ${i} ${'x'.repeat(80)}`, role: 'dev' }, { actor: 'seed' });
    for (let i = 0; i < 500; i++) {
      const c = core.locks.claim({ instanceId: inst });
      core.locks.report({ instanceId: inst, taskId: c.task!.id, fence: c.lock!.fence, status: 'done' });
    }
    core.close();
    const good = fs.readFileSync(path.join(seedDir, 'gaffer.db'));
    // The page size the file was made with (header offset 16, big-endian; 1 means 65536), so
    // "one page", "an interior page" and "last pages" mean what they say whatever the default is.
    const pageField = good.readUInt16BE(16);
    const page = pageField === 1 ? 65536 : pageField;
    expect(page >= 512 && page <= 65536 && (page & (page - 1)) === 0, `page size ${pageField} in the header`).toBe(true);
    expect(good.length % page, 'the seed file is whole pages').toBe(0);
    expect(good.length / page, 'the seed file has a page 20 and more after it').toBeGreaterThan(22);
    const smash = (b: Buffer, from: number, len: number, v: (i: number) => number) => {
      const c = Buffer.from(b);
      for (let i = from; i < Math.min(c.length, from + len); i++) c[i] = v(i) & 255;
      return c;
    };
    const cases: Array<[string, Buffer]> = [
      ['garbage bytes', Buffer.from(Array.from({ length: 64 * 1024 }, (_, i) => (i * 7919 + 13) & 255))],
      ['text file', Buffer.from('this is not a database\n'.repeat(100))],
      ['zero length', Buffer.alloc(0)],
      ['truncated to 50 bytes', good.subarray(0, 50)],
      ['truncated to one page', good.subarray(0, page)],
      ['truncated to half', good.subarray(0, Math.floor(good.length / 2))],
      ['truncated mid-page', good.subarray(0, Math.floor(good.length / 2) + 1234)],
      ['header magic zeroed', smash(good, 0, 16, () => 0)],
      ['page size smashed', smash(good, 16, 2, (i) => i * 31)],
      ['page 1 b-tree smashed', smash(good, 100, 100, (i) => i * 37)],
      ['an interior page smashed', smash(good, page * 20, page, (i) => i * 131)],
      ['last pages overwritten with 0xff', smash(good, good.length - 2 * page, 2 * page, () => 0xff)],
    ];
    const port = await freePort();
    const results = [];
    for (let i = 0; i < cases.length; i += 4) {
      results.push(
        ...(await Promise.all(
          cases.slice(i, i + 4).map(async ([name, bytes]) => {
            const dataDir = tempDir('corrupt');
            const file = path.join(dataDir, 'gaffer.db');
            fs.writeFileSync(file, bytes);
            const r = await runToExit({ dataDir, port });
            return { name, bytes, file, r, after: fs.readFileSync(file) };
          }),
        )),
      );
    }
    const bad: string[] = [];
    for (const { name, bytes, file, r, after } of results) {
      if (r.code === 0 || r.code === null) bad.push(`${name}: exit ${r.code} ${r.signal ?? ''}`);
      if (r.stderr.length !== 1) bad.push(`${name}: ${r.stderr.length} lines on stderr: ${JSON.stringify(r.stderr)}`);
      else if (!r.stderr[0]!.startsWith(`gaffer: database ${file} is `) || !/left untouched/.test(r.stderr[0]!)) bad.push(`${name}: unclear message ${JSON.stringify(r.stderr[0])}`);
      if (!after.equals(bytes)) bad.push(`${name}: the file was modified (${bytes.length} → ${after.length} bytes)`);
    }
    expect(bad).toEqual([]);
    figures('corrupt-db', { cases: cases.length, refused: results.length, messages: results.map((x) => x.r.stderr[0]!.replace(/^.*gaffer\.db is /, '').slice(0, 40)).join(' | ') });
  }, 90_000);
});
