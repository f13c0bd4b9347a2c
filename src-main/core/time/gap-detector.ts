/**
 * The one place that notices time travel: a stall of the event loop (SIGSTOP, a blocked loop), a
 * suspend, a wall-clock step forward or back. It compares the wall clock and the monotonic clock
 * at every pulse and every timer, and turns what it finds into ONE `ClockGap`: the participants
 * (lock windows and heartbeats in the watchdog, run deadlines and job cursors in the runner)
 * shift their deadlines inside one transaction, one `clock.jump` audit row records it with what
 * each shifted, and one `clock.jumped` event tells the rest (hub timers, console, shells).
 *
 * Invariants:
 * 1. One gap, one record: a gap is measured against the last reading taken when no gap was
 *    pending, and that reading moves on only once the gap's transaction has committed. Whoever
 *    notices first (the pulse, a timer, a power-resume hook) applies it; the others find nothing.
 *    If the write fails, nothing moved and the next reading finds the gap again.
 * 2. A gap is the loop's absence (a reading later than its pulse by more than the threshold: the
 *    whole interval since the previous reading) plus the wall clock's step against the monotonic
 *    clock (a suspend, an NTP or manual step). It is declared when it exceeds the heartbeat
 *    interval (capped by `clockJumpThresholdS`): any absence long enough for an agent to have
 *    missed a heartbeat is the server's own, not the agents'. Smaller drifts are absorbed reading
 *    by reading.
 * 3. Everything recorded before the wake is old. Deadlines stored as wall time move by `gapMs`
 *    (positive: time nobody lived; negative: a backward step, so nobody gains the hour) when they
 *    were recorded on the old timeline (`onOldTimeline`, `recordedAfter`):
 *    - the loop was away (a stall, a blocked loop): everything recorded before the gap was
 *      noticed. The loop may have stopped at any instant after its last reading, so a run
 *      dispatched, a task claimed or a socket dropped in the last pulse before the stall lost the
 *      stall like the rest; the boundary is the notice (`newFrom = to`), not the last reading.
 *      A frame read just before the stall and committed at the wake before the notice counts as
 *      old too: its window is longer by the gap (a late expiry, never an early one);
 *    - only the wall clock moved (a suspend, a step): what was recorded with the old wall/monotonic
 *      offset. A record made after the step, before the notice, already counts on the new clock.
 *    In-memory timers (the `deadlines` clock) do not count the loop's absences; a suspend does not
 *    advance them in the first place.
 * 4. Decisions wait for pending input. Timers of the core go through `wakeups` or `deadlines`:
 *    each reads the clocks before it acts, so a gap is applied before any decision, and the
 *    decision itself waits until the input that arrived meanwhile has been read and committed
 *    (`Clock.afterIo`: past the poll phase that reads the sockets and the group commit it queues).
 *    Work that does not start on a timer (the job runner's pass) reads the clocks first as well,
 *    and once a gap is noticed it holds its decisions until that input is in (`clock.jumped`).
 * 5. Readings are never applied inside someone else's transaction (a rollback there would erase
 *    the shift while this module thought it done): a check inside a write only reports.
 */
import type { Clock, TimerHandle } from '../../common/clock';
import type { SchedulerConfig } from '../../common/config';
import { isoTime } from '../../common/iso-time';
import type { Logger } from '../../common/logger';
import type { AuditLog } from '../audit/audit-store';
import type { Store } from '../db/store';
import type { Disposable } from '../events';

export type GapKind = 'stall' | 'sleep' | 'step_back';

/** What happened to time between two readings. */
export interface ClockGap {
  kind: GapKind;
  /** Wall time on the old timeline that `to` corresponds to: the last reading for a stall, "now" for a step. */
  from: number;
  /** Wall time now. */
  to: number;
  /**
   * Where the new timeline may begin on the new wall clock: a time recorded in [newFrom, to] may
   * already be on the new timeline; one before or after it is on the old one (see `onOldTimeline`).
   * `to` itself when the loop was away (invariant 3: everything recorded before the notice is old);
   * else the last reading's instant as the new wall clock sees it (`to − monotonic time since`).
   */
  newFrom: number;
  /** `to − from`: how far deadlines stored as wall time move. */
  gapMs: number;
  /** How long the event loop was away by the monotonic clock (a stall); 0 for a suspend or a step. */
  loopGapMs: number;
  /** How far the wall clock moved against the monotonic clock (a suspend or a step); ~0 for a stall. */
  stepMs: number;
  /** Monotonic instant from which anything recorded may be on the new timeline (see `recordedAfter`): the notice after a loop absence. */
  sinceMono: number;
  /** `wall − monotonic` before and after. */
  offsetBefore: number;
  offsetAfter: number;
  /** Who noticed: `pulse`, `timer`, `power resume`, … */
  detectedBy: string;
}

