/**
 * The agent hub: sessions over a minimal socket interface (see ports.ts), independent of `ws`.
 * The transport (server/agent-socket.ts) checks the upgrade and forwards frames; everything the
 * protocol means happens here.
 *
 * Invariants:
 * 1. An instance is bound to at most one live session. Only the bound session's end starts the
 *    instance's reconnect grace; a session replaced by a resume (4409) does not.
 * 2. Socket loss: `disconnect` at once, then after `reconnectGraceS` (core clock) the instance goes
 *    offline and its locks expire, unless a `hello` resumed it. So a dead agent's task is claimable
 *    again after grace + one group-commit round. Heartbeat silence is the watchdog's job.
 * 3. An instance that is no longer online (watchdog, operator) loses its socket (4410); a revoked
 *    token loses all its sockets at once (4403).
 * 4. Every write goes through the group committer. Every session event is audited once: the
 *    registry audits instance hello/resume/disconnect, the hub audits the rest. Unauthenticated
 *    noise is throttled in the audit (counted, not dropped silently).
 * 5. `close()` releases every timer, listener and socket and settles every pending promise.
 */
import type { Clock, TimerHandle } from '../../common/clock';
import type { SchedulerConfig } from '../../common/config';
import { GafferError } from '../../common/errors';
import type { Logger } from '../../common/logger';
import { CLOSE_CODES, MAX_FRAME_BYTES } from '../../common/protocol';
import type { AuditLog } from '../audit/audit-log';
import type { TokenStore } from '../auth/tokens';
import { newId } from '../context';
import type { Db } from '../db/open';
import type { GroupCommitter } from '../db/group-commit';
import type { Disposable, EventBus } from '../events';
import type { InstanceRegistry } from '../instances/registry';
import type { Board } from '../tasks/board';
import type { ClaimLocks } from '../tasks/claim-locks';
import { AuditThrottle } from './limits';
import type { ConnectInfo, HubConnection, HubOptions, HubSocket, JobTrigger, LogSink, PrecheckVerdict, RunSink, TriggerOptions, TriggerOutcome } from './ports';
import { Session } from './session';
import { Prechecks, TriggerDispatcher } from './triggers';

/** What the hub needs from the core (a subset of `Core`, so it can be built inside `createCore`). */
export interface HubDeps {
  clock: Clock;
  config: SchedulerConfig;
  db: Db;
  events: EventBus;
  audit: AuditLog;
  instances: InstanceRegistry;
  locks: ClaimLocks;
  tasks: Board;
  tokens: TokenStore;
  committer: GroupCommitter;
  logger: Logger;
}

export type ResolvedHubOptions = Required<HubOptions>;

export type RejectionKind = 'host' | 'origin' | 'token' | 'capacity';

/** A summary of one live session (for the console and tests). */
export interface SessionInfo {
  sessionId: string;
  state: Session['state'];
  instanceId: string | null;
  role: string | null;
  tokenId: string | null;
  remoteAddress: string | null;
}

/** The hub as its sessions and push dispatchers see it. Not part of the public API. */
export interface HubInternals {
  readonly core: HubDeps;
  readonly clock: Clock;
  readonly config: SchedulerConfig;
  readonly logger: Logger;
  readonly opts: ResolvedHubOptions;
  readonly maxFrameBytes: number;
  readonly triggers: TriggerDispatcher;
  readonly prechecks: Prechecks;
  isClosed(): boolean;
  commit<T>(op: () => T): Promise<T>;
  fire(op: () => unknown, what: string): void;
  audit(type: string, subject: string, detail: Record<string, unknown>, traceId?: string, actor?: string): void;
  rejected(kind: RejectionKind, detail: Record<string, unknown>): void;
  sink(): RunSink | undefined;
  /** The logs module's sink for `log` / `usage` frames, if attached. */
  logSink(): LogSink | undefined;
  toSink(instanceId: string, call: (sink: RunSink) => object | Promise<object>): Promise<object>;
  pickSession(role: string, excluded: ReadonlySet<string>): Session | undefined;
  bind(s: Session): void;
  orphaned(instanceId: string, why: string): void;
  resumeStarted(instanceId: string): void;
  resumeSettled(instanceId: string, boundTo: string | null): void;
  sessionGone(s: Session, code: number, reason: string): void;
}

