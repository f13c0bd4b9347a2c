import { describe, expect, it } from 'vitest';
import { COMMAND_AGENT_PARSE_FORMATS, type ManagedAgent, type ManagedProcess } from '../../../src-main/common/managed-agents';
import { changedFields, emptyForm, formatUptime, formFromAgent, formToDefinition, parseEnv, replacesProcesses, summarise } from './logic';

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
  workspace: null,
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
    expect(definition).toEqual({ name: 'coder', role: 'dev', command: ['claude', '-p', 'fix the bug'], mode: 'per_task', instances: 2, cwd: '/repo', env: { ANTHROPIC_API_KEY: 'sk=1' }, timeoutS: 600, shell: false, parse: 'claude-stream-json', workspace: null });
  });

  it('a workspace: a git repository per run, with its options; round-trips, and is refused for a long-running agent or a relative path', () => {
    const workspace = { repo: '/srv/app', base: 'main', keep: 'always' as const, onRetry: 'fresh' as const, sandbox: true };
    const a = agent({ workspace });
    const form = formFromAgent(a);
    expect(form).toMatchObject({ workspace: '/srv/app', workspaceBase: 'main', workspaceKeep: 'always', workspaceOnRetry: 'fresh', workspaceSandbox: true });
    expect(formToDefinition(form).definition?.workspace).toEqual(workspace);
    expect(changedFields(a, formToDefinition({ ...form, workspace: '' }).definition!)).toEqual({ workspace: null });
    expect(formToDefinition({ ...form, workspace: 'repo' }).errors.workspace).toMatch(/absolute path/);
    expect(formToDefinition({ ...form, mode: 'long_running', timeoutS: '' }).errors.workspace).toMatch(/one run per task/);
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
