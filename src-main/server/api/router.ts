/**
 * A small route table for the HTTP API. A route is a method, a path pattern with `:params`,
 * and a handler that returns `{status?, body, headers?}` (or streams itself and returns STREAMED).
 * Adding `/jobs…` is one more array of routes passed to `createApiHandler`.
 *
 * Each route also carries its `doc` (summary, and the zod schemas of its path parameters, query
 * and body), from which `server/openapi.ts` builds `GET /api/v1/openapi.json`. A documented schema
 * is the one the handler validates with: `parseQuery`/`parseBody`/`parseParam` refuse (500, a bug)
 * a schema other than the one the matched route documents, so the document cannot drift.
 * Most routes are declared with `defineRoute` (define-route.ts), which makes those calls itself from
 * the schemas the route names; the streamed and path-first routes (logs, audit) still call them.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { GafferError } from '../../common/errors';
import { reason } from '../../common/schemas';
import { parseOrThrow } from '../../common/validate';
import type { Core } from '../../core/create-core';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** The actor recorded on every operator action taken through this API. */
export const HTTP_ACTOR = 'operator:http';

export const STREAMED: unique symbol = Symbol('streamed');

export interface ApiReply {
  status?: number;
  body: unknown;
  headers?: Record<string, string>;
}

export interface ApiContext {
  core: Core;
  /** The matched route (its `doc` is checked against the schemas the handler parses with). */
  route?: Route;
  req: IncomingMessage;
  res: ServerResponse;
  /** Decoded path parameters. */
  params: Record<string, string>;
  /** Query parameters: a string, or an array when the name is repeated. */
  query: Record<string, string | string[]>;
  /** The actor for audited actions (`operator:http`). */
  actor: string;
  /** The JSON body (size-capped); `{}` when empty. */
  body(): Promise<unknown>;
}

/** What `GET /api/v1/openapi.json` says about a route. */
export interface RouteDoc {
  /** One line, for a person or a model reading the API reference. */
  summary: string;
  description?: string;
  /** Schemas of the `:params` (a parameter left out is documented as a plain string). */
  params?: Record<string, z.ZodType>;
  query?: z.ZodType;
  /** Request headers the route reads (name → schema). */
  headers?: Record<string, z.ZodType>;
  /** The JSON body (an object). */
  body?: z.ZodType;
  /** A body that is not JSON: its media type (e.g. an uploaded export file). */
  rawBody?: { mediaType: string; description: string };
  /** Success replies: status → description (default `{200: 'OK'}`). */
  responses?: Record<number, string>;
  /** The JSON body of a success reply (from the route's catalogue entry: common/ops). */
  response?: z.ZodType;
  /** Media types of a streamed success reply (default `application/json`). */
  responseMediaTypes?: string[];
}

export interface Route {
  method: Method;
  /** `/tasks/:id/release` — relative to `/api/v1`. */
  path: string;
  /** The catalogue operation it serves (common/ops), whose entry gives its method, path and doc. */
  op?: string;
  doc?: RouteDoc;
  /** Served without the operator token (Host and Origin checks still apply): the API reference only. */
  public?: boolean;
  handler(c: ApiContext): Promise<ApiReply | typeof STREAMED> | ApiReply | typeof STREAMED;
}

export interface CompiledRoute extends Route {
  segments: string[];
}

export function compileRoutes(routes: readonly Route[]): CompiledRoute[] {
  const seen = new Set<string>();
  return routes.map((r) => {
    const key = `${r.method} ${r.path.replace(/:[^/]+/g, ':')}`;
    if (seen.has(key)) throw new Error(`duplicate route ${r.method} ${r.path}`);
    seen.add(key);
    return { ...r, segments: r.path.split('/').filter(Boolean) };
  });
}

/** Matches raw (still percent-encoded) path segments; params are decoded after matching. */
export function matchRoute(
  routes: readonly CompiledRoute[],
  method: string,
  rawSegments: string[],
): { route: CompiledRoute; params: Record<string, string> } | { allowed: string[] } {
  const allowed: string[] = [];
  for (const r of routes) {
    if (r.segments.length !== rawSegments.length) continue;
    const params: Record<string, string> = {};
    let ok = true;
    for (let i = 0; i < r.segments.length && ok; i++) {
      const pat = r.segments[i]!;
      const seg = rawSegments[i]!;
      if (pat.startsWith(':')) params[pat.slice(1)] = seg;
      else ok = pat === seg;
    }
    if (!ok) continue;
    if (r.method !== method) {
      allowed.push(r.method);
      continue;
    }
    for (const k of Object.keys(params)) {
      try {
        params[k] = decodeURIComponent(params[k]!);
      } catch {
        throw new GafferError('bad_request', `path parameter "${k}" is not valid percent-encoding`);
      }
    }
    return { route: r, params };
  }
  return { allowed };
}

