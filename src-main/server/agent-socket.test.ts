/**
 * The agent socket over real sockets on 127.0.0.1 (port 0), with a manual core clock.
 * Tests assert values and states, never durations.
 */
import net from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import WebSocket, * as wsModule from 'ws';
import { MAX_FRAME_BYTES } from '../common/protocol';
import { stateDigest } from '../core/tests/test-core';
import { OVERSIZE_READ_BYTES, textFrame } from './agent-socket';
import { startHarness, TestAgent, until, type Harness } from './tests/agent-socket.testkit';

let h: Harness;
const agents: TestAgent[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const a of agents.splice(0)) a.ws.terminate();
  await h?.close();
});

async function hello(token: string, role = 'dev', name = 'agent', extra: Record<string, unknown> = {}) {
  const a = await TestAgent.hello(h.url, token, role, name, extra);
  agents.push(a);
  return a;
}

async function connect(opts: { token?: string; headers?: Record<string, string> } = {}) {
  const a = await TestAgent.connect(h.url, opts);
  agents.push(a);
  return a;
}

const auditRows = (type: string) =>
  h.core.db.prepare('SELECT subject, actor, detail FROM audit WHERE type = ? ORDER BY id').all(type) as Array<{ subject: string; actor: string; detail: string }>;

describe('claim race', () => {
  it('50 agents race for 1000 tasks: each claimed exactly once, all reported, audit complete', async () => {
    h = await startHarness({ hub: { rateBurst: 100_000 } });
    const TASKS = 1000;
    const AGENTS = 50;
    const ids = h.core.store.write(() =>
      Array.from({ length: TASKS }, (_, i) => h.core.tasks.create({ title: `t${i}`, role: 'dev', priority: i % 7 }, { actor: 'op' }).task.id),
    );
    const token = h.token('dev');
    const fleet = await Promise.all(Array.from({ length: AGENTS }, (_, i) => hello(token, 'dev', `a${i}`)));
    const claimed: Array<{ taskId: number; by: string; attempt: number }> = [];
    await Promise.all(
      fleet.map(async (a) => {
        for (;;) {
          const c = await a.request('claim');
          expect(c.ok).toBe(true);
          if (c.result.task === null) return;
          const { task, lock } = c.result;
          expect(task.lock.instanceId).toBe(a.instanceId);
          claimed.push({ taskId: task.id, by: a.instanceId, attempt: task.attempt });
          const r = await a.request('report', { taskId: task.id, fence: lock.fence, status: 'done' });
          expect(r.result.task.status).toBe('done');
        }
      }),
    );
    expect(claimed).toHaveLength(TASKS);
    expect(new Set(claimed.map((c) => c.taskId)).size).toBe(TASKS);
    expect(claimed.every((c) => c.attempt === 1)).toBe(true);
    expect(new Set(claimed.map((c) => c.by)).size).toBeGreaterThan(1);
    const byStatus = h.core.db.prepare('SELECT status, count(*) AS n FROM tasks GROUP BY status').all();
    expect(byStatus).toEqual([{ status: 'done', n: TASKS }]);
    expect(h.core.db.prepare('SELECT count(*) AS n FROM locks').get()).toEqual({ n: 0 });
    // Audit: exactly one claim and one release per task, by the instance that claimed it.
    const holder = new Map(claimed.map((c) => [`task:${c.taskId}`, c.by]));
    for (const type of ['lock.claim', 'lock.release']) {
      const rows = auditRows(type);
      expect(rows).toHaveLength(TASKS);
      expect(new Set(rows.map((r) => r.subject))).toEqual(new Set(ids.map((id) => `task:${id}`)));
      expect(rows.every((r) => holder.get(r.subject) === r.actor)).toBe(true);
    }
    expect(auditRows('lock.reject')).toHaveLength(0);
    expect(h.core.audit.verify()).toMatchObject({ ok: true });
    // Group commit did its job: far fewer transactions than writes.
    expect(h.core.committer.stats.batches).toBeLessThan(h.core.committer.stats.ops);
  });
});

