/**
 * Scenario 5 — protocol fuzzing of the agent socket and the HTTP API (thousands of seeded cases).
 *
 * Expected outcome: no crash (no uncaught exception, no `internal` error, no error log line), no
 * state change — every table except the audit log is byte-identical before and after (the fuzz
 * sessions' own instance rows aside), and the only audit rows appended are those refusals are
 * documented to append (`lock.reject`, `session.*`, the fuzz sessions' `instance.*`) — only
 * contracted error codes, statuses and close codes (PROTOCOL.md tables), no prototype pollution,
 * and a valid request still works afterwards. Run in-process (to read the state and catch any
 * error log) and then, smaller, against the real headless server process.
 */
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Logger } from '../../src-main/common/logger';
import { createCore, type Core } from '../../src-main/core/create-core';
import { openDatabase } from '../../src-main/core/db/open';
import { consoleExtensions } from '../../src-main/headless/console-extensions';
import { startServer as startInProcess, type RunningServer } from '../../src-main/server/server';
import type { FuzzContext } from './lib/fuzz';
import { fuzzHttp, fuzzRawHttp, fuzzSessionEnders, fuzzSessions, newTally, tablesDigest, type FuzzTally } from './lib/fuzz-run';
import { api, apiOk, createAgentToken } from './lib/http';
import { assertNoProblems, checkDatabaseFile } from './lib/invariants';
import { figures, pick, rngFor } from './lib/mode';
import { killAllChildren } from './lib/procs';
import { freePort, startServer, tempDir, removeTempDirs } from './lib/server';
import { RawAgent } from './lib/wire';

afterAll(async () => {
  await killAllChildren();
  removeTempDirs();
});

const OPERATOR = 'gfo_fuzz_operator_token_0123456789abcdef';
const ALLOWED_AUDIT = /^(lock\.reject|session\.[a-z_]+)$/;
const isFuzzInstance = (row: Record<string, unknown>) => String(row.name).startsWith('fuzz');

function summary(t: FuzzTally): string {
  const top = (o: Record<string, number>) =>
    Object.entries(o)
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => `${k}:${v}`)
      .join(',');
  return `codes{${top(t.codes)}} closes{${top(t.closes)}} statuses{${top(t.statuses)}}`;
}

/**
 * A task held by a non-fuzz agent, a finished one and an idempotency key the fuzz token used
 * (keys are per caller, so only the fuzz token's own key conflicts): things to be refused about.
 */
async function seed(agentUrl: string, port: number, operatorToken: string, fuzzToken: string): Promise<{ ctx: FuzzContext; holder: RawAgent }> {
  const holder = await RawAgent.hello(agentUrl, (await createAgentToken(port, operatorToken, 'holder', 'dev')).token, 'dev', 'holder');
  await apiOk(port, operatorToken, 'POST', '/tasks', { title: 'done one', role: 'dev' });
  await apiOk(port, operatorToken, 'POST', '/tasks', { title: 'held one', role: 'dev' });
  const keyer = await RawAgent.hello(agentUrl, fuzzToken, 'dev', 'fuzz-seed');
  const keyed = await keyer.request('create_task', { title: 'keyed', role: 'dev', idempotencyKey: 'fuzz-used-key' });
  if (!keyed.ok) throw new Error(`seeding the used key failed: ${JSON.stringify(keyed)}`);
  keyer.kill();
  const d = await holder.request('claim');
  await holder.request('report', { taskId: d.result.task.id, fence: d.result.lock.fence, status: 'done' });
  const h = await holder.request('claim');
  return { ctx: { heldTaskId: h.result.task.id, heldFence: h.result.lock.fence, doneTaskId: d.result.task.id, usedKey: 'fuzz-used-key', role: 'dev' }, holder };
}

