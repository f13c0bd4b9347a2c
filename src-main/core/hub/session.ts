/**
 * One agent connection: the `hello` handshake, frame validation, limits and replies. What each
 * request means is the request table's business (requests.ts).
 *
 * Invariants:
 * 1. Nothing but a valid `hello` is acted on before the session is `ready`; a bad first frame
 *    closes with 4400, none within the hello timeout closes with 4408.
 * 2. Bad input (malformed JSON, unknown type, wrong field types, rate overrun) is answered with an
 *    error and changes no state; it never throws out of `receive`.
 * 3. Every reply to request `id` carries that `id`: `{id, ok:true, result}` or
 *    `{id, ok:false, error:{code,status,message}}` (`id: null` when the frame had no usable id).
 * 4. A session acts only as its own instance: `instanceId` comes from the committed `hello`, never
 *    from a frame (the request table relies on it).
 * 5. Once closed (by either side) a session sends nothing and changes nothing; its cleanup (the
 *    instance's reconnect grace, the `session.closed` event that moves its offers on) ran exactly once.
 */
import type { TimerHandle } from '../../common/clock';
import { GafferError, type ErrorCode } from '../../common/errors';
import { isoTime } from '../../common/iso-time';
import { decodeUtf8 } from '../../common/text';
import { parseAgentRequest } from '../../common/parse-agent-request';
import { CLOSE_CODES, PROTOCOL_VERSION, type AgentPush, type AgentRequestOf, type HelloResult, type HeldLock } from '../../common/protocol';
import type { RegisterInstanceInput } from '../../common/schemas';
import type { TokenInfo } from '../auth';
import type { AgentCore, HubEnv, Journal, Peer, RejectionKind, ResolvedHubOptions, SessionState } from './host';
import { TokenBucket } from './limits';
import type { ConnectInfo, HubConnection, HubSocket } from './ports';
import type { Presence } from './presence';
import { handleRequest, type RequestHost, type Sender } from './requests';
import { badRequest, closeReason, encodePush, errorReply, okReply, readId, type WireId } from './wire';

/** What a session needs from the hub. */
export interface SessionHost {
  readonly env: HubEnv;
  readonly journal: Journal;
  readonly core: AgentCore;
  readonly opts: ResolvedHubOptions;
  readonly maxFrameBytes: number;
  readonly requests: RequestHost;
  readonly presence: Pick<Presence, 'bind' | 'orphaned' | 'resumeStarted' | 'resumeSettled'>;
  /** A refused token or role (audited, throttled). */
  rejected(kind: RejectionKind, detail: Record<string, unknown>): void;
  /** The session's `hello` authenticated it (it had no verified token before). */
  authenticated(s: Session): void;
  /** Counts the session against its token's socket cap (PROTOCOL §17); the refusal, or null. */
  admitToken(s: Session, tokenId: string): string | null;
  /** The session closed; called exactly once. */
  gone(s: Session, code: number, reason: string): void;
}

export class Session implements HubConnection, Peer {
  state: SessionState = 'awaiting_hello';
  /** Set once `hello` has committed. */
  instanceId: string | null = null;
  role: string | null = null;
  /** From `hello` (`takesRuns: false` → false): whether it may be offered job triggers. */
  takesRuns = true;
  token: TokenInfo | null;
  readonly remoteAddress: string | null;
  /** The token whose socket cap this session counts against (set by the hub), or null. */
  countedToken: string | null = null;
  /** When it was last picked for a push (least-recently-picked tie breaks). */
  lastPickSeq = 0;
  lastHeartbeatAt: number;
  lastPingAt = 0;
  private helloTimer: TimerHandle | undefined;
  private readonly admitAtHello: (() => string | null) | undefined;
  private readonly bucket: TokenBucket;
  private strikes = 0;
  private early: string[] = [];

  constructor(
    private readonly hub: SessionHost,
    readonly socket: HubSocket,
    readonly sessionId: string,
    readonly connectSeq: number,
    info: ConnectInfo,
  ) {
    const now = hub.env.clock.now();
    this.token = info.token ?? null;
    this.remoteAddress = info.remoteAddress ?? null;
    this.admitAtHello = info.admitAtHello;
    this.lastHeartbeatAt = now;
    this.bucket = new TokenBucket(hub.opts.ratePerSecond, hub.opts.rateBurst, now);
    this.helloTimer = hub.env.clock.setTimeout(
      () =>
        this.guard(() => {
          this.helloTimer = undefined;
          if (this.state === 'awaiting_hello') this.fail(CLOSE_CODES.helloTimeout, `no hello within ${hub.opts.helloTimeoutMs} ms`);
        }),
      hub.opts.helloTimeoutMs,
    );
  }

