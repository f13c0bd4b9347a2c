/**
 * The local HTTP API, `/api/v1` (PROTOCOL §2), for scripts, the CLI and the headless console.
 *
 * Invariants:
 * 1. Checks run in this order, before any route: Host allow-list (DNS rebinding) → Origin (a
 *    page from another origin gets 403; no CORS headers are ever sent) → operator bearer token
 *    (constant-time compare) → route.
 * 2. Every query, path parameter and body is validated with zod before anything changes; bad
 *    input is a 400 and leaves state untouched.
 * 3. Errors are `{"error":{"code","status","message"}}` with the contracted codes; unexpected
 *    errors are logged and answered as a generic 500 that leaks no internals.
 * 4. Operator actions are audited with actor `operator:http`.
 * 5. The handler answers only paths under `/api/v1` and returns false for anything else, so a
 *    server can chain handlers. Routes are a table: `/jobs…` is one more module in `extraRoutes`.
 * 6. `GET /api/v1/openapi.json` documents the whole table (server/openapi.ts). It is the one
 *    route served without the operator token (`public`): the API reference holds no data.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { GafferError, isGafferError } from '../common/errors';
import { opNamed } from '../common/ops';
import { applyReasonPolicy } from '../common/ops/reason-policy';
import type { Core } from '../core/create-core';
import { attentionRoutes } from './api/attention';
import { spendRoutes } from './api/spend';
import { auditRoutes } from './api/audit';
import {
  compileRoutes,
  HTTP_ACTOR,
  matchRoute,
  queryObject,
  STREAMED,
  type ApiContext,
  type CompiledRoute,
  type Route,
} from './api/router';
import { jobRoutes } from './api/jobs';
import { logRoutes } from './api/logs';
import { managedAgentRoutes } from './api/managed-agents';
import { signalRoutes } from './api/signals';
import { statusRoutes } from './api/status';
import { taskRoutes } from './api/tasks';
import { tokenRoutes } from './api/tokens';
import { openApiRoute } from './openapi';
import { allowedHost, bearerToken, isOperator, queryPairs, readJsonBody, requestUrl, selfOrigins, sendError, sendJson } from './guards';

export const API_PREFIX = '/api/v1';

export interface ApiOptions {
  operatorToken: string;
  /** The port the server is bound to (Host and Origin checks). */
  port: number;
  /** Reported by `GET /status`. */
  version?: string;
  /** Largest JSON body accepted (bytes). */
  maxBodyBytes?: number;
  /** More routes (e.g. `/jobs…`), given core; paths are relative to `/api/v1`. */
  extraRoutes?: (core: Core) => Route[];
}

export type ApiHandler = (req: IncomingMessage, res: ServerResponse) => Promise<boolean>;

export const DEFAULT_VERSION = process.env.npm_package_version ?? '0.1.0';

/** The built-in route table. */
export function coreRoutes(core: Core, version = DEFAULT_VERSION): Route[] {
  return [...statusRoutes(core, version), ...tokenRoutes(core), ...taskRoutes(core), ...signalRoutes(core), ...auditRoutes(core), ...jobRoutes(core), ...logRoutes(core), ...managedAgentRoutes(core), ...attentionRoutes(core), ...spendRoutes(core)];
}

/**
 * The operator's reason setting on a catalogue route's JSON body, before the route parses it: the
 * same rule as the console's (common/ops/reason-policy.ts). Only a body whose documented schema
 * carries the reason at its top level is touched (a reason given as `?reason=` wins over it).
 */
function withReasonPolicy(core: Core, route: CompiledRoute, body: unknown): unknown {
  const o = route.op === undefined ? undefined : opNamed(route.op);
  if (!o || o.reason === 'none') return body;
  const schema = route.doc?.body;
  if (!(schema instanceof z.ZodObject) || !((o.reasonField ?? 'reason') in schema.shape)) return body;
  return applyReasonPolicy(o, body, core.operatorSettings.read().requireReason);
}

function isPublic(routes: readonly CompiledRoute[], method: string, segments: string[]): boolean {
  return routes.some((r) => r.public === true && r.method === method && r.segments.length === segments.length && r.segments.every((s, i) => s === segments[i]));
}

export function createApiHandler(core: Core, opts: ApiOptions): ApiHandler {
  if (!opts.operatorToken) throw new Error('createApiHandler: an operator token is required');
  const table: Route[] = [...coreRoutes(core, opts.version), ...(opts.extraRoutes?.(core) ?? [])];
  table.push(openApiRoute(() => table, opts.version ?? DEFAULT_VERSION));
  const routes = compileRoutes(table);
  const origins = selfOrigins(opts.port);

  return async (req, res) => {
    const url = requestUrl(req);
    if (!url) return false;
    const path = url.pathname;
    if (path !== API_PREFIX && !path.startsWith(`${API_PREFIX}/`)) return false;
    try {
      // 1. Host allow-list.
      if (!allowedHost(req.headers.host, opts.port)) throw new GafferError('forbidden', 'host not allowed');
      // 2. Origin: only this server's own pages; anything else (including "null") is refused.
      const origin = req.headers.origin;
      if (origin !== undefined && !origins.includes(origin)) throw new GafferError('forbidden', 'cross-origin requests are refused');
      if (req.headers['sec-fetch-site'] === 'cross-site') throw new GafferError('forbidden', 'cross-site requests are refused');
      const method = (req.method ?? 'GET').toUpperCase();
      const segments = path.slice(API_PREFIX.length).split('/').filter(Boolean);
      // 3. Operator token (a public route has no parameters, so matching it first reveals nothing).
      if (!isOperator(bearerToken(req), opts.operatorToken) && !isPublic(routes, method, segments)) {
        res.setHeader('www-authenticate', 'Bearer realm="gaffer"');
        throw new GafferError('unauthorized', 'a valid operator token is required (Authorization: Bearer <token>)');
      }
      // 4. Route.
      const match = matchRoute(routes, method, segments);
      if (!('route' in match)) {
        if (match.allowed.length > 0) {
          res.setHeader('allow', [...new Set(match.allowed)].join(', '));
          throw new GafferError('not_found', `${method} is not supported on ${path} (allowed: ${match.allowed.join(', ')})`);
        }
        throw new GafferError('not_found', `no such endpoint: ${path}`);
      }
      let body: Promise<unknown> | undefined;
      const ctx: ApiContext = {
        core,
        route: match.route,
        req,
        res,
        params: match.params,
        query: queryObject(queryPairs(url.search)),
        actor: HTTP_ACTOR,
        body: () => (body ??= readJsonBody(req, opts.maxBodyBytes).then((b) => withReasonPolicy(core, match.route, b))),
      };
      const reply = await match.route.handler(ctx);
      if (reply === STREAMED) return true;
      for (const [k, v] of Object.entries(reply.headers ?? {})) res.setHeader(k, v);
      sendJson(res, reply.status ?? 200, reply.body);
    } catch (e) {
      if (!isGafferError(e)) {
        core.logger.error('api request failed', { method: req.method, path, error: e instanceof Error ? e.stack : String(e) });
        sendError(res, new GafferError('internal', 'internal error'));
      } else {
        sendError(res, e);
      }
    }
    return true;
  };
}
