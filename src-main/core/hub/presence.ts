/**
 * Which session speaks for which instance, the reconnect grace, and liveness pings.
 *
 * Invariants:
 * 1. An instance is bound to at most one live session. Only the bound session's end starts the
 *    instance's reconnect grace; a session replaced by a resume (4409) does not.
 * 2. Socket loss: `disconnect` at once, then after `reconnectGraceS` (core clock) the instance goes
 *    offline and its locks expire, unless a `hello` resumed it. So a dead agent's task is claimable
 *    again after grace + one group-commit round. Heartbeat silence is the watchdog's job.
 * 3. A disconnect never undoes a resume of the same instance that is being committed (possibly in
 *    the same batch): it is decided inside the transaction, and held back until the resume settles.
 * 4. A bound session silent for 1.25 × `pingIntervalMs` is pinged (checked twice an interval, so
 *    within 1.75 intervals of silence: a pong-only agent stays inside the start-up rule's timeout
 *    of more than two intervals); its pong counts as a heartbeat. An agent that heartbeats every
 *    interval, as the SDKs do, is never pinged: a beat a little late is not silence, and each pong
 *    would be one more durable write (an fsync, and a wake-up of an idle server).
 */
import type { TimerHandle } from '../../common/clock';
import { CLOSE_CODES } from '../../common/protocol';
import type { InstanceRegistry } from '../instances';
import type { HubEnv, Journal, Peer, PeerPicker } from './host';
import type { InstanceLoads } from './store';

export interface PresenceDeps {
  readonly env: HubEnv;
  readonly journal: Journal;
  readonly instances: Pick<InstanceRegistry, 'disconnect' | 'goOffline' | 'get'>;
  /** The instance's status and number of held locks (one indexed read). */
  load(instanceId: string): { status: string; held: number } | undefined;
  readonly pingIntervalMs: number;
}

/** Invariant 4: how many ping intervals of silence before a ping, and checks per interval. */
const PING_AFTER_SILENT_INTERVALS = 1.25;
const PING_CHECKS_PER_INTERVAL = 2;

export class Presence implements PeerPicker {
  private readonly byInstance = new Map<string, Peer>();
  private readonly graceTimers = new Map<string, TimerHandle>();
  /** Instance ids named by a `hello` whose resume is being committed (count per id). */
  private readonly resuming = new Map<string, number>();
  /** Instance ids whose disconnect was skipped because a resume was in flight. */
  private readonly skippedDisconnects = new Set<string>();
  private pingTimer: TimerHandle | undefined;
  private pickSeq = 0;
  private closed = false;

  constructor(private readonly deps: PresenceDeps) {}

  isClosed(): boolean {
    return this.closed;
  }

  /** The live session bound to `instanceId`, if any. */
  bound(instanceId: string): Peer | undefined {
    return this.byInstance.get(instanceId);
  }

  /** Instance ids with a live, ready session, optionally of one role (with `runsOnly`: that take job runs). */
  connectedInstances(role?: string, runsOnly = false): string[] {
    const out: string[] = [];
    for (const [id, s] of this.byInstance) if ((role === undefined || s.role === role) && (!runsOnly || s.takesRuns)) out.push(id);
    return out;
  }

  pick(role: string, excluded: ReadonlySet<string>, extraLoad?: (instanceId: string) => number, runsOnly = false, loads?: InstanceLoads): Peer | undefined {
    let best: Peer | undefined;
    let bestLoad = Infinity;
    for (const [instanceId, s] of this.byInstance) {
      if (s.role !== role || s.state !== 'ready' || excluded.has(instanceId) || (runsOnly && !s.takesRuns)) continue;
      const row = loads ? this.loadOf(instanceId, loads) : this.deps.load(instanceId);
      if (!row || row.status !== 'online') continue;
      const load = row.held + (extraLoad?.(instanceId) ?? 0);
      if (
        !best ||
        load < bestLoad ||
        (load === bestLoad && (s.lastPickSeq < best.lastPickSeq || (s.lastPickSeq === best.lastPickSeq && s.connectSeq < best.connectSeq)))
      ) {
        best = s;
        bestLoad = load;
      }
    }
    if (best) best.lastPickSeq = ++this.pickSeq;
    return best;
  }

  /** The load of `instanceId` from the caller's `loads`, read into it on first need (store.ts `InstanceLoads`). */
  private loadOf(instanceId: string, loads: InstanceLoads): { status: string; held: number } | undefined {
    let row = loads.get(instanceId);
    if (row === undefined) loads.set(instanceId, (row = this.deps.load(instanceId) ?? null));
    return row ?? undefined;
  }

  /** `hello` committed: `peer` now speaks for its instance (an older session is superseded). */
  bind(peer: Peer): void {
    const id = peer.instanceId!;
    this.graceTimers.get(id)?.cancel();
    this.graceTimers.delete(id);
    const prev = this.byInstance.get(id);
    this.byInstance.set(id, peer);
    if (prev && prev !== peer) prev.fail(CLOSE_CODES.superseded, 'another connection resumed this instance');
  }

  /** Unbinds `instanceId` without starting a grace (the instance is already gone). */
  forget(instanceId: string): Peer | undefined {
    const s = this.byInstance.get(instanceId);
    this.byInstance.delete(instanceId);
    return s;
  }

  /** A session ended. True when it was its instance's bound session (the instance is now disconnected). */
  sessionGone(peer: Peer, why: string): boolean {
    const id = peer.instanceId;
    if (id === null || this.byInstance.get(id) !== peer) return false;
    this.byInstance.delete(id);
    this.instanceLost(id, why);
    return true;
  }

  /** A `hello` committed for an instance whose socket was already gone: it starts its grace now. */
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

  /** Keeps pinging while `live()` says any session is open. */
  armPing(live: () => boolean): void {
    const every = this.deps.pingIntervalMs;
    if (this.pingTimer || this.closed || every <= 0) return;
    this.pingTimer = this.deps.env.clock.setTimeout(() => {
      this.pingTimer = undefined;
      const now = this.deps.env.clock.now();
      const silent = every * PING_AFTER_SILENT_INTERVALS;
      for (const s of this.byInstance.values()) {
        if (now - s.lastHeartbeatAt >= silent && now - s.lastPingAt >= every) {
          s.lastPingAt = now;
          s.ping();
        }
      }
      if (live()) this.armPing(live);
    }, every / PING_CHECKS_PER_INTERVAL);
  }

  stopPing(): void {
    this.pingTimer?.cancel();
    this.pingTimer = undefined;
  }

  close(): void {
    this.closed = true;
    this.stopPing();
    for (const t of this.graceTimers.values()) t.cancel();
    this.graceTimers.clear();
    this.resuming.clear();
  }

  /** Disconnected now; offline (locks expired) after the grace unless resumed. */
  private instanceLost(instanceId: string, why: string): void {
    const { instances, journal, env } = this.deps;
    journal.fire(() => {
      // Decided inside the transaction (invariant 3).
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
      env.clock.setTimeout(() => {
        this.graceTimers.delete(instanceId);
        if (this.byInstance.has(instanceId)) return;
        // `fire` never throws (a failure is logged; the watchdog's grace sweep is the safety net).
        journal.fire(() => {
          // Decided inside the transaction: a resume committed earlier in the same batch wins.
          if (instances.get(instanceId).status !== 'disconnected') return 0;
          return instances.goOffline(instanceId, 'disconnected', 'hub');
        }, 'reconnect grace');
      }, env.config.reconnectGraceS * 1000),
    );
  }
}
