/**
 * The `ws` adapter for the agent hub: `ws://127.0.0.1:<port>/agent` on an existing http.Server.
 * All protocol logic lives in core/hub; this file only admits upgrades and moves frames.
 *
 * Checks before the handshake (each refusal is a plain HTTP response and an audit row):
 * 1. Host must be a loopback name with our port (defeats DNS rebinding)   → 403
 * 2. An Origin header must be explicitly allowed (default: none)           → 403
 * 3. `Authorization: Bearer` (optional here; may come in hello) must verify → 401
 * 4. Room for its token: one agent token holds at most 64 sockets at once (the hub's
 *    `maxConnectionsPerToken`, PROTOCOL §17), so one token cannot take every place → 429
 *    `too_many_connections` (a token that comes only in `hello` is refused there: close 4429)
 * 5. Room under the cap: a connection with a verified token counts against `maxConnections`;
 *    one without counts against its own, smaller `maxPendingConnections` until its `hello`
 *    authenticates it (then against `maxConnections`, checked again), or the hello timeout
 *    closes it. So token-less sockets can never keep a real agent out.     → 503
 *
 * Frames that only feed logs and spend (`log`, `usage`, `artifact`, any large frame) are handed
 * to the hub in short time-bounded slices, each connection's frames in order, its socket paused
 * while too many wait (ingest-queue.ts): another agent's claim waits behind one slice at most.
 * They are handed over as their bytes: a `log` frame's lines are decoded in the log worker.
 *
 * Frames: text only, at most MAX_FRAME_BYTES (a larger one is answered `too_large` and closed
 * with 4413), no compression (a compressed frame could inflate past any limit). A frame up to
 * OVERSIZE_READ_BYTES is still received so that its `too_large` reply can carry its `id` (read
 * without parsing the frame); anything larger is cut off by `ws` unread (reply `id: null`).
 */