/** Query pairs (`queryPairs` in guards.ts: strictly decoded) as an object; a repeated name → an array. */
export function queryObject(pairs: Iterable<[string, string]>): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of pairs) {
    const prev = out[k];
    out[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  return out;
}

// ---- Schemas for strings that arrive in URLs. ----

/** An integer in a query string or path segment. */
export function intParam(min: number, max: number = Number.MAX_SAFE_INTEGER) {
  return z
    .string()
    .regex(/^-?\d{1,16}$/, 'must be an integer')
    .transform(Number)
    .pipe(z.number().int().min(min).max(max));
}

export const idParam = intParam(1);
/** The query of a route that takes none (unknown parameters are refused). */
export const emptyQuery = z.strictObject({});
export const limitParam = intParam(1, 1000);
export const afterParam = intParam(0);
/** The page query of a small in-memory list (`pageArray`): `after` is the last id seen. */
export const arrayPageQuery = z.strictObject({ limit: limitParam.optional(), after: z.string().min(1).max(100).optional() });

// ---- The reason every operator action carries. ----

export const reasonBody = z.strictObject({ reason });
export const optionalReasonBody = z.strictObject({ reason: reason.optional() });
/** A DELETE may give its reason as `?reason=` (see `reasonFromQueryOrBody`). */
export const reasonQuery = z.strictObject({ reason: reason.optional() });

/** A DELETE's reason: `?reason=` when given, else the body's (read only then). */
export function reasonFromQueryOrBody(query: z.output<typeof reasonQuery>, body: typeof reasonBody, c: ApiContext): Promise<string>;
export function reasonFromQueryOrBody(query: z.output<typeof reasonQuery>, body: typeof optionalReasonBody, c: ApiContext): Promise<string | undefined>;
export async function reasonFromQueryOrBody(query: z.output<typeof reasonQuery>, body: typeof reasonBody | typeof optionalReasonBody, c: ApiContext): Promise<string | undefined> {
  return query.reason ?? (await parseBody(body, c)).reason;
}

/** The route's documentation must name the schema the handler validates with (see the header). */
function assertDocumented(c: ApiContext, what: string, documented: z.ZodType | undefined, used: z.ZodType): void {
  if (c.route && documented !== undefined && documented !== used) {
    throw new Error(`${c.route.method} ${c.route.path}: the ${what} schema parsed differs from the one its doc names`);
  }
}

export function parseQuery<S extends z.ZodType>(schema: S, c: ApiContext): z.output<S> {
  assertDocumented(c, 'query', c.route?.doc?.query, schema);
  return parseOrThrow(schema, c.query, 'query');
}

export async function parseBody<S extends z.ZodType>(schema: S, c: ApiContext): Promise<z.output<S>> {
  assertDocumented(c, 'body', c.route?.doc?.body, schema);
  const body = await c.body();
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new GafferError('bad_request', 'request body must be a JSON object');
  }
  return parseOrThrow(schema, body, 'body');
}

export function parseParam<S extends z.ZodType>(schema: S, c: ApiContext, name: string): z.output<S> {
  assertDocumented(c, `path parameter "${name}"`, c.route?.doc?.params?.[name], schema);
  return parseOrThrow(schema, c.params[name], `path parameter "${name}"`);
}

/** Pages an in-memory list (small lists: tokens, instances) with an id cursor. */
export function pageArray<T extends { id: string }>(all: T[], limit = 100, after?: string): { items: T[]; next: string | null } {
  let start = 0;
  if (after !== undefined) {
    const i = all.findIndex((x) => x.id === after);
    if (i < 0) throw new GafferError('bad_request', `unknown cursor "after": ${after}`);
    start = i + 1;
  }
  const items = all.slice(start, start + limit);
  const more = start + limit < all.length;
  return { items, next: more && items.length ? items[items.length - 1]!.id : null };
}

export const ok = (body: unknown, status = 200, headers?: Record<string, string>): ApiReply => ({
  status,
  body,
  ...(headers ? { headers } : {}),
});

/**
 * Writes chunks to `res` with backpressure: the next chunk is pulled only once the socket has
 * taken the previous one (its write callback; a full socket makes that wait as 'drain' would), or
 * the client has gone away, which stops the source. A chunk may be a view onto memory its producer
 * writes again once the next chunk is pulled (the audit export's ring, core/audit/export-thread.ts),
 * so it must be out of Node's hands first. Ends the response when done.
 */
export async function streamChunks(res: ServerResponse, chunks: AsyncIterable<string | Uint8Array>): Promise<void> {
  let gone = false;
  const onClose = () => {
    gone = true;
  };
  res.on('close', onClose);
  try {
    for await (const chunk of chunks) {
      if (gone || res.destroyed) return; // leaving the loop closes the source generator
      await writtenOrClosed(res, chunk);
    }
    if (!gone && !res.destroyed) res.end();
  } finally {
    res.off('close', onClose);
  }
}

function writtenOrClosed(res: ServerResponse, chunk: string | Uint8Array): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('close', done);
      resolve();
    };
    res.on('close', done);
    res.write(chunk, done);
  });
}
