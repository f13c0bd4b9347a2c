import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { ConsoleEvent } from '../../common/console-api';
import { verifyExport } from '../../core/audit/audit-export';
import { auditCount, makeTestCore, stateDigest, tempDir, type TestCore } from '../../core/tests/test-core';
import { startServer, type RunningServer } from '../server';
import { BROWSER_ACTOR, createConsoleExtension, EVENTS_SUBPROTOCOL } from './http';
import { testRequester, type TestRequestOptions } from '../tests/http-request.testkit';

const TOKEN = 'gfo_console-test-token';
const INDEX = `<!doctype html><html><head><meta charset="UTF-8" /><meta http-equiv="Content-Security-Policy" content="default-src 'self'" /><title>Gaffer</title></head><body><div id="root"></div><script type="module" src="./assets/app.js"></script></body></html>`;

let core: TestCore;
let server: RunningServer;
let rendererDir: string;
let origin: string;

async function start(opts: { built?: boolean } = {}) {
  rendererDir = tempDir('gaffer-renderer-');
  if (opts.built !== false) {
    fs.mkdirSync(path.join(rendererDir, 'assets'));
    fs.writeFileSync(path.join(rendererDir, 'index.html'), INDEX);
    fs.writeFileSync(path.join(rendererDir, 'assets', 'app.js'), 'console.log("hi")\n');
    fs.writeFileSync(path.join(rendererDir, '.secret'), 'nope');
  }
  server = await startServer(core, {
    port: 0,
    operatorToken: TOKEN,
    extensions: [createConsoleExtension(core, { operatorToken: TOKEN, rendererDir, dataDir: core.dir, version: '0.0.0-test', events: { intervalMs: 20 } })],
  });
  origin = `http://127.0.0.1:${server.port}`;
}

beforeEach(async () => {
  core = makeTestCore();
  await start();
});

afterEach(async () => {
  await server.close();
  core.close();
});

const request = testRequester(() => server.port, TOKEN);

const rpc = (method: string, args: unknown, opts: TestRequestOptions = {}) => request('POST', `/console/rpc/${method}`, { ...opts, body: args });

describe('headless console: static renderer', () => {
  it('serves index.html with strict security headers, <base> and the server CSP', async () => {
    const r = await request('GET', '/', { token: null });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('text/html; charset=utf-8');
    const csp = String(r.headers['content-security-policy']);
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain(`connect-src 'self' ws://127.0.0.1:${server.port} ws://localhost:${server.port}`);
    expect(r.headers['x-content-type-options']).toBe('nosniff');
    expect(r.headers['referrer-policy']).toBe('no-referrer');
    expect(r.headers['access-control-allow-origin']).toBeUndefined();
    expect(r.text).toContain('<base href="/" />');
    expect(r.text).toContain(`ws://127.0.0.1:${server.port}`); // meta CSP replaced by the server's
    expect(r.text).toContain('<div id="root">');
  });

  it('serves assets, falls back to index.html for app routes, 404s missing files, hides dotfiles', async () => {
    const js = await request('GET', '/assets/app.js', { token: null });
    expect(js.status).toBe(200);
    expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(js.headers['cache-control']).toContain('immutable');
    expect((await request('GET', '/jobs/job_1/edit', { token: null })).text).toContain('<div id="root">');
    expect((await request('GET', '/assets/missing.js', { token: null })).status).toBe(404);
    expect((await request('GET', '/.secret', { token: null })).status).toBe(403);
    const traversal = await request('GET', '/%2e%2e/%2e%2e/%2e%2e/etc/passwd', { token: null });
    expect(traversal.text).not.toContain('root:');
    expect((await request('GET', '/a%00b', { token: null })).status).toBe(403);
    expect((await request('HEAD', '/', { token: null })).status).toBe(200);
  });

  it('refuses a foreign Host (DNS rebinding)', async () => {
    const r = await request('GET', '/', { token: null, headers: { host: `evil.example:${server.port}` } });
    expect(r.status).toBe(403);
  });

  it('says so when the renderer has not been built', async () => {
    await server.close();
    await start({ built: false });
    const r = await request('GET', '/', { token: null });
    expect(r.status).toBe(503);
    expect(r.text).toContain('not been built');
  });
});

