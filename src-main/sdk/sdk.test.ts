/**
 * SDK unit tests: pure helpers, error mapping, and wire behaviour against a tiny fake server
 * (plain `ws`). The SDK against the real hub is tested in server/sdk-hub.test.ts.
 */
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocketServer, type WebSocket } from 'ws';
import {
  agentUrl,
  backoffDelay,
  BacklogError,
  BlockedError,
  connect,
  FatalError,
  NeedsHumanError,
  renewIntervalMs,
  RetryableError,
  TaskFailedError,
  type Agent,
} from './index';
import { isWellFormedText } from '../common/text';
import { errorClassOf, errorMessage, reportStatusOf } from './errors';

describe('pure helpers', () => {
  it('renews about every lockWindow/4, at most every 30 min', () => {
    expect(renewIntervalMs(7200)).toBe(30 * 60_000);
    expect(renewIntervalMs(600)).toBe(150_000);
    expect(renewIntervalMs(1)).toBe(250);
  });

  it('backs off exponentially with equal jitter, capped', () => {
    const policy = { initialDelayMs: 100, maxDelayMs: 1000 };
    expect([1, 2, 3, 4, 5, 6].map((n) => backoffDelay(n, policy, () => 0))).toEqual([50, 100, 200, 400, 500, 500]);
    expect([1, 2, 3, 4, 5, 6].map((n) => backoffDelay(n, policy, () => 1))).toEqual([100, 200, 400, 800, 1000, 1000]);
    expect(backoffDelay(3, policy, () => 0.5)).toBe(300);
  });

  it('normalises the URL and refuses a token in it', () => {
    expect(agentUrl('http://127.0.0.1:7311')).toBe('ws://127.0.0.1:7311/agent');
    expect(agentUrl('ws://127.0.0.1:7311/agent')).toBe('ws://127.0.0.1:7311/agent');
    expect(agentUrl('https://localhost:1/')).toBe('wss://localhost:1/agent');
    expect(() => agentUrl('ws://127.0.0.1:7311/agent?token=abc')).toThrow(/token/);
    expect(() => agentUrl('ftp://x')).toThrow(/scheme/);
  });
});

describe('error mapping', () => {
  it('maps outcome errors to job error classes and task report statuses', () => {
    const cases: Array<[unknown, string, string]> = [
      [new RetryableError('x'), 'retryable', 'backlog'],
      [new FatalError('x'), 'fatal', 'failed'],
      [new NeedsHumanError('x'), 'needs_human', 'blocked'],
      [new BlockedError('x'), 'needs_human', 'blocked'],
      [new BacklogError('x'), 'retryable', 'backlog'],
      [new TaskFailedError('x'), 'fatal', 'failed'],
      [new Error('x'), 'retryable', 'failed'],
      ['a string', 'retryable', 'failed'],
      // Duck typing: an error from another copy of the SDK.
      [Object.assign(new Error('x'), { errorClass: 'needs_human' }), 'needs_human', 'blocked'],
      [Object.assign(new Error('x'), { reportStatus: 'backlog' }), 'retryable', 'backlog'],
    ];
    for (const [e, cls, status] of cases) {
      expect([errorClassOf(e, 'retryable'), reportStatusOf(e)]).toEqual([cls, status]);
    }
    expect(new FatalError('bad', { output: { f: 1 } }).output).toEqual({ f: 1 });
    expect(new RetryableError('x').name).toBe('RetryableError');
  });

  it('keeps messages short enough for the wire', () => {
    expect(errorMessage(new Error('boom'))).toBe('boom');
    expect(errorMessage({ a: 1 })).toBe('{"a":1}');
    expect(errorMessage('x'.repeat(20), 10)).toBe(`${'x'.repeat(9)}…`);
  });

  it('cuts a message on a character boundary and mends lone surrogates: Gaffer would refuse the report', () => {
    // 8 x's, then an emoji (two UTF-16 units) across the cut at 9 units + the mark.
    const cut = errorMessage(`${'x'.repeat(8)}\u{1F600}tail`, 10);
    expect(cut).toBe(`${'x'.repeat(8)}…`);
    expect(isWellFormedText(cut)).toBe(true);
    expect(errorMessage(new Error('bad \ud83d half'))).toBe('bad \ufffd half');
    expect(errorMessage(`${'\u{1F600}'.repeat(5)}`, 5)).toBe('\u{1F600}\u{1F600}…');
  });
});

