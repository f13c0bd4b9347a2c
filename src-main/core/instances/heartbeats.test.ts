/** Heartbeats held in memory and written in one commit (registry.ts, invariant 3). */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ClockGap } from '../time/gap-detector';
import { makeTestCore, onlineInstance, type TestCore } from '../tests/test-core';

let core: TestCore | undefined;
afterEach(() => {
  core?.close();
  core = undefined;
});

const stored = (c: TestCore, id: string) => (c.db.prepare('SELECT last_heartbeat_at AS at FROM instances WHERE id = ?').get(id) as { at: number }).at;

describe('heartbeats', () => {
  it('are shown at once, and written together in one commit within 15 s', () => {
    core = makeTestCore();
    const ids = ['a', 'b', 'c'].map((n) => onlineInstance(core!, 'dev', n));
    const before = ids.map((id) => stored(core!, id));
    core.clock.advance(2000);
    for (const id of ids) core.instances.heartbeat(id);
    const at = core.clock.now();
    expect(ids.map((id) => stored(core!, id))).toEqual(before);
    expect(ids.map((id) => Date.parse(core!.instances.get(id).lastHeartbeatAt))).toEqual([at, at, at]);
    const writes = vi.spyOn(core.store, 'write');
    core.clock.advance(15_000);
    expect(writes).toHaveBeenCalledTimes(1);
    expect(ids.map((id) => stored(core!, id))).toEqual([at, at, at]);
  });

  it('are written before anything decides on silence, so a beat held in memory is never taken for silence', () => {
    core = makeTestCore({ heartbeatTimeoutS: 120 });
    const id = onlineInstance(core, 'dev', 'a');
    core.clock.advance(119_000);
    core.instances.heartbeat(id);
    core.clock.advance(5_000); // the beat is still in memory (its write is due 15 s after it)
    expect(core.instances.silentSince(core.clock.now() - 120_000, 10)).toEqual([]);
    expect(core.instances.get(id).status).toBe('online');
  });

  it('of an instance that is not online are refused and not held', () => {
    core = makeTestCore();
    const id = onlineInstance(core, 'dev', 'a');
    core.instances.goOffline(id, 'heartbeat_timeout');
    expect(() => core!.instances.heartbeat(id)).toThrow(expect.objectContaining({ code: 'forbidden' }));
    expect(() => core!.instances.heartbeat('inst_nobody')).toThrow(expect.objectContaining({ code: 'not_found' }));
  });

  it('held when a gap moves liveness times are written first, then moved with the others', () => {
    core = makeTestCore({ heartbeatTimeoutS: 120 });
    const id = onlineInstance(core, 'dev', 'a');
    core.clock.advance(10_000);
    core.instances.heartbeat(id);
    const beat = core.clock.now();
    // The wall clock stepped back an hour just after the beat: the beat was on the old timeline.
    const to = beat + 1 - 3_600_000;
    const gap: ClockGap = { kind: 'step_back', from: beat + 1, to, newFrom: to, gapMs: -3_600_000, loopGapMs: 0, stepMs: -3_600_000, sinceMono: 0, offsetBefore: 0, offsetAfter: -3_600_000, detectedBy: 'test' };
    core.instances.shiftForGap(gap);
    expect(stored(core, id)).toBeLessThan(beat);
  });
});