import type { IncomingMessage, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import WebSocket, { WebSocketServer } from 'ws';
import { MAX_FRAME_BYTES } from '../common/protocol';
import type { TokenInfo } from '../core/auth';
import type { Core } from '../core/create-core';
import type { Disposable } from '../core/events';
import type { HubConnection, HubSocket } from '../core/hub/ports';
import { peekId } from '../core/hub/wire';
import { allowedHost, bearerToken, originAllowed, rejectUpgrade, upgradePath } from './guards';
import { IngestQueue, isIngestFrame, type IngestQueueOptions, type IngestQueueStats } from './ingest-queue';

export interface AgentSocketOptions {
  /** URL path of the agent socket (default `/agent`). */
  path?: string;
  /** Port for the Host check (default: the port the server is listening on). */
  port?: number;
  /** Origins allowed to open the socket (default none: browsers cannot connect). */
  allowedOrigins?: readonly string[];
  /** Most live authenticated connections; more are refused with 503 (default 1000). */
  maxConnections?: number;
  /** Most live connections still waiting to authenticate by `hello` (default 64). */
  maxPendingConnections?: number;
  /** The log / usage frames' queue: its slice length and water marks (ingest-queue.ts). */
  ingest?: IngestQueueOptions;
}

export interface AgentSocketServer extends Disposable {
  /** Live agent connections (authenticated or not). */
  readonly connections: number;
  /** The log / usage frames' queue (ingest-queue.ts): slices run, sources paused. */
  readonly ingest: IngestQueueStats;
  /** Stops accepting upgrades and closes live agent sockets. Idempotent. */
  close(): void;
}

/** Oversize frames up to this size are read (not parsed) for their `id`; larger ones are cut off unread. */
export const OVERSIZE_READ_BYTES = 4 * MAX_FRAME_BYTES;

/**
 * A server's text frame (FIN, opcode 1, unmasked, RFC 6455 §5.2), header and UTF-8 in one buffer.
 *
 * The hub's frames go straight to the TCP socket as one write: `ws` sends a frame as two chunks
 * (header, then the text) corked into one writev, and that stream machinery (cork, buffer list,
 * writev of a mixed list, two write callbacks) was a few µs per reply on the 50-agent hot path
 * (issue 32). Safe beside `ws`'s own writes (close, ping, pong) because this socket never
 * compresses: `ws`'s sender writes each frame synchronously and queues nothing, so whole frames
 * reach the socket in the order they were sent. `bufferedAmount` still counts these bytes (it is
 * the socket's own write queue).
 */
export function textFrame(text: string): Buffer {
  const n = Buffer.byteLength(text);
  const head = n < 126 ? 2 : n < 65_536 ? 4 : 10;
  const buf = Buffer.allocUnsafe(head + n);
  buf[0] = 0x81;
  if (head === 2) buf[1] = n;
  else if (head === 4) {
    buf[1] = 126;
    buf.writeUInt16BE(n, 2);
  } else {
    buf[1] = 127;
    buf.writeUInt32BE(0, 2);
    buf.writeUInt32BE(n, 6);
  }
  buf.write(text, head, 'utf8');
  return buf;
}

/**
 * `ws` closes a connection whose frame exceeds `maxPayload` with 1009 before telling anyone. The
 * protocol wants a `too_large` reply and 4413, so that one close is handed to the hub instead.
 */
class AgentWebSocket extends WebSocket {
  onTooLarge: (() => void) | undefined;

  override close(code?: number, data?: string | Buffer): void {
    const tooLarge = this.onTooLarge;
    if (code === 1009 && tooLarge) {
      this.onTooLarge = undefined;
      tooLarge();
      if (this.readyState === WebSocket.OPEN) super.close(4413, 'frame too large');
      return;
    }
    super.close(code, data);
  }
}

export function attachAgentSocket(server: Server, core: Pick<Core, 'hub' | 'tokens' | 'committer'>, opts: AgentSocketOptions = {}): AgentSocketServer {
  const { hub, tokens } = core;
  const path = opts.path ?? '/agent';
  const allowedOrigins = opts.allowedOrigins ?? [];
  const maxConnections = opts.maxConnections ?? 1000;
  const maxPending = opts.maxPendingConnections ?? 64;
  const full = (): string | null => (hub.authenticatedCount >= maxConnections ? `too many agent connections (limit ${maxConnections})` : null);
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: OVERSIZE_READ_BYTES,
    perMessageDeflate: false,
    WebSocket: AgentWebSocket,
  });
  let closed = false;
  // Log, usage and large frames are handled in short slices of their own (ingest-queue.ts), so
  // another agent's claim never waits behind a whole turn of a log flood.
  // A slice steps aside once for claims' ops waiting on the group commit (ingest-queue invariant 4).
  const ingest = new IngestQueue({ yieldTo: () => core.committer.pending > 0, ...opts.ingest });

  const port = (): number => opts.port ?? (server.address() as AddressInfo | null)?.port ?? 0;

  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    if (upgradePath(req) !== path) return; // another upgrade handler's business
    socket.on('error', () => socket.destroy());
    const remoteAddress = req.socket.remoteAddress ?? null;
    if (closed || hub.isClosed()) return rejectUpgrade(socket, 503, 'the scheduler is shutting down');
    if (!allowedHost(req.headers.host, port())) {
      hub.rejected('host', { remoteAddress, host: String(req.headers.host ?? '').slice(0, 200) });
      return rejectUpgrade(socket, 403, 'host not allowed');
    }
    const origin = req.headers.origin;
    if (!originAllowed(origin, allowedOrigins)) {
      hub.rejected('origin', { remoteAddress, origin: String(origin).slice(0, 200) });
      return rejectUpgrade(socket, 403, 'origin not allowed: browser pages cannot open the agent socket');
    }
    let token: TokenInfo | null = null;
    if (req.headers.authorization !== undefined) {
      const secret = bearerToken(req);
      token = (secret !== undefined && tokens.verify(secret)) || null;
      if (!token) {
        hub.rejected('token', { remoteAddress, via: 'header' });
        return rejectUpgrade(socket, 401, 'bad or revoked token');
      }
    }
    const crowded = token ? hub.tokenRoom(token.id) : null;
    if (crowded !== null) {
      hub.rejected('capacity', { remoteAddress, tokenId: token!.id, perToken: true });
      return rejectUpgrade(socket, 429, crowded, 'too_many_connections');
    }
    const refusal = token ? full() : hub.unauthenticatedCount >= maxPending ? `too many agent connections waiting to authenticate (limit ${maxPending})` : null;
    if (refusal !== null) {
      hub.rejected('capacity', { remoteAddress, authenticated: hub.authenticatedCount, unauthenticated: hub.unauthenticatedCount, withToken: token !== null });
      return rejectUpgrade(socket, 503, refusal);
    }
    wss.handleUpgrade(req, socket, head, (ws) => accept(ws as AgentWebSocket, remoteAddress, token));
  };

  const accept = (ws: AgentWebSocket, remoteAddress: string | null, token: TokenInfo | null): void => {
    // One write per frame (textFrame): `ws` would cork the header and the text into a writev.
    const raw = (ws as unknown as { _socket?: Duplex })._socket;
    const socket: HubSocket = {
      send: (text) => {
        if (ws.readyState !== WebSocket.OPEN) return;
        if (raw) raw.write(textFrame(text));
        else ws.send(text);
      },
      close: (code, reason) => {
        if (ws.readyState === WebSocket.OPEN || ws.readyState === WebSocket.CONNECTING) ws.close(code, reason);
      },
      get bufferedAmount() {
        return ws.bufferedAmount;
      },
      ping: () => {
        if (ws.readyState === WebSocket.OPEN) ws.ping();
      },
      terminate: () => ws.terminate(),
    };
    const conn: HubConnection = hub.connect(socket, { remoteAddress, token, admitAtHello: full });
    ws.onTooLarge = () => conn.tooLarge(null);
    const source = { pause: () => ws.pause(), resume: () => ws.resume() };
    // A queued frame (`log`, `usage`, large) goes to the hub as its bytes: a `log` frame is then
    // decoded by the log worker, not here (core/logs/service.ts invariant 6); the bytes are the
    // hub's from here on.
    const receive = (bytes: Buffer, isBinary: boolean, queued: boolean) => {
      if (bytes.length > MAX_FRAME_BYTES) conn.tooLarge(isBinary ? null : peekId(bytes));
      else if (isBinary) conn.receiveBinary();
      else if (queued) conn.receiveBytes(bytes);
      else conn.receive(bytes.toString('utf8'));
    };
    ws.on('message', (data, isBinary) => {
      const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
      // ingest-queue.ts invariant 1: once one frame of this socket waits, its later ones wait behind it.
      if (ingest.holds(source) || isIngestFrame(bytes)) ingest.push(source, bytes.length, () => receive(bytes, isBinary, true));
      else receive(bytes, isBinary, false);
    });
    ws.on('ping', () => conn.alive());
    ws.on('pong', () => conn.alive());
    ws.on('close', (code, reason) => {
      ingest.drop(source);
      const closed = () => conn.closed(code, reason.toString());
      if (ingest.holds(source)) ingest.push(source, 0, closed);
      else closed();
    });
    ws.on('error', () => {
      /* always followed by 'close' */
    });
  };

  server.on('upgrade', onUpgrade);

  const self: AgentSocketServer = {
    get connections() {
      return hub.connectionCount;
    },
    get ingest() {
      return ingest.stats;
    },
    close() {
      if (closed) return;
      closed = true;
      server.off('upgrade', onUpgrade);
      registration.dispose();
      for (const ws of wss.clients) ws.close(1001, 'server shutting down');
      // Give close frames a moment to leave, then drop whoever did not answer.
      const stragglers = [...wss.clients];
      if (stragglers.length > 0) setTimeout(() => stragglers.forEach((ws) => ws.terminate()), 1000).unref();
      wss.close();
    },
    dispose() {
      self.close();
    },
  };
  const registration = hub.registerTransport(self);
  return self;
}