interface FakeRequest {
  id: string;
  type: string;
  instanceId?: string;
}

/** A fake agent socket: answers hello, and lets the test script the rest. */
async function fakeServer(onRequest: (msg: FakeRequest, ws: WebSocket) => void) {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((r) => wss.once('listening', () => r()));
  const sockets: WebSocket[] = [];
  const auth: Array<string | undefined> = [];
  let hellos = 0;
  wss.on('connection', (ws, req) => {
    sockets.push(ws);
    auth.push(req.headers.authorization);
    ws.on('message', (data) => {
      const msg = JSON.parse(data.toString()) as FakeRequest;
      if (msg.type === 'hello') {
        hellos++;
        const result = { instanceId: msg.instanceId ?? 'inst_1', heartbeatIntervalMs: 60_000, lockWindowS: 40, serverTime: new Date().toISOString(), reconnectGraceS: 10, protocolVersion: 1 };
        ws.send(JSON.stringify({ id: msg.id, ok: true, result }));
        return;
      }
      onRequest(msg, ws);
    });
  });
  const port = (wss.address() as AddressInfo).port;
  return {
    url: `ws://127.0.0.1:${port}/agent`,
    sockets,
    auth,
    hellos: () => hellos,
    close: () => new Promise<void>((r) => wss.close(() => r())),
  };
}

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function waitFor(pred: () => boolean, what: string): Promise<void> {
  const start = Date.now();
  while (!pred()) {
    if (Date.now() - start > 5000) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

describe('wire behaviour (fake server)', () => {
  it('matches replies by id, maps error replies, ignores junk frames', async () => {
    const srv = await fakeServer((msg, ws) => {
      ws.send('not json');
      ws.send(JSON.stringify({ type: 'mystery_push' }));
      if (msg.type === 'renew') ws.send(JSON.stringify({ id: msg.id, ok: false, error: { code: 'not_holder', status: 409, message: 'stale fence' } }));
      else ws.send(JSON.stringify({ id: msg.id, ok: true, result: { task: null } }));
    });
    cleanups.push(srv.close);
    const agent: Agent = await connect({ url: srv.url, token: 'gft_secret', role: 'dev', name: 'a' });
    cleanups.push(() => agent.close());
    expect(srv.auth).toEqual(['Bearer gft_secret']);
    expect(agent.lockWindowS).toBe(40);
    expect(await agent.claim()).toBeNull();
    await expect(agent.renew(1, 1)).rejects.toMatchObject({ name: 'GafferRequestError', code: 'not_holder', status: 409, message: 'stale fence' });
    await agent.close();
    await expect(agent.claim()).rejects.toMatchObject({ name: 'AgentClosedError', code: 'closed' });
  });

  it('rejects in-flight requests on a blip, queues new ones until the resumed hello', async () => {
    let answer = false;
    const srv = await fakeServer((msg, ws) => {
      if (answer) ws.send(JSON.stringify({ id: msg.id, ok: true, result: { serverTime: 'now' } }));
    });
    cleanups.push(srv.close);
    const agent = await connect({ url: srv.url, token: 't', role: 'dev', name: 'a', reconnect: { initialDelayMs: 20, maxDelayMs: 20 } });
    cleanups.push(() => agent.close());
    const inFlight = agent.heartbeat();
    await waitFor(() => srv.sockets.length === 1, 'socket');
    await new Promise((r) => setTimeout(r, 10));
    srv.sockets[0]!.terminate();
    await expect(inFlight).rejects.toMatchObject({ name: 'ConnectionLostError', code: 'disconnected' });
    answer = true;
    const queued = agent.heartbeat(); // sent once the new socket said hello
    await expect(queued).resolves.toEqual({ serverTime: 'now' });
    expect(srv.hellos()).toBe(2);
    expect(agent.instanceId).toBe('inst_1');
  });

  it('parses every push with its schema: a malformed or unknown push reaches no handler', async () => {
    const lines: string[] = [];
    const logger = { info: () => {}, warn: (m: string, f?: Record<string, unknown>) => lines.push(`${m} ${JSON.stringify(f ?? {})}`), error: () => {} };
    const started: string[] = [];
    const srv = await fakeServer((msg, ws) => {
      if (msg.type === 'run_started') started.push((msg as unknown as { runId: string }).runId);
      ws.send(JSON.stringify({ id: msg.id, ok: true, result: {} }));
    });
    cleanups.push(srv.close);
    const agent = await connect({ url: srv.url, token: 't', role: 'dev', name: 'a', logger });
    cleanups.push(() => agent.close());
    const ran: string[] = [];
    agent.onJob((ctx) => void ran.push(ctx.runId));
    const good = { type: 'job_trigger', runId: 'run_ok', jobId: 'j', job: 'job', slot: 's', attempt: 1, payload: null, idempotencyKey: 'k', deadline: new Date(Date.now() + 60_000).toISOString(), completedSteps: [], version: 1, traceId: 't' };
    const ws = srv.sockets[0]!;
    ws.send(JSON.stringify({ ...good, runId: 'run_bad', attempt: 'one' }));
    ws.send(JSON.stringify({ type: 'job_trigger', runId: 'run_missing' }));
    ws.send(JSON.stringify({ type: 'mystery_push' }));
    ws.send(JSON.stringify(good));
    await waitFor(() => ran.length === 1, 'the valid trigger');
    expect(ran).toEqual(['run_ok']);
    expect(started).toEqual(['run_ok']);
    expect(lines.filter((l) => l.startsWith('ignoring'))).toEqual([
      'ignoring a malformed push {"type":"job_trigger","field":"attempt","error":"Invalid input: expected number, received string"}',
      'ignoring a malformed push {"type":"job_trigger","field":"jobId","error":"Invalid input: expected string, received undefined"}',
      'ignoring an unknown push {"type":"mystery_push"}',
    ]);
  });

  it('a later attempt of a run that arrives while the earlier one is still finishing here starts after it; a re-offer of the same attempt is ignored', async () => {
    const started: string[] = [];
    let releaseResult: (() => void) | undefined;
    const srv = await fakeServer((msg, ws) => {
      const reply = () => ws.send(JSON.stringify({ id: msg.id, ok: true, result: {} }));
      if (msg.type === 'run_started') started.push((msg as unknown as { runId: string }).runId);
      // The result of attempt 1 is committed, but its reply is late (an approval raced it).
      if (msg.type === 'run_result' && !releaseResult) releaseResult = reply;
      else reply();
    });
    cleanups.push(srv.close);
    const agent = await connect({ url: srv.url, token: 't', role: 'dev', name: 'a' });
    cleanups.push(() => agent.close());
    const attempts: number[] = [];
    agent.onJob((ctx) => {
      attempts.push(ctx.attempt);
      if (ctx.attempt === 1) throw new NeedsHumanError('which account?');
      return { ok: true };
    });
    const trigger = (attempt: number) => ({ type: 'job_trigger', runId: 'run_1', jobId: 'j', job: 'job', slot: 's', attempt, payload: null, idempotencyKey: 'k', deadline: new Date(Date.now() + 60_000).toISOString(), completedSteps: [], version: 1, traceId: 't' });
    const ws = srv.sockets[0]!;
    ws.send(JSON.stringify(trigger(1)));
    await waitFor(() => releaseResult !== undefined, 'the result of attempt 1');
    ws.send(JSON.stringify(trigger(1))); // a re-offer of the attempt still here: a duplicate
    ws.send(JSON.stringify(trigger(2))); // the approved re-run
    await new Promise((r) => setTimeout(r, 20));
    expect(attempts).toEqual([1]);
    releaseResult!();
    await waitFor(() => attempts.length === 2, 'attempt 2');
    expect(attempts).toEqual([1, 2]);
    expect(started).toEqual(['run_1', 'run_1']);
  });

  it('times out a request the server never answers', async () => {
    const srv = await fakeServer(() => {});
    cleanups.push(srv.close);
    const agent = await connect({ url: srv.url, token: 't', role: 'dev', name: 'a', requestTimeoutMs: 30 });
    cleanups.push(() => agent.close());
    await expect(agent.heartbeat()).rejects.toMatchObject({ name: 'RequestTimeoutError', code: 'timeout' });
  });

  it('fails fast when nothing listens', async () => {
    const srv = await fakeServer(() => {});
    const url = srv.url;
    await srv.close();
    await expect(connect({ url, token: 't', role: 'dev', name: 'a' })).rejects.toMatchObject({ code: 'connect_failed' });
  });
});