export class Hub implements HubInternals {
  readonly clock: Clock;
  readonly config: SchedulerConfig;
  readonly logger: Logger;
  readonly opts: ResolvedHubOptions;
  readonly maxFrameBytes = MAX_FRAME_BYTES;
  readonly triggers: TriggerDispatcher;
  readonly prechecks: Prechecks;
  private readonly sessionsById = new Map<string, Session>();
  private readonly byInstance = new Map<string, Session>();
  private readonly graceTimers = new Map<string, TimerHandle>();
  /** Instance ids named by a `hello` whose resume is being committed (count per id). */
  private readonly resuming = new Map<string, number>();
  /** Instance ids whose disconnect was skipped because a resume was in flight. */
  private readonly skippedDisconnects = new Set<string>();
  private readonly throttle = new AuditThrottle();
  private readonly listeners: Disposable[] = [];
  private readonly transports = new Set<Disposable>();
  private readonly loadOf;
  private runSink: RunSink | undefined;
  private logs: LogSink | undefined;
  private pingTimer: TimerHandle | undefined;
  private connectSeq = 0;
  private closed = false;

  constructor(
    readonly core: HubDeps,
    options: HubOptions = {},
  ) {
    this.clock = core.clock;
    this.config = core.config;
    this.logger = core.logger;
    this.opts = {
      helloTimeoutMs: options.helloTimeoutMs ?? 10_000,
      requireToken: options.requireToken ?? true,
      ratePerSecond: options.ratePerSecond ?? 200,
      rateBurst: options.rateBurst ?? 400,
      maxRateStrikes: options.maxRateStrikes ?? 200,
      maxBufferedBytes: options.maxBufferedBytes ?? 4 * 1024 * 1024,
      maxFramesBeforeReady: options.maxFramesBeforeReady ?? 64,
      pingIntervalMs: options.pingIntervalMs ?? core.config.heartbeatIntervalMs,
      minHeartbeatGapMs: options.minHeartbeatGapMs ?? 1000,
    };
    this.triggers = new TriggerDispatcher(this);
    this.prechecks = new Prechecks(this);
    this.loadOf = core.db.prepare<[string, string], { status: string; held: number }>(
      'SELECT status, (SELECT count(*) FROM locks WHERE instance_id = ?) AS held FROM instances WHERE id = ?',
    );
    this.listeners.push(
      core.events.on('token.revoked', ({ token }) => {
        for (const s of [...this.sessionsById.values()]) if (s.token?.id === token.id) s.fail(CLOSE_CODES.revoked, 'token revoked');
      }),
      core.events.on('instance.changed', ({ instance }) => {
        if (instance.status === 'online') return;
        const s = this.byInstance.get(instance.id);
        if (!s) return;
        // Unbind first: this session's end must not start another grace for an instance that is gone.
        this.byInstance.delete(instance.id);
        s.fail(CLOSE_CODES.instanceOffline, `instance is ${instance.status}; say hello again`);
      }),
    );
  }

  // ---- public API ----

  /** Hands a new, already admitted connection to the hub. */
  connect(socket: HubSocket, info: ConnectInfo = {}): HubConnection {
    const session = new Session(this, socket, newId('ses'), ++this.connectSeq, info);
    if (this.closed) {
      session.fail(CLOSE_CODES.goingAway, 'server shutting down');
      return session;
    }
    this.sessionsById.set(session.sessionId, session);
    const tokenId = session.token?.id ?? null;
    this.auditMaybeThrottled(tokenId === null, 'session.connect', `session:${session.sessionId}`, {
      remoteAddress: session.remoteAddress,
      tokenId,
    });
    this.core.events.emit({ type: 'session.opened', sessionId: session.sessionId, remoteAddress: session.remoteAddress, tokenId });
    this.armPing();
    return session;
  }

  /** The transport refused an upgrade (bad Host, foreign Origin, bad token, too many connections). */
  rejected(kind: RejectionKind, detail: Record<string, unknown>): void {
    this.auditMaybeThrottled(true, `session.${kind}_rejected`, `session:${String(detail.sessionId ?? 'upgrade')}`, detail, kind);
  }

  /** Registers (or, with `undefined`, removes) where `run_*` messages go. */
  /** Registers (or, with `undefined`, removes) where `log` and `usage` frames go. */
  setLogSink(sink: LogSink | undefined): void {
    this.logs = sink;
  }

  logSink(): LogSink | undefined {
    return this.logs;
  }

  setRunSink(sink: RunSink | undefined): void {
    this.runSink = sink;
  }

