import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import net from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startApiTestServer, type ApiTestServer } from './tests/api-server.testkit';
import { csvRecords } from '../core/audit/audit-export';
import { onlineInstance, stateDigest, type TestCore } from '../core/tests/test-core';
import { streamChunks } from './api/router';
import { testRequester, type TestRequestOptions, type TestResponse } from './tests/http-request.testkit';

const OPERATOR = 'op-secret-for-tests';

/** Response bodies are arbitrary JSON that the tests index into freely. */
type Json = any;

type Res = TestResponse;

let api: ApiTestServer;
let core: TestCore;
let port: number;

beforeEach(async () => {
  api = await startApiTestServer(OPERATOR, { version: '9.9.9-test' });
  ({ core, port } = api);
});

afterEach(() => api.close());

const request = testRequester(() => port, OPERATOR);

const get = (path: string, opts?: TestRequestOptions) => request('GET', path, opts);
const post = (path: string, body?: unknown, opts?: TestRequestOptions) => request('POST', path, { ...opts, body });

function expectError(r: Res, status: number, code: string): void {
  expect(r.status, r.text).toBe(status);
  expect(Object.keys(r.body)).toEqual(['error']);
  expect(r.body.error).toMatchObject({ code, status, message: expect.any(String) });
  expect(Object.keys(r.body.error).every((k) => ['code', 'status', 'message', 'detail'].includes(k))).toBe(true);
  expect(r.headers['access-control-allow-origin']).toBeUndefined();
}

/** Everything that can change, including signals (stateDigest covers the task/token tables). */
/** Every item id of a paged list, following `next` as `after` (bounded: a cursor that does not move fails). */
async function pageAll(path: string): Promise<number[]> {
  const out: number[] = [];
  let next: string | null = null;
  for (let pages = 0; pages < 100; pages++) {
    const page = await get(`${path}${next === null ? '' : `&after=${next}`}`);
    expect(page.status, page.text).toBe(200);
    out.push(...page.body.items.map((x: Json) => x.id));
    next = page.body.next;
    if (next === null) return out;
  }
  throw new Error(`${path}: still paging after 100 pages (${out.length} items)`);
}

function digest(): string {
  return `${stateDigest(core)}\n${JSON.stringify(core.db.prepare('SELECT * FROM signals ORDER BY name, key').all())}\n${core.audit.count()}`;
}

describe('guards', () => {
  it('refuses a missing or bad token with 401', async () => {
    const none = await get('/api/v1/status', { token: null });
    expectError(none, 401, 'unauthorized');
    expect(none.headers['www-authenticate']).toMatch(/^Bearer/);
    expectError(await get('/api/v1/status', { token: 'wrong' }), 401, 'unauthorized');
    expectError(await get('/api/v1/status', { token: `${OPERATOR}x` }), 401, 'unauthorized');
    expectError(await get('/api/v1/status', { headers: { authorization: `Basic ${OPERATOR}` }, token: null }), 401, 'unauthorized');
    // An agent token is not an operator token.
    const agent = core.tokens.create({ name: 'a', actor: 'test' }).token;
    expectError(await get('/api/v1/status', { token: agent }), 401, 'unauthorized');
  });

  it('refuses a foreign Origin with 403, allows its own, and never sends CORS headers', async () => {
    const before = digest();
    for (const origin of ['http://evil.example', 'null', `http://127.0.0.1:${port + 1}`, `https://127.0.0.1:${port}`]) {
      expectError(await post('/api/v1/tasks', { title: 't', role: 'dev' }, { headers: { origin } }), 403, 'forbidden');
      expectError(await request('OPTIONS', '/api/v1/tasks', { headers: { origin, 'access-control-request-method': 'POST' } }), 403, 'forbidden');
    }
    expectError(await get('/api/v1/status', { headers: { 'sec-fetch-site': 'cross-site' } }), 403, 'forbidden');
    expect(digest()).toBe(before);
    for (const origin of [`http://127.0.0.1:${port}`, `http://localhost:${port}`]) {
      const r = await get('/api/v1/status', { headers: { origin } });
      expect(r.status).toBe(200);
      expect(r.headers['access-control-allow-origin']).toBeUndefined();
    }
  });

  it('refuses a foreign Host (DNS rebinding) with 403', async () => {
    for (const host of ['evil.example', `evil.example:${port}`, '127.0.0.1', `127.0.0.1:${port + 1}`]) {
      expectError(await get('/api/v1/status', { headers: { host } }), 403, 'forbidden');
    }
    expect((await get('/api/v1/status', { headers: { host: `localhost:${port}` } })).status).toBe(200);
  });

  it('answers only under /api/v1 (other paths fall through)', async () => {
    const r = await get('/api/v2/status');
    expect(r.status).toBe(404);
    expect(r.text).toBe('not the api');
    expect((await get('/api/v1x')).text).toBe('not the api');
  });

  it('routes: unknown path 404, wrong method 404 with Allow, malformed JSON 400, huge body 413', async () => {
    expectError(await get('/api/v1/nope'), 404, 'not_found');
    const wrong = await request('PUT', '/api/v1/tasks');
    expectError(wrong, 404, 'not_found');
    expect(wrong.headers.allow).toBe('POST, GET');
    const before = digest();
    expectError(await request('POST', '/api/v1/tasks', { raw: '{"title": "x",' }), 400, 'bad_request');
    expectError(await request('POST', '/api/v1/tasks', { raw: '[1,2]' }), 400, 'bad_request');
    expectError(await request('POST', '/api/v1/tasks', { raw: JSON.stringify({ title: 'x'.repeat(300_000), role: 'dev' }) }), 413, 'too_large');
    expectError(await get('/api/v1/tasks/%E0%A4%A'), 400, 'bad_request');
    expect(digest()).toBe(before);
  });
});

