import { afterEach, describe, expect, it } from 'vitest';
import type { ConsoleApi, ConsoleArgs, ConsoleMethod, ConsoleResult } from '../../../src-main/common/console-api';
import type { ManagedAgent } from '../../../src-main/common/managed-agents';
import { FakeConsoleApi, ManualTimers } from '../../testing/fake-console-api';
import { createConsoleStore, type ConsoleStore } from '../console-store';

const settle = async (n = 8) => {
  for (let i = 0; i < n; i++) await new Promise<void>((r) => setImmediate(r));
};

const agent = (id: string, extra: Partial<ManagedAgent> = {}): ManagedAgent =>
  ({ id, name: id.replace('mgd_', ''), role: 'dev', command: ['true'], mode: 'per_task', instances: 1, cwd: null, env: {}, timeoutS: null, shell: false, parse: null, desired: 'running', version: 1, createdAt: '', updatedAt: '', updatedBy: 'operator:browser', tokenId: null, supervised: true, processes: [], ...extra }) as ManagedAgent;

/** The fake console API plus the managed-agent methods; `holdGet` delays one agent's detail. */
class ManagedFake extends FakeConsoleApi {
  agents: ManagedAgent[] = [agent('mgd_a'), agent('mgd_b')];
  held = new Map<string, Array<() => void>>();
  override async call<M extends ConsoleMethod>(method: M, args: ConsoleArgs<M>): Promise<ConsoleResult<M>> {
    if (!method.startsWith('managedAgents.')) return super.call(method, args);
    this.calls.push({ method, args });
    const a = args as { id?: string; action?: string };
    const gate = this.held.get(`${method}:${a.id ?? ''}`);
    if (gate) await new Promise<void>((r) => gate.push(r));
    await Promise.resolve();
    const found = () => {
      const x = this.agents.find((g) => g.id === a.id);
      if (!x) throw Object.assign(new Error('no such agent'), { body: { code: 'not_found', message: 'no such agent', status: 404 } });
      return x;
    };
    switch (method) {
      case 'managedAgents.list':
        return this.agents as never;
      case 'managedAgents.get':
        return found() as never;
      case 'managedAgents.control': {
        const x = found();
        x.desired = a.action === 'stop' ? 'stopped' : 'running';
        return { ...x } as never;
      }
      case 'managedAgents.delete':
        return found() as never;
      default:
        throw new Error(`not in the fake: ${method}`);
    }
  }
  holdAnswer(key: string): () => void {
    const waiting: Array<() => void> = [];
    this.held.set(key, waiting);
    return () => {
      this.held.delete(key);
      waiting.splice(0).forEach((w) => w());
    };
  }
}

let made: ConsoleStore[] = [];
function setup() {
  const timers = new ManualTimers();
  const api = new ManagedFake({ now: timers.now });
  const cs = createConsoleStore(api as unknown as ConsoleApi, { timers, now: timers.now, liveIntervalMs: 250, refreshIntervalMs: 1000, safetyRefreshMs: 600_000 });
  made.push(cs);
  return { api, timers, s: () => cs.store.getState(), a: cs.actions };
}
afterEach(() => {
  made.forEach((m) => m.dispose());
  made = [];
});

describe('managed-agents slice', () => {
  it('loads when watched; managed.changed events refresh the list and the selected agent once per burst', async () => {
    const { api, a, s, timers } = setup();
    a.start();
    a.watch('managed');
    a.selectManagedAgent('mgd_a');
    await settle();
    expect(s().managedAgents.data?.map((x) => x.id)).toEqual(['mgd_a', 'mgd_b']);
    expect(s().managedDetail.data?.id).toBe('mgd_a');
    const before = { list: api.countCalls('managedAgents.list'), get: api.countCalls('managedAgents.get') };
    for (let i = 0; i < 50; i++) api.emit({ type: 'managed.changed', managedAgentId: 'mgd_a' });
    timers.advance(250);
    await settle();
    timers.advance(1000);
    await settle();
    expect(api.countCalls('managedAgents.list') - before.list).toBe(1);
    expect(api.countCalls('managedAgents.get') - before.get).toBe(1);
  });

  it('a slow answer for the agent no longer selected is dropped', async () => {
    const { api, a, s } = setup();
    const release = api.holdAnswer('managedAgents.get:mgd_a');
    a.selectManagedAgent('mgd_a');
    await settle();
    a.selectManagedAgent('mgd_b');
    await settle();
    release();
    await settle();
    expect(s().managedDetail.data?.id).toBe('mgd_b');
  });

  it('actions send the reason and the instance and show the answer; a failure is toasted and rethrown', async () => {
    const { api, a, s } = setup();
    a.selectManagedAgent('mgd_a');
    await settle();
    const r = await a.controlManagedAgent('mgd_a', 'stop', 'maintenance', 2);
    expect(r.desired).toBe('stopped');
    expect(api.calls).toContainEqual({ method: 'managedAgents.control', args: { id: 'mgd_a', action: 'stop', reason: 'maintenance', instance: 2 } });
    expect(s().managedDetail.data?.desired).toBe('stopped');
    await expect(a.deleteManagedAgent('mgd_zz', 'gone')).rejects.toMatchObject({ code: 'not_found' });
    expect(s().toasts.at(-1)).toMatchObject({ tone: 'error', title: 'Could not delete the managed agent', body: 'no such agent' });
  });
});
