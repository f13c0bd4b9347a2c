/**
 * The hub driven through its transport-agnostic port with fake sockets and a manual clock.
 * (Real sockets: server/agent-socket.test.ts.)
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ManualClock } from '../../common/clock';
import type { SchedulerConfig } from '../../common/config';
import type { Core } from '../create-core';
import { stateDigest } from '../tests/test-core';
import { HubFixture, TestSink, trigger, until, type FakeSocket, type TokenGrant } from '../tests/hub.testkit';
import type { HubOptions } from './ports';

let h: HubFixture | undefined;
let core: Core;
let clock: ManualClock;
afterEach(() => {
  h?.close();
  h = undefined;
});

function setup(hub: HubOptions = {}, config: Partial<SchedulerConfig> = {}) {
  h = new HubFixture(hub, config);
  core = h.core;
  clock = h.clock;
}

const token = (role: string | null = 'dev') => h!.token(role);
const open = (tokenInfo?: TokenGrant) => h!.open(tokenInfo);
const call = (sock: FakeSocket, type: string, fields: Record<string, unknown> = {}) => h!.call(sock, type, fields);
const agent = (role = 'dev', name = 'a', tok = token(role)) => h!.agent(role, name, tok);
const audits = (type: string) => h!.audits(type);

describe('hello', () => {
  it('registers the instance and answers with the contracted fields plus additions', async () => {
    setup();
    const hello: string[] = [];
    core.events.on('session.hello', (e) => hello.push(e.instanceId));
    const sock = open(token());
    const r = await call(sock, 'hello', { role: 'dev', name: 'alpha', version: '1.2' });
    expect(r).toEqual({
      id: r.id,
      ok: true,
      result: {
        instanceId: expect.stringMatching(/^inst_/),
        heartbeatIntervalMs: 20_000,
        lockWindowS: 7200,
        serverTime: '2026-11-30T08:00:00.000Z',
        heartbeatTimeoutS: 120,
        reconnectGraceS: 10,
        protocolVersion: 1,
        resumed: false,
        locks: [],
      },
    });
    expect(core.instances.get(r.result.instanceId)).toMatchObject({ status: 'online', role: 'dev', name: 'alpha', version: '1.2' });
    expect(hello).toEqual([r.result.instanceId]);
    await until(() => audits('session.connect').length === 1);
    // The connection's rows share its session id as trace id.
    const sessionId = core.hub.sessions()[0]!.sessionId;
    const traced = core.db.prepare('SELECT type FROM audit WHERE trace_id = ? ORDER BY id').all(sessionId);
    expect(traced).toEqual([{ type: 'session.connect' }, { type: 'instance.hello' }]);
  });

  it('accepts the token in hello, and refuses a missing or bad one with unauthorized + 4401', async () => {
    setup();
    const t = token(null);
    const good = open();
    expect((await call(good, 'hello', { role: 'ops', name: 'x', token: t.token })).ok).toBe(true);
    const digest = stateDigest(core);
    for (const fields of [{}, { token: 'gft_wrong' }]) {
      const s = open();
      const r = await call(s, 'hello', { role: 'ops', name: 'x', ...fields });
      expect(r.error).toMatchObject({ code: 'unauthorized', status: 401 });
      await until(() => s.closedWith);
      expect(s.closedWith!.code).toBe(4401);
    }
    expect(stateDigest(core)).toBe(digest);
    await until(() => audits('session.token_rejected').length === 2);
  });

  it('a role-bound token refuses other roles: forbidden + 4403', async () => {
    setup();
    const s = open(token('dev'));
    const digest = stateDigest(core);
    const r = await call(s, 'hello', { role: 'pm', name: 'x' });
    expect(r.error).toMatchObject({ code: 'forbidden', status: 403 });
    expect(s.closedWith!.code).toBe(4403);
    expect(stateDigest(core)).toBe(digest);
  });

  it('first frame not hello → bad_request and 4400; nothing within the timeout → 4408', async () => {
    setup({ helloTimeoutMs: 10_000 });
    const a = open(token());
    const r = await call(a, 'claim');
    expect(r.error).toMatchObject({ code: 'bad_request' });
    expect(a.closedWith!.code).toBe(4400);
    const b = open(token());
    clock.advance(9_999);
    expect(b.closedWith).toBeUndefined();
    clock.advance(1);
    expect(b.closedWith!.code).toBe(4408);
    const c = open(token());
    c.conn.receive('{"id":1,');
    expect(c.sent[0]).toEqual({ id: null, ok: false, error: { code: 'bad_request', status: 400, message: 'malformed JSON' } });
    expect(c.closedWith!.code).toBe(4400);
  });

  it('processes requests pipelined behind hello once hello has committed', async () => {
    setup();
    core.tasks.create({ title: 't', role: 'dev' }, { actor: 'op' });
    const s = open(token());
    s.conn.receive(JSON.stringify({ id: 'h', type: 'hello', role: 'dev', name: 'x' }));
    s.conn.receive(JSON.stringify({ id: 'c', type: 'claim' }));
    const claim = await until(() => s.replies('c')[0]);
    expect(claim.result.task.title).toBe('t');
    expect(s.sent.map((m) => m.id)).toEqual(['h', 'c']);
  });
});

describe('sockets per token (PROTOCOL §17)', () => {
  it('a token past its cap is refused at connect (close 4429) and at hello (too_many_connections + 4429); a closed session frees its place', async () => {
    setup({ maxConnectionsPerToken: 2 });
    const a = h!.token();
    const b = h!.token();
    const first = h!.open(a);
    h!.open(a);
    // A transport that did not ask (or raced past) `tokenRoom`: the hub refuses the third itself.
    expect(core.hub.tokenRoom(core.tokens.verify(a.token)!.id)).toMatch(/2 sockets/);
    const third = h!.open(a);
    expect(third.closedWith).toMatchObject({ code: 4429 });
    expect(core.hub.tokenConnections(core.tokens.verify(a.token)!.id)).toBe(2);
    // Given only in hello, on a token-less socket.
    const late = h!.open();
    expect(await h!.call(late, 'hello', { role: 'dev', name: 'late', token: a.token })).toMatchObject({ ok: false, error: { code: 'too_many_connections', status: 429 } });
    expect(late.closedWith).toMatchObject({ code: 4429 });
    // Another token is not touched; a place freed is taken again.
    expect(await h!.call(h!.open(b), 'hello', { role: 'dev', name: 'b' })).toMatchObject({ ok: true });
    first.conn.closed(1000, 'bye');
    expect(core.hub.tokenConnections(core.tokens.verify(a.token)!.id)).toBe(1);
    const again = h!.open();
    expect(await h!.call(again, 'hello', { role: 'dev', name: 'again', token: a.token })).toMatchObject({ ok: true });
    expect(again.closedWith).toBeUndefined();
    expect(core.hub.tokenConnections(core.tokens.verify(a.token)!.id)).toBe(2);
  });
});

describe('requests', () => {
  it('bad input never changes state and keeps the connection open', async () => {
    setup();
    core.tasks.create({ title: 't', role: 'dev' }, { actor: 'op' });
    const { sock } = await agent();
    const digest = stateDigest(core);
    sock.conn.receive('not json');
    sock.conn.receive('[1,2]');
    sock.conn.receive(JSON.stringify({ id: 7, type: 'fly' }));
    sock.conn.receive(JSON.stringify({ id: 8, type: 'renew', taskId: 'one', fence: 1 }));
    sock.conn.receive(JSON.stringify({ id: 9, type: 'report', taskId: 1, fence: 1, status: 'finished' }));
    sock.conn.receive(JSON.stringify({ id: { x: 1 }, type: 'claim' }));
    sock.conn.receive(JSON.stringify({ id: 10, type: 'hello', role: 'dev', name: 'again' }));
    sock.conn.receiveBinary();
    await until(() => sock.sent.length === 9, `8 replies, got ${JSON.stringify(sock.sent)}`);
    const refusals = sock.sent.slice(1);
    expect(refusals.map((m) => [m.id, m.ok, m.error.code])).toEqual([
      [null, false, 'bad_request'],
      [null, false, 'bad_request'],
      [7, false, 'bad_request'],
      [8, false, 'bad_request'],
      [9, false, 'bad_request'],
      [null, false, 'bad_request'],
      [10, false, 'bad_request'],
      [null, false, 'bad_request'],
    ]);
    expect(refusals[2].error.message).toBe('unknown message type "fly"');
    expect(refusals[3].error.message).toMatch(/^invalid renew at "taskId"/);
    expect(sock.closedWith).toBeUndefined();
    expect(stateDigest(core)).toBe(digest);
    expect((await call(sock, 'claim')).ok).toBe(true);
  });

  it('claim, renew, report and create_task map onto the core with wire-shaped results', async () => {
    setup();
    const { sock, id } = await agent();
    const created = await call(sock, 'create_task', { title: 'write docs', role: 'dev', priority: 5, payload: { a: 1 }, idempotencyKey: 'k1' });
    expect(created.result).toMatchObject({ replayed: false, task: { title: 'write docs', status: 'backlog', priority: 5, payload: { a: 1 } } });
    const claim = await call(sock, 'claim');
    expect(claim.result).toEqual({
      task: expect.objectContaining({ id: created.result.task.id, attempt: 1, previouslyExpired: false, status: 'in_progress' }),
      lock: { fence: 1, expiresAt: '2026-11-30T10:00:00.000Z' },
    });
    clock.advance(1800_000);
    expect((await call(sock, 'renew', { taskId: claim.result.task.id, fence: 1 })).result).toEqual({ expiresAt: '2026-11-30T10:30:00.000Z' });
    const rep = await call(sock, 'report', { taskId: claim.result.task.id, fence: 1, status: 'done', note: 'ok', output: { pr: 7 } });
    expect(rep.result.task).toMatchObject({ status: 'done', note: 'ok', output: { pr: 7 }, lock: null });
    expect((await call(sock, 'claim')).result).toEqual({ task: null });
    expect(audits('task.create')[0]!.subject).toBe(`task:${created.result.task.id}`);
    expect(core.db.prepare(`SELECT actor FROM audit WHERE type = 'task.create'`).get()).toEqual({ actor: id });
  });

  it('a role-bound token cannot claim or create for another role', async () => {
    setup();
    const { sock } = await agent('dev');
    const digest = stateDigest(core);
    expect((await call(sock, 'claim', { role: 'pm' })).error).toMatchObject({ code: 'forbidden', status: 403 });
    expect((await call(sock, 'create_task', { title: 'x', role: 'pm' })).error).toMatchObject({ code: 'forbidden' });
    expect(stateDigest(core)).toBe(digest);
    expect(sock.closedWith).toBeUndefined();
  });

  it('rate limit: rate_limited replies (with the id), then 4429 for persistent abuse; no state change', async () => {
    setup({ ratePerSecond: 10, rateBurst: 5, maxRateStrikes: 4 });
    const { sock } = await agent();
    // hello used one token; 4 left.
    const digest = stateDigest(core);
    for (let i = 0; i < 7; i++) sock.conn.receive(JSON.stringify({ id: `x${i}`, type: 'claim' }));
    await until(() => sock.sent.length >= 8);
    // Refusals go out at once; accepted requests after their commit.
    const codes = Object.fromEntries(sock.sent.slice(1).map((m) => [m.id, m.ok ? 'ok' : m.error.code]));
    expect(codes).toEqual({ x0: 'ok', x1: 'ok', x2: 'ok', x3: 'ok', x4: 'rate_limited', x5: 'rate_limited', x6: 'rate_limited' });
    expect(sock.replies('x4')[0]).toEqual({
      id: 'x4',
      ok: false,
      error: { code: 'rate_limited', status: 429, message: 'more than 10 requests per second; slow down' },
    });
    clock.advance(100); // one token back
    expect((await call(sock, 'heartbeat')).ok).toBe(true);
    for (let i = 0; i < 4; i++) sock.conn.receive(JSON.stringify({ id: `y${i}`, type: 'claim' }));
    await until(() => sock.closedWith);
    expect(sock.closedWith!.code).toBe(4429);
    core.instances.writeBeats(); // heartbeats are written in batches (instances/registry.ts, invariant 3)
    expect(stateDigest(core)).not.toBe(digest); // the heartbeat (only) moved last_heartbeat_at
  });

  it('cuts off an agent that stops reading (outgoing buffer over the cap)', async () => {
    setup({ maxBufferedBytes: 1000 });
    const { sock, id } = await agent();
    sock.bufferedAmount = 5000;
    await call(sock, 'heartbeat').catch(() => undefined);
    await until(() => sock.terminated);
    await until(() => core.instances.get(id).status === 'disconnected');
  });
});

describe('sessions', () => {
  it('socket loss: disconnected now, offline after the reconnect grace, task claimable again', async () => {
    setup();
    const taskId = core.tasks.create({ title: 't', role: 'dev' }, { actor: 'op' }).task.id;
    const a = await agent('dev', 'a');
    await call(a.sock, 'claim');
    a.sock.conn.closed(1006, '');
    await until(() => core.instances.get(a.id).status === 'disconnected');
    clock.advance(9_999);
    await new Promise((r) => setImmediate(r));
    expect(core.tasks.get(taskId).status).toBe('in_progress');
    clock.advance(1);
    await until(() => core.tasks.get(taskId).status === 'backlog');
    expect(core.instances.get(a.id).status).toBe('offline');
    const b = await agent('dev', 'b');
    const claim = await call(b.sock, 'claim');
    expect(claim.result.task).toMatchObject({ id: taskId, attempt: 2, previouslyExpired: true });
    expect(claim.result.lock.fence).toBe(2);
  });

  it('resume within the grace keeps the locks; the old socket is superseded without a disconnect', async () => {
    setup();
    const tok = token();
    core.tasks.create({ title: 't', role: 'dev' }, { actor: 'op' });
    const a = await agent('dev', 'a', tok);
    const claim = await call(a.sock, 'claim');
    // A second connection resumes while the first is still (half-)open.
    const s2 = open(tok);
    const r = await call(s2, 'hello', { role: 'dev', name: 'a', instanceId: a.id });
    expect(r.result).toMatchObject({
      instanceId: a.id,
      resumed: true,
      locks: [{ taskId: claim.result.task.id, fence: 1, expiresAt: claim.result.lock.expiresAt }],
    });
    await until(() => a.sock.closedWith);
    expect(a.sock.closedWith!.code).toBe(4409);
    clock.advance(60_000);
    await new Promise((r) => setImmediate(r));
    expect(core.instances.get(a.id).status).toBe('online');
    expect((await call(s2, 'report', { taskId: claim.result.task.id, fence: 1, status: 'done' })).ok).toBe(true);
    // Resume after a real disconnect, within the grace.
    s2.conn.closed(1006, '');
    await until(() => core.instances.get(a.id).status === 'disconnected');
    clock.advance(5_000);
    const s3 = open(tok);
    expect((await call(s3, 'hello', { role: 'dev', name: 'a', instanceId: a.id })).result.resumed).toBe(true);
    clock.advance(60_000);
    await new Promise((r) => setImmediate(r));
    expect(core.instances.get(a.id).status).toBe('online');
  });

  it('the old socket closing while a resume commits (same batch) does not undo the resume', async () => {
    setup();
    const tok = token();
    const a = await agent('dev', 'a', tok);
    const s2 = open(tok);
    s2.conn.receive(JSON.stringify({ id: 'h2', type: 'hello', role: 'dev', name: 'a', instanceId: a.id }));
    a.sock.conn.closed(1006, ''); // its disconnect is queued behind the resume, in the same batch
    const r = await until(() => s2.replies('h2')[0]);
    expect(r.result).toMatchObject({ instanceId: a.id, resumed: true });
    await new Promise((res) => setImmediate(res));
    expect(core.instances.get(a.id).status).toBe('online');
    clock.advance(60_000);
    await new Promise((res) => setImmediate(res));
    expect(core.instances.get(a.id).status).toBe('online');
    expect((await call(s2, 'heartbeat')).ok).toBe(true);
  });

  it('a resume that does not take still lets the old instance go (disconnect, then offline)', async () => {
    setup();
    const a = await agent('dev', 'a');
    const s2 = open(token()); // another token: the registry refuses to resume, gives a new instance
    s2.conn.receive(JSON.stringify({ id: 'h2', type: 'hello', role: 'dev', name: 'a', instanceId: a.id }));
    a.sock.conn.closed(1006, '');
    const r = await until(() => s2.replies('h2')[0]);
    expect(r.result.resumed).toBe(false);
    await until(() => core.instances.get(a.id).status === 'disconnected');
    clock.advance(10_000);
    await until(() => core.instances.get(a.id).status === 'offline');
  });

  it('a resume attempt with another token gets a new instance', async () => {
    setup();
    const a = await agent('dev', 'a');
    const s = open(token());
    const r = await call(s, 'hello', { role: 'dev', name: 'a', instanceId: a.id });
    expect(r.result.resumed).toBe(false);
    expect(r.result.instanceId).not.toBe(a.id);
    expect(a.sock.closedWith).toBeUndefined();
  });

  it('an instance taken offline by the watchdog loses its socket (4410)', async () => {
    setup({}, { heartbeatTimeoutS: 120 });
    const a = await agent();
    clock.advance(121_000);
    core.watchdog.sweep();
    await until(() => a.sock.closedWith);
    expect(a.sock.closedWith!.code).toBe(4410);
    expect(core.instances.get(a.id).status).toBe('offline');
  });

  it('revoking a token closes its live sockets at once (4403)', async () => {
    setup();
    const tok = token();
    const a = await agent('dev', 'a', tok);
    const b = await agent('dev', 'b', tok);
    const other = await agent('dev', 'c');
    core.tokens.revoke({ id: tok.id, reason: 'leaked', actor: 'operator:me' });
    expect(a.sock.closedWith?.code).toBe(4403);
    expect(b.sock.closedWith?.code).toBe(4403);
    expect(other.sock.closedWith).toBeUndefined();
    await until(() => core.instances.get(a.id).status === 'disconnected' && core.instances.get(b.id).status === 'disconnected');
  });

  it('pings sessions silent for 1.25 intervals (checked twice an interval); a pong counts as a heartbeat', async () => {
    setup({ pingIntervalMs: 20_000 });
    const a = await agent();
    clock.advance(20_000);
    expect(a.sock.pings).toBe(0); // one interval of silence is an agent that beats on time
    clock.advance(10_000);
    expect(a.sock.pings).toBe(1);
    a.sock.conn.alive();
    await until(() => core.instances.get(a.id).lastHeartbeatAt === '2026-11-30T08:00:30.000Z');
    clock.advance(20_000);
    expect(a.sock.pings).toBe(1);
    clock.advance(10_000);
    expect(a.sock.pings).toBe(2);
  });

  it('never pings an agent that heartbeats every interval, even a little late', async () => {
    setup({ pingIntervalMs: 20_000 });
    const a = await agent();
    for (let i = 0; i < 5; i++) {
      clock.advance(20_000 + 50); // each beat 50 ms late: one interval of silence and a bit
      expect((await call(a.sock, 'heartbeat')).ok).toBe(true);
    }
    expect(a.sock.pings).toBe(0);
  });

  it('close() closes sockets with 1001, settles prechecks and leaves no timer behind; nothing is picked or sent after', async () => {
    setup({ pingIntervalMs: 20_000 });
    const a = await agent('ops');
    open(token()); // still before hello: has a hello timer
    const pre = core.hub.requestPrecheck('ops', 'data-ready', '2026-11-30', 5000);
    core.close();
    expect(a.sock.closedWith!.code).toBe(1001);
    expect(await pre).toMatchObject({ status: 'disconnected' });
    expect(clock.pendingTimers()).toBe(0);
    expect(core.hub.pick('ops', new Set())).toBeNull();
    expect(core.hub.send(a.id, { type: 'job_trigger', ...trigger('run_1') })).toBe(false);
  });
});

describe('pushes', () => {
  it('pick: the least loaded instance (held locks + the offers the caller counts), then the least recently picked, then the earliest connected', async () => {
    setup();
    core.tasks.create({ title: 't', role: 'ops' }, { actor: 'op' });
    const a = await agent('ops', 'a');
    const b = await agent('ops', 'b');
    const c = await agent('ops', 'c');
    await agent('dev', 'other role');
    await call(a.sock, 'claim'); // a holds a lock
    const offers = new Map<string, number>();
    const pick = (exclude: string[] = []) => {
      const id = core.hub.pick('ops', new Set(exclude), (x) => offers.get(x) ?? 0);
      if (id) offers.set(id, (offers.get(id) ?? 0) + 1);
      return id;
    };
    expect(pick()).toBe(b.id); // load 0, first connected
    expect(pick()).toBe(c.id); // b has an offer out
    expect(pick()).toBe(a.id); // all at load 1: a was never picked
    expect(pick()).toBe(b.id); // all at load 2 again: b was picked longest ago
    expect(pick([b.id, c.id])).toBe(a.id);
    expect(core.hub.pick('ops', new Set([a.id, b.id, c.id]))).toBeNull();
    expect(core.hub.pick('nobody', new Set())).toBeNull();
  });

  it('pick with the caller’s loads memo reads each candidate’s status and held locks into it once, then decides by it', async () => {
    setup();
    core.tasks.create({ title: 't', role: 'ops' }, { actor: 'op' });
    const a = await agent('ops', 'a');
    const b = await agent('ops', 'b');
    await call(a.sock, 'claim'); // a holds a lock
    const loads = new Map<string, { status: string; held: number } | null>();
    expect(core.hub.pick('ops', new Set(), undefined, loads)).toBe(b.id);
    expect(Object.fromEntries(loads)).toEqual({ [a.id]: { status: 'online', held: 1 }, [b.id]: { status: 'online', held: 0 } });
    // Not read again while the caller keeps the memo: what it says decides.
    loads.set(b.id, { status: 'online', held: 5 });
    expect(core.hub.pick('ops', new Set(), undefined, loads)).toBe(a.id);
    // Without one, the database is read afresh.
    expect(core.hub.pick('ops', new Set())).toBe(b.id);
  });

  it('pick skips instances that are not online; send reaches only the bound, ready session', async () => {
    setup();
    const a = await agent('ops', 'a');
    const b = await agent('ops', 'b');
    core.instances.goOffline(a.id, 'heartbeat_timeout', 'test');
    await until(() => a.sock.closedWith !== undefined);
    expect(core.hub.pick('ops', new Set())).toBe(b.id);
    expect(core.hub.send(a.id, { type: 'job_trigger', ...trigger('r1') })).toBe(false);
    expect(core.hub.send(b.id, { type: 'job_trigger', ...trigger('r1') })).toBe(true);
    expect(b.sock.pushes('job_trigger')).toEqual([{ type: 'job_trigger', ...trigger('r1') }]);
    expect(a.sock.pushes('job_trigger')).toEqual([]);
  });

  it('run messages go to the sink with the sender; without a sink they are not_found', async () => {
    setup();
    const a = await agent('ops');
    expect((await call(a.sock, 'run_started', { runId: 'r' })).error).toMatchObject({ code: 'not_found', status: 404 });
    expect((await call(a.sock, 'run_step', { runId: 'r', step: 'send' })).error).toMatchObject({ code: 'not_found' });
    expect((await call(a.sock, 'run_result', { runId: 'r', outcome: 'success' })).error).toMatchObject({ code: 'not_found' });
    const sink = new TestSink();
    core.hub.setRunSink(sink);
    expect((await call(a.sock, 'run_step', { runId: 'r', step: 'send', ref: 'msg-1' })).result).toEqual({});
    expect((await call(a.sock, 'run_result', { runId: 'r', outcome: 'failed', errorClass: 'retryable' })).result).toEqual({
      run: { id: 'r', status: 'failed' },
      replayed: false,
    });
    expect(sink.steps).toEqual([[a.id, 'send']]);
    // A success carries no errorClass: refused before the sink sees it.
    const bad = await call(a.sock, 'run_result', { runId: 'r', outcome: 'success', errorClass: 'fatal' });
    expect(bad.error).toEqual({ code: 'bad_request', status: 400, message: 'invalid run_result at "errorClass": a success has no errorClass (send outcome "failed" with it)' });
  });

  it('precheck: answered by the instance asked; timeout; no instance; disconnected', async () => {
    setup();
    expect(await core.hub.requestPrecheck('ops', 'data-ready', 's', 1000)).toMatchObject({ status: 'no_instance', ready: false });
    const a = await agent('ops', 'a');
    const b = await agent('ops', 'b');
    const p1 = core.hub.requestPrecheck('ops', 'data-ready', '2026-11-30', 1000);
    const asked = [a, b].find((x) => x.sock.pushes('precheck').length === 1)!;
    const other = asked === a ? b : a;
    const push = asked.sock.pushes('precheck')[0];
    expect(push).toEqual({ type: 'precheck', requestId: expect.any(String), check: 'data-ready', slot: '2026-11-30' });
    expect((await call(other.sock, 'precheck_result', { requestId: push.requestId, ready: true })).error).toMatchObject({ code: 'not_found' });
    expect((await call(asked.sock, 'precheck_result', { requestId: push.requestId, ready: false, reason: 'no rows', evidence: { range: ['2026-11-29', '2026-11-30'] } })).result).toEqual({});
    expect(await p1).toEqual({ status: 'answered', instanceId: asked.id, ready: false, reason: 'no rows', evidence: { range: ['2026-11-29', '2026-11-30'] } });
    const p2 = core.hub.requestPrecheck('ops', 'x', 's', 1000);
    clock.advance(1000);
    expect(await p2).toMatchObject({ status: 'timeout', ready: false });
    const p3 = core.hub.requestPrecheck('ops', 'x', 's', 1000);
    a.sock.conn.closed(1006, '');
    b.sock.conn.closed(1006, '');
    expect(await p3).toMatchObject({ status: 'disconnected', ready: false });
  });
});