describe('replies on the wire', () => {
  it('a reply leaves the server as one write of one whole frame: no cork, no writev', async () => {
    h = await startHarness();
    h.core.tasks.create({ title: 'a', role: 'dev' }, { actor: 'op' });
    const a = await hello(h.token('dev'));
    // Only the server's end of the connection (an accepted socket knows its server).
    const isServerSide = (s: unknown) => (s as { server?: unknown }).server != null;
    const write = vi.spyOn(net.Socket.prototype, 'write');
    const cork = vi.spyOn(net.Socket.prototype, 'cork');
    const c = await a.request('claim');
    expect(c.ok).toBe(true);
    const writes = write.mock.calls.filter((_, i) => isServerSide(write.mock.contexts[i]));
    expect(writes).toHaveLength(1);
    const frame = writes[0]![0] as Buffer;
    expect(frame[0]).toBe(0x81); // FIN, text
    expect(JSON.parse(frame.subarray(frame[1] === 126 ? 4 : 2).toString('utf8'))).toEqual(c);
    expect(cork.mock.contexts.filter(isServerSide)).toHaveLength(0);
  });

  it('textFrame is the frame ws would send, at every header size', () => {
    // ws's own framing (its Sender is not in its type declarations).
    const { Sender } = wsModule as unknown as { Sender: { frame(data: Buffer, o: Record<string, unknown>): Buffer[] } };
    for (const n of [0, 1, 125, 126, 127, 65_535, 65_536, 70_000]) {
      for (const text of ['x'.repeat(n), 'é'.repeat(Math.ceil(n / 2)), '😀'.repeat(Math.ceil(n / 4))]) {
        const data = Buffer.from(text);
        const ws = Sender.frame(data, { fin: true, opcode: 1, mask: false, readOnly: false, rsv1: false });
        expect(textFrame(text).equals(Buffer.concat(ws))).toBe(true);
      }
    }
  });
});

