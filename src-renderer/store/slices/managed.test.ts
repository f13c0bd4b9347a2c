import { afterEach, describe, expect, it } from 'vitest';
import { ConsoleKit } from '../../testing/console-kit';
import { createConsoleStore, type ConsoleStore } from '../console-store';

const settle = async (n = 8) => {
  for (let i = 0; i < n; i++) await new Promise<void>((r) => setImmediate(r));
};

let made: Array<ConsoleStore | ConsoleKit> = [];
/** Two managed agents (`a` with two instances), made through the console as an operator would. */
async function setup() {
  const api = new ConsoleKit();
  const timers = api.timers;
  const ids: Record<string, string> = {};
  for (const [name, instances] of [['a', 2], ['b', 1]] as const) {
    ids[name] = (await api.call('managedAgents.create', { definition: { name, role: 'dev', command: ['true'], instances }, reason: 'test' })).id;
  }
  api.calls.length = 0;
  const cs = createConsoleStore(api, { timers, now: timers.now, liveIntervalMs: 250, refreshIntervalMs: 1000, safetyRefreshMs: 600_000 });
  made.push(cs, api);
  return { api, timers, ids: ids as { a: string; b: string }, s: () => cs.store.getState(), a: cs.actions };
}
afterEach(() => {
  made.forEach((m) => m.dispose());
  made = [];
});

describe('managed-agents slice', () => {
  it('loads when watched; managed.changed events refresh the list and the selected agent once per burst', async () => {
    const { api, ids, a, s, timers } = await setup();
    a.start();
    a.watch('managed');
    a.selectManagedAgent(ids.a);
    await settle();
    expect(s().managedAgents.data?.map((x) => x.name)).toEqual(['a', 'b']);
    expect(s().managedDetail.data?.id).toBe(ids.a);
    const before = { list: api.countCalls('managedAgents.list'), get: api.countCalls('managedAgents.get') };
    // 50 changes in the core, in one burst: one refresh of the list and of the selected agent.
    for (let i = 0; i < 50; i++) api.core.managed.update(ids.a, { instances: (i % 2) + 1, reason: `tune ${i}` }, { actor: 'operator:desktop' });
    timers.advance(250);
    await settle();
    timers.advance(1000);
    await settle();
    expect(api.countCalls('managedAgents.list') - before.list).toBe(1);
    expect(api.countCalls('managedAgents.get') - before.get).toBe(1);
  });

  it('a slow answer for the agent no longer selected is dropped', async () => {
    const { api, ids, a, s } = await setup();
    const release = api.hold('managedAgents.get', { id: ids.a });
    a.selectManagedAgent(ids.a);
    await settle();
    a.selectManagedAgent(ids.b);
    await settle();
    release();
    await settle();
    expect(s().managedDetail.data?.id).toBe(ids.b);
  });

  it('actions send the reason and the instance and show the answer; a failure is toasted and rethrown', async () => {
    const { api, ids, a, s } = await setup();
    a.selectManagedAgent(ids.a);
    await settle();
    const r = await a.controlManagedAgent(ids.a, 'stop', 'maintenance');
    expect(r.desired).toBe('stopped');
    expect(api.calls).toContainEqual({ method: 'managedAgents.control', args: { id: ids.a, action: 'stop', reason: 'maintenance' } });
    expect(s().managedDetail.data?.desired).toBe('stopped');
    // One instance: the console sends which, and the core refuses one the agent does not run (b runs one).
    await expect(a.controlManagedAgent(ids.b, 'restart', 'stuck', 3)).rejects.toMatchObject({ code: 'bad_request' });
    expect(api.calls.at(-1)).toEqual({ method: 'managedAgents.control', args: { id: ids.b, action: 'restart', reason: 'stuck', instance: 3 } });
    await expect(a.deleteManagedAgent('mgd_zz', 'gone')).rejects.toMatchObject({ code: 'not_found' });
    expect(s().toasts.at(-1)).toMatchObject({ tone: 'error', title: 'Could not delete the managed agent', body: expect.stringContaining('mgd_zz') });
  });
});