  // ---- transport → session ----

  receive(text: string): void {
    this.guard(() => this.receiveFrame(text));
  }

  receiveBytes(bytes: Uint8Array): void {
    this.guard(() => this.receiveFrame(bytes));
  }

  /**
   * Invariant 2: nothing an agent sends may crash the server. Whatever escapes (a bug, a database
   * that went away) is logged and costs this session only (closed with 1011).
   */
  private guard(fn: () => void): void {
    try {
      fn();
    } catch (e) {
      this.crashed(e);
    }
  }

  private readonly crashed = (e: unknown): void => {
    this.hub.env.logger.error('agent session failed', { sessionId: this.sessionId, error: String((e as Error)?.stack ?? e) });
    try {
      this.fail(1011, 'internal error');
    } catch {
      /* already logged */
    }
  };

  /** A frame as text, or as its bytes (`receiveBytes`: decoded here only if the log sink does not take them). */
  private receiveFrame(frame: string | Uint8Array): void {
    if (this.state === 'closed') return;
    const text = () => (typeof frame === 'string' ? frame : decodeUtf8(frame));
    if (this.state === 'hello_pending') {
      // The agent pipelined requests behind its hello: keep them (bounded) until hello commits.
      if (this.early.length >= this.hub.opts.maxFramesBeforeReady) {
        this.fail(CLOSE_CODES.protocolViolation, 'too many frames before the hello reply');
      } else this.early.push(text());
      return;
    }
    if (!this.bucket.take(this.hub.env.clock.now())) {
      this.rateLimited(text());
      return;
    }
    this.strikes = 0;
    if (typeof frame !== 'string' && this.state === 'ready' && this.unparsedLogBytes(frame)) return;
    this.handle(text());
  }

  receiveBinary(): void {
    this.guard(() => {
      if (this.state === 'closed') return;
      this.send(errorReply(null, 'bad_request', 'binary frames are not accepted; send JSON text frames'));
      if (this.state === 'awaiting_hello') this.fail(CLOSE_CODES.protocolViolation, 'the first frame must be hello');
    });
  }

  tooLarge(id: WireId = null): void {
    this.guard(() => {
      if (this.state === 'closed') return;
      this.send(errorReply(id, 'too_large', `frame larger than ${this.hub.maxFrameBytes} bytes`));
      this.fail(CLOSE_CODES.tooLarge, 'frame too large');
    });
  }

  alive(): void {
    this.guard(() => this.heartbeatFromPing());
  }

  private heartbeatFromPing(): void {
    if (this.state !== 'ready' || this.instanceId === null) return;
    const now = this.hub.env.clock.now();
    if (now - this.lastHeartbeatAt < this.hub.opts.minHeartbeatGapMs) return;
    this.lastHeartbeatAt = now;
    const id = this.instanceId;
    // A refused heartbeat means the instance went offline; the hub closes the socket for that.
    this.hub.journal.fire(() => this.hub.core.instances.heartbeat(id), 'heartbeat');
  }

  closed(code: number, reason: string): void {
    try {
      this.teardown(code, reason);
    } catch (e) {
      this.hub.env.logger.error('agent session cleanup failed', { sessionId: this.sessionId, error: String(e) });
    }
  }

  // ---- session → transport ----

  /** Sends one frame; cuts the agent off if it stopped reading. */
  send(text: string): void {
    if (this.state === 'closed') return;
    this.socket.send(text);
    if (this.socket.bufferedAmount > this.hub.opts.maxBufferedBytes) {
      this.teardown(CLOSE_CODES.slowConsumer, 'outgoing buffer overflow: the agent stopped reading');
      if (this.socket.terminate) this.socket.terminate();
      else this.socket.close(CLOSE_CODES.slowConsumer, 'slow consumer');
    }
  }

  /** Sends one push (a schema type of common/protocol.ts). */
  push(p: AgentPush): void {
    this.send(encodePush(p));
  }

  ping(): void {
    try {
      this.socket.ping?.();
    } catch (e) {
      this.hub.env.logger.warn('hub: ping failed', { sessionId: this.sessionId, error: String(e) });
    }
  }

  /** Closes the socket with `code` (cleanup runs now, not when the close handshake ends). */
  fail(code: number, reason: string): void {
    if (!this.teardown(code, reason)) return;
    this.socket.close(code, closeReason(reason));
  }

