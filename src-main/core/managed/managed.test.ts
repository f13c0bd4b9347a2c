/**
 * Managed agents in the core: definitions (validation, audit) and the supervisor driven by a fake
 * spawner and the ManualClock (backoff, crash looping, rolling replacement, tokens, reaping).
 * Real processes: server/managed/*.test.ts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { isGafferError } from '../../common/errors';
import { auditCount, makeTestCore, stateDigest, type TestCore } from '../tests/test-core';
import { RESTART_FIELDS, type RecordedProcess } from './definitions';
import type { LaunchedProcess, LaunchRequest, ProcessExit, ProcessSpawner } from './ports';

class FakeProcess implements LaunchedProcess {
  readonly startTicks = 'ticks';
  private outputFns: Array<(s: 'stdout' | 'stderr', t: string) => void> = [];
  private exitFns: Array<(e: ProcessExit) => void> = [];
  readonly stops: Array<{ killAfterMs: number; urgent: boolean }> = [];
  exited = false;
  constructor(
    readonly req: LaunchRequest,
    readonly pid: number | undefined,
  ) {}
  onOutput(fn: (s: 'stdout' | 'stderr', t: string) => void) {
    this.outputFns.push(fn);
  }
  onExit(fn: (e: ProcessExit) => void) {
    this.exitFns.push(fn);
  }
  stop(killAfterMs: number, urgent = false) {
    this.stops.push({ killAfterMs, urgent });
  }
  print(text: string) {
    for (const f of this.outputFns) f('stdout', text);
  }
  exit(code: number | null, signal: string | null = null, error?: string) {
    this.exited = true;
    for (const f of this.exitFns) f({ code, signal, ...(error ? { error } : {}) });
  }
}

class FakeSpawner implements ProcessSpawner {
  readonly launched: FakeProcess[] = [];
  readonly reapedRecords: RecordedProcess[][] = [];
  readonly reapedMarkers: string[] = [];
  private pid = 1000;
  launch(req: LaunchRequest): LaunchedProcess {
    const p = new FakeProcess(req, ++this.pid);
    this.launched.push(p);
    return p;
  }
  async reapLeftovers(records: readonly RecordedProcess[]) {
    this.reapedRecords.push([...records]);
    return records.length;
  }
  async reapMarker(marker: string) {
    this.reapedMarkers.push(marker);
    return 0;
  }
  running(): FakeProcess[] {
    return this.launched.filter((p) => !p.exited);
  }
  last(): FakeProcess {
    return this.launched[this.launched.length - 1]!;
  }
}

const cores: TestCore[] = [];
afterEach(() => {
  for (const c of cores.splice(0)) c.close();
});

async function setup(opts: { attach?: boolean } = {}) {
  const core = makeTestCore();
  cores.push(core);
  const spawner = new FakeSpawner();
  if (opts.attach !== false) await core.managed.attach({ spawner, agentUrl: 'ws://127.0.0.1:1/agent', ownerKey: 'owner' });
  const hello = (p: FakeProcess, name = p.req.name) => {
    const token = core.tokens.verify(p.req.token)!;
    core.events.emit({
      type: 'instance.changed',
      instance: { id: `inst_${p.pid}`, role: token.role!, name, version: null, status: 'online', connectedAt: '', lastHeartbeatAt: '', disconnectedAt: null, tokenId: token.id, heldTaskIds: [] },
    });
  };
  const flush = () => new Promise((r) => setImmediate(r));
  return { core, spawner, hello, flush, m: core.managed };
}

const spec = (extra: Record<string, unknown> = {}) => ({ name: 'coder', role: 'dev', command: ['claude', '-p', 'do it'], ...extra });
const statuses = (core: TestCore, name = 'coder') => core.managed.get(name).processes.map((p) => `${p.instance}:${p.status}`);

describe('managed agent definitions', () => {
  it('creates with defaults, audits every change with actor and reason, and never audits env values', async () => {
    const { core, m } = await setup({ attach: false });
    const a = m.create({ ...spec(), env: { ANTHROPIC_API_KEY: 'sk-secret' }, reason: 'nightly fixes' }, { actor: 'operator:http' });
    expect(a).toMatchObject({ name: 'coder', role: 'dev', mode: 'per_task', instances: 1, cwd: null, timeoutS: null, shell: false, parse: null, desired: 'running', version: 1, supervised: false, processes: [] });
    m.update('coder', { instances: 3, env: { ANTHROPIC_API_KEY: 'sk-other' }, reason: 'more' }, { actor: 'operator:desktop' });
    m.control('coder', 'restart', { actor: 'operator:desktop', reason: 'r', instance: 2 });
    m.control('coder', 'stop', { actor: 'operator:desktop', reason: 'holiday' });
    m.remove(a.id, { actor: 'operator:http', reason: 'gone' });
    const rows = core.auditQuery.query({ subject: `managed:${a.id}`, limit: 50 }).items;
    expect(rows.map((r) => [r.type, r.actor])).toEqual([
      ['managed_agent.create', 'operator:http'],
      ['managed_agent.update', 'operator:desktop'],
      ['managed_agent.restart', 'operator:desktop'],
      ['managed_agent.stop', 'operator:desktop'],
      ['managed_agent.delete', 'operator:http'],
    ]);
    expect(rows[1]!.detail).toEqual({ changed: { instances: { from: 1, to: 3 }, env: { from: { ANTHROPIC_API_KEY: '…' }, to: { ANTHROPIC_API_KEY: '…' } } }, reason: 'more' });
    expect(rows[2]!.detail).toEqual({ instance: 2, reason: 'r' });
    expect(JSON.stringify(rows)).not.toContain('sk-');
  });

  it('keeps a workspace (PROTOCOL §15) with its options; a change of it replaces the processes; null clears it', async () => {
    const { m } = await setup({ attach: false });
    const workspace = { repo: '/srv/app', base: 'main', keep: 'always', onRetry: 'fresh', sandbox: true };
    expect(m.create({ ...spec(), workspace }, { actor: 't' }).workspace).toEqual(workspace);
    expect(m.get('coder').workspace).toEqual(workspace);
    expect(m.update('coder', { workspace: null }, { actor: 't' }).workspace).toBeNull();
    expect(RESTART_FIELDS).toContain('workspace');
  });

  it('refuses bad input naming the field, and changes nothing', async () => {
    const { core, m } = await setup({ attach: false });
    m.create(spec(), { actor: 't' });
    const digest = () => [stateDigest(core), JSON.stringify(core.db.prepare('SELECT * FROM managed_agents').all()), auditCount(core)].join('\n');
    const before = digest();
    const refused = (f: () => unknown, field: RegExp) => {
      try {
        f();
      } catch (e) {
        expect(isGafferError(e) && e.code, String(e)).toBe('bad_request');
        expect((e as Error).message).toMatch(field);
        return;
      }
      throw new Error('not refused');
    };
    refused(() => m.create({ ...spec(), name: 'bad name' }, { actor: 't' }), /name/);
    refused(() => m.create({ ...spec({ name: 'x' }), command: [] }, { actor: 't' }), /command/);
    refused(() => m.create({ ...spec({ name: 'x' }), instances: 0 }, { actor: 't' }), /instances/);
    refused(() => m.create({ ...spec({ name: 'x' }), cwd: 'relative/dir' }, { actor: 't' }), /cwd/);
    refused(() => m.create({ ...spec({ name: 'x' }), env: { GAFFER_TOKEN: 'x' } }, { actor: 't' }), /env/);
    refused(() => m.create({ ...spec({ name: 'x' }), mode: 'long_running', timeoutS: 60 }, { actor: 't' }), /timeoutS/);
    refused(() => m.create({ ...spec({ name: 'x' }), parse: 'aider' }, { actor: 't' }), /parse/);
    refused(() => m.create({ ...spec({ name: 'x' }), extra: 1 }, { actor: 't' }), /extra/);
    refused(() => m.create({ ...spec({ name: 'x' }), workspace: { repo: 'relative' } }, { actor: 't' }), /workspace/);
    refused(() => m.create({ ...spec({ name: 'x' }), mode: 'long_running', workspace: { repo: '/srv/app' } }, { actor: 't' }), /workspace/);
    refused(() => m.update('coder', { name: 'renamed' }, { actor: 't' }), /name/);
    refused(() => m.update('coder', { mode: 'long_running', shell: true }, { actor: 't' }), /shell/);
    refused(() => m.update('coder', {}, { actor: 't' }), /nothing to change/);
    refused(() => m.control('coder', 'restart', { actor: 't', instance: 5 }), /instance must be from 1 to 1/);
    expect(() => m.create(spec(), { actor: 't' })).toThrow(/exists already/);
    expect(() => m.get('nope')).toThrow(/no managed agent/);
    expect(digest()).toEqual(before);
  });
});

describe('the supervisor', () => {
  it('starts each instance with a role-bound token it minted, and learns which instance each became', async () => {
    const { core, spawner, hello, m } = await setup();
    const a = m.create(spec({ instances: 2 }), { actor: 't' });
    expect(spawner.launched.map((p) => p.req.name)).toEqual(['coder-1', 'coder-2']);
    const token = core.tokens.verify(spawner.launched[0]!.req.token)!;
    expect(token).toMatchObject({ role: 'dev', name: 'managed agent coder' });
    expect(m.get('coder').tokenId).toBe(token.id);
    expect(spawner.launched[0]!.req.marker).toMatch(new RegExp(`^owner/${a.id}/1/\\d+$`));
    expect(statuses(core)).toEqual(['1:starting', '2:starting']);
    hello(spawner.launched[1]!);
    const view = m.get('coder').processes;
    expect(view[1]).toMatchObject({ status: 'running', instanceId: `inst_${spawner.launched[1]!.pid}`, pid: spawner.launched[1]!.pid });
    expect(core.db.prepare('SELECT instance, marker FROM managed_processes ORDER BY instance').all()).toEqual([
      { instance: 1, marker: spawner.launched[0]!.req.marker },
      { instance: 2, marker: spawner.launched[1]!.req.marker },
    ]);
  });

  it('restarts an exited process with exponential backoff, then says "crash looping" instead of spinning', async () => {
    const { core, spawner, m, flush } = await setup();
    m.create(spec(), { actor: 't' });
    const delays: number[] = [];
    for (let i = 0; i < 5; i++) {
      const p = spawner.last();
      core.clock.advance(100);
      p.exit(1);
      const next = Date.parse(m.get('coder').processes[0]!.nextStartAt!) - core.clock.now();
      delays.push(next);
      expect(m.get('coder').processes[0]!.status).toBe(i < 4 ? 'backoff' : 'crash_looping');
      core.clock.advance(next);
    }
    expect(delays).toEqual([1000, 2000, 4000, 8000, 300_000]);
    expect(spawner.launched).toHaveLength(6);
    expect(m.get('coder').processes[0]).toMatchObject({ status: 'starting', restarts: 5, lastExit: { code: 1, description: 'exit 1 after 100 ms' } });
    // A process that keeps running resets the count: the next exit waits 1 s again.
    core.clock.advance(10_000);
    expect(m.get('coder').processes[0]!.status).toBe('running');
    spawner.last().exit(null, 'SIGKILL');
    expect(Date.parse(m.get('coder').processes[0]!.nextStartAt!) - core.clock.now()).toBe(1000);
    await flush();
    expect(spawner.reapedMarkers).toHaveLength(6);
    const audit = core.auditQuery.query({ type: 'managed_process.crash_looping', limit: 10 }).items;
    expect(audit).toHaveLength(1);
  });

  it('editing a crash-looping agent starts the new definition at once, not after the loop\'s delay', async () => {
    const { core, spawner, m } = await setup();
    m.create(spec(), { actor: 't' });
    for (let i = 0; i < 5; i++) {
      core.clock.advance(100);
      spawner.last().exit(1);
      if (i < 4) core.clock.advance(Date.parse(m.get('coder').processes[0]!.nextStartAt!) - core.clock.now());
    }
    expect(m.get('coder').processes[0]!.status).toBe('crash_looping');
    const launched = spawner.launched.length;
    m.update('coder', { command: ['node', 'fixed.js'] }, { actor: 't' });
    expect(spawner.launched).toHaveLength(launched + 1);
    expect(spawner.last().req.definition.command).toEqual(['node', 'fixed.js']);
    expect(m.get('coder').processes[0]!.status).toBe('starting');
  });

  it('a crash loop raises a crash_looping inbox item at once, and it resolves itself once the agent keeps running', async () => {
    const { core, spawner, m } = await setup();
    const a = m.create(spec(), { actor: 't' });
    const open = () => core.inbox.list({ kind: 'crash_looping', state: 'all' }).items;
    for (let i = 0; i < 5; i++) {
      core.clock.advance(100);
      spawner.last().exit(1);
      // Raised on the exit that enters the loop, not before, and not again while it loops.
      expect(open()).toHaveLength(i < 4 ? 0 : 1);
      core.clock.advance(Date.parse(m.get('coder').processes[0]!.nextStartAt!) - core.clock.now());
    }
    expect(open()[0]).toMatchObject({ kind: 'crash_looping', severity: 'critical', subject: `managed:${a.id}`, state: 'open', title: 'Managed agent coder is crash looping' });
    expect(open()[0]!.detail).toContain('exited 5 times in a row');
    expect(core.inbox.counts()).toMatchObject({ open: 1, critical: 1 });
    // The sixth start keeps running: the cause is gone.
    core.clock.advance(10_000);
    expect(open()[0]).toMatchObject({ state: 'resolved', resolution: 'it has kept running since its last start' });
    expect(open()[0]!.resolvedAt).not.toBeNull();
    expect(core.inbox.counts().open).toBe(0);
    expect(core.auditQuery.query({ type: 'inbox.resolve', limit: 5 }).items).toHaveLength(1);
  });

  it('does not restart a command that cannot be started; a restart by the operator tries again', async () => {
    const { core, spawner, m } = await setup();
    m.create(spec(), { actor: 't' });
    spawner.last().exit(78);
    core.clock.advance(600_000);
    expect(spawner.launched).toHaveLength(1);
    expect(m.get('coder').processes[0]).toMatchObject({ status: 'failed', message: expect.stringMatching(/cannot be started.*not restarted until/) });
    m.control('coder', 'restart', { actor: 't', reason: 'installed claude' });
    expect(spawner.launched).toHaveLength(2);
    spawner.last().exit(null, null, 'ENOENT: spawn claude');
    expect(m.get('coder').processes[0]).toMatchObject({ status: 'failed', lastExit: { description: 'could not start: ENOENT: spawn claude' } });
  });

  it('a changed command rolls: the new process comes up first, then the old one is drained', async () => {
    const { spawner, hello, m } = await setup();
    m.create(spec({ timeoutS: 120 }), { actor: 't' });
    const old = spawner.last();
    hello(old);
    m.update('coder', { command: ['codex', 'exec', '--json'] }, { actor: 't' });
    const fresh = spawner.last();
    expect(fresh).not.toBe(old);
    expect(fresh.req.definition.command).toEqual(['codex', 'exec', '--json']);
    expect(old.stops).toEqual([]);
    expect(m.get('coder').processes[0]!.message).toMatch(/starting its replacement/);
    hello(fresh);
    expect(old.stops).toEqual([{ killAfterMs: (120 + 30) * 1000, urgent: false }]);
    expect(m.get('coder').processes.map((p) => `${p.instance}:${p.status}:${p.pid}`)).toEqual([`1:running:${fresh.pid}`, `1:draining:${old.pid}`]);
    old.exit(0);
    expect(m.get('coder').processes.map((p) => p.status)).toEqual(['running']);
    expect(m.get('coder').processes[0]!.version).toBe(2);
  });

  it('a replacement that fails leaves the old process running, and is retried', async () => {
    const { core, spawner, hello, m } = await setup();
    m.create(spec(), { actor: 't' });
    const old = spawner.last();
    hello(old);
    m.update('coder', { command: ['broken'] }, { actor: 't' });
    spawner.last().exit(2);
    expect(old.stops).toEqual([]);
    expect(m.get('coder').processes[0]).toMatchObject({ status: 'running', pid: old.pid });
    core.clock.advance(1000);
    const retried = spawner.last();
    expect(retried.req.definition.command).toEqual(['broken']);
    core.clock.advance(10_000); // keeps running: up without a hello
    expect(old.stops).toHaveLength(1);
    expect(m.get('coder').processes[0]).toMatchObject({ pid: retried.pid, status: 'running' });
  });

  it('instances: more adds processes, fewer drains the extra ones, nobody else restarts', async () => {
    const { spawner, m } = await setup();
    m.create(spec(), { actor: 't' });
    m.update('coder', { instances: 3 }, { actor: 't' });
    expect(spawner.launched.map((p) => p.req.instance)).toEqual([1, 2, 3]);
    m.update('coder', { instances: 1 }, { actor: 't' });
    expect(spawner.launched[0]!.stops).toEqual([]);
    expect(spawner.launched[1]!.stops).toHaveLength(1);
    expect(spawner.launched[2]!.stops).toHaveLength(1);
    spawner.launched[1]!.exit(0);
    spawner.launched[2]!.exit(0);
    expect(m.get('coder').processes.map((p) => `${p.instance}:${p.status}`)).toEqual(['1:starting']);
    expect(spawner.launched).toHaveLength(3);
  });

  it('stop / start / restart the whole agent or one instance', async () => {
    const { core, spawner, hello, m } = await setup();
    m.create(spec({ instances: 2 }), { actor: 't' });
    m.control('coder', 'stop', { actor: 't', reason: 'r', instance: 2 });
    expect(spawner.launched[1]!.stops).toHaveLength(1);
    spawner.launched[1]!.exit(0);
    core.clock.advance(600_000);
    expect(statuses(core)).toEqual(['1:running', '2:stopped']);
    expect(m.get('coder').processes[1]!.message).toBe('this instance was stopped by the operator');
    m.control('coder', 'start', { actor: 't', reason: 'r', instance: 2 });
    expect(spawner.launched).toHaveLength(3);
    hello(spawner.launched[2]!);
    m.control('coder', 'restart', { actor: 't', reason: 'r', instance: 1 });
    expect(spawner.launched[3]!.req.instance).toBe(1);
    m.control('coder', 'stop', { actor: 't', reason: 'r' });
    expect(m.get('coder').desired).toBe('stopped');
    for (const p of spawner.running()) p.exit(0);
    expect(statuses(core)).toEqual(['1:stopped', '2:stopped']);
    expect(() => m.control('coder', 'start', { actor: 't', instance: 1 })).toThrow(/start the agent/);
    m.control('coder', 'start', { actor: 't', reason: 'r' });
    expect(spawner.running()).toHaveLength(2);
  });

  it('a role change mints a new token; the old one is revoked once no process uses it', async () => {
    const { core, spawner, hello, m } = await setup();
    m.create(spec(), { actor: 't' });
    const old = spawner.last();
    hello(old);
    const oldToken = core.tokens.verify(old.req.token)!;
    m.update('coder', { role: 'review' }, { actor: 't' });
    const fresh = spawner.last();
    expect(core.tokens.verify(fresh.req.token)).toMatchObject({ role: 'review' });
    hello(fresh);
    expect(core.tokens.verify(old.req.token)).toBeDefined();
    old.exit(0);
    expect(core.tokens.verify(old.req.token)).toBeUndefined();
    expect(core.tokens.list().find((t) => t.id === oldToken.id)!.revokedAt).not.toBeNull();
  });

  it('delete stops the processes and revokes the token once they are gone', async () => {
    const { core, spawner, m } = await setup();
    m.create(spec(), { actor: 't' });
    const p = spawner.last();
    m.remove('coder', { actor: 't', reason: 'r' });
    expect(p.stops).toHaveLength(1);
    expect(core.tokens.verify(p.req.token)).toBeDefined();
    p.exit(0);
    expect(core.tokens.verify(p.req.token)).toBeUndefined();
    expect(m.list()).toEqual([]);
  });

  it('detach stops everything urgently and waits; the next attach reaps what was left and mints new tokens', async () => {
    const { core, spawner, m } = await setup();
    m.create(spec({ instances: 2 }), { actor: 't' });
    const [a, b] = spawner.launched as [FakeProcess, FakeProcess];
    let detached = false;
    const done = m.detach().then(() => (detached = true));
    expect(a.stops).toEqual([{ killAfterMs: 15_000, urgent: true }]);
    a.exit(0);
    await Promise.resolve();
    expect(detached).toBe(false);
    b.exit(null, 'SIGKILL');
    await done;
    expect(core.tokens.verify(a.req.token)).toBeUndefined();
    expect(core.db.prepare('SELECT count(*) AS n FROM managed_processes').get()).toEqual({ n: 0 });

    // A Gaffer killed with -9 leaves its ledger: the next start reaps it first.
    core.db.prepare('INSERT INTO managed_processes (pgid, managed_id, instance, marker, start_ticks, started_at) VALUES (4242, ?, 1, ?, ?, 0)').run(m.get('coder').id, 'owner/x/1/1', '99');
    const next = new FakeSpawner();
    await m.attach({ spawner: next, agentUrl: 'ws://127.0.0.1:2/agent', ownerKey: 'owner' });
    expect(next.reapedRecords).toEqual([[{ pgid: 4242, managedId: m.get('coder').id, instance: 1, marker: 'owner/x/1/1', startTicks: '99', startedAt: 0 }]]);
    expect(next.launched).toHaveLength(2);
    expect(next.launched[0]!.req.agentUrl).toBe('ws://127.0.0.1:2/agent');
    expect(core.tokens.verify(next.launched[0]!.req.token)).toBeDefined();
    expect(core.db.prepare('SELECT pgid FROM managed_processes ORDER BY pgid').all()).toEqual(next.launched.map((p) => ({ pgid: p.pid })));
  });

  it('keeps recent output per instance', async () => {
    const { spawner, m } = await setup();
    m.create(spec(), { actor: 't' });
    spawner.last().print('[task 3 #1] stdout | hello');
    expect(m.get('coder').processes[0]!.recentOutput).toEqual([{ at: expect.any(String), stream: 'stdout', text: '[task 3 #1] stdout | hello' }]);
    expect(m.list()[0]!.processes[0]!.recentOutput).toBeUndefined();
  });
});