/** A wall + monotonic reading taken when something was granted (a claim, a renewal). */
export interface Instant {
  wall: number;
  mono: number;
}

/**
 * True when `at` was recorded on the new timeline: not before the gap was noticed after a loop
 * absence (invariant 3); with the new wall/monotonic offset after a step or a suspend. Such a
 * deadline is already right and must not be shifted.
 */
export function recordedAfter(gap: ClockGap, at: Instant): boolean {
  if (at.mono < gap.sinceMono) return false;
  const offset = at.wall - at.mono;
  return Math.abs(offset - gap.offsetAfter) <= Math.abs(offset - gap.offsetBefore);
}

/**
 * SQL for "the wall time in `column` was recorded on the old timeline" (before `newFrom` — for a
 * loop absence, before the gap was noticed — or after the new "now" once the clock stepped back),
 * with parameters `@newFrom` and `@to`. After a backward step a time in [newFrom, to] is taken as
 * new; an old one that happens to fall there (recorded exactly one step ago, within a pulse) keeps
 * its value.
 */
export function onOldTimeline(column: string): string {
  return `(${column} < @newFrom OR ${column} > @to)`;
}

/** A participant shifts its own deadlines inside the gap's transaction and says how many. */
export type GapParticipant = (gap: ClockGap) => Record<string, number>;

/** Gaps longer than this are the server's absence (or a step), not jitter (invariant 2). */
export function gapThresholdMs(c: Pick<SchedulerConfig, 'heartbeatIntervalMs' | 'clockJumpThresholdS'>): number {
  return Math.min(c.heartbeatIntervalMs, c.clockJumpThresholdS * 1000);
}

/** How often the clocks are read: four times per threshold (every 5 s with the defaults). */
export function pulseMs(c: Pick<SchedulerConfig, 'heartbeatIntervalMs' | 'clockJumpThresholdS'>): number {
  return Math.max(25, Math.floor(gapThresholdMs(c) / 4));
}

/** Loop absences remembered for the `deadlines` clock (timers older than these are rare). */
const ABSENCES_KEPT = 64;

export interface GapDetectorDeps {
  /** The real clock (never a wrapper from this module). */
  clock: Clock;
  store: Store;
  audit: AuditLog;
  config: Pick<SchedulerConfig, 'heartbeatIntervalMs' | 'clockJumpThresholdS'>;
  logger: Logger;
}

export class GapDetector {
  /** Timers that read the clocks first and decide after pending input (watchdog, runner). */
  readonly wakeups: Clock;
  /** Like `wakeups`, and their delays count only time the server was there (hub timeouts). */
  readonly deadlines: Clock;

  private last: Instant | undefined;
  private running = false;
  private pulse: TimerHandle | undefined;
  private readonly participants = new Map<string, GapParticipant>();
  /** Monotonic intervals [from, to] the loop was away. */
  private readonly absences: Array<{ from: number; to: number }> = [];
  private readonly thresholdMs: number;
  private readonly pulseEveryMs: number;

  constructor(private readonly deps: GapDetectorDeps) {
    this.thresholdMs = gapThresholdMs(deps.config);
    this.pulseEveryMs = pulseMs(deps.config);
    this.wakeups = this.wrap(false);
    this.deadlines = this.wrap(true);
  }

  /** Starts reading the clocks every pulse. Before `start` (and after `stop`) nothing is detected. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.last = this.read();
    this.armPulse();
  }

  stop(): void {
    this.running = false;
    this.pulse?.cancel();
    this.pulse = undefined;
    this.last = undefined;
  }

  /** Registers a participant (invariant 3); one per name. */
  onGap(name: string, fn: GapParticipant): Disposable {
    this.participants.set(name, fn);
    return { dispose: () => this.participants.get(name) === fn && this.participants.delete(name) };
  }

  /**
   * Reads the clocks; applies a gap if there is one and returns it. Throws when the gap could not
   * be recorded (storage refused it): the caller must not decide anything on this timeline yet.
   */
  check(detectedBy = 'check'): ClockGap | undefined {
    if (!this.running || !this.last) return undefined;
    const now = this.read();
    const gap = this.measure(this.last, now, detectedBy);
    if (!gap) {
      this.last = now;
      return undefined;
    }
    if (this.deps.store.db.inTransaction) return undefined; // invariant 5: the next reading applies it
    this.apply(gap);
    this.last = now;
    if (gap.loopGapMs > 0) {
      // From the last reading: counting a little too much absence only lengthens a timeout.
      this.absences.push({ from: now.mono - gap.loopGapMs, to: now.mono });
      if (this.absences.length > ABSENCES_KEPT) this.absences.shift();
    }
    return gap;
  }

