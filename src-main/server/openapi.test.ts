/**
 * The OpenAPI document against the live router: every route of the server's table is documented
 * (with a summary), and every documented operation is answered by a route of the running server
 * (probed over real HTTP with bodies that fail validation, so nothing changes).
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { makeTestCore, stateDigest, type TestCore } from '../core/tests/test-core';
import { API_PREFIX, coreRoutes, createApiHandler } from './api-v1';
import { ok, parseQuery, type Route } from './api/router';
import { OPS, type Op } from '../common/ops';
import { buildOpenApi, openApiPath, OPENAPI_PATH, routesWithoutResponseSchema, undocumentedRoutes } from './openapi';
import { startServer, type RunningServer } from './server';

const OPERATOR = 'op-openapi-tests';

interface Res {
  status: number;
  body: any;
}

async function request(port: number, method: string, path: string, opts: { body?: string; token?: string | null } = {}): Promise<Res> {
  const token = opts.token === undefined ? OPERATOR : opts.token;
  const res = await fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    headers: { ...(token === null ? {} : { authorization: `Bearer ${token}` }), ...(opts.body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(opts.body === undefined ? {} : { body: opts.body }),
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON (an export stream) */
  }
  return { status: res.status, body };
}

/** The router's own "no route here" answers (api-v1.ts), as opposed to a handler's 404 for an unknown id. */
function routerMiss(r: Res): boolean {
  const message = String(r.body?.error?.message ?? '');
  return r.status === 404 && (message.startsWith('no such endpoint') || message.includes('is not supported on'));
}

let core: TestCore;
let server: RunningServer;
let doc: any;

beforeAll(async () => {
  core = makeTestCore();
  server = await startServer(core, { port: 0, operatorToken: OPERATOR, version: '9.9.9-test' });
  const r = await request(server.port, 'GET', `${API_PREFIX}${OPENAPI_PATH}`, { token: null });
  expect(r.status).toBe(200);
  doc = r.body;
});

afterAll(async () => {
  await server.close();
  core.close();
});

