/**
 * The gap detector on a manual clock: stalls (`stall`: both clocks move, timers run late, then the
 * input that arrived), sleeps and steps (`jump`: the wall clock moves alone). Decision logic only;
 * the real SIGSTOP of a server is e2e/reliability/clock-stall.test.ts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../common/config';
import { makeTestCore, onlineInstance, type TestCore } from '../tests/test-core';
import { gapThresholdMs, pulseMs, recordedAfter, type ClockGap } from './gap-detector';

let core: TestCore;
afterEach(() => core?.close());

const SEC = 1000;
/** Heartbeats every 5 s, silent instances offline after 120 s, sweeps every 60 s. */
const TIMINGS = { ...DEFAULT_CONFIG, heartbeatIntervalMs: 5000, heartbeatTimeoutS: 120, sweepIntervalS: 60, lockWindowS: 600 };

function jumps(): Array<{ at: number; detail: Record<string, any> }> {
  return (core.db.prepare(`SELECT at, detail FROM audit WHERE type = 'clock.jump' ORDER BY id`).all() as Array<{ at: number; detail: string }>).map((r) => ({
    at: r.at,
    detail: JSON.parse(r.detail),
  }));
}

describe('what counts as a gap', () => {
  it('the threshold is the heartbeat interval (capped by clockJumpThresholdS), read a few times per threshold', () => {
    expect(gapThresholdMs({ heartbeatIntervalMs: 20_000, clockJumpThresholdS: 90 })).toBe(20_000);
    expect(gapThresholdMs({ heartbeatIntervalMs: 200_000, clockJumpThresholdS: 90 })).toBe(90_000);
    expect(pulseMs({ heartbeatIntervalMs: 20_000, clockJumpThresholdS: 90 })).toBe(5000);
    expect(pulseMs({ heartbeatIntervalMs: 500, clockJumpThresholdS: 90 })).toBe(125);
  });

  it('a stall shorter than the heartbeat interval is jitter; a longer one is one gap, however many timers wake up late', async () => {
    core = makeTestCore(TIMINGS);
    core.start();
    core.clock.advance(30 * SEC);
    await core.clock.stall(4 * SEC);
    expect(jumps()).toEqual([]);
    core.clock.advance(30 * SEC + 500); // the watchdog's sweep, the runner's sweep and many pulses are due
    await core.clock.stall(110 * SEC);
    core.clock.advance(120 * SEC);
    const rows = jumps();
    expect(rows).toHaveLength(1);
    expect(rows[0]!.detail).toMatchObject({ kind: 'stall', stepMs: 0 });
    // Measured from the last reading (less than a pulse before the stall).
    expect(rows[0]!.detail.gapMs).toBeGreaterThanOrEqual(110 * SEC);
    expect(rows[0]!.detail.gapMs).toBeLessThanOrEqual(110 * SEC + pulseMs(TIMINGS));
    expect(rows[0]!.detail.shifted).toMatchObject({ 'watchdog.locks': 0, 'watchdog.heartbeats': 0, 'runner.runs': 0 });
  });

  it('a sleep or a forward step is measured exactly against the monotonic clock; a step back is negative', () => {
    core = makeTestCore(TIMINGS);
    core.start();
    core.clock.advance(10 * SEC);
    core.clock.jump(5 * 3600_000);
    core.clock.advance(10 * SEC);
    core.clock.jump(-3600_000);
    core.clock.advance(10 * SEC);
    core.clock.jump(3 * SEC); // an NTP nudge below the threshold: absorbed
    core.clock.advance(10 * SEC);
    expect(jumps().map((j) => [j.detail.kind, j.detail.gapMs, j.detail.loopGapMs])).toEqual([
      ['sleep', 5 * 3600_000, 0],
      ['step_back', -3600_000, 0],
    ]);
  });

  it('whoever notices first applies it; the others find nothing (a power-resume hook after the pulse)', () => {
    core = makeTestCore(TIMINGS);
    core.start();
    core.clock.jump(2 * 3600_000);
    const first = core.gaps.check('power resume');
    expect(first).toMatchObject({ kind: 'sleep', gapMs: 2 * 3600_000, detectedBy: 'power resume' });
    core.clock.advance(5 * SEC);
    expect(core.gaps.check('power resume')).toBeUndefined();
    expect(jumps()).toHaveLength(1);
  });

  it('is never applied inside someone else\'s transaction, and a gap whose record fails is found again', () => {
    core = makeTestCore(TIMINGS);
    core.start();
    core.clock.jump(3600_000);
    // Inside a write a rollback could erase the shift: only the next reading applies it.
    expect(core.store.write(() => core.gaps.check('inside'))).toBeUndefined();
    let failOnce = true;
    const d = core.gaps.onGap('flaky', () => {
      if (failOnce) {
        failOnce = false;
        throw new Error('disk says no');
      }
      return {};
    });
    expect(() => core.gaps.check('first try')).toThrow('disk says no');
    expect(jumps()).toEqual([]);
    expect(core.gaps.check('second try')).toMatchObject({ gapMs: 3600_000 });
    expect(jumps()).toHaveLength(1);
    d.dispose();
  });
});

