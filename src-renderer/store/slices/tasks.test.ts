import { afterEach, describe, expect, it } from 'vitest';
import { BULK_CHUNK } from '../../../src-main/common/schemas';
import { FakeConsoleApi, ManualTimers } from '../../testing/fake-console-api';
import { createConsoleStore, type ConsoleStore } from '../console-store';

const settle = async (n = 8) => {
  for (let i = 0; i < n; i++) await new Promise<void>((r) => setImmediate(r));
};

let cs: ConsoleStore | undefined;
afterEach(() => cs?.dispose());

function setup() {
  const api = new FakeConsoleApi({ now: () => 1_800_000_000_000 });
  const timers = new ManualTimers();
  cs = createConsoleStore(api, { timers, now: timers.now, refreshIntervalMs: 0 });
  return { api, cs, state: () => cs!.store.getState() };
}

describe('tasks slice: the server-side search list', () => {
  it('asks the server for the filter (newest first) and drops an answer for a filter that was replaced', async () => {
    const { api, cs, state } = setup();
    for (let i = 1; i <= 5; i++) api.addTask({ title: i % 2 ? `billing ${i}` : `docs ${i}`, role: 'dev' });
    const release = api.hold('tasks.list');
    cs.actions.setTaskFilter({ q: 'billing' });
    await settle();
    cs.actions.setTaskFilter({ q: 'docs' });
    release();
    await settle(20);
    expect(state().taskList.filter).toEqual({ q: 'docs' });
    expect(state().taskList.items.map((t) => t.title)).toEqual(['docs 4', 'docs 2']);
    expect(state().taskList.total).toMatchObject({ count: 2, exact: true });
    const lists = api.calls.filter((c) => c.method === 'tasks.list').map((c) => c.args);
    expect(lists).toContainEqual(expect.objectContaining({ q: 'billing', order: 'desc' }));
  });

  it('a blank search is no search (not a request the server would refuse)', async () => {
    const { api, cs } = setup();
    api.addTask({ title: 'a', role: 'dev' });
    cs.actions.setTaskFilter({ q: '   ', role: 'dev' });
    await settle();
    const last = api.calls.filter((c) => c.method === 'tasks.list').at(-1)!.args as Record<string, unknown>;
    expect(last.q).toBeUndefined();
    expect(last.role).toBe('dev');
  });
});

describe('tasks slice: bulk actions', () => {
  it('ticked tasks go in chunks of at most BULK_CHUNK under one bulk id, and skipped ones are kept with why', async () => {
    const { api, cs, state } = setup();
    const ids: number[] = [];
    for (let i = 0; i < BULK_CHUNK + 30; i++) ids.push(api.addTask({ title: `t${i}`, role: 'dev' }).id);
    const done = api.addTask({ title: 'finished', role: 'dev', status: 'done' }).id;
    const run = await cs.actions.runBulk('cancel', { kind: 'ids', ids: [...ids, done] }, 'sprint cancelled');
    expect(run).toMatchObject({ status: 'done', total: ids.length + 1, changed: ids.length, skippedCount: 1, chunks: 2 });
    expect(run.skipped[0]).toMatchObject({ taskId: done, code: 'invalid_transition' });
    const calls = api.calls.filter((c) => c.method === 'tasks.bulk').map((c) => c.args as { ids: number[]; bulkId?: string; reason: string });
    expect(calls.map((c) => c.ids.length)).toEqual([BULK_CHUNK, 31]);
    expect(calls[0]!.bulkId).toBeUndefined();
    expect(calls[1]!.bulkId).toBe(run.bulkId);
    expect(new Set(calls.map((c) => c.reason))).toEqual(new Set(['sprint cancelled']));
    expect(state().bulk?.status).toBe('done');
  });

  it('over a filter: counts first (the total and the bound), then pages with after/through to the end', async () => {
    const { api, cs } = setup();
    for (let i = 0; i < BULK_CHUNK * 2 + 5; i++) api.addTask({ title: `import ${i}`, role: 'etl', status: 'failed' });
    api.addTask({ title: 'import but done', role: 'etl', status: 'done' });
    const run = await cs.actions.runBulk('backlog', { kind: 'filter', filter: { q: 'import', role: 'etl' } }, 'source back');
    expect(run).toMatchObject({ status: 'done', total: BULK_CHUNK * 2 + 5, changed: BULK_CHUNK * 2 + 5, skippedCount: 0, chunks: 3 });
    const count = api.calls.find((c) => c.method === 'tasks.count')!.args as Record<string, unknown>;
    expect(count).toEqual({ filter: { q: 'import', role: 'etl' }, action: 'backlog' });
    const calls = api.calls.filter((c) => c.method === 'tasks.bulk').map((c) => c.args as { after: number; through: number });
    expect(calls.map((c) => c.after)).toEqual([0, BULK_CHUNK, BULK_CHUNK * 2]);
    expect(new Set(calls.map((c) => c.through)).size).toBe(1);
  });

  it('stop takes effect between chunks: the chunk in flight finishes, no further call is made', async () => {
    const { api, cs, state } = setup();
    const ids: number[] = [];
    for (let i = 0; i < BULK_CHUNK * 3; i++) ids.push(api.addTask({ title: `t${i}`, role: 'dev' }).id);
    const release = api.hold('tasks.bulk');
    const running = cs.actions.runBulk('reprioritise', { kind: 'ids', ids }, 'rush', 9);
    await settle();
    expect(state().bulk).toMatchObject({ status: 'running', chunks: 0 });
    cs.actions.stopBulk();
    release();
    const run = await running;
    expect(run).toMatchObject({ status: 'stopped', changed: BULK_CHUNK, chunks: 1 });
    expect(api.countCalls('tasks.bulk')).toBe(1);
    expect(api.tasks.get(ids[0]!)!.priority).toBe(9);
    expect(api.tasks.get(ids[BULK_CHUNK]!)!.priority).toBe(0);
  });

  it('a failed chunk stops the action and says so; what was done stays counted', async () => {
    const { api, cs } = setup();
    const ids: number[] = [];
    for (let i = 0; i < BULK_CHUNK + 1; i++) ids.push(api.addTask({ title: `t${i}`, role: 'dev' }).id);
    const realCall = api.call.bind(api);
    let n = 0;
    api.call = (async (method: string, args: unknown) => {
      if (method === 'tasks.bulk' && ++n === 2) api.failNext('tasks.bulk', 'unavailable', 'disk full');
      return realCall(method as never, args as never);
    }) as typeof api.call;
    const run = await cs.actions.runBulk('cancel', { kind: 'ids', ids }, 'r');
    expect(run).toMatchObject({ status: 'failed', changed: BULK_CHUNK, error: { code: 'unavailable' } });
  });
});

describe('signals slice', () => {
  it('lists, sets and clears signals; a change refreshes the list', async () => {
    const { cs, state } = setup();
    cs.actions.watch('signals');
    await settle();
    expect(state().signals.list.data).toEqual({ items: [], more: false });
    await cs.actions.setSignal({ name: 'data-ready', key: '2026-12-01', reason: 'loaded' });
    await settle();
    expect(state().signals.list.data!.items.map((s) => `${s.name}/${s.key}`)).toEqual(['data-ready/2026-12-01']);
    await cs.actions.clearSignal({ name: 'data-ready', key: '2026-12-01', reason: 'wrong day' });
    await settle();
    expect(state().signals.list.data!.items).toEqual([]);
    await expect(cs.actions.clearSignal({ name: 'data-ready', key: '2026-12-01', reason: 'again' })).rejects.toMatchObject({ code: 'not_found' });
  });
});