describe('upgrade checks', () => {
  it('a foreign Origin is refused with 403 before the handshake, and audited', async () => {
    h = await startHarness();
    const token = h.token();
    const digest = stateDigest(h.core);
    await expect(connect({ token, headers: { origin: 'https://evil.example' } })).rejects.toMatchObject({ status: 403 });
    await expect(connect({ headers: { origin: `http://127.0.0.1:${h.port}` } })).rejects.toMatchObject({ status: 403 });
    expect(h.agentSocket.connections).toBe(0);
    expect(stateDigest(h.core)).toBe(digest);
    await until(() => auditRows('session.origin_rejected').length === 2);
    expect(JSON.parse(auditRows('session.origin_rejected')[0]!.detail)).toMatchObject({ origin: 'https://evil.example' });
  });

  it('an allow-listed Origin is accepted', async () => {
    h = await startHarness({ socket: { allowedOrigins: ['http://console.local'] } });
    const a = await connect({ token: h.token(), headers: { origin: 'http://console.local' } });
    expect(a.ws.readyState).toBe(WebSocket.OPEN);
  });

  it('a bad Authorization token is refused with 401; a bad hello token with unauthorized + 4401', async () => {
    h = await startHarness();
    const digest = stateDigest(h.core);
    const err = await connect({ token: 'gft_not-a-token' }).catch((e) => e);
    expect(err.status).toBe(401);
    expect(JSON.parse(err.body)).toEqual({ error: { code: 'unauthorized', status: 401, message: 'bad or revoked token' } });
    await expect(connect({ headers: { authorization: 'Basic abc' } })).rejects.toMatchObject({ status: 401 });
    const a = await connect();
    const r = await a.request('hello', { role: 'dev', name: 'x', token: 'gft_wrong' });
    expect(r).toMatchObject({ ok: false, error: { code: 'unauthorized', status: 401 } });
    expect((await a.closed).code).toBe(4401);
    const b = await connect();
    expect((await b.request('hello', { role: 'dev', name: 'x' })).error!.code).toBe('unauthorized');
    expect((await b.closed).code).toBe(4401);
    expect(stateDigest(h.core)).toBe(digest);
    await until(() => auditRows('session.token_rejected').length === 4);
  });

  it('a role-bound token used for another role: forbidden + 4403', async () => {
    h = await startHarness();
    const a = await connect({ token: h.token('dev') });
    const digest = stateDigest(h.core);
    expect((await a.request('hello', { role: 'pm', name: 'x' })).error).toMatchObject({ code: 'forbidden', status: 403 });
    expect((await a.closed).code).toBe(4403);
    expect(stateDigest(h.core)).toBe(digest);
  });

  it('a foreign Host header is refused with 403 (DNS rebinding)', async () => {
    h = await startHarness();
    await expect(connect({ headers: { host: `evil.example:${h.port}` } })).rejects.toMatchObject({ status: 403 });
  });

  it('connections over the cap are refused with 503', async () => {
    h = await startHarness({ socket: { maxConnections: 2 } });
    const token = h.token();
    await connect({ token });
    await connect({ token });
    await expect(connect({ token })).rejects.toMatchObject({ status: 503 });
  });

  it('one token holds at most 64 sockets: the 65th is refused 429 too_many_connections, other tokens still connect, a closed one frees a place', async () => {
    h = await startHarness();
    const [a, b] = [h.token(), h.token()];
    const mine = await Promise.all(Array.from({ length: 64 }, () => connect({ token: a })));
    expect(h.core.hub.tokenConnections(h.core.tokens.verify(a)!.id)).toBe(64);
    const refused = await connect({ token: a }).catch((e: { status: number; body: string }) => e);
    expect(refused).toMatchObject({ status: 429 });
    expect(JSON.parse((refused as { body: string }).body).error).toMatchObject({ code: 'too_many_connections', status: 429, message: expect.stringContaining('64 sockets') });
    // Another token is not touched by it.
    const theirs = await hello(b, 'dev', 'other');
    expect(theirs.instanceId).toMatch(/^inst_/);
    // The same token given only in hello, on a token-less socket: refused there, closed 4429.
    const late = await connect();
    const r = await late.request('hello', { role: 'dev', name: 'late', token: a });
    expect(r).toMatchObject({ ok: false, error: { code: 'too_many_connections', status: 429 } });
    expect((await late.closed).code).toBe(4429);
    // One of A's closes: its place is free again.
    mine[0]!.ws.close();
    await until(() => h.core.hub.tokenConnections(h.core.tokens.verify(a)!.id) === 63, 'a place freed');
    expect((await hello(a, 'dev', 'again')).instanceId).toMatch(/^inst_/);
    await expect(connect({ token: a })).rejects.toMatchObject({ status: 429 });
    expect(auditRows('session.capacity_rejected').length).toBeGreaterThanOrEqual(2);
  });

  it('token-less sockets have their own budget: they never keep a real agent out', async () => {
    h = await startHarness({ socket: { maxConnections: 3, maxPendingConnections: 4 } });
    const token = h.token();
    // Before: every socket counted against one cap, so these four (and 1 100 of them with the
    // default cap of 1 000) kept a real agent out with 503.
    const idle = await Promise.all([1, 2, 3, 4].map(() => connect()));
    const fifth = await connect().catch((e: { status: number; body: string }) => e);
    expect(fifth).toMatchObject({ status: 503 });
    expect(JSON.parse((fifth as { body: string }).body).error.message).toBe('too many agent connections waiting to authenticate (limit 4)');
    const real = await hello(token, 'dev', 'real');
    expect(real.instanceId).toMatch(/^inst_/);
    // A token-less socket joins the main cap when its hello authenticates it ...
    expect((await idle[0]!.request('hello', { role: 'dev', name: 'late', token })).ok).toBe(true);
    expect(h.core.hub.authenticatedCount).toBe(2);
    await connect({ token }); // 3 of 3
    // ... and is refused, and closed 1013, when that cap is full.
    const r = await idle[1]!.request('hello', { role: 'dev', name: 'too late', token });
    expect(r).toMatchObject({ ok: false, error: { code: 'unavailable', status: 503, message: 'too many agent connections (limit 3)' } });
    expect((await idle[1]!.closed).code).toBe(1013);
    // The rest give up at the hello timeout.
    h.clock.advance(10_000);
    expect((await idle[2]!.closed).code).toBe(4408);
    await until(() => h.core.hub.unauthenticatedCount === 0);
    expect((await connect()).ws.readyState).toBe(WebSocket.OPEN);
  });
});