describe('headless console: RPC', () => {
  it('round trip: a task created in the browser is audited as operator:browser', async () => {
    const r = await rpc('tasks.create', { title: 'from the browser', role: 'dev' }, { headers: { origin } });
    expect(r.status).toBe(200);
    expect(r.body.ok).toBe(true);
    expect(r.body.value.task).toMatchObject({ title: 'from the browser', role: 'dev', status: 'backlog' });
    const last = core.auditQuery.query({ order: 'desc', limit: 1 }).items[0]!;
    expect(last).toMatchObject({ type: 'task.create', actor: BROWSER_ACTOR });
    const dash = await rpc('dashboard.get', {});
    expect(dash.body.value.roles[0]).toMatchObject({ role: 'dev', ready: 1 });
  });

  it('auth missing or bad → 401; nothing changes', async () => {
    const before = stateDigest(core);
    for (const token of [null, 'wrong', `${TOKEN}x`]) {
      const r = await rpc('tasks.create', { title: 'x', role: 'dev' }, { token, headers: { origin } });
      expect(r.status).toBe(401);
      expect(r.body).toMatchObject({ ok: false, error: { code: 'unauthorized', status: 401 } });
      expect(r.headers['www-authenticate']).toContain('Bearer');
    }
    // The token is never taken from the URL.
    expect((await request('POST', `/console/rpc/dashboard.get?token=${TOKEN}`, { token: null, body: {} })).status).toBe(401);
    expect(stateDigest(core)).toBe(before);
  });

  it('a foreign Origin → 403 even with the token; cross-site fetch metadata → 403', async () => {
    const before = auditCount(core);
    for (const o of ['http://evil.example', 'null', `http://127.0.0.1:${server.port + 1}`]) {
      const r = await rpc('tasks.create', { title: 'x', role: 'dev' }, { headers: { origin: o } });
      expect(r.status).toBe(403);
      expect(r.body.error.code).toBe('forbidden');
    }
    expect((await rpc('dashboard.get', {}, { headers: { 'sec-fetch-site': 'cross-site' } })).status).toBe(403);
    expect(auditCount(core)).toBe(before);
  });

  it('bad calls: unknown method, bad args, wrong verb, not JSON', async () => {
    const before = stateDigest(core);
    expect((await rpc('tasks.drop', {})).body.error.code).toBe('bad_request');
    const bad = await rpc('tasks.create', { title: '', role: 'dev' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('title');
    expect((await request('GET', '/console/rpc/dashboard.get')).status).toBe(400);
    expect((await request('POST', '/console/rpc/dashboard.get', { raw: '{}', headers: { 'content-type': 'text/plain' } })).status).toBe(400);
    expect((await request('POST', '/console/rpc/dashboard.get', { raw: '{nope' })).status).toBe(400);
    expect((await request('POST', '/console/rpc/%E0%A4%A', { body: {} })).status).toBe(400);
    expect((await request('GET', '/console/nothing')).status).toBe(404);
    expect(stateDigest(core)).toBe(before);
  });

  it('does not shadow the HTTP API or the agent socket path', async () => {
    expect((await request('GET', '/api/v1/status')).status).toBe(200);
    expect((await request('GET', '/agent', { token: null })).status).toBe(404);
  });
});

function openEvents(opts: { protocols?: string[]; origin?: string; headers?: Record<string, string> } = {}) {
  const protocols = opts.protocols ?? [EVENTS_SUBPROTOCOL, `gaffer.bearer.${TOKEN}`];
  return new WebSocket(`ws://127.0.0.1:${server.port}/console/events`, protocols, { origin: opts.origin ?? origin, headers: opts.headers ?? {} });
}

function nextFrame(ws: WebSocket): Promise<any> {
  return new Promise((resolve, reject) => {
    ws.once('message', (d) => resolve(JSON.parse(String(d))));
    ws.once('close', (code, reason) => reject(new Error(`closed ${code} ${reason}`)));
  });
}

function upgradeStatus(ws: WebSocket): Promise<number> {
  return new Promise((resolve) => {
    ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
    ws.on('open', () => resolve(101));
    ws.on('error', () => {});
  });
}

function closeCode(ws: WebSocket): Promise<number> {
  return new Promise((resolve) => ws.on('close', (code) => resolve(code)));
}

async function waitForEvent(ws: WebSocket, pred: (e: ConsoleEvent) => boolean, timeoutMs = 3000): Promise<ConsoleEvent> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no matching event')), timeoutMs);
    ws.on('message', (d) => {
      const frame = JSON.parse(String(d));
      if (frame.type !== 'events') return;
      const hit = (frame.events as ConsoleEvent[]).find(pred);
      if (hit) {
        clearTimeout(timer);
        resolve(hit);
      }
    });
  });
}

