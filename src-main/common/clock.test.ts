import { describe, expect, it } from 'vitest';
import { ManualClock, steadyTime } from './clock';

describe('ManualClock', () => {
  it('stall: time passes with no timer running, then late timers, then the input and what it queued, then deferred decisions', async () => {
    const clock = new ManualClock(0);
    const order: string[] = [];
    clock.setTimeout(() => {
      order.push(`timer A at ${clock.now()}`);
      clock.afterIo(() => order.push('decision A'));
    }, 1000);
    clock.setTimeout(() => order.push(`timer B at ${clock.now()}`), 2000);
    clock.setTimeout(() => order.push('timer C'), 60_000);
    const woke = clock.stall(30_000, () => {
      order.push('input');
      setImmediate(() => order.push('commit')); // what the hub does with a frame: a group commit
    });
    expect(order).toEqual(['timer A at 30000', 'timer B at 30000', 'input']);
    await woke;
    expect(order).toEqual(['timer A at 30000', 'timer B at 30000', 'input', 'commit', 'decision A']);
    expect(clock.monotonic()).toBe(30_000);
  });

  it('advance: each timer sees its due instant, and what it deferred runs right after it', () => {
    const clock = new ManualClock(0);
    const order: string[] = [];
    clock.setTimeout(() => clock.afterIo(() => order.push(`deferred at ${clock.now()}`)), 1000);
    clock.setTimeout(() => order.push(`timer at ${clock.now()}`), 2000);
    clock.advance(5000);
    expect(order).toEqual(['deferred at 1000', 'timer at 2000']);
  });

  it('jump moves the wall clock only; steadyTime follows the monotonic clock', () => {
    const clock = new ManualClock(1_000_000);
    const steady = steadyTime(clock);
    clock.advance(1000);
    clock.jump(-3600_000);
    expect(clock.now()).toBe(1_000_000 + 1000 - 3600_000);
    expect(clock.monotonic()).toBe(1000);
    expect(steady()).toBe(1_001_000);
  });
});