describe('protocol abuse', () => {
  async function setup() {
    h = await startHarness();
    const token = h.token('dev');
    h.core.tasks.create({ title: 'a', role: 'dev' }, { actor: 'op' });
    h.core.tasks.create({ title: 'b', role: 'dev' }, { actor: 'op' });
    const a = await hello(token, 'dev', 'a');
    const b = await hello(token, 'dev', 'b');
    const claimA = await a.request('claim');
    return { token, a, b, claimA };
  }

  it('malformed JSON, unknown type and wrong field types get bad_request (with the id when readable); nothing changes', async () => {
    const { a } = await setup();
    const digest = stateDigest(h.core);
    expect(await a.text('{"id": 1, "type": "claim"')).toEqual({ id: null, ok: false, error: { code: 'bad_request', status: 400, message: 'malformed JSON' } });
    expect(await a.raw({ id: 'u1', type: 'steal_everything' }, 'u1')).toEqual({
      id: 'u1',
      ok: false,
      error: { code: 'bad_request', status: 400, message: 'unknown message type "steal_everything"' },
    });
    const wrong = await a.raw({ id: 'w1', type: 'report', taskId: '1', fence: 1, status: 'done' }, 'w1');
    expect(wrong).toMatchObject({ id: 'w1', ok: false, error: { code: 'bad_request', status: 400 } });
    expect(wrong.error!.message).toMatch(/taskId/);
    expect(await a.raw({ id: 'w2', type: 'claim', role: 'no spaces allowed' }, 'w2')).toMatchObject({ ok: false, error: { code: 'bad_request' } });
    expect(await a.raw({ type: 'heartbeat' })).toMatchObject({ id: null, ok: false, error: { code: 'bad_request' } });
    expect(stateDigest(h.core)).toBe(digest);
    expect(a.ws.readyState).toBe(WebSocket.OPEN);
    expect((await a.request('heartbeat')).ok).toBe(true);
  });

  it('text that cannot be stored (an unpaired surrogate) is bad_request naming the field; nothing changes', async () => {
    const { a, claimA } = await setup();
    const digest = stateDigest(h.core);
    const audit = h.core.audit.count();
    const { task, lock } = claimA.result;
    const frames: Array<[Record<string, unknown>, string]> = [
      [{ type: 'create_task', title: 'lone', role: 'dev', idempotencyKey: 'k-\ud800-x' }, 'idempotencyKey'],
      [{ type: 'create_task', title: 't', role: 'dev', payload: { ['k\udc00']: 1 } }, 'payload.k\ufffd'],
      [{ type: 'report', taskId: task.id, fence: lock.fence, status: 'done', note: 'half \ud83d' }, 'note'],
      [{ type: 'report', taskId: task.id, fence: lock.fence, status: 'done', output: { list: ['ok', '\udfff'] } }, 'output.list.1'],
    ];
    for (const [frame, field] of frames) {
      const r = await a.request(frame.type as string, frame);
      expect(r, JSON.stringify(frame)).toMatchObject({ ok: false, error: { code: 'bad_request', status: 400 } });
      expect(r.error!.message).toBe(`invalid ${frame.type} at "${field}": ${field.includes('\ufffd') ? 'a key ' : ''}must be valid Unicode text (it holds an unpaired UTF-16 surrogate, which cannot be stored)`);
    }
    expect(stateDigest(h.core)).toBe(digest);
    expect(h.core.audit.count()).toBe(audit);
    expect(a.ws.readyState).toBe(WebSocket.OPEN);
    // A text frame whose bytes are not UTF-8 never reaches the parser: ws closes with 1007.
    a.ws.send(Buffer.from([0x7b, 0xff, 0x7d]), { binary: false });
    expect((await a.closed).code).toBe(1007);
    expect(h.core.audit.verify()).toMatchObject({ ok: true });
  });

  it('an oversize frame gets too_large (with its id) and close 4413; nothing changes', async () => {
    h = await startHarness();
    const token = h.token();
    const digest = stateDigest(h.core);
    // The id first, or last behind 256 KiB of payload (as the Node SDK used to send it).
    for (const [frame, id] of [
      [{ id: 1, type: 'hello', role: 'dev', name: 'x'.repeat(MAX_FRAME_BYTES) }, 1],
      [{ type: 'report', taskId: 1, fence: 1, status: 'done', output: { id: 'inner', blob: 'y'.repeat(MAX_FRAME_BYTES) }, id: 'big-1' }, 'big-1'],
    ] as const) {
      const a = await connect({ token });
      const reply = await a.text(JSON.stringify(frame), id);
      expect(reply).toEqual({ id, ok: false, error: { code: 'too_large', status: 413, message: `frame larger than ${MAX_FRAME_BYTES} bytes` } });
      expect((await a.closed).code).toBe(4413);
    }
    // Beyond what is read at all: still too_large and 4413, without an id.
    const far = await connect({ token });
    const reply = await far.text(JSON.stringify({ id: 2, type: 'hello', name: 'z'.repeat(OVERSIZE_READ_BYTES) }));
    expect(reply).toMatchObject({ id: null, ok: false, error: { code: 'too_large' } });
    expect((await far.closed).code).toBe(4413);
    expect(stateDigest(h.core)).toBe(digest);
  });

  it('an oversize frame from a working agent closes it; its task only returns after the grace', async () => {
    const { a, claimA } = await setup();
    a.ws.send('x'.repeat(MAX_FRAME_BYTES + 1));
    expect((await a.closed).code).toBe(4413);
    await until(() => h.core.instances.get(a.instanceId).status === 'disconnected');
    expect(h.core.tasks.get(claimA.result.task.id).lock!.instanceId).toBe(a.instanceId);
  });

  it('first frame not hello → 4400; no hello in time → 4408', async () => {
    h = await startHarness({ hub: { helloTimeoutMs: 10_000 } });
    const token = h.token();
    const digest = stateDigest(h.core);
    const a = await connect({ token });
    expect(await a.raw({ id: 1, type: 'claim' }, 1)).toMatchObject({ ok: false, error: { code: 'bad_request' } });
    expect((await a.closed).code).toBe(4400);
    const b = await connect({ token });
    await until(() => h.core.hub.connectionCount === 1);
    h.clock.advance(10_000);
    expect(await b.closed).toEqual({ code: 4408, reason: 'no hello within 10000 ms' });
    expect(stateDigest(h.core)).toBe(digest);
  });

  it('report with a stale fence, and report by another instance: 409 not_holder, audited, nothing changes', async () => {
    const { a, b, claimA } = await setup();
    const task = claimA.result.task;
    // Make a's fence stale: the operator takes the task back and b claims it (fence 2)... then a reports.
    h.core.tasks.forceRelease({ taskId: task.id, reason: 'test', actor: 'operator:t' });
    const claimB = await b.request('claim');
    expect(claimB.result.task.id).toBe(task.id);
    expect(claimB.result.lock.fence).toBe(2);
    const digest = stateDigest(h.core);
    const stale = await a.request('report', { taskId: task.id, fence: 1, status: 'done' });
    expect(stale).toMatchObject({ ok: false, error: { code: 'not_holder', status: 409 } });
    const other = await a.request('report', { taskId: task.id, fence: 2, status: 'done' });
    expect(other).toMatchObject({ ok: false, error: { code: 'not_holder', status: 409, message: `task ${task.id} is held by another instance` } });
    expect((await a.request('renew', { taskId: task.id, fence: 1 })).error).toMatchObject({ code: 'not_holder' });
    expect(stateDigest(h.core)).toBe(digest);
    expect(auditRows('lock.reject').map((r) => [r.actor, JSON.parse(r.detail).op])).toEqual([
      [a.instanceId, 'report'],
      [a.instanceId, 'report'],
      [a.instanceId, 'renew'],
    ]);
    // The holder's report wins (P5).
    expect((await b.request('report', { taskId: task.id, fence: 2, status: 'done' })).result.task.status).toBe('done');
  });
});