  /**
   * Offers a run to exactly one online instance of `role` (least loaded: held locks + unacknowledged
   * triggers, then least recently triggered) and waits for its `run_started`. Without one within the
   * ack timeout (or if it disconnects), the same run is offered to another instance, each at most
   * once. Calling again with a pending `runId` returns the same promise.
   */
  pushJobTrigger(role: string, trigger: JobTrigger, opts?: TriggerOptions): Promise<TriggerOutcome> {
    return this.triggers.push(role, trigger, opts);
  }

  /** Asks one online instance of `role` to run the named precheck for `slot`. Never rejects. */
  requestPrecheck(role: string, check: string, slot: string, timeoutMs: number): Promise<PrecheckVerdict> {
    return this.prechecks.request(role, check, slot, timeoutMs);
  }

  /** Live connections (including those still before `hello`). */
  get connectionCount(): number {
    return this.sessionsById.size;
  }

  /** Instance ids with a live, ready session, optionally of one role. */
  connectedInstances(role?: string): string[] {
    const out: string[] = [];
    for (const [id, s] of this.byInstance) if (role === undefined || s.role === role) out.push(id);
    return out;
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
    const s = this.byInstance.get(instanceId);
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

  /** Closes every socket, timer and listener; pending pushes settle as undeliverable. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.pingTimer?.cancel();
    this.pingTimer = undefined;
    for (const t of this.graceTimers.values()) t.cancel();
    this.graceTimers.clear();
    this.resuming.clear();
    for (const l of this.listeners) l.dispose();
    this.triggers.close();
    this.prechecks.close();
    // Each bound instance is marked disconnected (queued on the committer, flushed by core.close).
    for (const s of [...this.sessionsById.values()]) s.fail(CLOSE_CODES.goingAway, 'server shutting down');
    for (const t of [...this.transports]) {
      try {
        t.dispose();
      } catch (e) {
        this.logger.warn('agent transport failed to close', { error: String(e) });
      }
    }
    this.transports.clear();
  }

  // ---- internals (HubInternals) ----

  commit<T>(op: () => T): Promise<T> {
    return this.core.committer.submit(op);
  }

  fire(op: () => unknown, what: string): void {
    this.commit(op).catch((e: unknown) => {
      if (e instanceof GafferError && (e.code === 'forbidden' || e.code === 'not_found')) return;
      this.logger.warn(`hub: ${what} failed`, { error: String(e) });
    });
  }

  audit(type: string, subject: string, detail: Record<string, unknown>, traceId?: string, actor = 'hub'): void {
    this.fire(() => this.core.audit.record({ type, actor, subject, detail, traceId: traceId ?? null }), type);
  }

  sink(): RunSink | undefined {
    return this.runSink;
  }

  toSink(instanceId: string, call: (sink: RunSink) => object | Promise<object>): Promise<object> {
    const sink = this.runSink;
    if (!sink) return Promise.reject(new GafferError('not_found', 'unknown run (no job runner is attached)'));
    return this.commit(() => call(sink));
  }

  pickSession(role: string, excluded: ReadonlySet<string>): Session | undefined {
    let best: Session | undefined;
    let bestLoad = Infinity;
    for (const [instanceId, s] of this.byInstance) {
      if (s.role !== role || s.state !== 'ready' || excluded.has(instanceId)) continue;
      const row = this.loadOf.get(instanceId, instanceId);
      if (!row || row.status !== 'online') continue;
      const load = row.held + this.triggers.unacked(s);
      if (
        !best ||
        load < bestLoad ||
        (load === bestLoad && (s.lastTriggerSeq < best.lastTriggerSeq || (s.lastTriggerSeq === best.lastTriggerSeq && s.connectSeq < best.connectSeq)))
      ) {
        best = s;
        bestLoad = load;
      }
    }
    return best;
  }

  bind(s: Session): void {
    const id = s.instanceId!;
    const grace = this.graceTimers.get(id);
    grace?.cancel();
    this.graceTimers.delete(id);
    const prev = this.byInstance.get(id);
    this.byInstance.set(id, s);
    if (prev && prev !== s) prev.fail(CLOSE_CODES.superseded, 'another connection resumed this instance');
  }

  orphaned(instanceId: string, why: string): void {
    if (!this.byInstance.has(instanceId)) this.instanceLost(instanceId, why);
  }

  resumeStarted(instanceId: string): void {
    this.resuming.set(instanceId, (this.resuming.get(instanceId) ?? 0) + 1);
  }

  /** A resume of `instanceId` settled; `boundTo` is the instance the session got (null: none). */
  resumeSettled(instanceId: string, boundTo: string | null): void {
    const n = (this.resuming.get(instanceId) ?? 1) - 1;
    if (n > 0) {
      this.resuming.set(instanceId, n);
      return;
    }
    this.resuming.delete(instanceId);
    // The resume did not take: the disconnect it held back is due after all.
    if (this.skippedDisconnects.delete(instanceId) && boundTo !== instanceId) this.orphaned(instanceId, 'resume failed');
  }

  sessionGone(s: Session, code: number, reason: string): void {
    this.sessionsById.delete(s.sessionId);
    this.triggers.sessionGone(s);
    this.prechecks.sessionGone(s);
    const id = s.instanceId;
    if (id !== null && this.byInstance.get(id) === s) {
      this.byInstance.delete(id);
      // The registry audits `instance.disconnect`; no second row here.
      this.instanceLost(id, `socket closed (${code}${reason ? `: ${reason}` : ''})`);
    } else {
      this.auditMaybeThrottled(id === null && s.token === null, 'session.disconnect', `session:${s.sessionId}`, {
        instanceId: id,
        code,
        reason,
      });
    }
    this.core.events.emit({ type: 'session.closed', sessionId: s.sessionId, instanceId: id, code, reason });
    if (this.sessionsById.size === 0) {
      this.pingTimer?.cancel();
      this.pingTimer = undefined;
    }
  }

  // ---- private ----

  /** Disconnected now; offline (locks expired) after the grace unless resumed. */
  private instanceLost(instanceId: string, why: string): void {
    const { instances } = this.core;
    this.fire(() => {
      // Decided inside the transaction: a resume of this instance is being committed (possibly
      // earlier in this very batch), and its session binds right after; do not undo it.
      if (this.resuming.has(instanceId)) {
        this.skippedDisconnects.add(instanceId);
        return;
      }
      instances.disconnect(instanceId, why);
    }, 'disconnect');
    if (this.closed) return; // after a restart, the core's own grace sweep takes over
    this.graceTimers.get(instanceId)?.cancel();
    this.graceTimers.set(
      instanceId,
      this.clock.setTimeout(() => {
        this.graceTimers.delete(instanceId);
        if (this.byInstance.has(instanceId)) return;
        // `fire` never throws (a failure is logged; the watchdog's grace sweep is the safety net).
        this.fire(() => {
          // Decided inside the transaction: a resume committed earlier in the same batch wins.
          if (instances.get(instanceId).status !== 'disconnected') return 0;
          return instances.goOffline(instanceId, 'disconnected', 'hub');
        }, 'reconnect grace');
      }, this.config.reconnectGraceS * 1000),
    );
  }

  /**
   * Session rows carry the session id as their trace id (so does the registry's `instance.hello`),
   * which ties a connection's rows together in the audit browser.
   */
  private auditMaybeThrottled(throttled: boolean, type: string, subject: string, detail: Record<string, unknown>, key = 'anonymous'): void {
    const traceId = typeof detail.sessionId === 'string' ? detail.sessionId : subject.startsWith('session:ses_') ? subject.slice(8) : undefined;
    if (!throttled) {
      this.audit(type, subject, detail, traceId);
      return;
    }
    const suppressed = this.throttle.admit(key, this.clock.now());
    if (suppressed === undefined) return;
    this.audit(type, subject, suppressed > 0 ? { ...detail, suppressed } : detail, traceId);
  }

  private armPing(): void {
    if (this.pingTimer || this.closed || this.opts.pingIntervalMs <= 0) return;
    this.pingTimer = this.clock.setTimeout(() => {
      this.pingTimer = undefined;
      const now = this.clock.now();
      const every = this.opts.pingIntervalMs;
      for (const s of this.byInstance.values()) {
        if (now - s.lastHeartbeatAt >= every && now - s.lastPingAt >= every) {
          s.lastPingAt = now;
          try {
            s.socket.ping?.();
          } catch (e) {
            this.logger.warn('hub: ping failed', { sessionId: s.sessionId, error: String(e) });
          }
        }
      }
      if (this.sessionsById.size > 0) this.armPing();
    }, this.opts.pingIntervalMs);
  }
}
