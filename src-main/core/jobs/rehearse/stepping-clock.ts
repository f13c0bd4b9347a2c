/**
 * The rehearsal's time: a `ManualClock` that also knows when its next timer is due, so the driver
 * can step from one due instant to the next and let the engine react (its `soon` work, async check
 * continuations, promise callbacks) at that instant before time moves on.
 *
 * Invariants:
 * 1. Every timer of the throw-away world is set through this clock (the engine's, through the gap
 *    detector's wrappers, and the scripted agents'), so `nextDueAt` sees all of them.
 * 2. Time only moves in `advanceTo`; a timer runs seeing `now()` at its own due instant.
 */
import { ManualClock, type Clock, type TimerHandle } from '../../../common/clock';

interface Due {
  at: number;
  done: boolean;
}

export class SteppingClock implements Clock {
  private readonly manual: ManualClock;
  private pending: Due[] = [];

  constructor(start: number) {
    this.manual = new ManualClock(start);
  }

  now(): number {
    return this.manual.now();
  }

  monotonic(): number {
    return this.manual.monotonic();
  }

  afterIo(fn: () => void): void {
    this.manual.afterIo(fn);
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const due: Due = { at: this.manual.now() + Math.max(0, ms), done: false };
    this.pending.push(due);
    const handle = this.manual.setTimeout(() => {
      due.done = true;
      fn();
    }, ms);
    return {
      cancel: () => {
        due.done = true;
        handle.cancel();
      },
    };
  }

  /** The wall instant of the earliest live timer, if any. */
  nextDueAt(): number | undefined {
    this.pending = this.pending.filter((d) => !d.done);
    let best: number | undefined;
    for (const d of this.pending) if (best === undefined || d.at < best) best = d.at;
    return best;
  }

  /** Lets time pass until `wall`, running every timer due by then in order. */
  advanceTo(wall: number): void {
    if (wall > this.manual.now()) this.manual.advanceTo(wall);
    else this.manual.advance(0);
  }
}