describe('recovery', () => {
  it('an agent killed mid-task: its task returns after the grace and is re-claimed with attempt 2, previouslyExpired', async () => {
    h = await startHarness();
    const token = h.token('dev');
    const taskId = h.core.tasks.create({ title: 'long job', role: 'dev' }, { actor: 'op' }).task.id;
    const a = await hello(token, 'dev', 'a');
    const b = await hello(token, 'dev', 'b');
    expect((await a.request('claim')).result.task.id).toBe(taskId);
    a.kill();
    await until(() => h.core.instances.get(a.instanceId).status === 'disconnected', 'disconnect');
    expect((await b.request('claim')).result).toEqual({ task: null });
    h.clock.advance(h.core.config.reconnectGraceS * 1000 - 1);
    await new Promise((r) => setImmediate(r));
    expect(h.core.tasks.get(taskId).status).toBe('in_progress');
    h.clock.advance(1);
    await until(() => h.core.tasks.get(taskId).status === 'backlog', 'expiry');
    const c = await b.request('claim');
    expect(c.result.task).toMatchObject({ id: taskId, attempt: 2, previouslyExpired: true });
    expect(c.result.lock.fence).toBe(2);
    expect(h.core.instances.get(a.instanceId).status).toBe('offline');
    expect(JSON.parse(auditRows('lock.expire')[0]!.detail)).toMatchObject({ holder: a.instanceId, reason: 'disconnected' });
  });

  it('reconnect within the grace resumes the instance with its locks', async () => {
    h = await startHarness();
    const token = h.token('dev');
    h.core.tasks.create({ title: 't', role: 'dev' }, { actor: 'op' });
    const a = await hello(token, 'dev', 'a');
    const claim = await a.request('claim');
    a.kill();
    await until(() => h.core.instances.get(a.instanceId).status === 'disconnected');
    h.clock.advance(9_000);
    const again = await hello(token, 'dev', 'a', { instanceId: a.instanceId });
    expect(again.instanceId).toBe(a.instanceId);
    h.clock.advance(60_000);
    const r = await again.request('report', { taskId: claim.result.task.id, fence: claim.result.lock.fence, status: 'done' });
    expect(r.result.task.status).toBe('done');
  });

  it('core.close() closes live agent sockets with 1001 and marks their instances disconnected', async () => {
    h = await startHarness();
    const token = h.token('dev');
    const a = await hello(token, 'dev', 'a');
    const dbPath = h.core.dbPath;
    h.core.close();
    expect((await a.closed).code).toBe(1001);
    const Database = (await import('better-sqlite3')).default;
    const db = new Database(dbPath, { readonly: true });
    try {
      expect(db.prepare('SELECT status FROM instances WHERE id = ?').get(a.instanceId)).toEqual({ status: 'disconnected' });
    } finally {
      db.close();
    }
  });

  it('revoking a token cuts its live sockets off at once (4403)', async () => {
    h = await startHarness();
    const t = h.core.tokens.create({ name: 'x', role: 'dev', actor: 'test' });
    const a = await hello(t.token, 'dev', 'a');
    h.core.tokens.revoke({ id: t.id, reason: 'leaked', actor: 'operator:me' });
    expect((await a.closed).code).toBe(4403);
    await expect(connect({ token: t.token })).rejects.toMatchObject({ status: 401 });
  });
});

