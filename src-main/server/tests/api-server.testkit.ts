/**
 * A test core behind the `/api/v1` handler on a real HTTP server on 127.0.0.1:0, for the HTTP
 * API's tests. A request the API does not handle gets 404 `not the api`.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { makeTestCore, type TestCore } from '../../core/tests/test-core';
import { createApiHandler } from '../api-v1';

export interface ApiTestServer {
  core: TestCore;
  port: number;
  /** `http://127.0.0.1:PORT/api/v1` */
  base: string;
  /** Closes the server, its connections and the core (waiting for the log worker). */
  close(): Promise<void>;
}

export async function startApiTestServer(operatorToken: string, opts: { version?: string } = {}): Promise<ApiTestServer> {
  const core = makeTestCore();
  const server = http.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const api = createApiHandler(core, { operatorToken, port, ...(opts.version ? { version: opts.version } : {}) });
  server.on('request', (req, res) => {
    void api(req, res).then((handled) => {
      if (!handled) res.writeHead(404, { 'content-type': 'text/plain' }).end('not the api');
    });
  });
  return {
    core,
    port,
    base: `http://127.0.0.1:${port}/api/v1`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      core.close();
      await core.logs.close();
    },
  };
}
