/**
 * `defineRoute`: an HTTP API route declared as data. The route names its operation in the
 * catalogue (common/ops): its method, path, summary, success statuses and reply schema come from
 * the entry. The schemas it names (path parameters, query, body) are at once its documentation
 * (`doc`, hence the OpenAPI document) and what its handler receives, parsed — so a handler never
 * repeats the parse calls, and cannot parse with a schema other than the documented one.
 *
 * Invariants:
 * 1. Parsing goes query, then path parameters (in the order `params` names them), then body; the
 *    first invalid one is the 400, and nothing is parsed after it.
 * 2. A route that names no `query` does not look at the query string (unknown parameters pass), as
 *    before this helper existed; `query: emptyQuery` refuses any.
 * 3. `unparsedBody` documents a body the handler reads itself (the core validates it, or it is read
 *    only when needed): `parseBody` still checks that a handler parsing it uses that schema.
 * 4. An operation with several routes (`DELETE /tokens/:id` and `POST /tokens/:id/revoke`) is
 *    picked by `path`; a path the entry does not declare fails at start.
 */
import type { z } from 'zod';
import { opNamed, type OpName } from '../../common/ops';
import { arrayPageQuery, ok, pageArray, parseBody, parseParam, parseQuery, type ApiContext, type ApiReply, type Method, type Route, type RouteDoc, type STREAMED } from './router';

type ParamSchemas = Record<string, z.ZodType>;
/** What a declared schema gives the handler (undefined when none is declared). */
export type Parsed<S> = S extends z.ZodType ? z.output<S> : undefined;

/** What a handler receives: the route's declared inputs, parsed. */
export interface RouteInput<P extends ParamSchemas, Q, B> {
  params: { [K in keyof P]: z.output<P[K]> };
  query: Parsed<Q>;
  body: Parsed<B>;
}

/** The inputs a route parses (they arrive as strings in URLs, so they are the route's own). */
interface RouteInputs<P extends ParamSchemas, Q extends z.ZodType | undefined, B extends z.ZodType | undefined> {
  params?: P;
  query?: Q;
  body?: B;
  /** A body documented but not parsed here (invariant 3). */
  unparsedBody?: z.ZodType;
  /** Request headers the route reads (name → schema). */
  headers?: Record<string, z.ZodType>;
  handle(input: RouteInput<P, Q, B>, c: ApiContext): Promise<ApiReply | typeof STREAMED> | ApiReply | typeof STREAMED;
}

/** A route of a catalogue operation. */
export interface OpRouteSpec<P extends ParamSchemas, Q extends z.ZodType | undefined, B extends z.ZodType | undefined> extends RouteInputs<P, Q, B> {
  op: OpName;
  /** Which of the operation's routes (invariant 4); default: its only one. */
  path?: string;
}

/** A route outside the catalogue (tests, and `extraRoutes` a shell adds): method, path and doc given here. */
export interface RouteSpec<P extends ParamSchemas, Q extends z.ZodType | undefined, B extends z.ZodType | undefined>
  extends RouteInputs<P, Q, B>,
    Omit<RouteDoc, 'params' | 'query' | 'body' | 'headers'> {
  method: Method;
  /** `/tasks/:id/release` — relative to `/api/v1`. */
  path: string;
}

/** The method, path and doc of an operation's route, from its catalogue entry (invariant 4). */
export function opRoute(name: OpName, path?: string): { method: Method; path: string; op: string; doc: RouteDoc } {
  const o = opNamed(name);
  const routes = o?.rest ?? [];
  const r = path === undefined ? (routes.length === 1 ? routes[0] : undefined) : routes.find((x) => x.path === path);
  if (!o || !r) throw new Error(`operation ${name} declares no HTTP route${path ? ` ${path}` : ''}${routes.length > 1 && path === undefined ? ' (it has several: name the path)' : ''}`);
  const doc: RouteDoc = {
    summary: r.summary ?? o.summary,
    ...(r.description ? { description: r.description } : {}),
    ...(r.status ? { responses: r.status } : {}),
    ...(r.mediaTypes ? { responseMediaTypes: r.mediaTypes } : {}),
  };
  const response = r.response === undefined ? o.result : r.response;
  if (response) doc.response = response;
  return { method: r.method, path: r.path, op: name, doc };
}

export function defineRoute<P extends ParamSchemas = Record<never, never>, Q extends z.ZodType | undefined = undefined, B extends z.ZodType | undefined = undefined>(
  spec: OpRouteSpec<P, Q, B> | RouteSpec<P, Q, B>,
): Route {
  const { params, query, body, unparsedBody, headers, handle } = spec;
  const base =
    'op' in spec
      ? opRoute(spec.op, spec.path)
      : (() => {
          const { method, path, params: _p, query: _q, body: _b, unparsedBody: _u, headers: _h, handle: _handle, ...docRest } = spec;
          return { method, path, doc: docRest as RouteDoc };
        })();
  const doc: RouteDoc = {
    ...base.doc,
    ...(params ? { params } : {}),
    ...(query ? { query } : {}),
    ...(headers ? { headers } : {}),
    ...((body ?? unparsedBody) ? { body: body ?? unparsedBody } : {}),
  };
  return {
    ...base,
    doc,
    async handler(c) {
      const q = query ? parseQuery(query, c) : undefined;
      const p: Record<string, unknown> = {};
      for (const [name, schema] of Object.entries(params ?? {})) p[name] = parseParam(schema, c, name);
      const b = body ? await parseBody(body, c) : undefined;
      return handle({ params: p, query: q, body: b } as RouteInput<P, Q, B>, c);
    },
  };
}

/** `GET path`: a small list held in memory (tokens, instances, managed agents), paged by id (`pageArray`). */
export function arrayListRoute(name: OpName, list: () => Array<{ id: string }>): Route {
  return defineRoute({
    op: name,
    query: arrayPageQuery,
    handle: ({ query }) => ok(pageArray(list(), query.limit, query.after)),
  });
}

/**
 * A route that parses its own inputs (streamed replies, path-first checks: audit, logs, status)
 * still takes its method, path and doc from its catalogue entry; `extra` adds the schemas it parses.
 */
export function withDoc(base: ReturnType<typeof opRoute>, extra: Partial<RouteDoc>): Pick<Route, 'method' | 'path' | 'op' | 'doc'> {
  return { ...base, doc: { ...base.doc, ...extra } };
}