describe('GET /status', () => {
  it('reports health, version, counts and the recovery bound', async () => {
    const inst = onlineInstance(core, 'dev');
    core.tasks.create({ title: 'a', role: 'dev' }, { actor: 'test' });
    core.tasks.create({ title: 'b', role: 'dev' }, { actor: 'test' });
    const claimed = core.locks.claim({ instanceId: inst });
    core.tasks.create({ title: 'c', role: 'dev' }, { actor: 'test' });
    core.locks.claim({ instanceId: inst });
    core.tasks.forceRelease({ taskId: claimed.task!.id, reason: 'test', actor: 'test' });
    core.signals.set({ name: 's', key: 'k', actor: 'test' });
    const r = await get('/api/v1/status');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      ok: true,
      version: '9.9.9-test',
      protocolVersion: 1,
      serverTime: '2026-11-30T08:00:00.000Z',
      counts: {
        onlineInstances: 1,
        instances: { online: 1, disconnected: 0, offline: 0 },
        tasks: { backlog: 2, in_progress: 1, blocked: 0, done: 0, failed: 0, cancelled: 0 },
        liveLocks: 1,
        expiredToday: 1,
        signals: 1,
        auditEvents: core.audit.count(),
      },
      recoveryBoundS: 180,
      config: { lockWindowS: 7200, heartbeatTimeoutS: 120, sweepIntervalS: 60 },
    });
    expectError(await get('/api/v1/status?x=1'), 400, 'bad_request');
  });
});

describe('tokens', () => {
  it('creates (secret shown once), lists, revokes — audited as operator:http', async () => {
    const created = await post('/api/v1/tokens', { name: 'worker-1', role: 'dev' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ id: expect.stringMatching(/^tok_/), token: expect.stringMatching(/^gft_/), name: 'worker-1', role: 'dev', revokedAt: null });
    expect(core.tokens.verify(created.body.token)?.id).toBe(created.body.id);
    const anyRole = await post('/api/v1/tokens', { name: 'any' });
    expect(anyRole.body.role).toBeNull();

    const list = await get('/api/v1/tokens');
    expect(list.status).toBe(200);
    expect(list.body.items.map((t: Json) => t.id).sort()).toEqual([created.body.id, anyRole.body.id].sort());
    expect(list.text).not.toContain(created.body.token);
    const p1 = await get('/api/v1/tokens?limit=1');
    expect(p1.body.items).toHaveLength(1);
    const p2 = await get(`/api/v1/tokens?limit=1&after=${p1.body.next}`);
    expect(p2.body.items).toHaveLength(1);
    expect(p2.body.next).toBeNull();

    const revoked = await post(`/api/v1/tokens/${created.body.id}/revoke`, { reason: 'rotated' });
    expect(revoked.status).toBe(200);
    expect(revoked.body.token).toMatchObject({ id: created.body.id, revokedAt: '2026-11-30T08:00:00.000Z' });
    expect(core.tokens.verify(created.body.token)).toBeUndefined();
    expectError(await post(`/api/v1/tokens/${created.body.id}/revoke`, { reason: 'again' }), 422, 'invalid_transition');
    const del = await request('DELETE', `/api/v1/tokens/${anyRole.body.id}?reason=${encodeURIComponent('not needed')}`);
    expect(del.body.token.revokedAt).not.toBeNull();

    const audit = core.auditQuery.query({ types: ['token.create', 'token.revoke'] }).items;
    expect(audit.map((e) => [e.type, e.actor])).toEqual([
      ['token.create', 'operator:http'],
      ['token.create', 'operator:http'],
      ['token.revoke', 'operator:http'],
      ['token.revoke', 'operator:http'],
    ]);
    expect(JSON.stringify(audit)).not.toContain(created.body.token);
  });

  it('refuses bad input and changes nothing', async () => {
    // The strict rule: a reason is required (the solo default fills one in; tested under tasks).
    core.operatorSettings.setRequireReason({ on: true, actor: 'test' });
    const { id } = core.tokens.create({ name: 'x', actor: 'test' });
    const before = digest();
    expectError(await post('/api/v1/tokens', {}), 400, 'bad_request');
    expectError(await post('/api/v1/tokens', { name: '  ' }), 400, 'bad_request');
    expectError(await post('/api/v1/tokens', { name: 'a', role: 'bad role!' }), 400, 'bad_request');
    expectError(await post('/api/v1/tokens', { name: 'a', actor: 'someone-else' }), 400, 'bad_request');
    expectError(await post(`/api/v1/tokens/${id}/revoke`, {}), 400, 'bad_request');
    expectError(await post(`/api/v1/tokens/${id}/revoke`, { reason: ' ' }), 400, 'bad_request');
    expectError(await request('DELETE', `/api/v1/tokens/${id}`), 400, 'bad_request');
    expectError(await post('/api/v1/tokens/tok_nope/revoke', { reason: 'r' }), 404, 'not_found');
    expectError(await get('/api/v1/tokens?limit=0'), 400, 'bad_request');
    expectError(await get('/api/v1/tokens?after=tok_unknown'), 400, 'bad_request');
    expect(digest()).toBe(before);
  });
});