describe('what was recorded after a gap began keeps its time', () => {
  const gap = (over: Partial<ClockGap>): ClockGap => ({
    kind: 'sleep',
    from: 0,
    to: 0,
    newFrom: 0,
    gapMs: 0,
    loopGapMs: 0,
    stepMs: 0,
    sinceMono: 1000,
    offsetBefore: 0,
    offsetAfter: 0,
    detectedBy: 'test',
    ...over,
  });

  it('after a step or a sleep: by the wall/monotonic offset; after a stall: by the monotonic instant', () => {
    const step = gap({ kind: 'step_back', offsetBefore: 5000, offsetAfter: 5000 - 3600_000 });
    expect(recordedAfter(step, { mono: 1500, wall: 1500 + 5000 })).toBe(false); // before the step
    expect(recordedAfter(step, { mono: 1500, wall: 1500 + 5000 - 3600_000 })).toBe(true); // after it
    expect(recordedAfter(step, { mono: 500, wall: 500 + 5000 })).toBe(false); // before the last reading
    const stall = gap({ kind: 'stall', sinceMono: 2000, offsetBefore: 7, offsetAfter: 7 });
    expect(recordedAfter(stall, { mono: 1900, wall: 1907 })).toBe(false);
    expect(recordedAfter(stall, { mono: 120_000, wall: 120_007 })).toBe(true);
  });

  it('after a loop absence, everything recorded before the notice is old: even a claim made after the pulse was due (a busy loop, then the stall)', async () => {
    core = makeTestCore(TIMINGS);
    core.start();
    let seen: ClockGap | undefined;
    core.gaps.onGap('probe', (g) => {
      seen = g;
      return {};
    });
    const pulse = pulseMs(TIMINGS);
    core.clock.advance(pulse); // the last reading
    // The loop was busy past the next pulse's due time, granted a claim, then stopped.
    const busyClaim = { wall: core.clock.now() + pulse + 200, mono: core.clock.monotonic() + pulse + 200 };
    await core.clock.stall(60 * SEC);
    expect(seen).toMatchObject({ kind: 'stall', newFrom: core.clock.now(), to: core.clock.now(), sinceMono: core.clock.monotonic() });
    expect(recordedAfter(seen!, busyClaim)).toBe(false);
    expect(recordedAfter(seen!, { wall: core.clock.now(), mono: core.clock.monotonic() })).toBe(true);
  });
});

describe('a stall of the server while agents keep talking (decision logic)', () => {
  it('nothing expires: a heartbeat that waited in the socket counts, the silent instance gets its time back, locks move', async () => {
    core = makeTestCore(TIMINGS);
    core.start();
    const talking = onlineInstance(core, 'dev', 'talking');
    const quiet = onlineInstance(core, 'dev', 'quiet');
    core.tasks.create({ title: 'a', role: 'dev' }, { actor: 't' });
    core.tasks.create({ title: 'b', role: 'dev' }, { actor: 't' });
    const a = core.locks.claim({ instanceId: talking });
    core.locks.claim({ instanceId: quiet });
    core.clock.advance(55 * SEC);
    core.instances.heartbeat(talking);
    core.instances.heartbeat(quiet);
    core.clock.advance(4 * SEC);
    // 125 s away: past the heartbeat timeout, past the sweep. The sweep's timer fires late,
    // before the socket is read; the heartbeat sent during the stall is read after it.
    let sweptBeforeIo = false;
    const expiries = () => core.db.prepare(`SELECT count(*) AS n FROM audit WHERE type IN ('lock.expire', 'instance.offline')`).pluck().get();
    await core.clock.stall(125 * SEC, () => {
      sweptBeforeIo = expiries() !== 0;
      core.instances.heartbeat(talking);
    });
    expect(sweptBeforeIo).toBe(false);
    expect(expiries()).toBe(0);
    expect(core.instances.get(talking).status).toBe('online');
    expect(core.instances.get(quiet).status).toBe('online');
    // The lock kept its remaining time: claimed 59 s before the stall, 600 s window.
    const left = Date.parse(core.tasks.get(a.task!.id).lock!.expiresAt) - core.clock.now();
    expect(left).toBeGreaterThanOrEqual(600 * SEC - 59 * SEC - pulseMs(TIMINGS));
    // Measured from the last reading, up to a pulse before the stall: over-shifted by less than a
    // pulse at most (harmless), never under-shifted by more than one.
    expect(left).toBeLessThanOrEqual(600 * SEC - 59 * SEC + pulseMs(TIMINGS));
    expect(jumps()).toHaveLength(1);
    // The quiet one now has a fresh heartbeat window from the wake-up, no more.
    core.clock.advance(125 * SEC);
    expect(core.instances.get(quiet).status).toBe('offline');
    expect(core.instances.get(talking).status).toBe('offline'); // it stopped talking too
  });

  it('deadline timers (the hub\'s) count only time the server was there; wake-up timers decide after the input', async () => {
    core = makeTestCore(TIMINGS);
    core.start();
    core.clock.advance(10 * SEC);
    const fired: string[] = [];
    core.gaps.deadlines.setTimeout(() => fired.push(`deadline at +${(core.clock.monotonic() - 10 * SEC) / SEC}`), 30 * SEC);
    core.gaps.wakeups.setTimeout(() => fired.push('wakeup'), 20 * SEC);
    core.clock.advance(10 * SEC);
    await core.clock.stall(60 * SEC, () => fired.push('input'));
    expect(fired).toEqual(['input', 'wakeup']);
    core.clock.advance(30 * SEC);
    // 10 s lived before the stall (the last reading was at +10 s), 20 s left after it.
    expect(fired).toEqual(['input', 'wakeup', 'deadline at +90']);
  });
});
