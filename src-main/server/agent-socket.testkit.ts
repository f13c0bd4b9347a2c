/**
 * Test kit for the agent socket: a core with a manual clock behind a real http server on
 * 127.0.0.1:0, and a minimal raw-`ws` agent client. Used by the *.test.ts files only.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import WebSocket from 'ws';
import { ManualClock } from '../common/clock';
import type { SchedulerConfig } from '../common/config';
import { createCore, type Core } from '../core/create-core';
import type { HubOptions } from '../core/hub/ports';
import { tempDir } from '../core/testing/test-core';
import { attachAgentSocket, type AgentSocketOptions, type AgentSocketServer } from './agent-socket';

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
  opts: { config?: Partial<SchedulerConfig>; hub?: HubOptions; socket?: AgentSocketOptions; dataDir?: string; clock?: ManualClock } = {},
): Promise<Harness> {
  const clock = opts.clock ?? new ManualClock();
  const core = createCore({ clock, dataDir: opts.dataDir ?? tempDir('gaffer-hub-'), config: opts.config ?? {}, hub: opts.hub ?? {} });
  const server = http.createServer((_req, res) => res.writeHead(404).end());
  const agentSocket = attachAgentSocket(server, core, opts.socket ?? {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
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

/** Polls `pred` (real time) until it is truthy. */
export async function until<T>(pred: () => T | undefined | false | null, what = 'condition', timeoutMs = 10_000): Promise<T> {
  const start = Date.now();
  for (;;) {
    const v = pred();
    if (v) return v;
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

// Wire JSON is whatever the server sent: one deliberate escape hatch for reading it in tests.
export type Json = any;

export interface WireReply {
  id: string | number | null;
  ok: boolean;
  result?: Json;
  error?: { code: string; status: number; message: string };
}

/** A raw agent: JSON frames over `ws`, replies matched by id, pushes collected. */
export class TestAgent {
  readonly replies: WireReply[] = [];
  readonly pushes: Json[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  closeInfo: { code: number; reason: string } | undefined;
  instanceId = '';
  private seq = 0;
  private readonly waiting = new Map<string | number, (r: WireReply) => void>();
  private readonly nullWaiters: Array<(r: WireReply) => void> = [];

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      const msg = JSON.parse(data.toString());
      if ('type' in msg && !('ok' in msg)) {
        this.pushes.push(msg);
        return;
      }
      this.replies.push(msg);
      const w = msg.id === null ? this.nullWaiters.shift() : this.waiting.get(msg.id);
      if (msg.id !== null) this.waiting.delete(msg.id);
      w?.(msg);
    });
    this.closed = new Promise((resolve) =>
      ws.on('close', (code, reason) => {
        this.closeInfo = { code, reason: reason.toString() };
        resolve(this.closeInfo);
      }),
    );
  }

  static connect(url: string, opts: { token?: string; headers?: Record<string, string> } = {}): Promise<TestAgent> {
    const headers: Record<string, string> = { ...(opts.headers ?? {}) };
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    const ws = new WebSocket(url, { headers, perMessageDeflate: false });
    const agent = new TestAgent(ws);
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(agent));
      ws.once('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () => reject(Object.assign(new Error(`HTTP ${res.statusCode}`), { status: res.statusCode, body })));
      });
      ws.once('error', (e) => reject(e));
    });
  }

  /** Connects and says hello; throws if hello is refused. */
  static async hello(url: string, token: string, role = 'dev', name = 'agent', extra: Record<string, unknown> = {}): Promise<TestAgent> {
    const a = await TestAgent.connect(url, { token });
    const r = await a.request('hello', { role, name, ...extra });
    if (!r.ok) throw new Error(`hello refused: ${JSON.stringify(r.error)}`);
    a.instanceId = r.result.instanceId;
    return a;
  }

  request(type: string, fields: Record<string, unknown> = {}): Promise<WireReply> {
    const id = `r${++this.seq}`;
    return this.raw({ id, type, ...fields }, id);
  }

  /** Sends any JSON value; resolves with the reply carrying `id` (or the next `id: null` reply). */
  raw(frame: unknown, id: string | number | null = null): Promise<WireReply> {
    return this.text(JSON.stringify(frame), id);
  }

  text(text: string, id: string | number | null = null): Promise<WireReply> {
    const p = new Promise<WireReply>((resolve) => {
      if (id === null) this.nullWaiters.push(resolve);
      else this.waiting.set(id, resolve);
    });
    this.ws.send(text);
    return p;
  }

  async nextPush(type?: string): Promise<Json> {
    return until(() => this.pushes.find((p) => type === undefined || p.type === type), `a ${type ?? ''} push`);
  }

  close(): void {
    this.ws.close(1000);
  }

  /** Drops the TCP connection without a close frame (as a killed process would). */
  kill(): void {
    this.ws.terminate();
  }
}
