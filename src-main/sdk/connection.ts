/**
 * The SDK's connection: one WebSocket at a time, request/reply matching, heartbeats, and
 * reconnection with exponential backoff + jitter that resumes the same instance.
 *
 * Invariants:
 * 1. The token travels only in the `Authorization` header of the upgrade: never in the URL, never
 *    in a frame, never in a log line.
 * 2. Requests made while the socket is down wait (within their timeout) and go out once `hello`
 *    has been answered on the new socket. Requests in flight when a socket dies are rejected with
 *    `ConnectionLostError`: they may or may not have taken effect, and only the caller knows
 *    whether repeating them is harmless.
 * 3. Reconnecting says `hello` with the previous `instanceId`, so within the server's reconnect
 *    grace the instance — and its locks — survive the blip.
 * 4. An authentication refusal (HTTP 401/403 on the upgrade, `unauthorized`/`forbidden` to hello,
 *    close codes 4401/4403) or a protocol violation ends the connection for good: retrying cannot help.
 */
import WebSocket from 'ws';
import type { Logger } from '../common/logger';
import { silentLogger } from '../common/logger';
import { AGENT_PUSH_TYPES, agentPush, CLOSE_CODES, type AgentPush, type HelloResult } from '../common/protocol';
import { AgentClosedError, ConnectionLostError, GafferRequestError, GafferSdkError, RequestTimeoutError } from './errors';

export interface ReconnectPolicy {
  /** First delay (default 250 ms). */
  initialDelayMs?: number;
  /** Cap (default 30 s). */
  maxDelayMs?: number;
  /** Give up after this many failed attempts in a row (default: never). */
  maxAttempts?: number;
}

export interface ConnectionOptions {
  url: string;
  token: string;
  role: string;
  name: string;
  version?: string;
  /**
   * `false`: this agent takes no job runs — its `hello` says `takesRuns: false` and Gaffer never
   * offers it a `job_trigger` (a trigger it could not acknowledge would cost the run its 30 s ack
   * timeout). Default: it takes runs (register them with `onJob`).
   */
  takesRuns?: boolean;
  logger?: Logger;
  /** Per-request timeout, including time spent waiting for a reconnect (default 30 s). */
  requestTimeoutMs?: number;
  /** Upgrade + hello timeout (default 10 s). */
  connectTimeoutMs?: number;
  /** `false`: never reconnect. */
  reconnect?: ReconnectPolicy | false;
  /** Overrides the heartbeat interval suggested by the server. */
  heartbeatIntervalMs?: number;
  /** For tests: the jitter source (default Math.random). */
  random?: () => number;
}

/** Close codes after which reconnecting cannot help. */
const FATAL_CLOSE = new Set<number>([CLOSE_CODES.unauthorized, CLOSE_CODES.revoked, CLOSE_CODES.protocolViolation, CLOSE_CODES.superseded]);

/**
 * Delay before reconnect attempt `attempt` (1-based): exponential, capped, with "equal jitter"
 * (between half and all of the step), so a fleet of agents does not reconnect in lockstep.
 */
export function backoffDelay(attempt: number, policy: ReconnectPolicy = {}, random: () => number = Math.random): number {
  const initial = policy.initialDelayMs ?? 250;
  const max = policy.maxDelayMs ?? 30_000;
  const step = Math.min(max, initial * 2 ** Math.min(attempt - 1, 30));
  return Math.round(step / 2 + (random() * step) / 2);
}

/** Accepts `ws://host:port/agent`, or an `http(s)://host:port` base (→ `/agent`). */
export function agentUrl(input: string): string {
  const u = new URL(input);
  if (u.protocol === 'http:') u.protocol = 'ws:';
  else if (u.protocol === 'https:') u.protocol = 'wss:';
  else if (u.protocol !== 'ws:' && u.protocol !== 'wss:') throw new Error(`unsupported agent URL scheme ${u.protocol}`);
  if (u.pathname === '' || u.pathname === '/') u.pathname = '/agent';
  if (u.username || u.password || /(^|[?&])token=/i.test(u.search)) {
    throw new Error('put the token in the `token` option, not in the URL');
  }
  return u.toString();
}

