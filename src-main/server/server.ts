/**
 * The local server both shells run: one HTTP server on 127.0.0.1 carrying the agent WebSocket
 * (`/agent`), the HTTP API (`/api/v1`) and — in headless mode — the console itself.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Core } from '../core/create-core';
import { attachAgentSocket, type AgentSocketServer } from './agent-socket';
import { createApiHandler, type ApiOptions } from './api-v1';
import { allowedHost, rejectUpgrade, sendError, sendJson } from './guards';
import { GafferError } from '../common/errors';

export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => Promise<boolean>;

/** Something else that serves requests and upgrades on the same server (the headless console). */
export interface ServerExtension {
  handle: RequestHandler;
  attach?(server: http.Server, port: number): { close(): void };
}

export interface ServerOptions {
  /** Default 127.0.0.1. Anything else is the operator's explicit choice. */
  host?: string;
  /** Default 7311; 0 picks a free port (tests). */
  port?: number;
  operatorToken: string;
  version?: string;
  extraRoutes?: ApiOptions['extraRoutes'];
  /** Origins allowed to open the agent socket (default none). */
  allowedOrigins?: string[];
  extensions?: Array<(port: number) => ServerExtension>;
}

export interface RunningServer {
  readonly port: number;
  readonly host: string;
  readonly url: string;
  readonly agentUrl: string;
  close(): Promise<void>;
}

export async function startServer(core: Core, opts: ServerOptions): Promise<RunningServer> {
  const host = opts.host ?? '127.0.0.1';
  const server = http.createServer();
  server.headersTimeout = 20_000;
  server.requestTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 7311, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const api = createApiHandler(core, {
    operatorToken: opts.operatorToken,
    port,
    ...(opts.version ? { version: opts.version } : {}),
    ...(opts.extraRoutes ? { extraRoutes: opts.extraRoutes } : {}),
  });
  const extensions = (opts.extensions ?? []).map((make) => make(port));
  const agentSocket: AgentSocketServer = attachAgentSocket(server, core, { port, allowedOrigins: opts.allowedOrigins ?? [] });
  const attached = extensions.map((e) => e.attach?.(server, port)).filter((a): a is { close(): void } => !!a);

  // An upgrade to a path no handler owns would otherwise keep its socket open forever (request
  // timeouts do not apply to upgrades): refuse it once every handler has had its synchronous look.
  server.on('upgrade', (req: IncomingMessage, socket: Duplex) => {
    setImmediate(() => {
      if (socket.destroyed || !socket.writable || socket.listenerCount('data') > 0) return;
      rejectUpgrade(socket, 404, `nothing at ${req.method} ${req.url}`);
    });
  });

  server.on('request', (req, res) => {
    void (async () => {
      try {
        if (!allowedHost(req.headers.host, port)) throw new GafferError('forbidden', 'host not allowed');
        if (await api(req, res)) return;
        for (const ext of extensions) if (await ext.handle(req, res)) return;
        sendJson(res, 404, { error: { code: 'not_found', status: 404, message: `nothing at ${req.method} ${req.url}` } });
      } catch (e) {
        sendError(res, e);
      }
    })();
  });

  const url = `http://${host === '::1' ? '[::1]' : host}:${port}`;
  return {
    port,
    host,
    url,
    agentUrl: `${url.replace(/^http/, 'ws')}/agent`,
    async close() {
      for (const a of attached) a.close();
      agentSocket.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