describe('headless console: live events socket', () => {
  it('authenticated by subprotocol: receives task.changed after a task is created', async () => {
    const ws = openEvents();
    expect(await nextFrame(ws)).toEqual({ type: 'ready' });
    expect(ws.protocol).toBe(EVENTS_SUBPROTOCOL);
    const got = waitForEvent(ws, (e) => e.type === 'task.changed');
    const r = await rpc('tasks.create', { title: 'live', role: 'ops' });
    expect(await got).toEqual({ type: 'task.changed', taskId: r.body.value.task.id, role: 'ops', status: 'backlog' });
    ws.close();
  });

  it('authenticated by a first {type:"auth"} frame', async () => {
    const ws = openEvents({ protocols: [EVENTS_SUBPROTOCOL] });
    await new Promise((r) => ws.once('open', r));
    ws.send(JSON.stringify({ type: 'auth', token: TOKEN }));
    expect(await nextFrame(ws)).toEqual({ type: 'ready' });
    const got = waitForEvent(ws, (e) => e.type === 'audit.appended');
    core.tasks.create({ title: 'x', role: 'dev' }, { actor: 'test' });
    expect(await got).toMatchObject({ type: 'audit.appended', event: { type: 'task.create' } });
    ws.close();
  });

  it('bad token → 401 before the handshake; a bad auth frame → close 4401', async () => {
    expect(await upgradeStatus(openEvents({ protocols: [EVENTS_SUBPROTOCOL, 'gaffer.bearer.wrong'] }))).toBe(401);
    const ws = openEvents({ protocols: [EVENTS_SUBPROTOCOL] });
    await new Promise((r) => ws.once('open', r));
    const code = closeCode(ws);
    ws.send(JSON.stringify({ type: 'auth', token: 'wrong' }));
    expect(await code).toBe(4401);
  });

  it('a foreign Origin → 403; a foreign Host → 403; no subprotocol → 400', async () => {
    expect(await upgradeStatus(openEvents({ origin: 'http://evil.example' }))).toBe(403);
    expect(await upgradeStatus(openEvents({ headers: { host: `evil.example:${server.port}` } }))).toBe(403);
    expect(await upgradeStatus(openEvents({ protocols: [] }))).toBe(400);
  });

  it('sockets waiting for their auth frame have their own budget: they never keep the console out', async () => {
    await server.close();
    server = await startServer(core, {
      port: 0,
      operatorToken: TOKEN,
      extensions: [createConsoleExtension(core, { operatorToken: TOKEN, rendererDir, dataDir: null, version: 'x', maxSockets: 2, maxPendingSockets: 3 })],
    });
    origin = `http://127.0.0.1:${server.port}`;
    const waiting = [1, 2, 3].map(() => openEvents({ protocols: [EVENTS_SUBPROTOCOL] }));
    expect(await Promise.all(waiting.map(upgradeStatus))).toEqual([101, 101, 101]);
    // Before: these counted against the one cap of event sockets (32), so a flood of them kept the console out.
    expect(await upgradeStatus(openEvents({ protocols: [EVENTS_SUBPROTOCOL] }))).toBe(503);
    const live = openEvents();
    expect(await nextFrame(live)).toEqual({ type: 'ready' });
    // A waiting socket that authenticates joins the main budget if there is room (1 of 2 used) ...
    waiting[1]!.send(JSON.stringify({ type: 'auth', token: TOKEN }));
    expect(await nextFrame(waiting[1]!)).toEqual({ type: 'ready' });
    // ... and is closed 1013 (try again later) when there is none.
    const code = closeCode(waiting[0]!);
    waiting[0]!.send(JSON.stringify({ type: 'auth', token: TOKEN }));
    expect(await code).toBe(1013);
    expect(await upgradeStatus(openEvents())).toBe(503);
    for (const ws of [...waiting, live]) ws.close();
  });

  it('no auth frame in time → closed 4401', async () => {
    await server.close();
    server = await startServer(core, {
      port: 0,
      operatorToken: TOKEN,
      extensions: [createConsoleExtension(core, { operatorToken: TOKEN, rendererDir, dataDir: null, version: 'x', authTimeoutMs: 50 })],
    });
    origin = `http://127.0.0.1:${server.port}`;
    const ws = openEvents({ protocols: [EVENTS_SUBPROTOCOL] });
    expect(await closeCode(ws)).toBe(4401);
  });
});

