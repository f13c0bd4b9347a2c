/**
 * The agent hub: sessions over a minimal socket interface (see ports.ts), independent of `ws`.
 * The transport (server/agent-socket.ts) checks the upgrade and forwards frames; everything the
 * protocol means happens here. This file composes the parts and gives each its narrow port
 * (host.ts): sessions (session.ts) and what their requests mean (requests.ts), which session
 * speaks for which instance and who is picked for a push (presence.ts), prechecks, and the gate
 * to the jobs engine's run sink (runs.ts). Job trigger offers are the engine's: it asks the hub to
 * pick an instance and to send, nothing more (`JobsHubPort`).
 *
 * Invariants:
 * 1. An instance is bound to at most one live session, and its socket loss starts the reconnect
 *    grace (presence.ts).
 * 2. Every session that opens is closed exactly once and its cleanup reaches every part.
 * 3. An instance that is no longer online (watchdog, operator) loses its socket (4410); a revoked
 *    token loses all its sockets at once (4403).
 * 4. Every write goes through the group committer. Every session event is audited once: the
 *    registry audits instance hello/resume/disconnect, the hub audits the rest. Unauthenticated
 *    noise is throttled in the audit (counted, not dropped silently).
 * 5. `close()` releases every timer, listener and socket and settles every pending promise.
 */
import type { Clock } from '../../common/clock';
import type { SchedulerConfig } from '../../common/config';
import { GafferError } from '../../common/errors';
import type { Logger } from '../../common/logger';
import { CLOSE_CODES, MAX_FRAME_BYTES, type AgentPush } from '../../common/protocol';
import type { AuditLog } from '../audit/audit-store';
import { newId } from '../ids';
import type { Db } from '../db/open';
import type { GroupCommitter } from '../db/group-commit';
import type { Disposable, EventBus } from '../events';
import type { AgentCore, HubEnv, Journal, RejectionKind, ResolvedHubOptions } from './host';
import { AuditThrottle, PerKeyCap, tooManyForToken } from './limits';
import { LostLocks, type LostLock } from './lost-locks';
import type { ConnectInfo, HubConnection, HubOptions, HubSocket, JobsHubPort, LogSink, PrecheckVerdict, RunSink } from './ports';
import { Prechecks } from './prechecks';
import { Presence, type PresenceDeps } from './presence';
import type { RequestHost } from './requests';
import { RunGate } from './runs';
import { Session, type SessionHost } from './session';
import { prepareInstanceLoad, type InstanceLoads } from './store';
import type { Needed } from '../wiring';

export type { RejectionKind } from './host';

/** What the hub needs from the core: only the members it calls (built inside `createCore`). */
export interface HubDeps extends AgentCore {
  readonly clock: Clock;
  readonly config: SchedulerConfig;
  /** For one read: an instance's status and held locks (the load of `pick`). */
  readonly db: Pick<Db, 'prepare'>;
  readonly events: Pick<EventBus, 'on' | 'emit'>;
  readonly audit: Pick<AuditLog, 'record'>;
  readonly instances: AgentCore['instances'] & PresenceDeps['instances'];
  readonly committer: Pick<GroupCommitter, 'submit'>;
  readonly logger: Logger;
  /** Where `log` and `usage` frames go (PROTOCOL §5): the logs module, built after the hub (core/wiring.ts). */
  readonly logSink: Needed<LogSink>;
}

/** A summary of one live session (for the console and tests). */
export interface SessionInfo {
  sessionId: string;
  state: Session['state'];
  instanceId: string | null;
  role: string | null;
  tokenId: string | null;
  remoteAddress: string | null;
}

export class Hub implements JobsHubPort {
  private readonly opts: ResolvedHubOptions;
  private readonly env: HubEnv;
  private readonly journal: Journal;
  private readonly presence: Presence;
  private readonly runs: RunGate;
  private readonly prechecks: Prechecks;
  private readonly lostLocks: LostLocks;
  private readonly sessionHost: SessionHost;
  private readonly sessionsById = new Map<string, Session>();
  /** Sessions admitted without a verified token whose `hello` has not authenticated them yet. */
  private readonly unauthenticated = new Set<Session>();
  private readonly throttle = new AuditThrottle();
  /** Live sessions per verified agent token (PROTOCOL §17). */
  private readonly perToken: PerKeyCap;
  private readonly listeners: Disposable[] = [];
  private readonly transports = new Set<Disposable>();
  private connectSeq = 0;
  private closed = false;