describe('tasks', () => {
  it('POST /tasks is idempotent on Idempotency-Key: 201, replay 200, conflict 409, free again after the window', async () => {
    const body = { title: 'write the report', role: 'dev', priority: 5, payload: { n: 1 } };
    const first = await post('/api/v1/tasks', body, { headers: { 'idempotency-key': 'k-1' } });
    expect(first.status).toBe(201);
    expect(first.headers.location).toBe(`/api/v1/tasks/${first.body.task.id}`);
    expect(first.body).toMatchObject({ replayed: false, task: { title: 'write the report', role: 'dev', status: 'backlog', priority: 5, payload: { n: 1 } } });

    core.clock.advance(299_000);
    const replay = await post('/api/v1/tasks', { ...body, payload: { n: 1 } }, { headers: { 'idempotency-key': 'k-1' } });
    expect(replay.status).toBe(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual({ replayed: true, task: first.body.task });

    const before = digest();
    expectError(await post('/api/v1/tasks', { ...body, title: 'something else' }, { headers: { 'idempotency-key': 'k-1' } }), 409, 'conflict');
    expect(digest()).toBe(before);

    core.clock.advance(2_000); // past the 300 s window
    const fresh = await post('/api/v1/tasks', body, { headers: { 'idempotency-key': 'k-1' } });
    expect(fresh.status).toBe(201);
    expect(fresh.body.task.id).not.toBe(first.body.task.id);
    // The key may also come in the body; both must agree.
    expect((await post('/api/v1/tasks', { ...body, idempotencyKey: 'k-2' })).status).toBe(201);
    expect((await post('/api/v1/tasks', { ...body, idempotencyKey: 'k-2' }, { headers: { 'idempotency-key': 'k-2' } })).status).toBe(200);
    const n = core.tasks.list().items.length;
    expectError(await post('/api/v1/tasks', { ...body, idempotencyKey: 'k-3' }, { headers: { 'idempotency-key': 'k-4' } }), 400, 'bad_request');
    // Without a key, every POST is a new task.
    expect((await post('/api/v1/tasks', body)).status).toBe(201);
    expect((await post('/api/v1/tasks', body)).status).toBe(201);
    expect(core.tasks.list().items.length).toBe(n + 2);
    expect(core.auditQuery.query({ type: 'task.create' }).items.every((e) => e.actor === 'operator:http')).toBe(true);
  });

  it('GET /tasks pages with `after=next` in both orders: every task once, in order (search too)', async () => {
    const ids = core.store.write(() => Array.from({ length: 23 }, (_, i) => core.tasks.create({ title: i % 2 ? `odd ${i}` : `even ${i}`, role: 'dev' }, { actor: 'operator:test' }).task.id));
    const odd = ids.filter((_, i) => i % 2);
    for (const [q, want] of [['', ids], ['&q=odd', odd], ['&role=dev&status=backlog', ids]] as const) {
      expect(await pageAll(`/api/v1/tasks?limit=5${q}`), q).toEqual(want);
      expect(await pageAll(`/api/v1/tasks?limit=5&order=desc${q}`), `desc ${q}`).toEqual([...want].reverse());
    }
    // The console's cursor for a descending list, `before`, still works.
    const first = (await get('/api/v1/tasks?limit=5&order=desc')).body;
    expect((await get(`/api/v1/tasks?limit=5&order=desc&before=${first.next}`)).body.items.map((t: Json) => t.id)).toEqual(ids.slice(-10, -5).reverse());
  });

  it("POST /tasks keys are the operator's own: an agent token's key of the same name is another intent (PROTOCOL §17)", async () => {
    const agents = core.tasks.create({ title: 'pay invoice 42', role: 'dev', idempotencyKey: 'invoice-42' }, { actor: 'inst_x', caller: 'token:tok_a' });
    const mine = await post('/api/v1/tasks', { title: 'review invoice 42', role: 'dev' }, { headers: { 'idempotency-key': 'invoice-42' } });
    expect(mine.status).toBe(201);
    expect(mine.body.task.id).not.toBe(agents.task.id);
    const again = await post('/api/v1/tasks', { title: 'review invoice 42', role: 'dev' }, { headers: { 'idempotency-key': 'invoice-42' } });
    expect(again.status).toBe(200);
    expect(again.body.task.id).toBe(mine.body.task.id);
  });

  it('lists with role/status filters and paging; gets one', async () => {
    const ids: number[] = [];
    for (const [title, role] of [
      ['a', 'dev'],
      ['b', 'pm'],
      ['c', 'dev'],
      ['d', 'dev'],
    ]) {
      ids.push((await post('/api/v1/tasks', { title, role })).body.task.id);
    }
    const inst = onlineInstance(core, 'dev');
    core.locks.claim({ instanceId: inst }); // takes 'a'
    const p1 = await get('/api/v1/tasks?role=dev&limit=2');
    expect(p1.body.items.map((t: Json) => t.title)).toEqual(['a', 'c']);
    const p2 = await get(`/api/v1/tasks?role=dev&limit=2&after=${p1.body.next}`);
    expect(p2.body).toMatchObject({ items: [{ title: 'd' }], next: null });
    expect((await get('/api/v1/tasks?status=in_progress')).body.items.map((t: Json) => t.title)).toEqual(['a']);
    expect((await get('/api/v1/tasks?role=pm&status=backlog')).body.items.map((t: Json) => t.title)).toEqual(['b']);
    const one = await get(`/api/v1/tasks/${ids[0]}`);
    expect(one.body.task).toMatchObject({ id: ids[0], status: 'in_progress', lock: { instanceId: inst, fence: 1 } });
    expectError(await get('/api/v1/tasks/999'), 404, 'not_found');
    for (const bad of ['/api/v1/tasks/abc', '/api/v1/tasks/0', '/api/v1/tasks?status=nope', '/api/v1/tasks?limit=1001', '/api/v1/tasks?limit=1&limit=2', '/api/v1/tasks?rol=dev', '/api/v1/tasks?after=-1']) {
      expectError(await get(bad), 400, 'bad_request');
    }
  });

  it('force-release, cancel, retry, unblock, reprioritise — audited as operator:http', async () => {
    const inst = onlineInstance(core, 'dev');
    const t1 = (await post('/api/v1/tasks', { title: 'held', role: 'dev' })).body.task;
    const { lock } = core.locks.claim({ instanceId: inst });
    const released = await post(`/api/v1/tasks/${t1.id}/release`, { reason: 'agent is stuck' });
    expect(released.status).toBe(200);
    expect(released.body.task).toMatchObject({ id: t1.id, status: 'backlog', previouslyExpired: true, lock: null });
    expect(core.auditQuery.query({ subject: `task:${t1.id}`, type: 'operator.force_release' }).items[0]).toMatchObject({
      actor: 'operator:http',
      detail: { holder: inst, fence: lock!.fence, operatorReason: 'agent is stuck' },
    });
    expectError(await post(`/api/v1/tasks/${t1.id}/release`, { reason: 'again' }), 422, 'invalid_transition');

    const cancelled = await post(`/api/v1/tasks/${t1.id}/cancel`, { reason: 'not needed' });
    expect(cancelled.body.task.status).toBe('cancelled');
    expectError(await post(`/api/v1/tasks/${t1.id}/retry`, { reason: 'r' }), 422, 'invalid_transition');

    const t2 = (await post('/api/v1/tasks', { title: 'will fail', role: 'dev' })).body.task;
    const c2 = core.locks.claim({ instanceId: inst });
    core.locks.report({ instanceId: inst, taskId: t2.id, fence: c2.lock!.fence, status: 'failed' });
    expect((await post(`/api/v1/tasks/${t2.id}/retry`, { reason: 'flaky' })).body.task.status).toBe('backlog');
    const c3 = core.locks.claim({ instanceId: inst });
    core.locks.report({ instanceId: inst, taskId: t2.id, fence: c3.lock!.fence, status: 'blocked' });
    expect((await post(`/api/v1/tasks/${t2.id}/unblock`, { reason: 'fixed creds' })).body.task.status).toBe('backlog');
    const pr = await post(`/api/v1/tasks/${t2.id}/reprioritise`, { priority: 50, reason: 'urgent' });
    expect(pr.body.task.priority).toBe(50);
    const ops = core.auditQuery.query({ actor: 'operator:http', text: 'reason' }).items.map((e) => e.type);
    expect(ops).toEqual(['operator.force_release', 'operator.cancel', 'operator.retry', 'operator.unblock', 'operator.reprioritise']);
  });

  it('searches with q, counts a filter and runs a bulk action in chunks; edits a payload and retries with changes', async () => {
    for (let i = 0; i < 3; i++) await post('/api/v1/tasks', { title: `nightly import ${i}`, role: 'etl' });
    const other = (await post('/api/v1/tasks', { title: 'weekly report', role: 'etl', payload: { about: 'imports' } })).body.task;
    const found = await get('/api/v1/tasks?q=import&limit=10');
    expect(found.body.items.map((t: Json) => t.title)).toEqual(['nightly import 0', 'nightly import 1', 'nightly import 2', 'weekly report']);
    expect(found.body.partial).toBe(false);
    const count = await get('/api/v1/tasks/count?role=etl&q=nightly&action=cancel');
    expect(count.body).toMatchObject({ count: 3, exact: true });
    const bulk = await post('/api/v1/tasks/bulk', { action: 'cancel', reason: 'source retired', filter: { role: 'etl', q: 'nightly' }, through: count.body.through });
    expect(bulk.status).toBe(200);
    expect(bulk.body).toMatchObject({ next: null, skipped: [] });
    expect(bulk.body.changed).toHaveLength(3);
    expect(core.auditQuery.query({ type: 'operator.cancel' }).items.map((e) => [e.actor, (e.detail as Json).bulk])).toEqual(Array(3).fill(['operator:http', bulk.body.bulkId]));
    expectError(await post('/api/v1/tasks/bulk', { action: 'reprioritise', reason: 'r', ids: [other.id] }), 400, 'bad_request');
    expectError(await get('/api/v1/tasks/count?q='), 400, 'bad_request');

    const edited = await request('PUT', `/api/v1/tasks/${other.id}/payload`, { body: { payload: { about: 'exports' }, reason: 'renamed' } });
    expect(edited.body.task.payload).toEqual({ about: 'exports' });
    const inst = onlineInstance(core, 'etl');
    const c = core.locks.claim({ instanceId: inst });
    expectError(await request('PUT', `/api/v1/tasks/${other.id}/payload`, { body: { payload: 1, reason: 'r' } }), 409, 'conflict');
    core.locks.report({ instanceId: inst, taskId: other.id, fence: c.lock!.fence, status: 'failed' });
    const retried = await post(`/api/v1/tasks/${other.id}/retry`, { reason: 'with the fix', payload: { about: 'exports', fixed: true } });
    expect(retried.body.task).toMatchObject({ status: 'backlog', payload: { about: 'exports', fixed: true } });
  });

  it('a required reason left out: "no reason given" for a solo operator (the default), refused once reasons are required', async () => {
    const t = (await post('/api/v1/tasks', { title: 'not needed', role: 'dev' })).body.task;
    const u = (await post('/api/v1/tasks', { title: 'kept', role: 'dev' })).body.task;
    expect((await post(`/api/v1/tasks/${t.id}/cancel`, {})).body.task.status).toBe('cancelled');
    expect(core.auditQuery.query({ order: 'desc', limit: 1 }).items[0]).toMatchObject({ type: 'operator.cancel', subject: `task:${t.id}`, detail: { reason: 'no reason given' } });
    core.operatorSettings.setRequireReason({ on: true, actor: 'test' });
    const before = digest();
    expectError(await post(`/api/v1/tasks/${u.id}/cancel`, {}), 400, 'bad_request');
    expectError(await post(`/api/v1/tasks/${u.id}/cancel`, { reason: ' ' }), 400, 'bad_request');
    expect(digest()).toBe(before);
  });

  it('operator actions refuse bad input and change nothing', async () => {
    // The strict rule: a reason is required (the solo default is the test above).
    core.operatorSettings.setRequireReason({ on: true, actor: 'test' });
    const inst = onlineInstance(core, 'dev');
    const t = (await post('/api/v1/tasks', { title: 'held', role: 'dev' })).body.task;
    core.locks.claim({ instanceId: inst });
    const before = digest();
    for (const [path, body] of [
      [`/api/v1/tasks/${t.id}/release`, {}],
      [`/api/v1/tasks/${t.id}/release`, { reason: '' }],
      [`/api/v1/tasks/${t.id}/release`, { reason: 'x', actor: 'mallory' }],
      [`/api/v1/tasks/${t.id}/cancel`, { reason: 5 }],
      [`/api/v1/tasks/${t.id}/reprioritise`, { priority: 1.5, reason: 'r' }],
      [`/api/v1/tasks/${t.id}/reprioritise`, { priority: 1 }],
      ['/api/v1/tasks/x/release', { reason: 'r' }],
      ['/api/v1/tasks', { title: '', role: 'dev' }],
      ['/api/v1/tasks', { title: 't', role: 'no spaces allowed' }],
      ['/api/v1/tasks', { title: 't', role: 'dev', priority: 'high' }],
      ['/api/v1/tasks', { title: 't', role: 'dev', surprise: true }],
      ['/api/v1/tasks', { title: 't', role: 'dev', dependsOn: [0] }],
    ] as const) {
      expectError(await post(path, body), 400, 'bad_request');
    }
    expectError(await post('/api/v1/tasks', { title: 't', role: 'dev' }, { headers: { 'idempotency-key': 'x'.repeat(201) } }), 400, 'bad_request');
    expectError(await post('/api/v1/tasks', { title: 't', role: 'dev', dependsOn: [9999] }), 404, 'not_found');
    expectError(await post('/api/v1/tasks/9999/release', { reason: 'r' }), 404, 'not_found');
    expect(digest()).toBe(before);
  });
});

describe('signals', () => {
  it('sets (201, then 200), reads, lists and clears — audited as operator:http', async () => {
    const first = await post('/api/v1/signals', { name: 'data-ready', key: '2026-11-30' });
    expect(first.status).toBe(201);
    expect(first.body).toEqual({ created: true, signal: { name: 'data-ready', key: '2026-11-30', setAt: '2026-11-30T08:00:00.000Z', actor: 'operator:http' } });
    const again = await post('/api/v1/signals', { name: 'data-ready', key: '2026-11-30', value: { rows: 3 } });
    expect(again.status).toBe(200);
    expect(again.body.signal.value).toEqual({ rows: 3 });
    await post('/api/v1/signals', { name: 'data-ready', key: 'a/b c' });

    expect((await get('/api/v1/signals/data-ready/2026-11-30')).body.signal).toMatchObject({ key: '2026-11-30', value: { rows: 3 } });
    expect((await get(`/api/v1/signals/data-ready/${encodeURIComponent('a/b c')}`)).body.signal.key).toBe('a/b c');
    expectError(await get('/api/v1/signals/data-ready/2026-12-01'), 404, 'not_found');
    const list = await get('/api/v1/signals?name=data-ready&limit=1');
    expect(list.body.items).toHaveLength(1);
    const rest = await get(`/api/v1/signals?name=data-ready&limit=5&after=${encodeURIComponent(list.body.next)}`);
    expect(rest.body.items).toHaveLength(1);
    expect(rest.body.next).toBeNull();

    const cleared = await request('DELETE', '/api/v1/signals/data-ready/2026-11-30', { body: { reason: 'data was wrong' } });
    expect(cleared.status).toBe(200);
    expectError(await get('/api/v1/signals/data-ready/2026-11-30'), 404, 'not_found');
    const types = core.auditQuery.query({ subject: 'signal:data-ready/2026-11-30' }).items.map((e) => [e.type, e.actor]);
    expect(types).toEqual([
      ['signal.set', 'operator:http'],
      ['signal.set', 'operator:http'],
      ['signal.clear', 'operator:http'],
    ]);
  });

  it('refuses bad input and changes nothing', async () => {
    // The strict rule: a reason is required (the solo default fills one in; tested under tasks).
    core.operatorSettings.setRequireReason({ on: true, actor: 'test' });
    await post('/api/v1/signals', { name: 'data-ready', key: 'k' });
    const before = digest();
    for (const body of [{}, { name: 'data-ready' }, { name: 'bad name', key: 'k' }, { name: 'x', key: 'k', actor: 'me' }, { name: 'x', key: '\u0001' }]) {
      expectError(await post('/api/v1/signals', body), 400, 'bad_request');
    }
    expectError(await request('DELETE', '/api/v1/signals/data-ready/k'), 400, 'bad_request');
    expectError(await get('/api/v1/signals?after=%%%'), 400, 'bad_request');
    expectError(await get('/api/v1/signals?limit=x'), 400, 'bad_request');
    expect(digest()).toBe(before);
  });
});

describe('audit', () => {
  function seed(): void {
    for (let i = 1; i <= 30; i++) {
      core.audit.record({ type: i % 3 ? 'demo.plain' : 'demo.special', actor: i % 2 ? 'a1' : 'a2', subject: `task:${i % 4}`, detail: { i, text: i === 7 ? 'needle, "quoted"\nline' : `n${i}` } });
      core.clock.advance(1000);
    }
  }

  it('GET /audit pages both ways and applies every filter', async () => {
    seed();
    const p1 = await get('/api/v1/audit?limit=10');
    expect(p1.body.items.map((e: Json) => e.id)).toEqual(Array.from({ length: 10 }, (_, k) => k + 1));
    expect(p1.body).toMatchObject({ next: '10', partial: false });
    const p2 = await get(`/api/v1/audit?limit=10&after=${p1.body.next}`);
    expect(p2.body.items[0].id).toBe(11);
    const newest = await get('/api/v1/audit?order=desc&limit=5');
    expect(newest.body.items.map((e: Json) => e.id)).toEqual([30, 29, 28, 27, 26]);
    const older = await get(`/api/v1/audit?order=desc&limit=5&before=${newest.body.next}`);
    expect(older.body.items.map((e: Json) => e.id)).toEqual([25, 24, 23, 22, 21]);

    const ids = async (q: string) => (await get(`/api/v1/audit?limit=1000&${q}`)).body.items.map((e: Json) => e.id);
    expect(await ids('type=demo.special')).toEqual([3, 6, 9, 12, 15, 18, 21, 24, 27, 30]);
    expect(await ids('type=demo.special&type=nothing')).toEqual([3, 6, 9, 12, 15, 18, 21, 24, 27, 30]);
    expect((await ids('types=demo.special,demo.plain')).length).toBe(30);
    expect(await ids('actor=a2&type=demo.special')).toEqual([6, 12, 18, 24, 30]);
    expect(await ids('subject=task:3&order=desc')).toEqual([27, 23, 19, 15, 11, 7, 3]);
    expect(await ids(`from=${encodeURIComponent('2026-11-30T08:00:05.000Z')}&to=${encodeURIComponent('2026-11-30T08:00:08.000Z')}`)).toEqual([6, 7, 8]);
    expect(await ids('text=NEEDLE')).toEqual([7]);
    expect(await ids('after=25&before=28')).toEqual([26, 27]);

    for (const bad of ['limit=0', 'limit=1001', 'order=up', 'from=yesterday', 'after=x', 'bogus=1', 'actor=a&actor=b', `text=${'x'.repeat(201)}`]) {
      expectError(await get(`/api/v1/audit?${bad}`), 400, 'bad_request');
    }
    expectError(await get('/api/v1/audit?from=2026-11-30T09:00:00Z&to=2026-11-30T08:00:00Z'), 400, 'bad_request');
    expect((await get('/api/v1/audit/count?type=demo.special')).body).toEqual({ count: 10, exact: true });
  });

  it('GET /audit pages with `after=next` in both orders: every event once, in order (filters too)', async () => {
    seed();
    const all = Array.from({ length: 30 }, (_, k) => k + 1);
    const special = all.filter((i) => i % 3 === 0);
    const text = all.filter((i) => String(i).startsWith('1')); // details `n1`, `n10`…`n19`
    for (const [q, want] of [['', all], ['&type=demo.special', special], ['&text=n1', text], ['&subject=task:1', all.filter((i) => i % 4 === 1)]] as const) {
      expect(await pageAll(`/api/v1/audit?limit=4${q}`), q).toEqual(want);
      expect(await pageAll(`/api/v1/audit?limit=4&order=desc${q}`), `desc ${q}`).toEqual([...want].reverse());
    }
    // A bound still holds next to the cursor; `before` still pages a descending list as before.
    expect(await pageAll('/api/v1/audit?limit=4&order=desc&before=11')).toEqual([10, 9, 8, 7, 6, 5, 4, 3, 2, 1]);
    expect((await get('/api/v1/audit?order=desc&after=20&before=10&limit=100')).body.items.map((e: Json) => e.id)).toEqual([9, 8, 7, 6, 5, 4, 3, 2, 1]);
  });

  it('exports JSONL and CSV as a chunked stream that verifies', async () => {
    seed();
    const jsonl = await get('/api/v1/audit/export?format=jsonl');
    expect(jsonl.status).toBe(200);
    expect(jsonl.headers['content-type']).toBe('application/x-ndjson; charset=utf-8');
    expect(jsonl.headers['transfer-encoding']).toBe('chunked');
    expect(jsonl.headers['content-disposition']).toMatch(/^attachment; filename="gaffer-audit-.*\.jsonl"$/);
    const lines = jsonl.text.trimEnd().split('\n').map((l) => JSON.parse(l));
    expect(lines).toEqual(core.auditQuery.query({ limit: 1000 }).items);

    const check = await request('POST', '/api/v1/audit/verify-export?format=jsonl&contiguous=true', { raw: jsonl.text, headers: { 'content-type': 'application/x-ndjson' } });
    expect(check.body).toMatchObject({ ok: true, rows: 30, coverage: 'chain', anchoredAtGenesis: true });
    const tampered = jsonl.text.replace('"n12"', '"n13"');
    const bad = await request('POST', '/api/v1/audit/verify-export', { raw: tampered });
    expect(bad.body).toMatchObject({ ok: false, brokenAt: 12, reason: 'row content does not match its hash' });

    const csv = await get('/api/v1/audit/export?format=csv&type=demo.special');
    expect(csv.headers['content-type']).toBe('text/csv; charset=utf-8');
    const records: string[][] = [];
    for await (const r of csvRecords([csv.text])) records.push(r.fields);
    expect(records.length).toBe(11);
    expect(records.slice(1).map((r) => Number(r[0]))).toEqual([3, 6, 9, 12, 15, 18, 21, 24, 27, 30]);
    const csvCheck = await request('POST', '/api/v1/audit/verify-export?format=csv', { raw: csv.text });
    expect(csvCheck.body).toMatchObject({ ok: true, rows: 10, coverage: 'rows' });
    expect((await request('POST', '/api/v1/audit/verify-export?format=csv&contiguous=true', { raw: csv.text })).body).toMatchObject({ ok: false, reason: 'gap: rows 4–5 missing' });

    // Bad filters are refused before any byte of the stream is sent.
    expectError(await get('/api/v1/audit/export?format=xml'), 400, 'bad_request');
    expectError(await get('/api/v1/audit/export?limit=5'), 400, 'bad_request');
  });

  it('CSV escaping survives the trip: commas, quotes and newlines in a task title', async () => {
    const title = 'Report, "Q4"\nsecond line';
    await post('/api/v1/tasks', { title, role: 'dev' });
    const csv = await get('/api/v1/audit/export?format=csv&type=task.create');
    const records: string[][] = [];
    for await (const r of csvRecords([csv.text])) records.push(r.fields);
    expect(records).toHaveLength(2);
    const detailCol = records[0]!.indexOf('detail');
    expect(JSON.parse(records[1]![detailCol]!).title).toBe(title);
    expect(csv.text).toContain('"{""title"":""Report, \\""Q4\\""\\nsecond line""');
  });

  it('GET /audit/verify checks the live chain', async () => {
    seed();
    expect((await get('/api/v1/audit/verify')).body).toEqual({ ok: true, checked: 30, firstId: 1, lastId: 30, anchor: 'genesis' });
    expect((await get('/api/v1/audit/verify?after=10&before=21')).body).toEqual({ ok: true, checked: 10, firstId: 11, lastId: 20, anchor: 'previous_row' });
    expectError(await get('/api/v1/audit/verify?after=abc'), 400, 'bad_request');
  });
});

describe('streamChunks', () => {
  /** A response whose socket is "full" (a write completes on 'drain') until the test says otherwise. */
  class SlowRes extends EventEmitter {
    written: string[] = [];
    full = true;
    ended = false;
    destroyed = false;
    write(chunk: string | Uint8Array, cb: () => void): boolean {
      this.written.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString());
      if (this.full) this.once('drain', cb);
      else setImmediate(cb);
      return !this.full;
    }
    end(): void {
      this.ended = true;
    }
  }

  it('waits for drain before pulling the next chunk', async () => {
    const res = new SlowRes();
    let pulled = 0;
    async function* source() {
      for (let i = 0; i < 3; i++) {
        pulled++;
        yield `c${i}`;
      }
    }
    const done = streamChunks(res as unknown as ServerResponse, source());
    await new Promise((r) => setImmediate(r));
    expect(res.written).toEqual(['c0']);
    expect(pulled).toBe(1);
    res.emit('drain');
    await new Promise((r) => setImmediate(r));
    expect(res.written).toEqual(['c0', 'c1']);
    expect(pulled).toBe(2);
    res.full = false;
    res.emit('drain');
    await done;
    expect(res.written).toEqual(['c0', 'c1', 'c2']);
    expect(res.ended).toBe(true);
  });

  it('pulls the next chunk only once the socket has taken the previous one (a chunk may be a view its producer writes again)', async () => {
    const res = new SlowRes();
    res.full = false;
    const ring = new Uint8Array(2);
    const cbs: Array<() => void> = [];
    res.write = (chunk: string | Uint8Array, cb: () => void) => {
      cbs.push(() => {
        res.written.push(Buffer.from(chunk as Uint8Array).toString()); // what the socket sends, read when it takes it
        cb();
      });
      return true; // under the high-water mark: not a reason to wait by itself
    };
    async function* source() {
      for (const c of ['ab', 'cd', 'ef']) {
        ring.set(Buffer.from(c)); // the same memory every time
        yield ring;
      }
    }
    const done = streamChunks(res as unknown as ServerResponse, source());
    for (let i = 0; i < 3; i++) {
      await new Promise((r) => setImmediate(r));
      expect(cbs).toHaveLength(1); // nothing pulled while the socket still has the last chunk
      cbs.shift()!();
    }
    await done;
    expect(res.written).toEqual(['ab', 'cd', 'ef']);
    expect(res.ended).toBe(true);
  });

  it('stops the source when the client goes away', async () => {
    const res = new SlowRes();
    let finalized = false;
    async function* source() {
      try {
        for (let i = 0; ; i++) yield `c${i}`;
      } finally {
        finalized = true;
      }
    }
    const done = streamChunks(res as unknown as ServerResponse, source());
    await new Promise((r) => setImmediate(r));
    res.destroyed = true;
    res.emit('close');
    await done;
    expect(res.written).toEqual(['c0']);
    expect(res.ended).toBe(false);
    expect(finalized).toBe(true);
  });
});