  /** Monotonic time since `sinceMono` during which the loop was there. */
  livedSince(sinceMono: number): number {
    const now = this.deps.clock.monotonic();
    let away = 0;
    for (const a of this.absences) away += Math.max(0, Math.min(a.to, now) - Math.max(a.from, sinceMono));
    return now - sinceMono - away;
  }

  private read(): Instant {
    return { wall: this.deps.clock.now(), mono: this.deps.clock.monotonic() };
  }

  private measure(last: Instant, now: Instant, detectedBy: string): ClockGap | undefined {
    const monoElapsed = now.mono - last.mono;
    const stepMs = now.wall - last.wall - monoElapsed;
    // A reading later than its pulse by more than the threshold: the loop was away. It was last
    // seen at the previous reading, so the whole interval counts (over-shifting by less than a
    // pulse is harmless; under-shifting would expire what was live).
    const loopGapMs = monoElapsed - this.pulseEveryMs > this.thresholdMs ? monoElapsed : 0;
    const gapMs = loopGapMs + stepMs;
    if (Math.abs(gapMs) <= this.thresholdMs) return undefined;
    const kind: GapKind = gapMs < 0 ? 'step_back' : loopGapMs > 0 && Math.abs(stepMs) <= this.thresholdMs ? 'stall' : 'sleep';
    // Invariant 3. The loop stopped at an unknown instant after the last reading (even after its
    // next pulse was due, when the loop was busy): everything recorded up to this notice is old.
    // A step happened at an unknown instant after the last reading; the offsets tell the side.
    const away = loopGapMs > 0;
    return {
      kind,
      from: now.wall - gapMs,
      to: now.wall,
      newFrom: away ? now.wall : now.wall - monoElapsed,
      gapMs,
      loopGapMs,
      stepMs,
      sinceMono: away ? now.mono : last.mono,
      offsetBefore: last.wall - last.mono,
      offsetAfter: now.wall - now.mono,
      detectedBy,
    };
  }

  private apply(gap: ClockGap): void {
    this.deps.store.write(() => {
      const shifted: Record<string, number> = {};
      for (const [name, fn] of this.participants) {
        for (const [k, v] of Object.entries(fn(gap))) shifted[name === k ? k : `${name}.${k}`] = v;
      }
      this.deps.audit.append({
        type: 'clock.jump',
        actor: 'clock',
        subject: 'clock',
        detail: {
          kind: gap.kind,
          expected: isoTime(gap.from),
          actual: isoTime(gap.to),
          gapMs: gap.gapMs,
          loopGapMs: gap.loopGapMs,
          stepMs: gap.stepMs,
          detectedBy: gap.detectedBy,
          shifted,
        },
        clockStep: gap.gapMs < 0,
      });
      this.deps.store.emit({ type: 'clock.jumped', from: gap.from, to: gap.to, gapMs: gap.gapMs, kind: gap.kind, loopGapMs: gap.loopGapMs });
    });
    this.deps.logger.info(`clock: ${gap.kind} of ${Math.round(gap.gapMs / 1000)} s noticed (${gap.detectedBy}); deadlines shifted`, { gapMs: gap.gapMs });
  }

  private armPulse(): void {
    if (!this.running) return;
    this.pulse = this.deps.clock.setTimeout(() => {
      this.pulse = undefined;
      try {
        this.check('pulse');
      } catch (e) {
        this.deps.logger.error('clock: a gap could not be recorded; retrying', { error: e instanceof Error ? e.message : String(e) });
      }
      this.armPulse();
    }, this.pulseEveryMs);
  }

  /** A Clock whose timers apply pending gaps first and decide after pending input (invariant 4). */
  private wrap(livedTimeOnly: boolean): Clock {
    const base = this.deps.clock;
    return {
      now: () => base.now(),
      monotonic: () => base.monotonic(),
      afterIo: (fn) => base.afterIo(fn),
      setTimeout: (fn, ms) => {
        const armedAt = base.monotonic();
        let cancelled = false;
        let handle: TimerHandle;
        const fire = () => {
          if (cancelled) return;
          try {
            this.check('timer');
          } catch (e) {
            // The gap is not recorded yet: deciding now would judge by time nobody lived.
            this.deps.logger.error('clock: a gap could not be recorded; a timer waits', { error: e instanceof Error ? e.message : String(e) });
            handle = base.setTimeout(fire, this.pulseEveryMs);
            return;
          }
          const left = livedTimeOnly ? ms - this.livedSince(armedAt) : 0;
          if (left > 0) {
            handle = base.setTimeout(fire, left);
            return;
          }
          base.afterIo(() => {
            if (!cancelled) fn();
          });
        };
        handle = base.setTimeout(fire, ms);
        return {
          cancel() {
            cancelled = true;
            handle.cancel();
          },
        };
      },
    };
  }
}