  constructor(
    private readonly core: HubDeps,
    options: HubOptions = {},
  ) {
    const { clock, config, logger, events } = core;
    this.opts = {
      helloTimeoutMs: options.helloTimeoutMs ?? 10_000,
      requireToken: options.requireToken ?? true,
      ratePerSecond: options.ratePerSecond ?? 200,
      rateBurst: options.rateBurst ?? 400,
      maxRateStrikes: options.maxRateStrikes ?? 200,
      maxBufferedBytes: options.maxBufferedBytes ?? 4 * 1024 * 1024,
      maxFramesBeforeReady: options.maxFramesBeforeReady ?? 64,
      pingIntervalMs: options.pingIntervalMs ?? config.heartbeatIntervalMs,
      minHeartbeatGapMs: options.minHeartbeatGapMs ?? 1000,
      maxConnectionsPerToken: options.maxConnectionsPerToken ?? 64,
    };
    this.perToken = new PerKeyCap(this.opts.maxConnectionsPerToken);
    this.env = { clock, config, logger, emit: (e) => events.emit(e) };
    this.journal = {
      commit: (op, opts) => core.committer.submit(op, opts),
      fire: (op, what) => this.fire(op, what),
      audit: (type, subject, detail, traceId, actor = 'hub') =>
        this.fire(() => core.audit.record({ type, actor, subject, detail, traceId: traceId ?? null }), type),
    };
    const loadOf = prepareInstanceLoad(core.db);
    this.presence = new Presence({
      env: this.env,
      journal: this.journal,
      instances: core.instances,
      load: (id) => loadOf.get(id, id),
      pingIntervalMs: this.opts.pingIntervalMs,
    });
    this.runs = new RunGate(this.journal);
    this.lostLocks = new LostLocks(this.env, this.presence);
    this.prechecks = new Prechecks(this.env, this.presence);
    const requests: RequestHost = {
      env: this.env,
      journal: this.journal,
      core,
      prechecks: this.prechecks,
      runs: this.runs,
      lostLocks: this.lostLocks,
      logs: () => core.logSink.get(),
    };
    this.sessionHost = {
      env: this.env,
      journal: this.journal,
      core,
      opts: this.opts,
      maxFrameBytes: MAX_FRAME_BYTES,
      requests,
      presence: this.presence,
      rejected: (kind, detail) => this.rejected(kind, detail),
      authenticated: (s) => this.unauthenticated.delete(s),
      admitToken: (s, tokenId) => this.admitToken(s, tokenId),
      gone: (s, code, reason) => this.sessionGone(s, code, reason),
    };
    this.listeners.push(
      events.on('token.revoked', ({ token }) => {
        for (const s of [...this.sessionsById.values()]) if (s.token?.id === token.id) s.fail(CLOSE_CODES.revoked, 'token revoked');
      }),
      events.on('instance.changed', ({ instance }) => {
        if (instance.status === 'online') return;
        // Unbind first: this session's end must not start another grace for an instance that is gone.
        this.presence.forget(instance.id)?.fail(CLOSE_CODES.instanceOffline, `instance is ${instance.status}; say hello again`);
      }),
      // Emitted after the commit that took the lock away, before the offline instance's socket is closed.
      events.on('lock.lost', ({ instanceId, taskId, fence, reason }) => this.lostLocks.lost(instanceId, taskId, fence, reason)),
    );
  }

  // ---- public API ----

