/**
 * One timer on a wall-clock instant — the earliest of something (a snooze ending, a pause ending,
 * a delivery's next attempt) — re-armed whenever that instant may have changed.
 *
 * 1. `set(at)` keeps a timer already armed for the same instant, unless that instant has passed by
 *    the wall clock (after a sleep or a forward step the old timer would still wait its monotonic
 *    delay): then it fires at once. `set(null)` disarms.
 * 2. It runs on the clock it is given (the core's `wakeups`: a pending gap is applied first).
 */
import type { Clock, TimerHandle } from '../../common/clock';

export class InstantTimer {
  private timer: TimerHandle | undefined;
  private at: number | null = null;

  constructor(
    private readonly clock: Clock,
    private readonly fire: () => void,
  ) {}

  set(at: number | null): void {
    const now = this.clock.now();
    if (at === this.at && this.timer && (at === null || at > now)) return;
    this.cancel();
    this.at = at;
    if (at === null) return;
    this.timer = this.clock.setTimeout(() => {
      this.timer = undefined;
      this.at = null;
      this.fire();
    }, Math.max(0, at - now));
  }

  cancel(): void {
    this.timer?.cancel();
    this.timer = undefined;
    this.at = null;
  }
}
