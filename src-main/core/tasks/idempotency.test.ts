/** The idempotency window against clock steps and restarts (manual clock; time travel in ms). */
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../common/clock';
import { createCore } from '../create-core';
import { makeTestCore, tempDir, type TestCore } from '../testing/test-core';

let core: TestCore | undefined;
afterEach(() => core?.close());

const MIN = 60_000;
const who = { actor: 'script' };
const body = { title: 'nightly report', role: 'dev', idempotencyKey: 'report-2026-11-30' };

describe('the 5-minute idempotency window is measured on monotonic time', () => {
  it('a +10 min wall-clock step does not shorten it: the retry returns the first task', () => {
    core = makeTestCore({ idempotencyWindowS: 300 });
    const first = core.tasks.create(body, who);
    core.clock.advance(MIN);
    core.clock.jump(10 * MIN);
    const retry = core.tasks.create(body, who);
    expect(retry).toMatchObject({ replayed: true, task: { id: first.task.id } });
    expect(core.tasks.list({}).items).toHaveLength(1);
  });

  it('a step back of an hour does not lengthen it: the key is free 5 minutes after it was first used', () => {
    core = makeTestCore({ idempotencyWindowS: 300 });
    const first = core.tasks.create(body, who);
    core.clock.jump(-60 * MIN);
    core.clock.advance(4 * MIN + 59_000);
    expect(core.tasks.create(body, who)).toMatchObject({ replayed: true, task: { id: first.task.id } });
    core.clock.advance(1000);
    const later = core.tasks.create(body, who);
    expect(later.replayed).toBe(false);
    expect(later.task.id).not.toBe(first.task.id);
  });

  it('across a restart the window follows the wall clock; a key from the "future" lives one window from the first sweep, not an hour', () => {
    const dir = tempDir();
    const clock = new ManualClock('2026-11-30T08:00:00.000Z');
    const a = createCore({ clock, dataDir: dir, config: { idempotencyWindowS: 300 } });
    const first = a.tasks.create(body, who);
    a.close();
    // Down for 2 minutes, then the wall clock is an hour behind (set back while Gaffer was down).
    clock.advance(2 * MIN);
    clock.jump(-60 * MIN);
    const b = createCore({ clock, dataDir: dir, config: { idempotencyWindowS: 300, sweepIntervalS: 60 } });
    core = Object.assign(b, { clock, dir }) as TestCore;
    b.start();
    expect(b.tasks.create(body, who)).toMatchObject({ replayed: true, task: { id: first.task.id } });
    clock.advance(11_000); // the post-restart sweep re-stamps the key at "now"
    clock.advance(5 * MIN);
    const again = b.tasks.create(body, who);
    expect(again.replayed).toBe(false);
  });
});
