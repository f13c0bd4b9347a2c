/**
 * Test kit for the agent socket: a core with a manual clock behind a real http server on
 * 127.0.0.1:0. The raw-`ws` agent client and `until` are the core's (re-exported here). Used by the
 * *.test.ts files only.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { ManualClock } from '../../common/clock';
import type { SchedulerConfig } from '../../common/config';
import { createCore, type Core } from '../../core/create-core';
import type { HubOptions } from '../../core/hub/ports';
import { tempDir } from '../../core/tests/test-core';
export { TestAgent, until, type Json, type WireReply } from '../../core/tests/ws-agent.testkit';
import { attachAgentSocket, type AgentSocketOptions, type AgentSocketServer } from '../agent-socket';

export interface Harness {
  core: Core;
  clock: ManualClock;
  server: http.Server;
  agentSocket: AgentSocketServer;
  port: number;
  url: string;
  /** A fresh agent token (optionally role-bound). */
  token(role?: string | null): string;
  close(): Promise<void>;
}

export async function startHarness(
  opts: { config?: Partial<SchedulerConfig>; hub?: HubOptions; socket?: AgentSocketOptions; dataDir?: string; clock?: ManualClock; /** Default 0 (any free port); a restart passes the port it had. */ port?: number } = {},
): Promise<Harness> {
  const clock = opts.clock ?? new ManualClock();
  const core = createCore({ clock, dataDir: opts.dataDir ?? tempDir('gaffer-hub-'), config: opts.config ?? {}, hub: opts.hub ?? {} });
  const server = http.createServer((_req, res) => res.writeHead(404).end());
  const agentSocket = attachAgentSocket(server, core, opts.socket ?? {});
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  let n = 0;
  return {
    core,
    clock,
    server,
    agentSocket,
    port,
    url: `ws://127.0.0.1:${port}/agent`,
    token: (role = null) => core.tokens.create({ name: `t${++n}`, role, actor: 'test' }).token,
    async close() {
      core.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Server-side TCP sockets of the harness (destroy them to simulate a network blip). */
export function trackSockets(h: Pick<Harness, 'server'>): Set<Socket> {
  const sockets = new Set<Socket>();
  h.server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  return sockets;
}
