/**
 * The instance registry: one row per agent process that said hello.
 *
 *   online ──socket closed──▶ disconnected ──grace over──▶ offline
 *   online ──heartbeat timeout──▶ offline        disconnected ──resume (same token)──▶ online
 *
 * (the edges are written down once in transitions.ts; `transition` applies and audits each)
 *
 * Invariants:
 * 1. Only an `online` instance can claim (checked by the claim lock).
 * 2. Going `offline` expires every lock the instance held, in the same transaction.
 * 3. A heartbeat is checked against the row at once (an instance that is not online is refused) but
 *    written later, with every other heartbeat that came meanwhile, in one commit at most
 *    BEATS_WRITE_MS after it — or at once, inside the transaction of anything that decides on
 *    liveness (the watchdog's silence check, a gap, a disconnect or going offline). Reads show the
 *    heartbeats held. A heartbeat promises nothing durable: after a restart every instance starts
 *    disconnected anyway, so an idle fleet costs one commit per interval, not one per beat.
 * 4. Liveness counts time the server lived: after a stall, a sleep or a forward step, online
 *    instances get a fresh heartbeat window and disconnected ones keep the grace they had left;
 *    after a backward step, times recorded on the old timeline move back with it, so nobody's
 *    silence or grace grows by the step (`shiftForGap`, called inside the gap's transaction).
 */
import type { TimerHandle } from '../../common/clock';
import { GafferError } from '../../common/errors';
import { isoTime, isoTimeOrNull } from '../../common/iso-time';
import type { Instance, InstanceStatus } from '../../common/model';
import { instanceId as instanceIdSchema, registerInstanceInput } from '../../common/schemas';
import { parseOrThrow } from '../../common/validate';
import type { CoreContext } from '../context';
import { INSTANCE_ID_PREFIX, newId } from '../ids';
import type { ClaimLocks, ExpiryReason } from '../tasks';
import type { ClockGap } from '../time/gap-detector';
import { assertInstanceEdge, type InstanceCause } from './transitions';
import { onlineInstanceIds, prepareInstanceStatements, type InstanceRow } from './store';

/** Invariant 3: the longest a heartbeat waits in memory (well inside any heartbeat timeout). */
export const BEATS_WRITE_MS = 15_000;

export class InstanceRegistry {
  private readonly q;
  /** Heartbeats not written yet (invariant 3): instance id → when. */
  private readonly beats = new Map<string, number>();
  private beatsTimer: TimerHandle | undefined;

  constructor(
    private readonly ctx: CoreContext,
    private readonly locks: ClaimLocks,
  ) {
    this.q = prepareInstanceStatements(ctx.db);
  }

  private toInstance(r: InstanceRow): Instance {
    return {
      id: r.id,
      role: r.role,
      name: r.name,
      version: r.version,
      status: r.status,
      connectedAt: isoTime(r.connected_at),
      lastHeartbeatAt: isoTime(this.beats.get(r.id) ?? r.last_heartbeat_at),
      disconnectedAt: isoTimeOrNull(r.disconnected_at),
      tokenId: r.token_id,
      heldTaskIds: this.q.held.all(r.id).map((h) => h.task_id),
    };
  }

  get(id: string): Instance {
    const r = this.q.get.get(parseOrThrow(instanceIdSchema, id, 'instance id'));
    if (!r) throw new GafferError('not_found', `unknown instance ${id}`);
    return this.toInstance(r);
  }

  list(): Instance[] {
    return this.q.all.all().map((r) => this.toInstance(r));
  }

  onlineCount(): number {
    return this.q.countOnline.get()!.n;
  }

  /** `hello`: a new instance, or the resumption of a disconnected one presented with the same token. */
  register(input: unknown, traceId?: string): Instance {
    const args = parseOrThrow(registerInstanceInput, input, 'hello');
    return this.ctx.store.write(() => {
      const now = this.ctx.clock.now();
      if (args.resume) {
        const prev = this.q.get.get(args.resume);
        const sameOwner = prev && prev.role === args.role && (prev.token_id ?? null) === (args.tokenId ?? null);
        if (prev && sameOwner && prev.status !== 'offline') {
          return this.transition(prev.id, 'resume', prev.status, 'online', () => void this.q.resume.run(now, now, args.version ?? prev.version, prev.id), { role: prev.role, name: prev.name }, traceId);
        }
      }
      const id = newId(INSTANCE_ID_PREFIX);
      return this.transition(id, 'hello', null, 'online', () => void this.q.insert.run(id, args.role, args.name, args.version ?? null, args.tokenId ?? null, now, now), { role: args.role, name: args.name, version: args.version ?? null }, traceId);
    });
  }

