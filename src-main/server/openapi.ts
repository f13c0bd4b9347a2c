/**
 * `GET /api/v1/openapi.json`: an OpenAPI 3.1 document of the HTTP API, built from the live route
 * table — each route's `doc` and the zod schemas it validates with (`z.toJSONSchema`, input side:
 * what a client sends).
 *
 * Invariants:
 * 1. Every route of the table is in the document, once, under its method and path; nothing else
 *    is (the document is made from the table, never written by hand). A route without a `doc`
 *    still appears, with `x-undocumented: true`, and `undocumentedRoutes` names it (CI fails on it).
 * 2. Parameters and bodies are exactly the schemas the handlers parse (router.ts checks identity
 *    on every call); path and query values are documented as the strings they arrive as.
 * 3. Every operation needs the operator token (bearer) except the routes marked `public` (this one).
 * 4. Every success reply that is JSON has its schema: the route's catalogue entry's result (or its
 *    `rest.response`), output side. `routesWithoutResponseSchema` names any that lacks one (CI fails
 *    on it). The published schemas leave objects open (`additionalProperties` is not set false):
 *    fields are added, never renamed (PROTOCOL), so a client must accept new ones. The tests check
 *    real replies against the closed form (`responseSchema(…, {closed: true})`), which lists every field.
 */
import { z } from 'zod';
import { ERROR_STATUS } from '../common/errors';
import { opRoute } from './api/define-route';
import type { Route } from './api/router';

export const OPENAPI_PATH = '/openapi.json';

type JsonSchema = Record<string, unknown>;

function jsonSchema(schema: z.ZodType): JsonSchema {
  const out = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any', target: 'draft-2020-12' }) as JsonSchema;
  delete out.$schema;
  return out;
}

/** Drops every `additionalProperties: false` (invariant 4: replies stay open to added fields). */
function openObjects(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(openObjects);
  if (node === null || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) if (!(k === 'additionalProperties' && v === false)) out[k] = openObjects(v);
  return out;
}

/** The JSON Schema of a success reply (output side): open as published, closed for the tests' reply check. */
export function responseSchema(schema: z.ZodType, opts: { closed?: boolean } = {}): JsonSchema {
  const out = z.toJSONSchema(schema, { io: 'output', unrepresentable: 'any', target: 'draft-2020-12' }) as JsonSchema;
  delete out.$schema;
  return opts.closed ? out : (openObjects(out) as JsonSchema);
}

/** `/tasks/:id/release` → `/tasks/{id}/release`. */
export function openApiPath(path: string): string {
  return path.replace(/:([^/]+)/g, '{$1}');
}

function pathParamNames(path: string): string[] {
  return [...path.matchAll(/:([^/]+)/g)].map((m) => m[1]!);
}

function operationId(r: Route): string {
  const words = r.path
    .split('/')
    .filter(Boolean)
    .map((seg) => (seg.startsWith(':') ? `by-${seg.slice(1)}` : seg));
  return [r.method.toLowerCase(), ...words].join('_').replace(/[^A-Za-z0-9_]+/g, '_');
}

/** Query parameters from an object schema: one parameter per property. */
function queryParameters(schema: z.ZodType): unknown[] {
  const s = jsonSchema(schema);
  const props = (s.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((s.required as string[] | undefined) ?? []);
  return Object.entries(props).map(([name, p]) => ({
    name,
    in: 'query',
    required: required.has(name),
    ...(typeof p.description === 'string' ? { description: p.description } : {}),
    schema: p,
  }));
}

const errorBody = z.object({
  error: z.object({
    code: z.enum(Object.keys(ERROR_STATUS) as [keyof typeof ERROR_STATUS, ...Array<keyof typeof ERROR_STATUS>]),
    status: z.number().int(),
    message: z.string(),
    detail: z.unknown().optional(),
  }),
});

function operation(r: Route): Record<string, unknown> {
  const doc = r.doc;
  const parameters: unknown[] = pathParamNames(r.path).map((name) => ({
    name,
    in: 'path',
    required: true,
    schema: doc?.params?.[name] ? jsonSchema(doc.params[name]) : { type: 'string' },
  }));
  for (const [name, schema] of Object.entries(doc?.headers ?? {})) parameters.push({ name, in: 'header', required: false, schema: jsonSchema(schema) });
  if (doc?.query) parameters.push(...queryParameters(doc.query));

  const media = doc?.responseMediaTypes ?? ['application/json'];
  const replySchema = doc?.response ? responseSchema(doc.response) : undefined;
  const responses: Record<string, unknown> = {};
  for (const [status, description] of Object.entries(doc?.responses ?? { 200: 'OK' })) {
    responses[status] = { description, content: Object.fromEntries(media.map((m) => [m, m === 'application/json' && replySchema ? { schema: replySchema } : {}])) };
  }
  responses.default = {
    description: 'An error: `{error: {code, status, message}}` (bad_request names the field).',
    content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
  };

  const op: Record<string, unknown> = {
    operationId: operationId(r),
    summary: doc?.summary ?? `${r.method} ${r.path}`,
    tags: [r.path.split('/').filter(Boolean)[0] ?? 'api'],
    ...(doc?.description ? { description: doc.description } : {}),
    ...(parameters.length ? { parameters } : {}),
    responses,
  };
  if (doc?.body) op.requestBody = { required: true, content: { 'application/json': { schema: jsonSchema(doc.body) } } };
  else if (doc?.rawBody) op.requestBody = { required: true, description: doc.rawBody.description, content: { [doc.rawBody.mediaType]: {} } };
  if (r.public) op.security = [];
  if (!doc) op['x-undocumented'] = true;
  return op;
}

/** Routes without a `doc` (invariant 1): the CI check fails while this is not empty. */
export function undocumentedRoutes(routes: readonly Route[]): string[] {
  return routes.filter((r) => !r.doc?.summary).map((r) => `${r.method} ${r.path}`);
}

/** Routes whose success reply is JSON but has no schema (invariant 4): the CI check fails while this is not empty. */
export function routesWithoutResponseSchema(routes: readonly Route[]): string[] {
  return routes.filter((r) => (r.doc?.responseMediaTypes ?? ['application/json']).includes('application/json') && !r.doc?.response).map((r) => `${r.method} ${r.path}`);
}

export function buildOpenApi(routes: readonly Route[], opts: { version: string }): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const item = (paths[openApiPath(r.path)] ??= {});
    item[r.method.toLowerCase()] = operation(r);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Gaffer local HTTP API',
      version: opts.version,
      description:
        'The operator API of a local Gaffer (tasks, jobs, runs, calendars, signals, tokens, audit). Operator token as `Authorization: Bearer <token>`. ' +
        'Lists are `{items, next}` and take `limit` and `after` (the previous page\'s `next`). Agents speak the WebSocket protocol at `/agent` instead (docs/protocol.md).',
    },
    servers: [{ url: '/api/v1' }],
    security: [{ operator: [] }],
    components: {
      securitySchemes: { operator: { type: 'http', scheme: 'bearer', description: 'the operator token' } },
      schemas: { Error: jsonSchema(errorBody) },
    },
    paths,
  };
}

/** The route that serves the document of `routes()` (the whole table, this route included). */
export function openApiRoute(routes: () => readonly Route[], version: string): Route {
  let cached: Record<string, unknown> | undefined;
  return {
    ...opRoute('openapi.get', OPENAPI_PATH),
    public: true,
    handler() {
      cached ??= buildOpenApi(routes(), { version });
      return { status: 200, body: cached, headers: { 'cache-control': 'no-cache' } };
    },
  };
}
