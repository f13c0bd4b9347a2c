// @vitest-environment happy-dom
import { act, renderHook } from '@testing-library/react';
import type { ReactNode } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import { ConsoleKit } from '../testing/console-kit';
import { createConsoleStore, type ConsoleStore } from './console-store';
import { ConsoleStoreProvider, useConsoleShallow, useWatch } from './react';

let made: Array<ConsoleStore | ConsoleKit> = [];
afterEach(() => {
  made.forEach((m) => m.dispose());
  made = [];
});

/** The store over the kit, started (live events on), and a wrapper that provides it. */
function mount() {
  const api = new ConsoleKit();
  const cs = createConsoleStore(api, { timers: api.timers, now: api.timers.now, liveIntervalMs: 250, refreshIntervalMs: 1000, safetyRefreshMs: 600_000 });
  made.push(cs, api);
  cs.actions.start();
  const wrapper = ({ children }: { children: ReactNode }) => <ConsoleStoreProvider value={cs}>{children}</ConsoleStoreProvider>;
  /** Lets the clock run `ms` (the hub's and the store's batches) and the answers arrive. */
  const pass = (ms: number) =>
    act(async () => {
      api.timers.advance(ms);
      for (let i = 0; i < 10; i++) await new Promise<void>((r) => setImmediate(r));
    });
  return { api, cs, wrapper, pass };
}

describe('the React binding: a view that watches a topic', () => {
  it('loads it while mounted, follows the core live, and stops watching when unmounted', async () => {
    const { api, cs, wrapper, pass } = mount();
    const view = renderHook(
      () => {
        useWatch('roles', 'dashboard');
        return useConsoleShallow((s) => s.dashboard.data?.roles.map((r) => `${r.role}:${r.ready}`) ?? null);
      },
      { wrapper },
    );
    await pass(0);
    expect(view.result.current).toEqual([]);
    expect(cs.store.getState().watched).toMatchObject({ roles: 1, dashboard: 1 });
    // The core changes: the view follows on its own.
    api.core.tasks.create({ title: 'write the report', role: 'reporter' }, { actor: 'operator:browser' });
    await pass(1000);
    expect(view.result.current).toEqual(['reporter:1']);
    view.unmount();
    expect(cs.store.getState().watched).toMatchObject({ roles: 0, dashboard: 0 });
    const calls = api.countCalls('dashboard.get');
    api.core.tasks.create({ title: 'another', role: 'reporter' }, { actor: 'operator:browser' });
    await pass(1000);
    expect(api.countCalls('dashboard.get')).toBe(calls);
  });
});