  // ---- internals ----

  private teardown(code: number, reason: string): boolean {
    if (this.state === 'closed') return false;
    this.state = 'closed';
    this.helloTimer?.cancel();
    this.helloTimer = undefined;
    this.early = [];
    this.hub.gone(this, code, reason);
    return true;
  }

  private rateLimited(text: string): void {
    this.strikes++;
    if (this.strikes >= this.hub.opts.maxRateStrikes) {
      this.fail(CLOSE_CODES.rateLimited, 'rate limit exceeded persistently');
      return;
    }
    let id: WireId = null;
    try {
      id = readId(JSON.parse(text));
    } catch {
      /* no id to echo */
    }
    this.send(errorReply(id, 'rate_limited', `more than ${this.hub.opts.ratePerSecond} requests per second; slow down`));
  }

  private handle(text: string): void {
    if (this.state === 'ready' && this.unparsedLog(text)) return;
    let msg: unknown;
    try {
      msg = JSON.parse(text);
    } catch {
      this.send(errorReply(null, 'bad_request', 'malformed JSON'));
      if (this.state === 'awaiting_hello') this.fail(CLOSE_CODES.protocolViolation, 'the first frame must be hello');
      return;
    }
    const parsed = parseAgentRequest(msg);
    if (!parsed.success) {
      const e = badRequest(msg, parsed.error);
      this.send(errorReply(readId(msg), e.code, e.message));
      if (this.state === 'awaiting_hello') this.fail(CLOSE_CODES.protocolViolation, 'the first frame must be a valid hello');
      return;
    }
    const req = parsed.data;
    if (this.state === 'awaiting_hello') {
      if (req.type === 'hello') this.hello(req);
      else {
        this.send(errorReply(req.id, 'bad_request', `the first frame must be hello, not ${req.type}`));
        this.fail(CLOSE_CODES.protocolViolation, 'the first frame must be hello');
      }
      return;
    }
    if (req.type === 'hello') {
      this.send(errorReply(req.id, 'bad_request', 'this connection already said hello'));
      return;
    }
    const id = req.id;
    let pending: Promise<object>;
    try {
      pending = handleRequest(this.hub.requests, this.sender(), req);
    } catch (e) {
      this.replyError(id, e);
      return;
    }
    this.answer(id, pending);
  }

  /** PROTOCOL §5: a `log` frame the log sink takes as text is parsed off this thread (core/logs). */
  private unparsedLog(text: string): boolean {
    const taken = this.hub.requests.logs()?.logText?.(this.instanceId!, text);
    if (!taken) return false;
    this.answer(taken.id, taken.result);
    return true;
  }

  /** The same for a frame's bytes: the log sink reads its header from its first bytes, the worker decodes the rest. */
  private unparsedLogBytes(bytes: Uint8Array): boolean {
    const taken = this.hub.requests.logs()?.logBytes?.(this.instanceId!, bytes);
    if (!taken) return false;
    this.answer(taken.id, taken.result);
    return true;
  }

  /** One reaction per request (no `.catch` link: each side catches its own throw, as `guard` does). */
  private answer(id: WireId, pending: Promise<object>): void {
    pending.then(
      (result) => {
        try {
          this.send(okReply(id, result));
        } catch (e) {
          this.crashed(e);
        }
      },
      (e: unknown) => {
        try {
          this.replyError(id, e);
        } catch (e2) {
          this.crashed(e2);
        }
      },
    );
  }

  private replyError(id: WireId, e: unknown): void {
    if (e instanceof GafferError) {
      this.send(errorReply(id, e.code, e.message));
      return;
    }
    this.hub.env.logger.error('agent request failed', { sessionId: this.sessionId, error: String(e) });
    this.send(errorReply(id, 'internal', 'internal error'));
  }

  /** The sender of every request after `hello` (its instance and role are fixed from then on): built once. */
  private senderValue: Sender | undefined;

  private sender(): Sender {
    const s = this.senderValue;
    if (s !== undefined && s.instanceId === this.instanceId && s.role === this.role) return s;
    return (this.senderValue = { peer: this, instanceId: this.instanceId!, role: this.role! });
  }

