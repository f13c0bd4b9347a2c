import { describe, expect, it } from 'vitest';
import type { ConsoleApi, ConsoleEvent } from '../../../src-main/common/console-api';
import { COMMAND_AGENT_PARSE_FORMATS, type ManagedAgent, type ManagedProcess } from '../../../src-main/common/managed-agents';
import type { Timers } from '../../lib/debounce';
import { changedFields, emptyForm, formatUptime, formFromAgent, formToDefinition, parseEnv, replacesProcesses, summarise } from './logic';
import { createManagedStore } from './managed-slice';

const agent = (extra: Partial<ManagedAgent> = {}): ManagedAgent => ({
  id: 'mgd_1',
  name: 'coder',
  role: 'dev',
  command: ['claude', '-p', 'fix the bug'],
  mode: 'per_task',
  instances: 2,
  cwd: '/repo',
  env: { ANTHROPIC_API_KEY: 'sk=1' },
  timeoutS: 600,
  shell: false,
  parse: 'claude-stream-json',
  desired: 'running',
  version: 3,
  createdAt: '2026-11-30T08:00:00.000Z',
  updatedAt: '2026-11-30T08:00:00.000Z',
  updatedBy: 'operator:desktop',
  tokenId: 'tok_1',
  supervised: true,
  processes: [],
  ...extra,
});

const proc = (instance: number, status: ManagedProcess['status']): ManagedProcess => ({ instance, pid: 100 + instance, status, startedAt: null, restarts: 0, lastExit: null, instanceId: null, nextStartAt: null, message: null, version: 1 });

describe('the managed agent form', () => {
  it('round-trips a definition (arguments one per line, NAME=value lines, "=" inside values kept)', () => {
    const a = agent();
    const form = formFromAgent(a);
    expect(form.command).toBe('claude\n-p\nfix the bug');
    expect(form.env).toBe('ANTHROPIC_API_KEY=sk=1');
    const { definition, errors } = formToDefinition(form);
    expect(errors).toEqual({});
    expect(definition).toEqual({ name: 'coder', role: 'dev', command: ['claude', '-p', 'fix the bug'], mode: 'per_task', instances: 2, cwd: '/repo', env: { ANTHROPIC_API_KEY: 'sk=1' }, timeoutS: 600, shell: false, parse: 'claude-stream-json' });
  });

  it('names every field it refuses, in plain words', () => {
    const { definition, errors } = formToDefinition({ ...emptyForm(), name: 'bad name', role: '', command: '\n  \n', instances: '0', cwd: 'relative', env: 'NOEQUALS', mode: 'long_running', timeoutS: '60' });
    expect(definition).toBeNull();
    expect(Object.keys(errors).sort()).toEqual(['command', 'cwd', 'env', 'instances', 'name', 'role', 'timeoutS']);
    expect(errors.timeoutS).toMatch(/one run per task/);
    expect(parseEnv('# comment\nGAFFER_TOKEN=x').error).toMatch(/Gaffer sets GAFFER_TOKEN itself/);
  });

  it('a long-running agent drops the per-task options it does not use', () => {
    const { definition } = formToDefinition({ ...formFromAgent(agent()), mode: 'long_running', timeoutS: '', shell: true });
    expect(definition).toMatchObject({ mode: 'long_running', timeoutS: null, shell: false, parse: null });
  });

  it('a change is the fields that differ; only the instance count spares the running processes', () => {
    const a = agent();
    const next = { ...formToDefinition(formFromAgent(a)).definition!, instances: 4 };
    expect(changedFields(a, next)).toEqual({ instances: 4 });
    expect(replacesProcesses({ instances: 4 })).toBe(false);
    expect(replacesProcesses({ command: ['codex'] })).toBe(true);
  });

  it('offers the formats the command agent knows', () => {
    expect([...COMMAND_AGENT_PARSE_FORMATS]).toEqual(['claude-stream-json', 'codex-json', 'gemini-stream-json']);
  });
});