describe('create_task idempotency', () => {
  it('a repeat within the window replays; a different body conflicts; after the window it is new', async () => {
    h = await startHarness({ config: { idempotencyWindowS: 300 } });
    const a = await hello(h.token('dev'));
    const body = { title: 'nightly', role: 'dev', payload: { n: 1 }, idempotencyKey: 'k-1' };
    const first = await a.request('create_task', body);
    expect(first.result).toMatchObject({ replayed: false, task: { title: 'nightly', status: 'backlog' } });
    h.clock.advance(299_000);
    const again = await a.request('create_task', body);
    expect(again.result).toEqual({ replayed: true, task: first.result.task });
    const digest = stateDigest(h.core);
    expect((await a.request('create_task', { ...body, title: 'other' })).error).toMatchObject({ code: 'conflict', status: 409 });
    expect(stateDigest(h.core)).toBe(digest);
    h.clock.advance(2_000);
    const later = await a.request('create_task', body);
    expect(later.result.replayed).toBe(false);
    expect(later.result.task.id).not.toBe(first.result.task.id);
    // Same key in the same group commit: still one task.
    const [x, y] = await Promise.all([a.request('create_task', { ...body, idempotencyKey: 'k-2' }), a.request('create_task', { ...body, idempotencyKey: 'k-2' })]);
    expect([x.result.replayed, y.result.replayed]).toEqual([false, true]);
    expect(y.result.task.id).toBe(x.result.task.id);
  });

  it('keys are per caller (PROTOCOL §17): another token, or the operator, with the same key is another task; one token’s instances share them', async () => {
    h = await startHarness();
    const tokenA = h.token('dev');
    const a1 = await hello(tokenA, 'dev', 'a1');
    const a2 = await hello(tokenA, 'dev', 'a2');
    const b = await hello(h.token('dev'), 'dev', 'b');
    const mine = await a1.request('create_task', { title: 'pay invoice 42', role: 'dev', idempotencyKey: 'invoice-42' });
    // The same token from another instance (a reconnect, a second worker): the same intent, replayed.
    expect((await a2.request('create_task', { title: 'pay invoice 42', role: 'dev', idempotencyKey: 'invoice-42' })).result).toEqual({ replayed: true, task: mine.result.task });
    // Another token’s key of the same name is its own, whatever its body.
    const theirs = await b.request('create_task', { title: 'file invoice 42', role: 'dev', idempotencyKey: 'invoice-42' });
    expect(theirs.result).toMatchObject({ replayed: false, task: { title: 'file invoice 42' } });
    expect((await b.request('create_task', { title: 'pay invoice 42', role: 'dev', idempotencyKey: 'invoice-42' })).error).toMatchObject({ code: 'conflict' });
    // The operator (any channel) too; and the operator’s repeat replays its own.
    const op = h.core.tasks.create({ title: 'review invoice 42', role: 'dev', idempotencyKey: 'invoice-42' }, { actor: 'operator:desktop' });
    expect(op).toMatchObject({ replayed: false, task: { title: 'review invoice 42' } });
    expect(h.core.tasks.create({ title: 'review invoice 42', role: 'dev', idempotencyKey: 'invoice-42' }, { actor: 'operator:http', caller: 'operator' })).toEqual({ replayed: true, task: op.task });
    expect(new Set([mine.result.task.id, theirs.result.task.id, op.task.id]).size).toBe(3);
  });
});