describe('GET /api/v1/openapi.json', () => {
  it('is an OpenAPI 3.1 document, served without the operator token', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('9.9.9-test');
    expect(doc.components.securitySchemes.operator).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.paths['/openapi.json'].get.security).toEqual([]);
  });

  it('documents every route of the server with a summary, and nothing else', () => {
    const table: Route[] = coreRoutes(core);
    expect(undocumentedRoutes(table)).toEqual([]);
    const live = new Set([...table.map((r) => `${r.method} ${openApiPath(r.path)}`), `GET ${OPENAPI_PATH}`]);
    const documented = new Set<string>();
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
      for (const [method, op] of Object.entries(item)) {
        documented.add(`${method.toUpperCase()} ${path}`);
        expect(op.summary, `${method} ${path}`).toEqual(expect.any(String));
        expect(op['x-undocumented'], `${method} ${path}`).toBeUndefined();
      }
    }
    expect([...documented].sort()).toEqual([...live].sort());
  });

  it('the route table is the catalogue’s HTTP routes: each route names its operation, each declared route is served', () => {
    const table: Route[] = [...coreRoutes(core), { method: 'GET', path: OPENAPI_PATH, op: 'openapi.get' } as Route];
    expect(table.filter((r) => !r.op).map((r) => `${r.method} ${r.path}`)).toEqual([]);
    const served = new Set(table.map((r) => `${r.op} ${r.method} ${r.path}`));
    const declared = Object.entries(OPS as Record<string, Op>).flatMap(([name, o]) => (o.rest ?? []).map((r) => `${name} ${r.method} ${r.path}`));
    expect(declared.filter((d) => !served.has(d))).toEqual([]);
    expect([...served].filter((s) => !declared.includes(s))).toEqual([]);
    expect(routesWithoutResponseSchema(coreRoutes(core))).toEqual([]);
  });

  it('every JSON success reply has its schema; a streamed one names its media types instead', () => {
    const missing: string[] = [];
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
      for (const [method, op] of Object.entries(item)) {
        for (const [status, reply] of Object.entries(op.responses as Record<string, any>)) {
          if (status === 'default') continue;
          const json = reply.content['application/json'];
          if (json && !json.schema?.type && !json.schema?.anyOf) missing.push(`${method} ${path} ${status}`);
        }
      }
    }
    expect(missing).toEqual([]);
    expect(doc.paths['/signals'].post.responses['201'].content['application/json'].schema.required).toEqual(['signal', 'created']);
    expect(doc.paths['/audit/export'].get.responses['200'].content['text/csv']).toEqual({});
  });

  it('names the path parameters, query parameters and bodies the handlers validate', () => {
    const release = doc.paths['/tasks/{id}/release'].post;
    expect(release.parameters).toEqual([{ name: 'id', in: 'path', required: true, schema: expect.objectContaining({ type: 'string', pattern: expect.any(String) }) }]);
    expect(release.requestBody.content['application/json'].schema).toMatchObject({ type: 'object', required: ['reason'], additionalProperties: false });
    const list = doc.paths['/tasks'].get;
    expect(list.parameters.map((p: { name: string }) => p.name)).toEqual(expect.arrayContaining(['role', 'status', 'limit', 'after']));
    expect(list.parameters.find((p: { name: string }) => p.name === 'status').schema.enum).toContain('in_progress');
    const create = doc.paths['/tasks'].post;
    expect(create.parameters).toContainEqual(expect.objectContaining({ name: 'Idempotency-Key', in: 'header' }));
    expect(create.requestBody.content['application/json'].schema.required).toEqual(['title', 'role']);
    expect(Object.keys(create.responses)).toEqual(expect.arrayContaining(['200', '201', 'default']));
    const job = doc.paths['/jobs'].post.requestBody.content['application/json'].schema;
    expect(Object.keys(job.properties)).toEqual(expect.arrayContaining(['name', 'role', 'schedule', 'window', 'retry', 'reason']));
    expect(doc.paths['/audit/export'].get.responses['200'].content).toHaveProperty('text/csv');
    expect(doc.components.schemas.Error.properties.error.properties.code.enum).toContain('not_holder');
  });

  it("says what the handlers refuse that a type cannot: a pause's `until` at most 366 days ahead; /audit's `partial`", () => {
    for (const path of ['/jobs/{id}/pause', '/roles/{role}/pause']) {
      const until = doc.paths[path].post.requestBody.content['application/json'].schema.properties.until;
      expect(until.description, path).toMatch(/in the future and at most 366 days ahead, else bad_request/);
    }
    expect(doc.paths['/audit'].get.responses['200'].description).toMatch(/`partial` is true when the page stopped at its scan budget/);
  });

  it('every documented operation is served by the live router (probed; nothing changes)', async () => {
    const before = stateDigest(core);
    const misses: string[] = [];
    let probed = 0;
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
      for (const [method, op] of Object.entries(item)) {
        const url = API_PREFIX + path.replace(/\{[^}]+\}/g, 'zz-probe');
        const body = op.requestBody ? JSON.stringify({ __probe: true }) : undefined;
        const r = await request(server.port, method.toUpperCase(), url, body === undefined ? {} : { body });
        probed++;
        if (routerMiss(r)) misses.push(`${method.toUpperCase()} ${path}`);
      }
    }
    expect(misses).toEqual([]);
    expect(probed).toBeGreaterThan(40);
    expect(stateDigest(core)).toBe(before);
    // Control: the probe does tell a missing route from a handler's refusal.
    expect(routerMiss(await request(server.port, 'GET', `${API_PREFIX}/no-such-route`))).toBe(true);
    expect(routerMiss(await request(server.port, 'DELETE', `${API_PREFIX}/status`))).toBe(true);
    expect(routerMiss(await request(server.port, 'GET', `${API_PREFIX}/tasks/999999`))).toBe(false);
  });

  it('still asks for the token everywhere else', async () => {
    expect((await request(server.port, 'GET', `${API_PREFIX}/status`, { token: null })).status).toBe(401);
    expect((await request(server.port, 'GET', `${API_PREFIX}/openapi.json/x`, { token: null })).status).toBe(401);
  });
});

describe('documented schemas are the ones parsed', () => {
  it('a handler that parses another schema than its doc names is a 500, and a route without doc is listed', async () => {
    const documented = z.strictObject({ a: z.string().optional() });
    const drifted: Route = {
      method: 'GET',
      path: '/drift',
      doc: { summary: 'drift', query: documented },
      handler: (c) => ok(parseQuery(z.strictObject({ b: z.string().optional() }), c)),
    };
    const honest: Route = { method: 'GET', path: '/honest', doc: { summary: 'honest', query: documented }, handler: (c) => ok(parseQuery(documented, c)) };
    const bare: Route = { method: 'GET', path: '/bare', handler: () => ok({}) };
    const local = makeTestCore();
    const srv = http.createServer();
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    const port = (srv.address() as { port: number }).port;
    const api = createApiHandler(local, { operatorToken: OPERATOR, port, extraRoutes: () => [drifted, honest, bare] });
    srv.on('request', (req, res) => void api(req, res));
    try {
      expect((await request(port, 'GET', `${API_PREFIX}/drift`)).status).toBe(500);
      expect((await request(port, 'GET', `${API_PREFIX}/honest?a=1`)).status).toBe(200);
      expect(undocumentedRoutes([drifted, honest, bare])).toEqual(['GET /bare']);
      const built: any = buildOpenApi([bare], { version: 'x' });
      expect(built.paths['/bare'].get['x-undocumented']).toBe(true);
    } finally {
      srv.closeAllConnections();
      await new Promise<void>((r) => srv.close(() => r()));
      local.close();
    }
  });
});