describe('text that cannot be stored is refused at the HTTP boundary', () => {
  /** POST /tasks with these exact bytes as the Idempotency-Key (Node's client re-encodes header strings). */
  function createWithKeyBytes(key: Buffer, body: unknown): Promise<{ status: number; body: Json }> {
    const json = JSON.stringify(body);
    const head = `POST /api/v1/tasks HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${OPERATOR}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(json)}\r\nConnection: close\r\nIdempotency-Key: `;
    return new Promise((resolve, reject) => {
      const sock = net.connect(port, '127.0.0.1', () => sock.end(Buffer.concat([Buffer.from(head), key, Buffer.from(`\r\n\r\n${json}`)])));
      const chunks: Buffer[] = [];
      sock.on('data', (c: Buffer) => chunks.push(c));
      sock.on('error', reject);
      sock.on('close', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: Number(text.slice(9, 12)), body: JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) });
      });
    });
  }

  const before = () => ({ state: stateDigest(core), audit: core.audit.count(), signals: core.db.prepare('SELECT count(*) AS n FROM signals').pluck().get() });

  it('a lone surrogate in a JSON body (the issue 11 reproduction) is a 400 naming the field, and nothing changes', async () => {
    const was = before();
    const r = await post('/api/v1/signals', undefined, { raw: '{"name":"lone","key":"k-\\ud800-x"}' });
    expectError(r, 400, 'bad_request');
    expect(r.body.error.message).toBe('invalid body at "key": must be valid Unicode text (it holds an unpaired UTF-16 surrogate, which cannot be stored)');
    const inPayload = await post('/api/v1/tasks', undefined, { raw: '{"title":"t","role":"dev","payload":{"items":["ok","\\udc00"]}}' });
    expectError(inPayload, 400, 'bad_request');
    expect(inPayload.body.error.message).toMatch(/^invalid body at "payload\.items\.1": must be valid Unicode text/);
    const inKey = await post('/api/v1/tasks', undefined, { raw: '{"title":"t","role":"dev","payload":{"k\\ud800":1}}' });
    expect(inKey.body.error.message).toMatch(/^invalid body at "payload\.k\ufffd": a key must be valid Unicode text/);
    expect(before()).toEqual(was);
    expect(core.audit.verify()).toMatchObject({ ok: true });
  });

  it('a body, a query or a header whose bytes are not UTF-8 is refused, not stored with U+FFFD', async () => {
    const was = before();
    const badBytes = Buffer.concat([Buffer.from('{"name":"lone","key":"k-'), Buffer.from([0xff]), Buffer.from('"}')]);
    const body = await post('/api/v1/signals', undefined, { raw: badBytes });
    expectError(body, 400, 'bad_request');
    expect(body.body.error.message).toBe('request body is not valid UTF-8');
    for (const q of ['actor=%ED%A0%80', 'actor=%FF', 'subject=k-%F0%9F']) {
      const r = await get(`/api/v1/audit?${q}`);
      expectError(r, 400, 'bad_request');
      expect(r.body.error.message).toMatch(/^query parameter "(actor|subject)" is not valid percent-encoded UTF-8$/);
    }
    const header = await createWithKeyBytes(Buffer.from([0x6b, 0xff]), { title: 't', role: 'dev' });
    expect(header.status).toBe(400);
    expect(header.body.error).toMatchObject({ code: 'bad_request', message: 'header "Idempotency-Key" is not valid UTF-8' });
    expectError(await get('/api/v1/signals/lone/k-%ED%A0%80'), 400, 'bad_request');
    expect(before()).toEqual(was);
  });

  it('UTF-8 text arrives as sent: a UTF-8 Idempotency-Key header is the same key as in the body, and a query finds it', async () => {
    const key = 'ключ-调休';
    const viaHeader = await createWithKeyBytes(Buffer.from(key), { title: 'once', role: 'dev' });
    expect(viaHeader.status, JSON.stringify(viaHeader.body)).toBe(201);
    const viaBody = await post('/api/v1/tasks', { title: 'once', role: 'dev', idempotencyKey: key });
    expect(viaBody.status, viaBody.text).toBe(200);
    expect(viaBody.body).toMatchObject({ replayed: true, task: { id: viaHeader.body.task.id } });
    const found = await get(`/api/v1/audit?subject=${encodeURIComponent(`task:${viaHeader.body.task.id}`)}&text=${encodeURIComponent('once')}`);
    expect(found.status, found.text).toBe(200);
    expect(found.body.items.length).toBeGreaterThan(0);
  });
});
