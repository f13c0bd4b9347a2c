/**
 * The headless console: the built renderer, the console API over HTTP and live events over a
 * WebSocket, as an extension of the local server (`server.ts`, which already enforces the Host
 * allow-list on every request).
 *
 *   GET  /                     the renderer (SPA fallback to index.html), strict security headers
 *   POST /console/rpc/<method> body = args → `ConsoleReply` (HTTP status = the error's status)
 *   GET  /console/export?format=jsonl|csv&<filters>   streamed download (Content-Disposition)
 *   WS   /console/events       `{type:"events", events: ConsoleEvent[]}` frames, ~100 ms batches
 *
 * Invariants:
 * 1. Every console endpoint checks, in order: Host (server.ts) → Origin (absent, or exactly this
 *    server's own origin; `Sec-Fetch-Site: cross-site` refused) → operator token → route.
 *    No CORS headers are ever sent, so other origins cannot read anything either.
 * 2. The token travels only in `Authorization: Bearer` (RPC, export), or for the socket as a
 *    subprotocol `gaffer.bearer.<token>` or the first frame `{type:"auth",token}`; never in a
 *    URL, so it lands in no log or history. The page gets it once in the URL fragment (`#token=`),
 *    which browsers never send to the server.
 * 3. Auth is a header, not a cookie, so cross-site request forgery has nothing to ride on.
 * 4. The event socket is bounded: few connections, tiny inbound frames, a slow reader is
 *    disconnected (it reconnects and refetches) instead of buffering without limit. Sockets still
 *    waiting for their auth frame have their own, smaller budget (and the auth timeout), so
 *    unauthenticated sockets can never keep the console's own stream out.
 */
import fs from 'node:fs';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer } from 'ws';
import type { ConsoleEvent, ConsoleReply } from '../../common/console-api';
import { GafferError, isGafferError, toErrorBody, type ErrorBody } from '../../common/errors';
import type { Core } from '../../core/create-core';
import { streamChunks } from '../api/router';
import { allowedHost, bearerToken, isOperator, queryPairs, readJsonBody, rejectUpgrade, requestUrl, selfOrigins, sendJson, upgradePath } from '../guards';
import type { ServerExtension } from '../server';
import { ConsoleEventHub, type ConsoleEventHubOptions } from './events';
import { exportArgsFromQuery, startConsoleExport } from './export';
import { createConsoleMethods, type JobsConsolePort } from './methods';
import { cacheControlFor, consoleCsp, contentTypeFor, resolveRendererPath, rewriteIndexHtml, SECURITY_HEADERS } from './renderer-files';

export const CONSOLE_PREFIX = '/console/';
export const EVENTS_PATH = '/console/events';
export const EVENTS_SUBPROTOCOL = 'gaffer.console.v1';
export const BEARER_SUBPROTOCOL_PREFIX = 'gaffer.bearer.';
/** The actor recorded for operator actions taken in the browser console. */
export const BROWSER_ACTOR = 'operator:browser';

export interface ConsoleHttpOptions {
  operatorToken: string;
  /** The built renderer (`out/renderer`). */
  rendererDir: string;
  dataDir: string | null;
  version: string;
  jobs?: JobsConsolePort;
  events?: ConsoleEventHubOptions;
  /** Most authenticated event sockets at once (default 32). */
  maxSockets?: number;
  /** Most event sockets waiting for their auth frame at once (default 8). */
  maxPendingSockets?: number;
  /** A socket with more than this many bytes unsent is dropped (default 8 MiB). */
  maxBufferedBytes?: number;
  /** How long an unauthenticated socket may wait for its auth frame (default 5 s). */
  authTimeoutMs?: number;
  /** Ping interval for dead-socket detection (default 30 s). */
  pingIntervalMs?: number;
}

/** Frames on the event socket (server → browser). */
export type EventFrame = { type: 'ready' } | { type: 'events'; events: ConsoleEvent[] };

function errorReply(body: ErrorBody): ConsoleReply<never> {
  return { ok: false, error: body };
}

function originOk(req: IncomingMessage, origins: readonly string[]): boolean {
  const origin = req.headers.origin;
  if (origin !== undefined && !origins.includes(origin)) return false;
  return req.headers['sec-fetch-site'] !== 'cross-site';
}