describe('headless console: audit export', () => {
  async function exported(query: string, token: string | null = TOKEN) {
    return request('GET', `/console/export?${query}`, { token, headers: { origin } });
  }

  it('streams a JSONL file (Content-Disposition) whose rows verify as a chain', async () => {
    for (let i = 0; i < 30; i++) core.tasks.create({ title: `t${i}`, role: 'dev' }, { actor: 'test' });
    const r = await exported('format=jsonl');
    expect(r.status).toBe(200);
    expect(r.headers['content-disposition']).toMatch(/^attachment; filename="gaffer-audit-.*\.jsonl"$/);
    expect(r.headers['content-type']).toContain('application/x-ndjson');
    const v = await verifyExport((async function* () { yield r.text; })(), 'jsonl', { expectContiguous: true });
    expect(v).toMatchObject({ ok: true, rows: 30, coverage: 'chain', anchoredAtGenesis: true });
  });

  it('CSV with filters; rows verify', async () => {
    const inst = core.instances.register({ role: 'dev', name: 'a' }).id;
    for (let i = 0; i < 5; i++) core.tasks.create({ title: `t${i}`, role: 'dev' }, { actor: 'test' });
    core.locks.claim({ instanceId: inst });
    const r = await exported('format=csv&type=task.create&type=lock.claim');
    expect(r.status).toBe(200);
    expect(r.headers['content-disposition']).toMatch(/\.csv"$/);
    const v = await verifyExport((async function* () { yield r.text; })(), 'csv');
    expect(v).toMatchObject({ ok: true, rows: 6 });
  });

  it('refuses bad filters, a missing token and foreign origins before streaming', async () => {
    expect((await exported('format=xml')).status).toBe(400);
    expect((await exported('format=jsonl&bogus=1')).status).toBe(400);
    expect((await exported('format=jsonl&from=2026-12-02T00:00:00Z&to=2026-12-01T00:00:00Z')).status).toBe(400);
    expect((await exported('format=jsonl', null)).status).toBe(401);
    expect((await request('GET', '/console/export?format=jsonl', { headers: { origin: 'http://evil.example' } })).status).toBe(403);
  });
});