  /** Hands a new, already admitted connection to the hub. */
  connect(socket: HubSocket, info: ConnectInfo = {}): HubConnection {
    const session = new Session(this.sessionHost, socket, newId('ses'), ++this.connectSeq, info);
    if (this.closed) {
      session.fail(CLOSE_CODES.goingAway, 'server shutting down');
      return session;
    }
    const refusal = session.token === null ? null : this.admitToken(session, session.token.id);
    if (refusal !== null) {
      // The transport checked `tokenRoom` before the handshake; this is the same refusal for a
      // socket that raced past it (or a transport that did not ask).
      this.rejected('capacity', { sessionId: session.sessionId, remoteAddress: session.remoteAddress, tokenId: session.token!.id, message: refusal });
      session.fail(CLOSE_CODES.rateLimited, refusal);
      return session;
    }
    this.sessionsById.set(session.sessionId, session);
    if (session.token === null) this.unauthenticated.add(session);
    const tokenId = session.token?.id ?? null;
    this.auditMaybeThrottled(tokenId === null, 'session.connect', `session:${session.sessionId}`, {
      remoteAddress: session.remoteAddress,
      tokenId,
    });
    this.core.events.emit({ type: 'session.opened', sessionId: session.sessionId, remoteAddress: session.remoteAddress, tokenId });
    this.presence.armPing(() => this.sessionsById.size > 0);
    return session;
  }

  /** The transport refused an upgrade (bad Host, foreign Origin, bad token, too many connections). */
  rejected(kind: RejectionKind, detail: Record<string, unknown>): void {
    this.auditMaybeThrottled(true, `session.${kind}_rejected`, `session:${String(detail.sessionId ?? 'upgrade')}`, detail, kind);
  }

  /**
   * PROTOCOL §17: why one more socket of this agent token is refused (it holds its most already),
   * or null. Asked by the transport before the handshake (HTTP 429 `too_many_connections`).
   */
  tokenRoom(tokenId: string): string | null {
    return this.perToken.full(tokenId) ? tooManyForToken(this.perToken.max) : null;
  }

  /** Live sessions holding `tokenId`. */
  tokenConnections(tokenId: string): number {
    return this.perToken.count(tokenId);
  }

  /** Registers (or, with `undefined`, removes) where `run_*` messages go. */
  setRunSink(sink: RunSink | undefined): void {
    this.runs.attach(sink);
  }

  /**
   * The instance a new offer goes to (JobsHubPort): the least loaded ready, online instance of
   * `role` that takes job runs, not in `exclude` — held locks + `offersOut(instanceId)`, then the
   * one picked least recently, then the earliest connected — or null. Being picked counts as its turn.
   * `loads`: the caller's memo of the instances' status and held locks (store.ts `InstanceLoads`).
   */
  pick(role: string, exclude: ReadonlySet<string>, offersOut?: (instanceId: string) => number, loads?: InstanceLoads): string | null {
    if (this.closed) return null;
    return this.presence.pick(role, exclude, offersOut, true, loads)?.instanceId ?? null;
  }

  /** Sends one push to the live, ready session of `instanceId`; false when it has none. */
  send(instanceId: string, push: AgentPush): boolean {
    const s = this.presence.bound(instanceId);
    if (this.closed || s?.state !== 'ready') return false;
    s.push(push);
    return true;
  }

  /** Tasks whose lock `instanceId` was told it lost (`lock_lost`) and has not reported since. */
  lostLocksOf(instanceId: string): LostLock[] {
    return this.lostLocks.of(instanceId);
  }

  /** Asks one online instance of `role` to run the named precheck for `slot`. Never rejects. */
  requestPrecheck(role: string, check: string, slot: string, timeoutMs: number): Promise<PrecheckVerdict> {
    return this.prechecks.request(role, check, slot, timeoutMs);
  }

  /** Live connections (including those still before `hello`). */
  get connectionCount(): number {
    return this.sessionsById.size;
  }

  /** Live connections with a verified token (from the upgrade header, or authenticated by `hello`). */
  get authenticatedCount(): number {
    return this.sessionsById.size - this.unauthenticated.size;
  }

  /** Live connections admitted without a token that have not authenticated yet. */
  get unauthenticatedCount(): number {
    return this.unauthenticated.size;
  }

