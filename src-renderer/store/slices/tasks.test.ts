import { afterEach, describe, expect, it } from 'vitest';
import { BULK_CHUNK } from '../../../src-main/common/schemas';
import { ConsoleKit } from '../../testing/console-kit';
import { createConsoleStore, type ConsoleStore } from '../console-store';

const settle = async (n = 8) => {
  for (let i = 0; i < n; i++) await new Promise<void>((r) => setImmediate(r));
};

let cs: ConsoleStore | undefined;
let kit: ConsoleKit | undefined;
afterEach(() => {
  cs?.dispose();
  kit?.dispose();
});

const OPERATOR = { actor: 'operator:browser' };

function setup() {
  const api = (kit = new ConsoleKit());
  cs = createConsoleStore(api, { timers: api.timers, now: api.timers.now, refreshIntervalMs: 0 });
  /** Tasks made in one transaction (the operator's way, through the core). */
  const addTasks = (n: number, make: (i: number) => { title: string; role: string }): number[] =>
    api.core.store.write(() => Array.from({ length: n }, (_, i) => api.core.tasks.create(make(i), OPERATOR).task.id));
  return { api, core: api.core, cs, addTasks, state: () => cs!.store.getState() };
}

describe('tasks slice: the server-side search list', () => {
  it('asks the server for the filter (newest first) and drops an answer for a filter that was replaced', async () => {
    const { api, cs, addTasks, state } = setup();
    addTasks(5, (i) => ({ title: (i + 1) % 2 ? `billing ${i + 1}` : `docs ${i + 1}`, role: 'dev' }));
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
    const { api, cs, addTasks } = setup();
    addTasks(1, () => ({ title: 'a', role: 'dev' }));
    cs.actions.setTaskFilter({ q: '   ', role: 'dev' });
    await settle();
    const last = api.calls.filter((c) => c.method === 'tasks.list').at(-1)!.args as Record<string, unknown>;
    expect(last.q).toBeUndefined();
    expect(last.role).toBe('dev');
  });
});

describe('tasks slice: bulk actions', () => {
  it('ticked tasks go in chunks of at most BULK_CHUNK under one bulk id, and skipped ones are kept with why', async () => {
    const { api, core, cs, addTasks, state } = setup();
    const ids = addTasks(BULK_CHUNK + 30, (i) => ({ title: `t${i}`, role: 'dev' }));
    const done = addTasks(1, () => ({ title: 'finished', role: 'dev' }))[0]!;
    core.tasks.cancel({ taskId: done, reason: 'not needed', ...OPERATOR });
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
    const { api, core, cs, addTasks } = setup();
    addTasks(BULK_CHUNK + 5, (i) => ({ title: `import ${i}`, role: 'etl' }));
    const [gone] = addTasks(1, () => ({ title: 'import but cancelled', role: 'etl' }));
    core.tasks.cancel({ taskId: gone!, reason: 'not needed', ...OPERATOR });
    addTasks(3, (i) => ({ title: `export ${i}`, role: 'etl' }));
    const run = await cs.actions.runBulk('cancel', { kind: 'filter', filter: { q: 'import', role: 'etl' } }, 'source gone');
    expect(run).toMatchObject({ status: 'done', total: BULK_CHUNK + 5, changed: BULK_CHUNK + 5, skippedCount: 0, chunks: 2 });
    const count = api.calls.find((c) => c.method === 'tasks.count')!.args as Record<string, unknown>;
    expect(count).toEqual({ filter: { q: 'import', role: 'etl' }, action: 'cancel' });
    const calls = api.calls.filter((c) => c.method === 'tasks.bulk').map((c) => c.args as { after: number; through: number });
    expect(calls.map((c) => c.after)).toEqual([0, BULK_CHUNK]);
    expect(new Set(calls.map((c) => c.through)).size).toBe(1);
  });

  it('stop takes effect between chunks: the chunk in flight finishes, no further call is made', async () => {
    const { api, core, cs, addTasks, state } = setup();
    const ids = addTasks(BULK_CHUNK + 1, (i) => ({ title: `t${i}`, role: 'dev' }));
    const release = api.hold('tasks.bulk');
    const running = cs.actions.runBulk('reprioritise', { kind: 'ids', ids }, 'rush', 9);
    await settle();
    expect(state().bulk).toMatchObject({ status: 'running', chunks: 0 });
    cs.actions.stopBulk();
    release();
    const run = await running;
    expect(run).toMatchObject({ status: 'stopped', changed: BULK_CHUNK, chunks: 1 });
    expect(api.countCalls('tasks.bulk')).toBe(1);
    expect(core.tasks.get(ids[0]!).priority).toBe(9);
    expect(core.tasks.get(ids[BULK_CHUNK]!).priority).toBe(0);
  });

  it('a failed chunk stops the action and says so; what was done stays counted', async () => {
    const { api, core, cs, addTasks } = setup();
    const ids = addTasks(BULK_CHUNK + 1, (i) => ({ title: `t${i}`, role: 'dev' }));
    api.dropNext('tasks.bulk', { skip: 1 });
    const run = await cs.actions.runBulk('cancel', { kind: 'ids', ids }, 'r');
    expect(run).toMatchObject({ status: 'failed', changed: BULK_CHUNK, error: { code: 'unavailable' } });
    expect(core.tasks.get(ids.at(-1)!).status).toBe('backlog');
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