export function createConsoleExtension(core: Core, opts: ConsoleHttpOptions): (port: number) => ServerExtension {
  return (port) => {
    const origins = selfOrigins(port);
    const methods = createConsoleMethods(core, { actor: BROWSER_ACTOR, port, dataDir: opts.dataDir, version: opts.version }, opts.jobs ? { jobs: opts.jobs } : {});
    const hub = new ConsoleEventHub(core.events, { logger: core.logger, ...opts.events });
    const headerCsp = consoleCsp({ port, header: true });
    const metaCsp = consoleCsp({ port });
    let indexCache: { mtimeMs: number; html: string } | undefined;

    const guard = (req: IncomingMessage, res: ServerResponse): void => {
      if (!originOk(req, origins)) throw new GafferError('forbidden', 'cross-origin requests are refused');
      if (!isOperator(bearerToken(req), opts.operatorToken)) {
        res.setHeader('www-authenticate', 'Bearer realm="gaffer"');
        throw new GafferError('unauthorized', 'a valid operator token is required (open the console URL printed by gaffer)');
      }
    };

    const replyError = (res: ServerResponse, e: unknown): void => {
      let body: ErrorBody;
      if (isGafferError(e)) body = toErrorBody(e);
      else {
        core.logger.error('console request failed', { error: e instanceof Error ? e.stack : String(e) });
        body = { code: 'internal', status: 500, message: 'internal error' };
      }
      if (res.headersSent) {
        res.destroy();
        return;
      }
      sendJson(res, body.status, errorReply(body));
    };

    const readIndex = (file: string): string | undefined => {
      let stat: fs.Stats;
      try {
        stat = fs.statSync(file);
      } catch {
        return undefined;
      }
      if (!indexCache || indexCache.mtimeMs !== stat.mtimeMs) {
        indexCache = { mtimeMs: stat.mtimeMs, html: rewriteIndexHtml(fs.readFileSync(file, 'utf8'), metaCsp) };
      }
      return indexCache.html;
    };

    const serveStatic = (req: IncomingMessage, res: ServerResponse, pathname: string): void => {
      const base = { ...SECURITY_HEADERS, 'content-security-policy': headerCsp };
      const r = resolveRendererPath(opts.rendererDir, pathname);
      const head = req.method === 'HEAD';
      if (r.kind === 'forbidden' || r.kind === 'missing') {
        const status = r.kind === 'forbidden' ? 403 : 404;
        res.writeHead(status, { ...base, 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' });
        res.end(head ? undefined : status === 403 ? 'forbidden\n' : 'not found\n');
        return;
      }
      if (r.kind === 'index') {
        const html = readIndex(r.file);
        if (html === undefined) {
          res.writeHead(503, { ...base, 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' });
          res.end(head ? undefined : 'The console has not been built yet: run `npx electron-vite build` (npm start does it for you).\n');
          return;
        }
        res.writeHead(200, { ...base, 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', 'content-length': Buffer.byteLength(html) });
        res.end(head ? undefined : html);
        return;
      }
      const stat = fs.statSync(r.file);
      res.writeHead(200, { ...base, 'content-type': contentTypeFor(r.file), 'cache-control': cacheControlFor(opts.rendererDir, r.file), 'content-length': stat.size });
      if (head) {
        res.end();
        return;
      }
      const stream = fs.createReadStream(r.file);
      stream.on('error', () => res.destroy());
      stream.pipe(res);
    };

    const handleRpc = async (req: IncomingMessage, res: ServerResponse, method: string): Promise<void> => {
      if (req.method !== 'POST') {
        res.setHeader('allow', 'POST');
        throw new GafferError('bad_request', 'console calls are POST requests');
      }
      guard(req, res);
      const type = String(req.headers['content-type'] ?? '');
      if (!/^application\/json\b/i.test(type)) throw new GafferError('bad_request', 'console calls send a JSON body (Content-Type: application/json)');
      const args = await readJsonBody(req, 1024 * 1024);
      const reply = await methods.dispatch(method, args);
      sendJson(res, reply.ok ? 200 : reply.error.status, reply);
    };

    const handleExport = async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> => {
      if (req.method !== 'GET') throw new GafferError('bad_request', 'the export is a GET request');
      guard(req, res);
      const exp = startConsoleExport(core, exportArgsFromQuery(queryPairs(url.search)));
      res.writeHead(200, {
        ...SECURITY_HEADERS,
        'content-type': exp.contentType,
        'content-disposition': `attachment; filename="${exp.filename}"`,
        'cache-control': 'no-store',
      });
      await streamChunks(res, exp.chunks);
    };

    const handle = async (req: IncomingMessage, res: ServerResponse): Promise<boolean> => {
      const url = requestUrl(req);
      if (!url) return false;
      const pathname = url.pathname;
      if (pathname.startsWith(CONSOLE_PREFIX)) {
        try {
          if (!allowedHost(req.headers.host, port)) throw new GafferError('forbidden', 'host not allowed');
          const rest = pathname.slice(CONSOLE_PREFIX.length);
          if (rest.startsWith('rpc/')) await handleRpc(req, res, decodePathSegment(rest.slice(4)));
          else if (rest === 'export') await handleExport(req, res, url);
          else if (pathname === EVENTS_PATH) throw new GafferError('bad_request', 'the event stream is a WebSocket (Upgrade: websocket)');
          else throw new GafferError('not_found', `no console endpoint at ${pathname}`);
        } catch (e) {
          replyError(res, e);
        }
        return true;
      }
      if (req.method !== 'GET' && req.method !== 'HEAD') return false;
      if (pathname === '/agent' || pathname.startsWith('/api/')) return false;
      serveStatic(req, res, pathname);
      return true;
    };

    const attach = (server: Server): { close(): void } => {
      const maxSockets = opts.maxSockets ?? 32;
      const maxPending = opts.maxPendingSockets ?? 8;
      /** Sockets that presented the operator token; the others wait in `pending` (invariant 4). */
      const authed = new Set<WebSocket>();
      const pending = new Set<WebSocket>();
      const maxBuffered = opts.maxBufferedBytes ?? 8 * 1024 * 1024;
      const wss = new WebSocketServer({
        noServer: true,
        maxPayload: 4096,
        perMessageDeflate: false,
        handleProtocols: (protocols) => (protocols.has(EVENTS_SUBPROTOCOL) ? EVENTS_SUBPROTOCOL : false),
      });
      const alive = new WeakMap<WebSocket, boolean>();
      let closed = false;

      const start = (ws: WebSocket): void => {
        pending.delete(ws);
        if (authed.size >= maxSockets) {
          ws.close(1013, `too many console connections (limit ${maxSockets})`);
          return;
        }
        authed.add(ws);
        ws.once('close', () => authed.delete(ws));
        const send = (frame: EventFrame) => {
          if (ws.readyState !== WebSocket.OPEN) return;
          if (ws.bufferedAmount > maxBuffered) {
            ws.close(4429, 'too slow: reconnect and refetch');
            return;
          }
          ws.send(JSON.stringify(frame));
        };
        const sub = hub.subscribe((events) => send({ type: 'events', events }));
        ws.once('close', () => sub.dispose());
        send({ type: 'ready' });
      };

      const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
        if (upgradePath(req) !== EVENTS_PATH) return; // another upgrade handler's business
        socket.on('error', () => socket.destroy());
        if (closed) return rejectUpgrade(socket, 503, 'the server is shutting down');
        if (!allowedHost(req.headers.host, port)) return rejectUpgrade(socket, 403, 'host not allowed');
        if (!originOk(req, origins)) return rejectUpgrade(socket, 403, 'origin not allowed');
        const offered = String(req.headers['sec-websocket-protocol'] ?? '')
          .split(',')
          .map((p) => p.trim())
          .filter(Boolean);
        if (!offered.includes(EVENTS_SUBPROTOCOL)) return rejectUpgrade(socket, 400, `offer the "${EVENTS_SUBPROTOCOL}" subprotocol`);
        const fromProtocol = offered.find((p) => p.startsWith(BEARER_SUBPROTOCOL_PREFIX))?.slice(BEARER_SUBPROTOCOL_PREFIX.length);
        const presented = fromProtocol ?? bearerToken(req);
        if (presented !== undefined && !isOperator(presented, opts.operatorToken)) return rejectUpgrade(socket, 401, 'bad operator token');
        if (presented !== undefined ? authed.size >= maxSockets : pending.size >= maxPending) {
          return rejectUpgrade(socket, 503, presented !== undefined ? `too many console connections (limit ${maxSockets})` : `too many console connections waiting to authenticate (limit ${maxPending})`);
        }
        wss.handleUpgrade(req, socket, head, (ws) => {
          alive.set(ws, true);
          ws.on('pong', () => alive.set(ws, true));
          ws.on('error', () => {
            /* always followed by 'close' */
          });
          if (presented !== undefined) {
            ws.on('message', () => ws.close(4400, 'the event socket takes no messages'));
            start(ws);
            return;
          }
          // No token at the upgrade: the first frame must be {type:"auth", token}.
          pending.add(ws);
          const timer = setTimeout(() => ws.close(4401, 'no auth frame in time'), opts.authTimeoutMs ?? 5000);
          ws.once('close', () => {
            clearTimeout(timer);
            pending.delete(ws);
          });
          ws.once('message', (data, isBinary) => {
            clearTimeout(timer);
            let token: unknown;
            try {
              token = isBinary ? undefined : (JSON.parse(String(data)) as { type?: unknown; token?: unknown });
            } catch {
              token = undefined;
            }
            const frame = token as { type?: unknown; token?: unknown } | undefined;
            if (!frame || frame.type !== 'auth' || typeof frame.token !== 'string' || !isOperator(frame.token, opts.operatorToken)) {
              ws.close(4401, 'unauthorized');
              return;
            }
            ws.on('message', () => ws.close(4400, 'the event socket takes no messages'));
            start(ws);
          });
        });
      };

      const pinger = setInterval(() => {
        for (const ws of wss.clients) {
          if (alive.get(ws) === false) {
            ws.terminate();
            continue;
          }
          alive.set(ws, false);
          ws.ping();
        }
      }, opts.pingIntervalMs ?? 30_000);
      pinger.unref();

      server.on('upgrade', onUpgrade);
      return {
        close() {
          if (closed) return;
          closed = true;
          clearInterval(pinger);
          server.off('upgrade', onUpgrade);
          for (const ws of wss.clients) ws.close(1001, 'server shutting down');
          wss.close();
          hub.dispose();
        },
      };
    };

    return { handle, attach };
  };
}

function decodePathSegment(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    throw new GafferError('bad_request', 'the method name is not valid percent-encoding');
  }
}