  heartbeat(id: string): void {
    parseOrThrow(instanceIdSchema, id, 'instance id');
    const r = this.q.get.get(id);
    if (!r) throw new GafferError('not_found', `unknown instance ${id}`);
    if (r.status !== 'online') throw new GafferError('forbidden', `instance ${id} is ${r.status}; say hello again`);
    this.beats.set(id, this.ctx.clock.now());
    this.beatsTimer ??= this.ctx.clock.setTimeout(() => {
      this.beatsTimer = undefined;
      try {
        this.writeBeats();
      } catch {
        // Storage refused the write (its fault is reported by the store); the beats are kept for the next try.
      }
    }, Math.min(BEATS_WRITE_MS, (this.ctx.config.heartbeatTimeoutS * 1000) / 4));
  }

  /** Writes the heartbeats held in memory (invariant 3), in the caller's transaction if there is one. */
  writeBeats(): void {
    if (this.beats.size === 0) return;
    const beats = [...this.beats];
    this.ctx.store.write(() => {
      for (const [id, at] of beats) this.q.heartbeat.run(at, id);
    });
    for (const [id, at] of beats) if (this.beats.get(id) === at) this.beats.delete(id);
  }

  /** Closing: the heartbeats held are dropped (they promise nothing) and the timer stops. */
  stop(): void {
    this.beatsTimer?.cancel();
    this.beatsTimer = undefined;
    this.beats.clear();
  }

  /** The socket closed: the instance keeps its locks for the reconnect grace. */
  disconnect(id: string, why: string): void {
    parseOrThrow(instanceIdSchema, id, 'instance id');
    this.ctx.store.write(() => {
      this.writeBeats();
      const r = this.q.get.get(id);
      if (r?.status !== 'online') return;
      this.transition(id, 'disconnect', r.status, 'disconnected', () => void this.q.disconnect.run(this.ctx.clock.now(), id), { why });
    });
  }

  /** At start-up: every instance still marked online lost its socket with the previous process. */
  disconnectAll(why: string): number {
    const online = onlineInstanceIds(this.ctx.db);
    this.ctx.store.write(() => {
      for (const { id } of online) this.disconnect(id, why);
    });
    return online.length;
  }

  /** Marks the instance offline and expires its locks. No-op if already offline. */
  goOffline(id: string, reason: ExpiryReason, actor = 'watchdog'): number {
    parseOrThrow(instanceIdSchema, id, 'instance id');
    return this.ctx.store.write(() => {
      this.writeBeats();
      const r = this.q.get.get(id);
      if (!r || r.status === 'offline') return 0;
      let expired = 0;
      const expireHeld = () => {
        this.q.offline.run(id);
        for (const { task_id } of this.q.held.all(id)) if (this.locks.expireLockTx(task_id, reason, actor)) expired++;
        return { expiredLocks: expired };
      };
      this.transition(id, 'offline', r.status, 'offline', expireHeld, { reason }, undefined, actor);
      return expired;
    });
  }

  /** Instances silent since `before`, oldest first (for the watchdog). */
  silentSince(before: number, limit: number): string[] {
    this.writeBeats();
    return this.q.silent.all(before, limit).map((r) => r.id);
  }

  /** Disconnected instances whose grace started at or before `before`. */
  disconnectedSince(before: number, limit: number): string[] {
    return this.q.graceOver.all(before, limit).map((r) => r.id);
  }

  /** Invariant 4. Returns how many instances' heartbeat and grace times moved. */
  shiftForGap(gap: ClockGap): { heartbeats: number; graces: number } {
    return this.ctx.store.write(() => {
      // Heartbeats held in memory were recorded on the old timeline too.
      this.writeBeats();
      const at = { gap: gap.gapMs, newFrom: gap.newFrom, to: gap.to };
      const heartbeats =
        gap.gapMs > 0 ? this.q.forgiveSilence.run(gap.to, gap.to, gap.from - this.ctx.config.heartbeatTimeoutS * 1000).changes : this.q.shiftHeartbeatsBack.run(at).changes;
      const graces = this.q.shiftGrace.run(at).changes;
      return { heartbeats, graces };
    });
  }

  /**
   * Applies one edge of the instance machine: checks it, lets `write` make the change (it may add
   * to the audit detail), audits `instance.<cause>` with from/to and announces `instance.changed`.
   */
  private transition(
    id: string,
    cause: InstanceCause,
    from: InstanceStatus | null,
    to: InstanceStatus,
    write: () => Record<string, unknown> | void,
    detail: Record<string, unknown>,
    traceId?: string,
    actor?: string,
  ): Instance {
    assertInstanceEdge(cause, from, to);
    const more = write() ?? {};
    // The claim path keeps each instance's status (claim-locks.ts): this write changed it.
    this.locks.instanceChanged(id);
    const instance = this.toInstance(this.q.get.get(id)!);
    this.ctx.audit.append({ type: `instance.${cause}`, actor: actor ?? id, subject: `instance:${id}`, detail: { ...detail, ...more, from, to }, traceId });
    this.ctx.store.emit({ type: 'instance.changed', instance });
    return instance;
  }
}
