import { describe, expect, it } from 'vitest';
import { ManualTimers } from '../testing/manual-timers';
import { createLoader, emptyResource, type Resource } from './resource';

const tick = () => new Promise<void>((r) => setImmediate(r));

describe('resource loader', () => {
  function setup(minIntervalMs = 0) {
    const t = new ManualTimers();
    let res: Resource<number> = emptyResource();
    let n = 0;
    let release: (() => void) | null = null;
    let gated = false;
    const loader = createLoader<number>({
      fetch: async () => {
        n++;
        if (gated) await new Promise<void>((r) => (release = r));
        return n;
      },
      get: () => res,
      set: (r) => (res = r),
      now: t.now,
      timers: t,
      minIntervalMs,
    });
    return { t, loader, get: () => res, calls: () => n, gate: (g: boolean) => (gated = g), release: () => release?.() };
  }

  it('never runs two fetches at once; a burst during one becomes one more', async () => {
    const s = setup();
    s.gate(true);
    const p = s.loader.refresh();
    for (let i = 0; i < 50; i++) void s.loader.refresh();
    expect(s.calls()).toBe(1);
    expect(s.get().loading).toBe(true);
    s.gate(false);
    s.release();
    await p;
    expect(s.calls()).toBe(2);
    expect(s.get()).toMatchObject({ data: 2, loading: false, error: null });
  });

  it('spaces invalidations by the minimum interval', async () => {
    const s = setup(1000);
    await s.loader.refresh();
    expect(s.calls()).toBe(1);
    s.loader.invalidate();
    s.loader.invalidate();
    await tick();
    expect(s.calls()).toBe(1);
    s.t.advance(1000);
    await tick();
    expect(s.calls()).toBe(2);
  });

  it('keeps the last data when a refresh fails', async () => {
    const t = new ManualTimers();
    let res: Resource<string> = emptyResource();
    let fail = false;
    const loader = createLoader<string>({
      fetch: async () => {
        if (fail) throw Object.assign(new Error('gone'), { code: 'network' });
        return 'ok';
      },
      get: () => res,
      set: (r) => (res = r),
      now: t.now,
      timers: t,
    });
    await loader.refresh();
    fail = true;
    await loader.refresh();
    expect(res.data).toBe('ok');
    expect(res.error).toMatchObject({ code: 'network', message: 'gone' });
  });

  it('a refresh that brings the same data back keeps the data held (nothing reading it re-renders); a change replaces only what changed', async () => {
    const t = new ManualTimers();
    type Rows = { items: { id: number; title: string }[] };
    let res: Resource<Rows> = emptyResource();
    let title = 'b';
    const loader = createLoader<Rows>({
      fetch: () => Promise.resolve({ items: [{ id: 1, title: 'a' }, { id: 2, title }] }),
      get: () => res,
      set: (r) => (res = r),
      now: t.now,
      timers: t,
    });
    await loader.refresh();
    const first = res.data!;
    await loader.refresh();
    expect(res.data).toBe(first);
    title = 'B';
    await loader.refresh();
    expect(res.data).not.toBe(first);
    expect(res.data!.items[0]).toBe(first.items[0]);
    expect(res.data!.items[1]).toEqual({ id: 2, title: 'B' });
  });
});
