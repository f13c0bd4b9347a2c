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
 * 3. Clock jumps are events, not mass expiry: when a tick arrives far later than planned (sleep,
 *    wall-clock step forward) or earlier than the last tick (step backward), lock windows and
 *    heartbeats are shifted by the gap first, so nobody is punished for time that nobody lived.
 *    Only windows granted on the old timeline move: a claim or renewal made after the jump but
 *    before the tick noticed it already counts from the new wall clock, and keeps its window
 *    (it would otherwise gain the whole sleep, or lose the whole backward step).
 */
import type { TimerHandle } from '../../common/clock';
import type { CoreContext } from '../context';
import type { Disposable } from '../events';
import type { InstanceRegistry } from '../instances/registry';
import type { ClaimLocks } from './claim-locks';
import type { IdempotencyStore } from './idempotency';

const CHUNK = 100;

export interface SweepSummary {
  expiredLocks: number;
  offlineInstances: number;
  purgedKeys: number;
}

export class Watchdog {
  private timer: TimerHandle | undefined;
  private lastTick: number | undefined;
  /** Task id → wall time of each claim/renewal since the last tick (invariant 3). */
  private readonly grants = new Map<number, number>();
  private grantListeners: Disposable[] = [];
  private readonly expiredLocks;
  private readonly shiftLocks;
  private readonly clampHeartbeats;

  constructor(
    private readonly ctx: CoreContext,
    private readonly locks: ClaimLocks,
    private readonly instances: InstanceRegistry,
    private readonly idempotency: IdempotencyStore,
    /** Called when a timed sweep fails (it is retried at the next tick). */
    private readonly onError: (e: unknown) => void = () => {},
  ) {
    this.expiredLocks = ctx.db.prepare<[number, number], { task_id: number }>(
      'SELECT task_id FROM locks WHERE expires_at <= ? ORDER BY expires_at LIMIT ?',
    );
    this.shiftLocks = ctx.db.prepare(
      'UPDATE locks SET expires_at = expires_at + ? WHERE expires_at > ? AND task_id NOT IN (SELECT value FROM json_each(?))',
    );
    this.clampHeartbeats = ctx.db.prepare('UPDATE instances SET last_heartbeat_at = ? WHERE last_heartbeat_at > ?');
  }

  start(): void {
    if (this.timer) return;
    this.lastTick = this.ctx.clock.now();
    this.grants.clear();
    const granted = (taskId: number) => this.grants.set(taskId, this.ctx.clock.now());
    this.grantListeners = [
      this.ctx.events.on('task.claimed', (e) => granted(e.task.id)),
      this.ctx.events.on('task.renewed', (e) => granted(e.taskId)),
    ];
    this.schedule();
  }

  stop(): void {
    this.timer?.cancel();
    this.timer = undefined;
    for (const l of this.grantListeners) l.dispose();
    this.grantListeners = [];
    this.grants.clear();
  }

  private get intervalMs() {
    return this.ctx.config.sweepIntervalS * 1000;
  }

  private schedule(): void {
    this.timer = this.ctx.clock.setTimeout(() => this.tick(), this.intervalMs);
  }

  private tick(): void {
    try {
      const now = this.ctx.clock.now();
      const expected = (this.lastTick ?? now) + this.intervalMs;
      // If the jump cannot be recorded (storage refused the write), skip this sweep rather than
      // expire locks by time nobody lived; the next tick sees the gap again.
      if (Math.abs(now - expected) > this.ctx.config.clockJumpThresholdS * 1000) this.onClockJump(expected, now);
      this.lastTick = now;
      this.grants.clear();
      this.sweep();
    } catch (e) {
      // A timer must never take the process down (e.g. a full disk refuses the sweep's writes):
      // the sweep is retried at the next tick.
      this.onError(e);
    } finally {
      this.schedule();
    }
  }

  /**
   * Handles a gap between `expected` and `actual` wall time (a sleep when positive, a backward
   * step when negative): lock windows move by the gap, and silent instances get a fresh window.
   * Also called by the Electron shell on power resume.
   */
  onClockJump(expected: number, actual: number): void {
    const gap = actual - expected;
    if (gap === 0) return;
    // Windows granted since the last tick at a wall time outside the old timeline [lastTick,
    // expected] were granted after the jump, on the new clock: they are right as they are.
    const since = this.lastTick ?? -Infinity;
    const afterJump = [...this.grants].filter(([, at]) => at < since || at > expected).map(([taskId]) => taskId);
    this.ctx.store.write(() => {
      // Locks still live at `expected` keep the remaining time they had.
      this.shiftLocks.run(gap, Math.min(expected, actual), JSON.stringify(afterJump));
      if (gap > 0) this.instances.forgiveSilence(actual);
      else this.clampHeartbeats.run(actual, actual);
      this.ctx.audit.append({
        type: 'clock.jump',
        actor: 'watchdog',
        subject: 'clock',
        detail: { expected: new Date(expected).toISOString(), actual: new Date(actual).toISOString(), gapMs: gap },
      });
      this.ctx.store.emit({ type: 'clock.jumped', from: expected, to: actual, gapMs: gap });
    });
    this.lastTick = actual;
    this.grants.clear(); // every window now counts on the new timeline
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
      const n = this.ctx.store.write(() => this.idempotency.purge(now, CHUNK * 5));
      summary.purgedKeys += n;
      if (n === 0) break;
    }
    return summary;
  }
}