interface Pending {
  id: string;
  type: string;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
  timer: NodeJS.Timeout;
  /** Socket generation the request was sent on (undefined while queued). */
  gen?: number;
  frame: string;
}

export type ConnectionState = 'idle' | 'connecting' | 'ready' | 'reconnecting' | 'closed';

export interface ConnectionEvents {
  /** `hello` answered: `first` on the initial connection; afterwards a reconnect. */
  ready(hello: HelloResult, first: boolean): void;
  down(code: number, reason: string): void;
  reconnecting(attempt: number, delayMs: number): void;
  closed(error?: Error): void;
  push(push: AgentPush): void;
}

/**
 * `id` and `type` first (a server can name the request even when it refuses an oversize frame
 * unparsed), and never overridden by a field of the same name.
 */
function encodeRequest(id: string, type: string, fields: Record<string, unknown>): string {
  const frame: Record<string, unknown> = { id, type, ...fields };
  frame.id = id;
  frame.type = type;
  return JSON.stringify(frame);
}

/** Errors after which reconnecting cannot help (invariant 4). */
function fatal(e: unknown): boolean {
  return e instanceof GafferSdkError && ['unauthorized', 'forbidden', 'bad_request', 'protocol'].includes(e.code);
}

export class Connection {
  state: ConnectionState = 'idle';
  hello: HelloResult | undefined;
  private ws: WebSocket | undefined;
  private gen = 0;
  private seq = 0;
  private readonly pending = new Map<string, Pending>();
  private readonly queued: Pending[] = [];
  private heartbeat: NodeJS.Timeout | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private attempts = 0;
  private readonly log: Logger;
  private readonly url: string;
  private closedWaiters: Array<() => void> = [];

  constructor(
    private readonly opts: ConnectionOptions,
    private readonly on: ConnectionEvents,
  ) {
    this.log = opts.logger ?? silentLogger;
    this.url = agentUrl(opts.url);
  }

  get instanceId(): string | undefined {
    return this.hello?.instanceId;
  }

  /** The first connection. Rejects (and closes for good) if it cannot be made. */
  async open(): Promise<HelloResult> {
    if (this.state !== 'idle') throw new Error('already opened');
    try {
      const hello = await this.dial(false);
      return hello;
    } catch (e) {
      this.finish(e instanceof Error ? e : new Error(String(e)));
      throw e;
    }
  }

  /** Sends a request; resolves with its `result`, rejects with a GafferSdkError. */
  request<R = Record<string, unknown>>(type: string, fields: Record<string, unknown> = {}, timeoutMs = this.opts.requestTimeoutMs ?? 30_000): Promise<R> {
    if (this.state === 'closed') return Promise.reject(new AgentClosedError());
    const id = `r${++this.seq}`;
    return new Promise<R>((resolve, reject) => {
      const p: Pending = {
        id,
        type,
        resolve: resolve as (v: unknown) => void,
        reject,
        frame: encodeRequest(id, type, fields),
        timer: setTimeout(() => {
          this.drop(p);
          reject(new RequestTimeoutError(type, timeoutMs));
        }, timeoutMs),
      };
      this.pending.set(id, p);
      if (this.state === 'ready') this.transmit(p);
      else this.queued.push(p);
    });
  }

  /** Closes for good. Resolves once the socket is closed. */
  close(code = 1000, reason = 'agent closing'): Promise<void> {
    if (this.state === 'closed' && !this.ws) return Promise.resolve();
    const done = new Promise<void>((r) => this.closedWaiters.push(r));
    const ws = this.ws;
    this.finish();
    if (ws && ws.readyState !== WebSocket.CLOSED) {
      ws.close(code, reason);
      // A peer that never answers the close handshake does not hold us up.
      setTimeout(() => ws.terminate(), 2000).unref();
    } else {
      this.flushClosed();
    }
    return done;
  }

  // ---- internals ----

