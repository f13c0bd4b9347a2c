/**
 * `defineRoute`: an HTTP API route declared as data. The schemas it names (path parameters, query,
 * body) are at once its documentation (`doc`, hence the OpenAPI document) and what its handler
 * receives, parsed — so a handler never repeats the parse calls, and cannot parse with a schema
 * other than the documented one.
 *
 * Invariants:
 * 1. Parsing goes query, then path parameters (in the order `params` names them), then body; the
 *    first invalid one is the 400, and nothing is parsed after it.
 * 2. A route that names no `query` does not look at the query string (unknown parameters pass), as
 *    before this helper existed; `query: emptyQuery` refuses any.
 * 3. `unparsedBody` documents a body the handler reads itself (the core validates it, or it is read
 *    only when needed): `parseBody` still checks that a handler parsing it uses that schema.
 */
import type { z } from 'zod';
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

export interface RouteSpec<P extends ParamSchemas, Q extends z.ZodType | undefined, B extends z.ZodType | undefined>
  extends Omit<RouteDoc, 'params' | 'query' | 'body'> {
  method: Method;
  /** `/tasks/:id/release` — relative to `/api/v1`. */
  path: string;
  params?: P;
  query?: Q;
  body?: B;
  /** A body documented but not parsed here (invariant 3). */
  unparsedBody?: z.ZodType;
  handle(input: RouteInput<P, Q, B>, c: ApiContext): Promise<ApiReply | typeof STREAMED> | ApiReply | typeof STREAMED;
}

export function defineRoute<P extends ParamSchemas = Record<never, never>, Q extends z.ZodType | undefined = undefined, B extends z.ZodType | undefined = undefined>(
  spec: RouteSpec<P, Q, B>,
): Route {
  const { method, path, params, query, body, unparsedBody, handle, ...docRest } = spec;
  const doc: RouteDoc = {
    ...docRest,
    ...(params ? { params } : {}),
    ...(query ? { query } : {}),
    ...((body ?? unparsedBody) ? { body: body ?? unparsedBody } : {}),
  };
  return {
    method,
    path,
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
export function arrayListRoute(path: string, summary: string, list: () => Array<{ id: string }>): Route {
  return defineRoute({
    method: 'GET',
    path,
    summary,
    query: arrayPageQuery,
    responses: { 200: '`{items, next}`' },
    handle: ({ query }) => ok(pageArray(list(), query.limit, query.after)),
  });
}
