/** `ctx.usage` coalesced per attempt (usage-coalescer.ts): fewer frames, the same totals, all in on flush. */
import { describe, expect, it } from 'vitest';
import type { UsageTotals } from '../common/logs';
import type { UsageInput } from './usage-coalescer';
import { UsageCoalescer } from './usage-coalescer';

/** A manual timeline: timers run when `advance` passes them. */
function manualTimers() {
  let now = 0;
  const timers: Array<{ at: number; fn: () => void; live: boolean }> = [];
  return {
    now: () => now,
    setTimer: (fn: () => void, ms: number) => {
      const t = { at: now + ms, fn, live: true };
      timers.push(t);
      return { cancel: () => void (t.live = false) };
    },
    async advance(ms: number) {
      now += ms;
      for (const t of timers.filter((x) => x.live && x.at <= now)) {
        t.live = false;
        t.fn();
      }
      for (let i = 0; i < 5; i++) await Promise.resolve();
    },
  };
}

/** Gaffer's side: sums increments, a final report sets the totals; answers the running total. */
function fakeGaffer() {
  const frames: UsageInput[] = [];
  const t = { inputTokens: 0, outputTokens: 0, costUsd: 0 };
  const send = async (u: UsageInput): Promise<UsageTotals> => {
    frames.push({ ...u });
    if (u.final) {
      t.inputTokens = u.inputTokens ?? t.inputTokens;
      t.outputTokens = u.outputTokens ?? t.outputTokens;
      t.costUsd = u.costUsd ?? t.costUsd;
    } else {
      t.inputTokens += u.inputTokens ?? 0;
      t.outputTokens += u.outputTokens ?? 0;
      t.costUsd += u.costUsd ?? 0;
    }
    return { ...t };
  };
  return { frames, totals: t, send };
}

describe('usage coalescer', () => {
  it('a burst of reports becomes a few frames with the same totals, all sent by flush before the report', async () => {
    const clock = manualTimers();
    const g = fakeGaffer();
    const c = new UsageCoalescer(g.send, clock);
    const replies: Array<Promise<UsageTotals>> = [];
    for (let i = 0; i < 100; i++) replies.push(c.report({ model: 'sonnet', inputTokens: 10, outputTokens: 1, estimated: true }));
    await clock.advance(0);
    // The reports of one turn went at once, as one frame; what comes next waits for the interval.
    expect(g.frames).toHaveLength(1);
    await clock.advance(100);
    for (let i = 0; i < 50; i++) replies.push(c.report({ model: 'sonnet', inputTokens: 10, outputTokens: 1, estimated: true }));
    await clock.advance(100);
    expect(g.frames).toHaveLength(1);
    await c.flush(); // the attempt ends: everything goes now, before the interval is out
    expect(g.frames).toEqual([
      { model: 'sonnet', inputTokens: 1000, outputTokens: 100, estimated: true },
      { model: 'sonnet', inputTokens: 500, outputTokens: 50, estimated: true },
    ]);
    expect(g.totals).toEqual({ inputTokens: 1500, outputTokens: 150, costUsd: 0 });
    // Each report settles with the total of the frame that carried it.
    expect(await replies[0]).toMatchObject({ inputTokens: 1000 });
    expect(await replies[149]).toMatchObject({ inputTokens: 1500 });
  });

  it('one frame per interval at most; a final report keeps its place; a given cost is never summed into a priced frame', async () => {
    const clock = manualTimers();
    const g = fakeGaffer();
    const c = new UsageCoalescer(g.send, clock);
    void c.report({ model: 'm', inputTokens: 1 });
    void c.report({ model: 'm', inputTokens: 2 });
    void c.report({ model: 'm', inputTokens: 5, costUsd: 0.5 });
    const fin = c.report({ inputTokens: 100, outputTokens: 10, costUsd: 2, final: true });
    void c.report({ model: 'm', inputTokens: 7 });
    await clock.advance(0);
    expect(g.frames).toHaveLength(1);
    await clock.advance(249);
    expect(g.frames).toHaveLength(1);
    await clock.advance(1);
    expect(g.frames).toHaveLength(2);
    await clock.advance(250);
    await clock.advance(250);
    expect(g.frames).toEqual([
      { model: 'm', inputTokens: 3 },
      { model: 'm', inputTokens: 5, costUsd: 0.5 },
      { inputTokens: 100, outputTokens: 10, costUsd: 2, final: true },
      { model: 'm', inputTokens: 7 },
    ]);
    expect(await fin).toEqual({ inputTokens: 100, outputTokens: 10, costUsd: 2 });
    expect(g.totals).toEqual({ inputTokens: 107, outputTokens: 10, costUsd: 2 });
  });

  it('a refused frame rejects every report it carried', async () => {
    const clock = manualTimers();
    const c = new UsageCoalescer(async () => Promise.reject(new Error('not_holder')), clock);
    const a = c.report({ inputTokens: 1 });
    const b = c.report({ inputTokens: 2 });
    const d = c.report({ inputTokens: 3 });
    await c.flush();
    await expect(a).rejects.toThrow('not_holder');
    await expect(b).rejects.toThrow('not_holder');
    await expect(d).rejects.toThrow('not_holder');
    expect(c.frames).toBe(1);
  });
});
