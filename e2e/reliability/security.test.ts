/**
 * Scenario 6 — security checks against the real headless server process.
 *
 * Expected outcomes:
 * - a page from another origin cannot open the agent socket (Origin → HTTP 403 before any
 *   handshake) nor call the API or the console (403, and no CORS header is ever sent, so it could
 *   not read an answer either); a DNS-rebinding Host is refused the same way;
 * - a revoked token is cut off at once: every live socket using it is closed (4403) within
 *   moments, the SDK does not reconnect, and new connections with it are refused (401 / 4401);
 * - nothing listens beyond 127.0.0.1 by default: the server's only listening socket is bound to
 *   127.0.0.1, and its port is closed on the machine's other addresses;
 * - the operator token is required for every API route (401, never from a query string);
 * - no agent token (nor the operator token) ever appears in the server's or the agent's logs, and
 *   the database stores only hashes.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { EVENTS_PATH } from '../../src-main/server/console/http';
import { connect, type Agent } from '../../src-main/sdk';
import { API_ROUTES } from './lib/fuzz';
import { api, createAgentToken, request } from './lib/http';
import { assertNoProblems, checkDatabaseFile } from './lib/invariants';
import { figures, sleep, until } from './lib/mode';
import { killAllChildren, spawnAgentProc } from './lib/procs';
import { freePort, startServer, tempDir, type Server, removeTempDirs } from './lib/server';
import { RawAgent, UpgradeRefused } from './lib/wire';

let server: Server;

beforeAll(async () => {
  // Defaults: no --host, so the server binds where it binds by default (checked below).
  server = await startServer({ dataDir: tempDir('security'), port: await freePort(), heartbeatIntervalMs: 1000 });
});

afterAll(async () => {
  await server?.stop();
  await killAllChildren();
  removeTempDirs();
});

const secrets: string[] = [];
const logs: string[] = [];

async function token(name: string, role: string | null = 'dev') {
  const t = await createAgentToken(server.port, server.operatorToken, name, role);
  secrets.push(t.token);
  return t;
}

/** Opens a WebSocket upgrade on `url` (the agent socket by default); resolves with the refusal, fails if it is accepted. */
async function refusedUpgrade(headers: Record<string, string>, tok?: string, url = server.agentUrl): Promise<UpgradeRefused> {
  try {
    const a = await RawAgent.connect(url, { headers, ...(tok ? { token: tok } : {}) });
    a.kill();
  } catch (e) {
    if (e instanceof UpgradeRefused) return e;
    // e.g. the console socket accepting and answering a subprotocol this raw client did not ask for
    throw new Error(`the upgrade to ${url} with ${JSON.stringify(headers)} was not refused with an HTTP status: ${String(e)}`, { cause: e });
  }
  throw new Error(`the upgrade to ${url} with ${JSON.stringify(headers)} was accepted`);
}

const noCors = (headers: Record<string, unknown>) => Object.keys(headers).filter((h) => h.startsWith('access-control-'));

