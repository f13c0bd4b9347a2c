/**
 * The watchdog (SPEC §2 step 6). A safety sweep every `sweepIntervalS`:
 *   - locks past their window → expired (task back to backlog, previouslyExpired);
 *   - online instances silent past the heartbeat timeout → offline, their locks expired;
 *   - disconnected instances past the reconnect grace → offline, their locks expired;
 *   - idempotency keys past their window → purged.
 *
 * Invariants:
 * 1. Work is done in chunks of at most CHUNK rows per transaction, so a claim never waits long.
 * 2. The recovery bound for an abandoned task is min(lock window, heartbeat timeout) + sweep interval.
 * 3. Gaps in time are events, not mass expiry: the gap detector (core/time/gap-detector.ts) notices
 *    a stall, a sleep or a step, and the watchdog's part of it moves lock windows by the gap and
 *    gives silent instances their time back, before any sweep decides on the new timeline (the
 *    sweep's timer is a `wakeups` timer: it reads the clocks first, and sweeps after pending input).
 *    Only windows granted on the old timeline move (gap-detector invariant 3): after a stall, every
 *    claim and renewal granted before the wake, the last pulse's too; after a step or a suspend, a
 *    claim or renewal recorded after it already counts from the new wall clock and keeps its window
 *    (it would otherwise gain the whole sleep, or lose the whole backward step). A report that
 *    waited in the socket during the stall is read before the sweep decides.
 */
import type { TimerHandle } from '../../common/clock';
import type { CoreContext } from '../context';
import type { Disposable } from '../events';
import { recordedAfter, type ClockGap, type Instant } from '../time/gap-detector';
import type { ClaimLocks } from './claim-locks';
import type { IdempotencyStore } from './idempotency-store';
import { prepareWatchdogStatements } from './task-repo';

/**
 * What the sweep needs of the instance registry (core/instances' `InstanceRegistry` fits it).
 * Declared here because instances sit above tasks: an instance going offline expires its locks.
 */
export interface SweptInstances {
  shiftForGap(gap: ClockGap): { heartbeats: number; graces: number };
  silentSince(before: number, limit: number): string[];
  disconnectedSince(before: number, limit: number): string[];
  goOffline(id: string, reason: 'heartbeat_timeout' | 'disconnected'): number;
}

const CHUNK = 100;

/**
 * The claims and renewals granted since the last sweep (invariant 3), in the order granted: task
 * id, wall and monotonic time in typed arrays. A map entry and an object per grant, kept for up to
 * a sweep interval (600 000 of them at 10 000 claims a second), cost every claim more in map
 * growth and garbage collection than the rest of its event (issue 32); this costs three stores.
 */
const GRANTS_INITIAL = 1024;

export class GrantLog {
  private ids = new Float64Array(GRANTS_INITIAL);
  private walls = new Float64Array(GRANTS_INITIAL);
  private monos = new Float64Array(GRANTS_INITIAL);
  private n = 0;

  get size(): number {
    return this.n;
  }

  add(taskId: number, wall: number, mono: number): void {
    if (this.n === this.ids.length) {
      const grow = (a: Float64Array) => {
        const b = new Float64Array(a.length * 2);
        b.set(a);
        return b;
      };
      this.ids = grow(this.ids);
      this.walls = grow(this.walls);
      this.monos = grow(this.monos);
    }
    this.ids[this.n] = taskId;
    this.walls[this.n] = wall;
    this.monos[this.n] = mono;
    this.n++;
  }

  clear(): void {
    this.n = 0;
    // Give back what a busy interval grew (the arrays are refilled from the start).
    if (this.ids.length > GRANTS_INITIAL * 64) {
      this.ids = new Float64Array(GRANTS_INITIAL);
      this.walls = new Float64Array(GRANTS_INITIAL);
      this.monos = new Float64Array(GRANTS_INITIAL);
    }
  }

  /** The tasks whose latest grant passes `test`, in the order of their first grant. */
  latestWhere(test: (at: Instant) => boolean): number[] {
    const latest = new Map<number, number>();
    for (let i = 0; i < this.n; i++) latest.set(this.ids[i]!, i);
    const out: number[] = [];
    for (const [taskId, i] of latest) if (test({ wall: this.walls[i]!, mono: this.monos[i]! })) out.push(taskId);
    return out;
  }
}