describe('pushes', () => {
  it('a job_trigger sent to the picked one of 10 instances reaches that socket only, exactly as its schema says; a closed one is not sent to', async () => {
    h = await startHarness();
    const token = h.token('ops');
    const fleet: TestAgent[] = [];
    for (let i = 0; i < 10; i++) fleet.push(await hello(token, 'ops', `o${i}`));
    const trigger = {
      type: 'job_trigger' as const,
      runId: 'run_1',
      jobId: 'job_1',
      job: 'daily-sales-report',
      slot: '2026-11-30',
      attempt: 1,
      payload: { channel: 'sales' },
      idempotencyKey: 'job_1:2026-11-30',
      deadline: '2026-11-30T10:00:00.000Z',
      completedSteps: ['fetch'],
      version: 2,
      traceId: 'tr-1',
    };
    const picked = h.core.hub.pick('ops', new Set())!;
    const target = fleet.find((a) => a.instanceId === picked)!;
    expect(h.core.hub.send(picked, trigger)).toBe(true);
    expect(await target.nextPush('job_trigger')).toEqual(trigger);
    await target.request('heartbeat'); // a round trip: any second push would have arrived by now
    expect(fleet.filter((a) => a.pushes.length > 0)).toEqual([target]);
    target.close();
    await until(() => !h.core.hub.connectedInstances('ops').includes(picked), 'the session to end');
    expect(h.core.hub.send(picked, trigger)).toBe(false);
    expect(h.core.hub.pick('ops', new Set(fleet.filter((a) => a !== target).map((a) => a.instanceId)))).toBeNull();
  });
});