  /** Instance ids with a live, ready session, optionally of one role. */
  connectedInstances(role?: string): string[] {
    return this.presence.connectedInstances(role);
  }

  /** Instance ids of `role` with a live, ready session whose `hello` did not say `takesRuns: false`. */
  runTakers(role: string): string[] {
    return this.presence.connectedInstances(role, true);
  }

  sessions(): SessionInfo[] {
    return [...this.sessionsById.values()].map((s) => ({
      sessionId: s.sessionId,
      state: s.state,
      instanceId: s.instanceId,
      role: s.role,
      tokenId: s.token?.id ?? null,
      remoteAddress: s.remoteAddress,
    }));
  }

  /** Closes the session bound to `instanceId`, if any (operator action, tests). */
  kick(instanceId: string, code: number, reason: string): boolean {
    const s = this.presence.bound(instanceId);
    if (!s) return false;
    s.fail(code, reason);
    return true;
  }

  /** A transport's resources, released by `close()`. */
  registerTransport(d: Disposable): Disposable {
    this.transports.add(d);
    return { dispose: () => this.transports.delete(d) };
  }

  isClosed(): boolean {
    return this.closed;
  }

  /** Closes every socket, timer and listener; pending prechecks settle as disconnected. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.presence.close();
    for (const l of this.listeners) l.dispose();
    this.prechecks.close();
    // Each bound instance is marked disconnected (queued on the committer, flushed by core.close).
    for (const s of [...this.sessionsById.values()]) s.fail(CLOSE_CODES.goingAway, 'server shutting down');
    for (const t of [...this.transports]) {
      try {
        t.dispose();
      } catch (e) {
        this.core.logger.warn('agent transport failed to close', { error: String(e) });
      }
    }
    this.transports.clear();
  }

  // ---- private ----

  private fire(op: () => unknown, what: string): void {
    this.core.committer.submit(op).catch((e: unknown) => {
      if (e instanceof GafferError && (e.code === 'forbidden' || e.code === 'not_found')) return;
      this.core.logger.warn(`hub: ${what} failed`, { error: String(e) });
    });
  }

  /** Counts the session against its token's cap (once); the refusal when the token holds its most. */
  private admitToken(s: Session, tokenId: string): string | null {
    if (s.countedToken !== null) return null;
    if (!this.perToken.take(tokenId)) return tooManyForToken(this.perToken.max);
    s.countedToken = tokenId;
    return null;
  }

  private sessionGone(s: Session, code: number, reason: string): void {
    if (s.countedToken !== null) this.perToken.release(s.countedToken);
    s.countedToken = null;
    this.sessionsById.delete(s.sessionId);
    this.unauthenticated.delete(s);
    this.prechecks.sessionGone(s);
    this.lostLocks.sessionGone(s);
    const id = s.instanceId;
    // The registry audits `instance.disconnect` for a bound session; no second row here.
    if (!this.presence.sessionGone(s, `socket closed (${code}${reason ? `: ${reason}` : ''})`)) {
      this.auditMaybeThrottled(id === null && s.token === null, 'session.disconnect', `session:${s.sessionId}`, {
        instanceId: id,
        code,
        reason,
      });
    }
    this.core.events.emit({ type: 'session.closed', sessionId: s.sessionId, instanceId: id, code, reason });
    if (this.sessionsById.size === 0) this.presence.stopPing();
  }

  /**
   * Session rows carry the session id as their trace id (so does the registry's `instance.hello`),
   * which ties a connection's rows together in the audit browser.
   */
  private auditMaybeThrottled(throttled: boolean, type: string, subject: string, detail: Record<string, unknown>, key = 'anonymous'): void {
    const traceId = typeof detail.sessionId === 'string' ? detail.sessionId : subject.startsWith('session:ses_') ? subject.slice(8) : undefined;
    if (!throttled) {
      this.journal.audit(type, subject, detail, traceId);
      return;
    }
    const suppressed = this.throttle.admit(key, this.core.clock.now());
    if (suppressed === undefined) return;
    this.journal.audit(type, subject, suppressed > 0 ? { ...detail, suppressed } : detail, traceId);
  }
}