export interface SweepSummary {
  expiredLocks: number;
  offlineInstances: number;
  purgedKeys: number;
}

export class Watchdog {
  private timer: TimerHandle | undefined;
  /** Each claim/renewal since the last sweep, and when it was recorded (invariant 3). */
  private readonly grants = new GrantLog();
  private listeners: Disposable[] = [];
  private readonly expiredLocks;
  private readonly shiftLocks;

  constructor(
    private readonly ctx: CoreContext,
    private readonly locks: ClaimLocks,
    private readonly instances: SweptInstances,
    private readonly idempotency: IdempotencyStore,
    /** Called when a timed sweep fails (it is retried at the next one). */
    private readonly onError: (e: unknown) => void = () => {},
  ) {
    const s = prepareWatchdogStatements(ctx.db);
    this.expiredLocks = s.expiredLocks;
    this.shiftLocks = s.shiftLocks;
  }

  start(): void {
    if (this.timer) return;
    this.grants.clear();
    const granted = (taskId: number) => this.grants.add(taskId, this.ctx.clock.now(), this.ctx.clock.monotonic());
    this.listeners = [
      this.ctx.events.on('task.claimed', (e) => granted(e.task.id)),
      this.ctx.events.on('task.renewed', (e) => granted(e.taskId)),
      this.ctx.gaps.onGap('watchdog', (gap) => this.onGap(gap)),
      // Once a gap has committed, every window counts on the new timeline.
      this.ctx.events.on('clock.jumped', () => this.grants.clear()),
    ];
    this.schedule();
  }

  stop(): void {
    this.timer?.cancel();
    this.timer = undefined;
    for (const l of this.listeners) l.dispose();
    this.listeners = [];
    this.grants.clear();
  }

  private get intervalMs() {
    return this.ctx.config.sweepIntervalS * 1000;
  }

  private schedule(): void {
    this.timer = this.ctx.clock.setTimeout(() => this.timedSweep(), this.intervalMs);
  }

  private timedSweep(): void {
    try {
      // A grant older than this sweep is on the timeline every later gap starts from.
      this.grants.clear();
      this.sweep();
    } catch (e) {
      // A timer must never take the process down (e.g. a full disk refuses the sweep's writes):
      // the sweep is retried at the next one.
      this.onError(e);
    } finally {
      this.schedule();
    }
  }

  /**
   * The watchdog's part of a gap (inside the gap's transaction): lock windows granted on the old
   * timeline move by the gap; instances get their silence and their reconnect grace back.
   */
  private onGap(gap: ClockGap): Record<string, number> {
    const afterGap = this.grants.latestWhere((at) => recordedAfter(gap, at));
    // Locks still live when the gap began keep the remaining time they had.
    const locks = this.shiftLocks.run(gap.gapMs, Math.min(gap.from, gap.to), JSON.stringify(afterGap)).changes;
    return { locks, ...this.instances.shiftForGap(gap) };
  }

  /** One full sweep, in chunks. */
  sweep(): SweepSummary {
    const now = this.ctx.clock.now();
    const summary: SweepSummary = { expiredLocks: 0, offlineInstances: 0, purgedKeys: 0 };
    const hbCutoff = now - this.ctx.config.heartbeatTimeoutS * 1000;
    const graceCutoff = now - this.ctx.config.reconnectGraceS * 1000;
    for (;;) {
      const silent = this.instances.silentSince(hbCutoff, CHUNK);
      const gone = this.instances.disconnectedSince(graceCutoff, CHUNK);
      if (silent.length + gone.length === 0) break;
      this.ctx.store.write(() => {
        for (const id of silent) summary.expiredLocks += this.instances.goOffline(id, 'heartbeat_timeout');
        for (const id of gone) summary.expiredLocks += this.instances.goOffline(id, 'disconnected');
      });
      summary.offlineInstances += silent.length + gone.length;
    }
    for (;;) {
      const due = this.expiredLocks.all(now, CHUNK);
      if (due.length === 0) break;
      this.ctx.store.write(() => {
        for (const { task_id } of due) if (this.locks.expireLockTx(task_id, 'lock_window', 'watchdog')) summary.expiredLocks++;
      });
    }
    for (;;) {
      const n = this.ctx.store.write(() => this.idempotency.purge(CHUNK * 5));
      summary.purgedKeys += n;
      if (n === 0) break;
    }
    return summary;
  }
}