describe('security', () => {
  it('notifications link to the console at the address this server serves it on', async () => {
    const r = await api(server.port, server.operatorToken, 'GET', '/notifications');
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ consoleUrl: `http://127.0.0.1:${server.port}/`, consoleUrlSet: false });
  });

  it('a page from another origin cannot open the agent socket (403 before the handshake)', async () => {
    const t = await token('origin-test');
    for (const origin of ['http://evil.example', 'null', `http://127.0.0.1:${server.port + 1}`, `https://127.0.0.1:${server.port}`, 'file://']) {
      const e = await refusedUpgrade({ origin }, t.token);
      expect(e.status, origin).toBe(403);
      expect(JSON.parse(e.body).error.code).toBe('forbidden');
      expect(noCors(e.headers)).toEqual([]);
    }
    // DNS rebinding: a foreign Host name, even with our port.
    for (const host of [`evil.example:${server.port}`, 'evil.example', `127.0.0.1.nip.io:${server.port}`]) {
      expect((await refusedUpgrade({ host }, t.token)).status, host).toBe(403);
    }
    // Without an Origin (a real agent), the same token works.
    const ok = await RawAgent.hello(server.agentUrl, t.token, 'dev', 'no-origin');
    ok.kill();
  });

  it('a page from another origin cannot call the API or the console (403, no CORS headers)', async () => {
    const before = (await api(server.port, server.operatorToken, 'GET', '/tasks')).json.items.length;
    const cases: Array<[string, string, Record<string, string>, unknown]> = [
      ['GET', '/api/v1/status', { origin: 'http://evil.example' }, undefined],
      ['POST', '/api/v1/tasks', { origin: 'http://evil.example' }, { title: 'from a foreign page', role: 'dev' }],
      ['POST', '/api/v1/tasks', { origin: 'null' }, { title: 'from a sandboxed page', role: 'dev' }],
      ['POST', '/api/v1/tasks', { 'sec-fetch-site': 'cross-site' }, { title: 'cross-site', role: 'dev' }],
      ['POST', '/api/v1/tasks', { host: `evil.example:${server.port}` }, { title: 'rebinding', role: 'dev' }],
      ['OPTIONS', '/api/v1/tasks', { origin: 'http://evil.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization' }, undefined],
      ['POST', '/console/rpc/tasks.create', { origin: 'http://evil.example', 'content-type': 'application/json' }, { title: 'console', role: 'dev' }],
      ['GET', '/console/export?format=jsonl', { origin: 'http://evil.example' }, undefined],
    ];
    for (const [method, path, headers, body] of cases) {
      const r = await request(server.port, { method, path, token: server.operatorToken, headers, ...(body === undefined ? {} : { body }) });
      expect([403, 404], `${method} ${path} ${JSON.stringify(headers)} → ${r.status}`).toContain(r.status);
      if (method !== 'OPTIONS') expect(r.status, `${method} ${path} ${JSON.stringify(headers)}`).toBe(403);
      expect(noCors(r.headers), `${method} ${path}`).toEqual([]);
    }
    // A "simple" cross-origin POST (no preflight: text/plain, no Authorization) gets nothing done either.
    const simple = await request(server.port, { method: 'POST', path: '/api/v1/tasks', headers: { origin: 'http://evil.example', 'content-type': 'text/plain' }, rawBody: '{"title":"csrf","role":"dev"}' });
    expect(simple.status).toBe(403);
    // The console's event socket refuses foreign origins too.
    // The operator token and the subprotocol are right, so the foreign Origin is the only reason to refuse.
    const eventsUrl = `ws://127.0.0.1:${server.port}${EVENTS_PATH}`;
    const ws = await refusedUpgrade({ origin: 'http://evil.example', 'sec-websocket-protocol': 'gaffer.console.v1' }, server.operatorToken, eventsUrl);
    expect(ws.status).toBe(403);
    expect(JSON.parse(ws.body).error.code).toBe('forbidden');
    expect(noCors(ws.headers)).toEqual([]);
    // Control: the same upgrade without the foreign Origin is accepted.
    const own = new WebSocket(eventsUrl, ['gaffer.console.v1'], { headers: { authorization: `Bearer ${server.operatorToken}` } });
    await new Promise<void>((resolve, reject) => {
      own.once('open', () => resolve());
      own.once('unexpected-response', (_req, res) => reject(new Error(`the console socket refused its own origin: HTTP ${res.statusCode}`)));
      own.once('error', reject);
    });
    own.close();
    expect((await api(server.port, server.operatorToken, 'GET', '/tasks')).json.items.length).toBe(before);
  });

  it('the operator token is required for every API route (401), and never read from the URL', async () => {
    const agentTok = await token('not-an-operator');
    const paths = API_ROUTES.map((r) => [r.method, `/api/v1${r.path.replace(/:[a-z]+/g, '1')}`] as const);
    let checked = 0;
    for (const [method, path] of paths) {
      for (const auth of [undefined, 'Bearer wrong', `Bearer ${agentTok.token}`, `Basic ${Buffer.from(`x:${server.operatorToken}`).toString('base64')}`]) {
        const r = await request(server.port, { method, path, headers: auth ? { authorization: auth } : {} });
        expect(r.status, `${method} ${path} with ${auth ?? 'no token'}`).toBe(401);
        expect(r.json.error.code).toBe('unauthorized');
        checked++;
      }
    }
    const q = await request(server.port, { path: `/api/v1/status?token=${server.operatorToken}` });
    expect(q.status).toBe(401);
    expect(q.headers['www-authenticate']).toMatch(/^Bearer/);
    const cookie = await request(server.port, { path: '/api/v1/status', headers: { cookie: `gaffer_token=${server.operatorToken}; token=${server.operatorToken}` } });
    expect(cookie.status).toBe(401);
    figures('security-operator-token', { routesTimesCredentials: checked });
  });

  it('a revoked token is cut off at once: live sockets closed (4403), no reconnect, new connections refused', async () => {
    const t = await token('to-revoke');
    const other = await token('unrelated');
    const sdkLogs: string[] = [];
    const put = (lvl: string) => (m: string, f?: Record<string, unknown>) => sdkLogs.push(`${lvl} ${m} ${JSON.stringify(f ?? {})}`);
    const agent: Agent = await connect({ url: server.agentUrl, token: t.token, role: 'dev', name: 'doomed', reconnect: { initialDelayMs: 20, maxDelayMs: 100 }, logger: { info: put('info'), warn: put('warn'), error: put('error') } });
    const raw = await RawAgent.hello(server.agentUrl, t.token, 'dev', 'doomed-raw');
    const bystander = await RawAgent.hello(server.agentUrl, other.token, 'dev', 'bystander');
    const proc = await spawnAgentProc(server.agentUrl, t.token, 'doomed-proc', { reconnect: true });
    let closedAt = 0;
    let closeError: Error | undefined;
    agent.on('closed', (e) => {
      closedAt = Date.now();
      closeError = e.error;
    });
    let reconnects = 0;
    agent.on('reconnecting', () => reconnects++);

    const revokedAt = Date.now();
    const r = await api(server.port, server.operatorToken, 'POST', `/tokens/${t.id}/revoke`, { reason: 'leaked' });
    expect(r.status).toBe(200);
    const rawClose = await raw.closed;
    const rawMs = Date.now() - revokedAt;
    expect(rawClose.code).toBe(4403);
    await until(() => closedAt > 0, 'the SDK agent to be closed', 5000);
    const sdkMs = closedAt - revokedAt;
    expect(closeError?.message ?? '').toMatch(/4403|revoked|unauthorized/i);
    await proc.waitEvent((e) => e.ev === 'closed', 'the agent process to be cut off', 5000);
    await sleep(300);
    expect(reconnects).toBe(0); // 4403 is final: no retry storm against a revoked token
    expect(bystander.open).toBe(true); // other tokens are unaffected
    expect((await bystander.request('heartbeat')).ok).toBe(true);
    // New connections with the revoked token are refused, by header and in hello.
    expect((await refusedUpgrade({}, t.token)).status).toBe(401);
    const viaHello = await RawAgent.connect(server.agentUrl);
    const h = await viaHello.request('hello', { role: 'dev', name: 'again', token: t.token });
    expect(h.error).toMatchObject({ code: 'unauthorized', status: 401 });
    expect((await viaHello.closed).code).toBe(4401);
    expect(rawMs).toBeLessThan(1000);
    expect(sdkMs).toBeLessThan(1000);
    bystander.kill();
    logs.push(sdkLogs.join('\n'), proc.output());
    await proc.kill9();
    figures('security-revoke', { rawSocketClosedMs: rawMs, sdkClosedMs: sdkMs, reconnectAttempts: reconnects });
  });

  it('nothing listens beyond 127.0.0.1: the bound address, and the port on the other addresses', async () => {
    const listening = execFileSync('ss', ['-Hltnp'], { encoding: 'utf8' })
      .split('\n')
      .filter((l) => l.includes(`pid=${server.proc.pid},`));
    const locals = listening.map((l) => l.trim().split(/\s+/)[3]);
    expect(locals).toEqual([`127.0.0.1:${server.port}`]);
    const others = Object.entries(os.networkInterfaces()).flatMap(([name, addrs]) =>
      (addrs ?? []).filter((a) => !a.internal).map((a) => (a.family === 'IPv6' && a.address.startsWith('fe80:') ? `${a.address}%${name}` : a.address)),
    );
    const results: string[] = [];
    for (const address of others) {
      // Only our own server's port, on this machine's own addresses.
      const outcome = await new Promise<string>((resolve) => {
        const s = net.connect({ host: address, port: server.port, timeout: 2000 });
        s.once('connect', () => (s.destroy(), resolve('connected')));
        s.once('timeout', () => (s.destroy(), resolve('timeout')));
        s.once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'error'));
      });
      results.push(`${address}:${outcome}`);
      expect(outcome, address).not.toBe('connected');
    }
    figures('security-bind', { listening: locals.join(','), otherAddresses: results.join(',') || 'none' });
  });

  it('no token appears in any log, and the database keeps only hashes', async () => {
    // Failed attempts with real-looking secrets in every place a token can travel.
    const t = await token('log-probe');
    await RawAgent.connect(server.agentUrl, { token: `${t.token}x` }).catch(() => undefined);
    const a = await RawAgent.connect(server.agentUrl);
    await a.request('hello', { role: 'ops', name: 'probe', token: t.token });
    a.kill();
    const b = await RawAgent.hello(server.agentUrl, t.token, 'dev', 'probe');
    await b.request('claim', { role: 'ops' });
    b.kill();
    await request(server.port, { path: `/api/v1/status?token=${t.token}` });
    await request(server.port, { path: '/api/v1/status', headers: { authorization: `Bearer ${t.token}` } });
    await sleep(200);
    await server.stop();
    const all = [server.log(), ...logs].join('\n');
    for (const s of [...secrets, server.operatorToken]) expect(all.includes(s), `a secret appears in the logs`).toBe(false);
    for (const f of fs.readdirSync(server.dataDir).filter((n) => n.startsWith('gaffer.db'))) {
      const bytes = fs.readFileSync(`${server.dataDir}/${f}`).toString('latin1');
      for (const s of [...secrets, server.operatorToken]) expect(bytes.includes(s), `a secret is stored in ${f}`).toBe(false);
    }
    assertNoProblems(checkDatabaseFile(server.dbPath).problems, 'after the security checks');
    figures('security-secrets', { secretsChecked: secrets.length + 1, logBytes: all.length });
  });
});