  private dial(resume: boolean): Promise<HelloResult> {
    this.state = resume ? 'reconnecting' : 'connecting';
    const gen = ++this.gen;
    const ws = new WebSocket(this.url, {
      headers: { authorization: `Bearer ${this.opts.token}` },
      perMessageDeflate: false,
      handshakeTimeout: this.opts.connectTimeoutMs ?? 10_000,
      maxPayload: 16 * 1024 * 1024,
    });
    this.ws = ws;
    return new Promise<HelloResult>((resolve, reject) => {
      let settled = false;
      const fail = (e: Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(helloTimer);
        ws.removeAllListeners('open');
        ws.terminate();
        reject(e);
      };
      const helloTimer = setTimeout(() => fail(new GafferSdkError('timeout', 'no hello reply in time')), this.opts.connectTimeoutMs ?? 10_000);
      ws.on('unexpected-response', (_req, res) => {
        const status = res.statusCode ?? 0;
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body = (body + c).slice(0, 2000)));
        res.on('end', () => {
          let message = `the server refused the connection (HTTP ${status})`;
          let code = status === 401 ? 'unauthorized' : status === 403 ? 'forbidden' : status === 503 ? 'unavailable' : 'bad_request';
          try {
            const e = (JSON.parse(body) as { error?: { code?: string; message?: string } }).error;
            if (e?.message) message = e.message;
            if (e?.code) code = e.code;
          } catch {
            /* not JSON */
          }
          fail(new GafferRequestError(code, status, message));
        });
        res.on('error', () => fail(new GafferRequestError('bad_request', status, `HTTP ${status}`)));
      });
      ws.on('error', (e) => fail(new GafferSdkError('connect_failed', `cannot reach ${this.url}: ${e.message}`)));
      ws.on('message', (data) => this.receive(data.toString()));
      ws.on('close', (code, reasonBuf) => {
        const reason = reasonBuf.toString();
        if (!settled) {
          const kind = code === CLOSE_CODES.protocolViolation ? 'protocol' : FATAL_CLOSE.has(code) ? 'unauthorized' : 'connect_failed';
          fail(new GafferSdkError(kind, `socket closed during hello (${code} ${reason})`));
        }
        this.socketClosed(gen, code, reason);
      });
      ws.on('open', () => {
        const fields: Record<string, unknown> = { role: this.opts.role, name: this.opts.name };
        if (this.opts.version !== undefined) fields.version = this.opts.version;
        if (this.opts.takesRuns === false) fields.takesRuns = false;
        if (resume && this.hello) fields.instanceId = this.hello.instanceId;
        const id = `h${++this.seq}`;
        const p: Pending = {
          id,
          type: 'hello',
          frame: encodeRequest(id, 'hello', fields),
          timer: helloTimer,
          gen,
          resolve: (result) => {
            if (settled) return;
            settled = true;
            clearTimeout(helloTimer);
            const first = this.hello === undefined;
            this.hello = result as HelloResult;
            this.state = 'ready';
            this.attempts = 0;
            this.startHeartbeat();
            this.log.info('connected', { instanceId: this.hello.instanceId, resumed: (result as HelloResult).resumed ?? false });
            this.on.ready(this.hello, first);
            for (const q of this.queued.splice(0)) this.transmit(q);
            resolve(this.hello);
          },
          reject: (e) => fail(e as Error),
        };
        this.pending.set(id, p);
        ws.send(p.frame);
      });
    });
  }

  private transmit(p: Pending): void {
    p.gen = this.gen;
    this.ws!.send(p.frame);
  }

  private drop(p: Pending): void {
    this.pending.delete(p.id);
    const i = this.queued.indexOf(p);
    if (i >= 0) this.queued.splice(i, 1);
  }

  private receive(text: string): void {
    let msg: Record<string, unknown>;
    try {
      msg = JSON.parse(text) as Record<string, unknown>;
    } catch {
      this.log.warn('ignoring a frame that is not JSON');
      return;
    }
    if ('ok' in msg) {
      const id = msg.id;
      const p = typeof id === 'string' ? this.pending.get(id) : undefined;
      if (!p) {
        if (msg.ok === false) this.log.warn('server error', { error: msg.error });
        return;
      }
      this.pending.delete(id as string);
      clearTimeout(p.timer);
      if (msg.ok === true) p.resolve(msg.result);
      else {
        const e = (msg.error ?? {}) as { code?: string; status?: number; message?: string };
        p.reject(new GafferRequestError(e.code ?? 'internal', e.status ?? 500, e.message ?? 'request refused'));
      }
      return;
    }
    if (typeof msg.type !== 'string') return;
    // Every push is parsed with its schema (common/protocol.ts): a handler sees only typed fields.
    if (!(AGENT_PUSH_TYPES as string[]).includes(msg.type)) {
      this.log.warn('ignoring an unknown push', { type: msg.type.slice(0, 50) });
      return;
    }
    const push = agentPush.safeParse(msg);
    if (!push.success) {
      const first = push.error.issues[0];
      this.log.warn('ignoring a malformed push', { type: msg.type, field: first?.path.join('.') ?? '', error: first?.message ?? '' });
      return;
    }
    this.on.push(push.data);
  }

  private socketClosed(gen: number, code: number, reason: string): void {
    if (gen !== this.gen) return;
    this.ws = undefined;
    this.stopHeartbeat();
    // Invariant 2: whatever was sent on this socket is lost.
    for (const [id, p] of [...this.pending]) {
      if (p.gen === gen && p.type !== 'hello') {
        this.pending.delete(id);
        clearTimeout(p.timer);
        p.reject(new ConnectionLostError());
      }
    }
    if (this.state === 'closed') {
      this.flushClosed();
      return;
    }
    // A socket that never got its hello reply: the dial's own rejection decides what happens next.
    if (this.state !== 'ready') return;
    this.log.warn('disconnected', { code, reason });
    this.on.down(code, reason);
    if (FATAL_CLOSE.has(code)) {
      this.finish(new GafferSdkError(code === CLOSE_CODES.protocolViolation ? 'protocol' : 'unauthorized', `closed by the server (${code} ${reason})`));
      return;
    }
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    const policy = this.opts.reconnect;
    if (policy === false) {
      this.finish(new ConnectionLostError('connection lost and reconnect is disabled'));
      return;
    }
    const attempt = ++this.attempts;
    if (policy?.maxAttempts !== undefined && attempt > policy.maxAttempts) {
      this.finish(new ConnectionLostError(`gave up after ${attempt - 1} reconnect attempts`));
      return;
    }
    const delay = backoffDelay(attempt, policy ?? {}, this.opts.random);
    this.state = 'reconnecting';
    this.on.reconnecting(attempt, delay);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      if (this.state === 'closed') return;
      this.dial(true).catch((e: unknown) => {
        if (this.state === 'closed') return;
        if (fatal(e)) {
          this.finish(e as Error);
          return;
        }
        this.log.warn('reconnect failed', { attempt, error: e instanceof Error ? e.message : String(e) });
        this.scheduleReconnect();
      });
    }, delay);
  }

  private startHeartbeat(): void {
    this.stopHeartbeat();
    const suggested = this.hello?.heartbeatIntervalMs ?? 20_000;
    // Never slower than a third of the server's heartbeat timeout, whatever it suggests.
    const timeoutS = this.hello?.heartbeatTimeoutS;
    const every = this.opts.heartbeatIntervalMs ?? (timeoutS ? Math.min(suggested, Math.max(100, Math.floor((timeoutS * 1000) / 3))) : suggested);
    this.heartbeat = setInterval(() => {
      if (this.state !== 'ready') return;
      this.request('heartbeat', {}, Math.max(every, 5000)).catch((e: unknown) => {
        if (e instanceof ConnectionLostError || e instanceof AgentClosedError) return;
        this.log.warn('heartbeat refused', { error: e instanceof Error ? e.message : String(e) });
      });
    }, every);
  }

  private stopHeartbeat(): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = undefined;
  }

  /** Enters the final state: rejects everything waiting, stops timers. */
  private finish(error?: Error): void {
    if (this.state === 'closed') return;
    this.state = 'closed';
    this.stopHeartbeat();
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = undefined;
    for (const [id, p] of [...this.pending]) {
      this.pending.delete(id);
      clearTimeout(p.timer);
      p.reject(error && !(error instanceof ConnectionLostError) ? error : new AgentClosedError());
    }
    this.queued.length = 0;
    if (error) this.log.warn('connection closed', { error: error.message });
    this.on.closed(error);
    if (!this.ws) this.flushClosed();
  }

  private flushClosed(): void {
    for (const w of this.closedWaiters.splice(0)) w();
  }
}