describe('summaries', () => {
  it('counts running instances and names the worst of the rest', () => {
    expect(summarise(agent({ processes: [proc(1, 'running'), proc(2, 'running')] }))).toEqual({ text: '2 of 2 running', tone: 'online' });
    expect(summarise(agent({ processes: [proc(1, 'running'), proc(2, 'crash_looping')] }))).toEqual({ text: '1 of 2 running · crash looping', tone: 'failed' });
    expect(summarise(agent({ processes: [proc(1, 'running'), proc(1, 'draining'), proc(2, 'running')] })).text).toBe('2 of 2 running');
    expect(summarise(agent({ desired: 'stopped' }))).toEqual({ text: 'Stopped', tone: 'offline' });
    expect(summarise(agent({ supervised: false })).text).toBe('Not run by this Gaffer');
  });

  it('formats uptime', () => {
    const t0 = Date.parse('2026-11-30T08:00:00Z');
    const at = (s: number) => formatUptime('2026-11-30T08:00:00Z', t0 + s * 1000);
    expect([at(5), at(300), at(3 * 3600 + 120), at(2 * 86400 + 3600), formatUptime(null, t0)]).toEqual(['5 s', '5 min', '3 h 2 min', '2 d 1 h', '—']);
  });
});

describe('the managed-agents store', () => {
  function fakeApi(agents: ManagedAgent[]) {
    const calls: Array<[string, unknown]> = [];
    const listeners = new Set<(e: ConsoleEvent) => void>();
    const api = {
      shell: 'browser',
      async call(method: string, args: unknown) {
        calls.push([method, args]);
        if (method === 'managedAgents.list') return agents;
        if (method === 'managedAgents.get') return agents.find((a) => a.id === (args as { id: string }).id);
        if (method === 'managedAgents.control') return { ...agents[0]!, desired: 'stopped' };
        throw Object.assign(new Error('no'), { body: { code: 'not_found', message: 'no such agent', status: 404 } });
      },
      subscribe(l: (e: ConsoleEvent) => void) {
        listeners.add(l);
        return () => listeners.delete(l);
      },
      exportAudit: async () => null,
    } as unknown as ConsoleApi;
    return { api, calls, emit: (e: ConsoleEvent) => listeners.forEach((l) => l(e)), listeners };
  }
  const manualTimers = () => {
    const pending: Array<{ fn: () => void; id: number }> = [];
    let seq = 0;
    const timers: Timers = {
      setTimeout: (fn: () => void) => (pending.push({ fn, id: ++seq }), seq),
      clearTimeout: (id: unknown) => {
        const i = pending.findIndex((p) => p.id === id);
        if (i >= 0) pending.splice(i, 1);
      },
    };
    return { timers, runAll: () => pending.splice(0).forEach((p) => p.fn()), pending };
  };
  const settle = () => new Promise((r) => setTimeout(r, 0));

  it('loads, follows managed.changed events, polls the selected agent, and stops when the view unmounts', async () => {
    const a = agent();
    const { api, calls, emit, listeners } = fakeApi([a]);
    const t = manualTimers();
    const m = createManagedStore(api, { timers: t.timers, now: () => 0, minIntervalMs: 0 });
    const stop = m.actions.start();
    await settle();
    expect(m.store.getState().list.data).toEqual([a]);
    m.actions.select('mgd_1');
    await settle();
    expect(m.store.getState().detail.data).toEqual(a);
    calls.length = 0;
    emit({ type: 'managed.changed', managedAgentId: 'mgd_1' });
    await settle();
    expect(calls.map((c) => c[0]).sort()).toEqual(['managedAgents.get', 'managedAgents.list']);
    calls.length = 0;
    t.runAll(); // the detail poll
    await settle();
    expect(calls.map((c) => c[0])).toEqual(['managedAgents.get']);
    stop();
    expect(listeners.size).toBe(0);
    expect(t.pending).toHaveLength(0);
  });

  it('actions send the reason and the instance, and update what is shown; failures reach the caller', async () => {
    const { api, calls } = fakeApi([agent()]);
    const m = createManagedStore(api, { timers: manualTimers().timers, now: () => 0, minIntervalMs: 0 });
    m.actions.select('mgd_1');
    await settle();
    const r = await m.actions.control('mgd_1', 'stop', 'maintenance', 2);
    expect(r.desired).toBe('stopped');
    expect(calls).toContainEqual(['managedAgents.control', { id: 'mgd_1', action: 'stop', reason: 'maintenance', instance: 2 }]);
    expect(m.store.getState().detail.data?.desired).toBe('stopped');
    await expect(m.actions.remove('mgd_1', 'gone')).rejects.toMatchObject({ code: 'not_found', message: 'no such agent' });
  });
});