describe('protocol fuzzing', () => {
  it('in-process: thousands of bad frames and requests — no crash, no state change, contracted errors only', async () => {
    const t0 = Date.now();
    const rng = rngFor('fuzz');
    const errors: string[] = [];
    const logger: Logger = { info: () => {}, warn: () => {}, error: (m, f) => errors.push(`${m} ${JSON.stringify(f ?? {})}`) };
    const dataDir = tempDir('fuzz');
    const helloTimeoutMs = 1000;
    const core: Core = createCore({ dataDir, logger, config: { idempotencyWindowS: 86_400 }, hub: { pingIntervalMs: 0, helloTimeoutMs } });
    core.start();
    let server: RunningServer | undefined;
    try {
      server = await startInProcess(core, {
        port: 0,
        operatorToken: OPERATOR,
        extensions: consoleExtensions(core, { operatorToken: OPERATOR, dataDir, rendererDir: path.join(dataDir, 'no-renderer') }),
      });
      const { port, agentUrl } = server;
      const fuzzToken = (await createAgentToken(port, OPERATOR, 'fuzz', 'dev')).token;
      const { ctx, holder } = await seed(agentUrl, port, OPERATOR, fuzzToken);
      const agentToken = (await createAgentToken(port, OPERATOR, 'other', null)).token;
      await new Promise((r) => setTimeout(r, 50));
      const digest = tablesDigest(core.db, isFuzzInstance);
      const auditBefore = core.audit.count();

      const ws = newTally();
      await fuzzSessions({ url: agentUrl, token: fuzzToken, ctx }, rng.fork(1), pick(5000, 30_000), ws);
      await fuzzSessionEnders({ url: agentUrl, token: fuzzToken, ctx }, rng.fork(2), pick(3, 12), ws, { helloTimeoutMs, badToken: 'gft_not_a_token' });
      const http = newTally();
      await fuzzHttp({ port, operatorToken: OPERATOR, agentToken }, rng.fork(3), pick(2500, 15_000), http);
      await fuzzRawHttp({ port, operatorToken: OPERATOR, agentToken }, rng.fork(4), pick(150, 1000), http);
      await new Promise((r) => setTimeout(r, 100)); // let refused sessions' bookkeeping commit

      expect(ws.problems, summary(ws)).toEqual([]);
      expect(http.problems, summary(http)).toEqual([]);
      expect(errors).toEqual([]);
      // No prototype pollution anywhere in the server process.
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      expect(Object.prototype.hasOwnProperty.call(Object.prototype, 'polluted')).toBe(false);
      // No state change, and only the documented audit rows.
      expect(tablesDigest(core.db, isFuzzInstance)).toBe(digest);
      const fuzzInstances = new Set(core.instances.list().filter((i) => i.name.startsWith('fuzz')).map((i) => `instance:${i.id}`));
      const appended = core.db.prepare('SELECT type, subject FROM audit WHERE id > ?').all(auditBefore) as Array<{ type: string; subject: string }>;
      const unexpected = appended.filter((r) => !ALLOWED_AUDIT.test(r.type) && !(r.type.startsWith('instance.') && fuzzInstances.has(r.subject)));
      expect(unexpected).toEqual([]);
      expect(core.db.prepare('SELECT count(*) AS n FROM locks').get()).toEqual({ n: 1 });

      // The server still answers valid requests.
      const created = await api(port, OPERATOR, 'POST', '/tasks', { title: 'after the fuzz', role: 'dev' });
      expect(created.status).toBe(201);
      const fresh = await RawAgent.hello(agentUrl, (await createAgentToken(port, OPERATOR, 'after', 'dev')).token, 'dev', 'after');
      const worked: number[] = [];
      for (let i = 0; i < 5 && !worked.includes(created.json.task.id); i++) {
        const c = await fresh.request('claim');
        expect(c.ok && c.result.task, JSON.stringify(c)).toBeTruthy();
        expect((await fresh.request('report', { taskId: c.result.task.id, fence: c.result.lock.fence, status: 'done' })).ok).toBe(true);
        worked.push(c.result.task.id);
      }
      expect(worked).toContain(created.json.task.id);
      fresh.kill();
      holder.kill();
      assertNoProblems(checkDatabaseFile(path.join(dataDir, 'gaffer.db')).problems, 'after the fuzz');
      figures('fuzz-inprocess', { wsCases: ws.cases, httpCases: http.cases, total: ws.cases + http.cases, auditRowsAppended: appended.length, seconds: (Date.now() - t0) / 1000 });
      console.log(`[reliability] fuzz-inprocess ws ${summary(ws)}`);
      console.log(`[reliability] fuzz-inprocess http ${summary(http)}`);
    } finally {
      await server?.close();
      core.close();
    }
  }, pick(180_000, 900_000));

  it('the real headless process survives the same fuzz: alive, unchanged, and still answering', async () => {
    const t0 = Date.now();
    const rng = rngFor('fuzz-process');
    const s = await startServer({ dataDir: tempDir('fuzz-proc'), port: await freePort(), idempotencyWindowS: 86_400 });
    const fuzzToken = (await createAgentToken(s.port, s.operatorToken, 'fuzz', 'dev')).token;
    const { ctx, holder } = await seed(s.agentUrl, s.port, s.operatorToken, fuzzToken);
    const agentToken = (await createAgentToken(s.port, s.operatorToken, 'other', null)).token;
    await new Promise((r) => setTimeout(r, 100));
    const read = () => {
      const db = openDatabase(s.dbPath, { readonly: true });
      try {
        return { digest: tablesDigest(db, isFuzzInstance), audit: (db.prepare('SELECT max(id) AS n FROM audit').get() as { n: number }).n };
      } finally {
        db.close();
      }
    };
    const before = read();
    const ws = newTally();
    await fuzzSessions({ url: s.agentUrl, token: fuzzToken, ctx }, rng.fork(1), pick(1000, 5000), ws);
    await fuzzSessionEnders({ url: s.agentUrl, token: fuzzToken, ctx }, rng.fork(2), 1, ws, { helloTimeoutMs: 10_000, badToken: 'gft_not_a_token' });
    const http = newTally();
    await fuzzHttp({ port: s.port, operatorToken: s.operatorToken, agentToken }, rng.fork(3), pick(500, 3000), http);
    await fuzzRawHttp({ port: s.port, operatorToken: s.operatorToken, agentToken }, rng.fork(4), pick(60, 300), http);
    await new Promise((r) => setTimeout(r, 200));
    expect(ws.problems, summary(ws)).toEqual([]);
    expect(http.problems, summary(http)).toEqual([]);
    expect(s.alive(), s.log()).toBe(true);
    const after = read();
    expect(after.digest).toBe(before.digest);
    const db = openDatabase(s.dbPath, { readonly: true });
    try {
      const fuzzIds = new Set((db.prepare(`SELECT id FROM instances WHERE name LIKE 'fuzz%'`).all() as Array<{ id: string }>).map((r) => `instance:${r.id}`));
      const rows = db.prepare('SELECT type, subject FROM audit WHERE id > ?').all(before.audit) as Array<{ type: string; subject: string }>;
      expect(rows.filter((r) => !ALLOWED_AUDIT.test(r.type) && !(r.type.startsWith('instance.') && fuzzIds.has(r.subject)))).toEqual([]);
    } finally {
      db.close();
    }
    expect(s.log()).not.toMatch(/internal error|api request failed|agent session failed|agent request failed|console request failed|Uncaught|TypeError|RangeError/);
    expect((await api(s.port, s.operatorToken, 'POST', '/tasks', { title: 'after', role: 'dev' })).status).toBe(201);
    holder.kill();
    await s.stop();
    assertNoProblems(checkDatabaseFile(s.dbPath).problems, 'after the process fuzz');
    figures('fuzz-process', { wsCases: ws.cases, httpCases: http.cases, total: ws.cases + http.cases, seconds: (Date.now() - t0) / 1000 });
  }, pick(180_000, 900_000));
});
