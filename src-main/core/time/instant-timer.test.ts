import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../common/clock';
import { InstantTimer } from './instant-timer';

describe('InstantTimer', () => {
  function setup() {
    const clock = new ManualClock();
    const fired: number[] = [];
    const timer = new InstantTimer(clock, () => fired.push(clock.now()));
    return { clock, fired, timer };
  }

  it('fires once at the instant it was set to', () => {
    const { clock, fired, timer } = setup();
    const at = clock.now() + 60_000;
    timer.set(at);
    clock.advance(59_999);
    expect(fired).toEqual([]);
    clock.advance(1);
    expect(fired).toEqual([at]);
    clock.advance(3600_000);
    expect(fired).toEqual([at]);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('keeps one timer when set again to the same instant, and moves it to a new one', () => {
    const { clock, fired, timer } = setup();
    const first = clock.now() + 60_000;
    timer.set(first);
    timer.set(first);
    expect(clock.pendingTimers()).toBe(1);
    const earlier = clock.now() + 10_000;
    timer.set(earlier);
    expect(clock.pendingTimers()).toBe(1);
    clock.advance(60_000);
    expect(fired).toEqual([earlier]);
  });

  it('fires at once when re-set after the wall clock passed the instant (a sleep), not after the old monotonic delay (invariant 1)', () => {
    const { clock, fired, timer } = setup();
    const at = clock.now() + 3600_000;
    timer.set(at);
    clock.jump(3 * 3600_000); // asleep three hours: monotonic timers did not run
    expect(fired).toEqual([]);
    timer.set(at);
    clock.advance(0);
    expect(fired).toEqual([clock.now()]);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('set(null) and cancel() disarm it', () => {
    const { clock, fired, timer } = setup();
    timer.set(clock.now() + 1000);
    timer.set(null);
    clock.advance(2000);
    timer.set(clock.now() + 1000);
    timer.cancel();
    clock.advance(2000);
    expect(fired).toEqual([]);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('can be set again from inside its own callback', () => {
    const clock = new ManualClock();
    const fired: number[] = [];
    const timer: InstantTimer = new InstantTimer(clock, () => {
      fired.push(clock.now());
      if (fired.length < 3) timer.set(clock.now() + 1000);
    });
    const start = clock.now();
    timer.set(start + 1000);
    clock.advance(10_000);
    expect(fired).toEqual([start + 1000, start + 2000, start + 3000]);
  });
});