  private hello(req: AgentRequestOf<'hello'>): void {
    this.helloTimer?.cancel();
    this.helloTimer = undefined;
    this.state = 'hello_pending';
    let token = this.token;
    if (req.token !== undefined) {
      const t = this.hub.core.tokens.verify(req.token);
      if (!t) return this.refuse(req.id, 'unauthorized', 'bad or revoked token', { via: 'hello' });
      if (token && t.id !== token.id) {
        return this.refuse(req.id, 'unauthorized', 'the hello token differs from the Authorization header', { via: 'hello' });
      }
      token = t;
    }
    if (!token && this.hub.opts.requireToken) {
      return this.refuse(req.id, 'unauthorized', 'an agent token is required (Authorization header or hello.token)', { via: 'hello' });
    }
    if (token?.role && token.role !== req.role) {
      return this.refuse(req.id, 'forbidden', `token ${token.id} may only act as role ${token.role}`, { tokenId: token.id, role: req.role });
    }
    if (this.token === null) {
      // Admitted as unauthenticated (its own, smaller budget): it joins the main cap only now.
      const full = this.admitAtHello?.() ?? null;
      if (full !== null) {
        this.hub.rejected('capacity', { sessionId: this.sessionId, remoteAddress: this.remoteAddress, via: 'hello', message: full });
        this.send(errorReply(req.id, 'unavailable', full));
        return this.fail(CLOSE_CODES.tryAgainLater, full);
      }
      this.hub.authenticated(this);
    }
    const crowded = token ? this.hub.admitToken(this, token.id) : null;
    if (crowded !== null) {
      this.hub.rejected('capacity', { sessionId: this.sessionId, remoteAddress: this.remoteAddress, via: 'hello', tokenId: token!.id, message: crowded });
      this.send(errorReply(req.id, 'too_many_connections', crowded));
      return this.fail(CLOSE_CODES.rateLimited, crowded);
    }
    this.token = token;
    const input: RegisterInstanceInput = { role: req.role, name: req.name, version: req.version, tokenId: token?.id ?? null, resume: req.instanceId };
    const { core, presence } = this.hub;
    const resume = req.instanceId;
    if (resume !== undefined) presence.resumeStarted(resume);
    this.hub.journal
      .commit(() => {
        const instance = core.instances.register(input, this.sessionId);
        const locks: HeldLock[] = [];
        for (const taskId of instance.heldTaskIds) {
          const lock = core.tasks.get(taskId).lock;
          if (lock) locks.push({ taskId, fence: lock.fence, expiresAt: lock.expiresAt });
        }
        return { instance, locks };
      })
      .then(
        ({ instance, locks }) => {
          const resumed = resume !== undefined && instance.id === resume;
          if (this.state === 'closed') {
            // The socket went away while hello was committing: the instance starts its grace now.
            if (resume !== undefined) presence.resumeSettled(resume, instance.id);
            presence.orphaned(instance.id, 'socket closed during hello');
            return;
          }
          this.instanceId = instance.id;
          this.role = instance.role;
          this.takesRuns = req.takesRuns !== false;
          this.state = 'ready';
          const { clock, config } = this.hub.env;
          this.lastHeartbeatAt = clock.now();
          presence.bind(this);
          if (resume !== undefined) presence.resumeSettled(resume, instance.id);
          const result: HelloResult = {
            instanceId: instance.id,
            heartbeatIntervalMs: config.heartbeatIntervalMs,
            lockWindowS: config.lockWindowS,
            serverTime: isoTime(clock.now()),
            heartbeatTimeoutS: config.heartbeatTimeoutS,
            reconnectGraceS: config.reconnectGraceS,
            protocolVersion: PROTOCOL_VERSION,
            resumed,
            locks,
          };
          this.send(okReply(req.id, result));
          this.hub.env.emit({ type: 'session.hello', sessionId: this.sessionId, instanceId: instance.id, role: instance.role, resumed, takesRuns: this.takesRuns });
          const early = this.early;
          this.early = [];
          for (const text of early) {
            if (this.state !== 'ready') break;
            this.receive(text);
          }
        },
        (e: unknown) => {
          if (resume !== undefined) presence.resumeSettled(resume, null);
          this.replyError(req.id, e);
          const code: ErrorCode | undefined = e instanceof GafferError ? e.code : undefined;
          this.fail(code === 'bad_request' ? CLOSE_CODES.protocolViolation : 1011, 'hello failed');
        },
      )
      .catch(this.crashed);
  }

  private refuse(id: WireId, code: 'unauthorized' | 'forbidden', message: string, detail: Record<string, unknown>): void {
    this.hub.rejected('token', { sessionId: this.sessionId, remoteAddress: this.remoteAddress, code, message, ...detail });
    this.send(errorReply(id, code, message));
    this.fail(code === 'unauthorized' ? CLOSE_CODES.unauthorized : CLOSE_CODES.revoked, message);
  }
}
