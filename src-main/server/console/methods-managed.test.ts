import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CONSOLE_METHODS } from '../../common/console-api';
import { auditCount, stateDigest, type TestCore } from '../../core/tests/test-core';
import { coalesce, mapCoreEvent } from './events';
import type { ConsoleMethods } from './methods';
import { isManagedMethod, type ManagedMethod } from './methods-managed';
import { consoleUnderTest, expectRefusedUnchanged } from '../tests/methods.testkit';

const ACTOR = 'operator:desktop';
let core: TestCore;
let m: ConsoleMethods;

beforeEach(() => ({ core, m } = consoleUnderTest({ actor: ACTOR })));
afterEach(() => core.close());

const definition = { name: 'coder', role: 'dev', command: ['claude', '-p', 'x'] };
const digest = () => [stateDigest(core), JSON.stringify(core.db.prepare('SELECT * FROM managed_agents').all()), auditCount(core)].join('\n');

describe('managedAgents.* console methods', () => {
  it('create, change, control and delete through the console are audited with the console actor and the reason', async () => {
    const a = await m.call('managedAgents.create', { definition, reason: 'nightly fixes' });
    expect(a).toMatchObject({ name: 'coder', supervised: false, processes: [] });
    expect((await m.call('managedAgents.list', {})).map((x) => x.name)).toEqual(['coder']);
    await m.call('managedAgents.update', { id: a.id, patch: { instances: 2 }, reason: 'busy week' });
    await m.call('managedAgents.control', { id: 'coder', action: 'stop', reason: 'holiday' });
    expect((await m.call('managedAgents.get', { id: a.id })).desired).toBe('stopped');
    await m.call('managedAgents.delete', { id: a.id, reason: 'not needed' });
    const rows = core.auditQuery.query({ subject: `managed:${a.id}`, limit: 10 }).items;
    expect(rows.map((r) => [r.type, r.actor, (r.detail as { reason?: string }).reason])).toEqual([
      ['managed_agent.create', ACTOR, 'nightly fixes'],
      ['managed_agent.update', ACTOR, 'busy week'],
      ['managed_agent.stop', ACTOR, 'holiday'],
      ['managed_agent.delete', ACTOR, 'not needed'],
    ]);
  });

  const bad: Record<ManagedMethod, unknown[]> = {
    'managedAgents.list': [{ all: true }],
    'managedAgents.get': [{}, { id: '' }],
    'managedAgents.create': [{ definition, reason: ' ' }, { definition: { ...definition, command: [] }, reason: 'r' }, { definition: { ...definition, mode: 'long_running', shell: true }, reason: 'r' }],
    'managedAgents.update': [{ id: 'coder', patch: { instances: 2 }, reason: '' }, { id: 'coder', patch: {}, reason: 'r' }, { id: 'coder', patch: { instances: 99 }, reason: 'r' }],
    'managedAgents.delete': [{ id: 'coder', reason: '' }, { id: '', reason: 'r' }],
    'managedAgents.control': [{ id: 'coder', action: 'start', reason: '' }, { id: 'coder', action: 'reboot', reason: 'r' }, { id: 'coder', action: 'stop', instance: 0, reason: 'r' }],
  };

  it('has a bad-input case for every method', () => {
    expect(Object.keys(bad).sort()).toEqual(CONSOLE_METHODS.filter(isManagedMethod).sort());
  });

  for (const method of Object.keys(bad) as ManagedMethod[]) {
    it(`${method}: bad arguments → bad_request, nothing changed`, async () => {
      await m.call('managedAgents.create', { definition, reason: 'r' });
      for (const args of bad[method]) await expectRefusedUnchanged(m, core, digest, method, args);
    });
  }
});

describe('managed-agent events for the console', () => {
  it('a change is one managed.changed per agent per batch; entering a crash loop also raises an alert', () => {
    const changed = mapCoreEvent({ type: 'managed.changed', managedAgentId: 'mgd_1', action: 'exit' });
    expect(changed).toEqual([{ type: 'managed.changed', managedAgentId: 'mgd_1' }]);
    const looping = mapCoreEvent({ type: 'managed.changed', managedAgentId: 'mgd_1', action: 'crash_looping', message: 'coder instance 1 exited 5 times' });
    expect(looping[1]).toEqual({ type: 'alert', level: 'warning', title: 'Managed agent crash looping', body: 'coder instance 1 exited 5 times' });
    expect(coalesce([...changed, ...changed, { type: 'managed.changed', managedAgentId: 'mgd_2' }])).toEqual([
      { type: 'managed.changed', managedAgentId: 'mgd_1' },
      { type: 'managed.changed', managedAgentId: 'mgd_2' },
    ]);
  });
});
