/**
 * Managed agents with real processes, in a Gaffer running in this process: the HTTP API of
 * PROTOCOL §7, per_task and long_running agents doing work, a restart after kill -9 of the agent
 * process (and its command reaped), and a rolling command change.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ManagedAgent } from '../../common/managed-agents';
import { readPids, running, waitFor } from '../../cli/agent/testing/processes';
import { startLiveGaffer, type LiveGaffer } from '../tests/live-gaffer.testkit';
import { startManagedAgents, sourceRoot } from '.';

const root = sourceRoot();
const scripted = path.join(root, 'src-main', 'cli', 'agent', 'testing', 'scripted-command.mjs');
const gafferBin = path.join(root, 'scripts', 'gaffer.mjs');
const node = process.execPath;
const posix = process.platform !== 'win32';

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function gaffer(): Promise<LiveGaffer & { stopManaged(): Promise<void> }> {
  // The agents at Gaffer's own priority: at the default nice 10 a loaded 2-core CI machine took over 20 s to start one.
  const g = await startLiveGaffer({ config: { agentNice: 0 } });
  const managed = await startManagedAgents(g.core, g.server, { timing: { firstBackoffMs: 200 } });
  let stopped = false;
  const stopManaged = async () => {
    if (stopped) return;
    stopped = true;
    await managed.stop();
  };
  cleanups.push(async () => {
    await stopManaged();
    await g.close();
  });
  return Object.assign(g, { stopManaged });
}

async function untilProcess(g: LiveGaffer, id: string, pred: (a: ManagedAgent) => boolean, what: string, ms = 20_000): Promise<ManagedAgent> {
  let last: ManagedAgent | undefined;
  await waitFor(() => {
    last = g.core.managed.get(id);
    return pred(last);
  }, what, ms).catch((e: Error) => {
    throw new Error(`${e.message}; last seen: ${JSON.stringify(last?.processes)}`);
  });
  return last!;
}

describe.skipIf(!posix)('managed agents (real processes)', () => {
  it('HTTP API: create, read, change, control and delete — operator only, bad input refused naming the field', async () => {
    const g = await gaffer();
    const anonymous = await fetch(`${g.server.url}/api/v1/managed-agents`);
    expect(anonymous.status).toBe(401);
    const bad = await g.api('POST', '/managed-agents', { name: 'x', role: 'cmd', command: [] });
    expect(bad).toMatchObject({ status: 400, body: { error: { code: 'bad_request', message: expect.stringMatching(/command/) } } });
    const bad2 = await g.api('POST', '/managed-agents', { name: 'x', role: 'cmd', command: ['true'], env: { GAFFER_OPERATOR_TOKEN: 'x' } });
    expect(bad2.body.error.message).toMatch(/env/);
    expect((await g.api('GET', '/managed-agents')).body).toEqual({ items: [], next: null });

    const created = await g.api('POST', '/managed-agents', { name: 'workers', role: 'cmd', command: [node, scripted], instances: 2, reason: 'more hands' });
    expect(created.status).toBe(201);
    const a = created.body.managedAgent as ManagedAgent;
    expect(a).toMatchObject({ name: 'workers', mode: 'per_task', instances: 2, desired: 'running', supervised: true });
    await untilProcess(g, a.id, (m) => m.processes.filter((p) => p.status === 'running' && p.instanceId).length === 2, 'two instances online');
    const listed = (await g.api('GET', '/managed-agents')).body.items as ManagedAgent[];
    expect(listed.map((x) => x.name)).toEqual(['workers']);
    expect(listed[0]!.processes.map((p) => [p.instance, p.status])).toEqual([[1, 'running'], [2, 'running']]);
    expect(g.core.instances.list().map((i) => i.name).sort()).toEqual(['workers-1', 'workers-2']);

    const patched = await g.api('PATCH', '/managed-agents/workers', { instances: 1, reason: 'quiet day' });
    expect(patched.body.managedAgent.instances).toBe(1);
    await untilProcess(g, a.id, (m) => m.processes.length === 1, 'the second instance drained');

    const stopped = await g.api('POST', `/managed-agents/${a.id}/stop`, { reason: 'maintenance' });
    expect(stopped.body.managedAgent.desired).toBe('stopped');
    await untilProcess(g, a.id, (m) => m.processes.every((p) => p.status === 'stopped'), 'stopped');
    expect((await g.api('POST', `/managed-agents/${a.id}/start`, { instance: 1 })).body.error.code).toBe('invalid_transition');
    await g.api('POST', `/managed-agents/${a.id}/start`, { reason: 'back' });
    await untilProcess(g, a.id, (m) => m.processes[0]?.status === 'running', 'running again');
    expect((await g.api('POST', `/managed-agents/${a.id}/restart`, { instance: 3 })).status).toBe(400);

    const deleted = await g.api('DELETE', `/managed-agents/${a.id}?reason=done`);
    expect(deleted.status).toBe(200);
    expect((await g.api('GET', `/managed-agents/${a.id}`)).status).toBe(404);
    const audit = g.core.auditQuery.query({ subject: `managed:${a.id}`, limit: 100 }).items.filter((e) => e.actor === 'operator:http');
    expect(audit.map((e) => e.type)).toEqual(['managed_agent.create', 'managed_agent.update', 'managed_agent.stop', 'managed_agent.start', 'managed_agent.delete']);
    expect(audit.map((e) => (e.detail as { reason: string | null }).reason)).toEqual(['more hands', 'quiet day', 'maintenance', 'back', 'done']);
  });

  it('a per_task agent works tasks; after kill -9 of its process it is restarted and its orphaned command is reaped', async () => {
    const g = await gaffer();
    const done = g.createTask('quick', { codes: [0] }).id;
    const { id } = g.core.managed.create({ name: 'coder', role: 'cmd', command: [node, scripted] }, { actor: 'test' });
    await waitFor(() => g.task(done).status === 'done', 'the task done by the managed agent', 20_000);
    const first = await untilProcess(g, id, (m) => m.processes[0]?.status === 'running' && !!m.processes[0].instanceId, 'the agent online');
    const agentPid = first.processes[0]!.pid!;

    const pidFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gaffer-orphan-')), 'pids');
    const long = g.createTask('long', { family: pidFile, sleepMs: 300_000 }).id;
    const [child, grandchild] = await readPids(pidFile);
    process.kill(agentPid, 'SIGKILL');
    const after = await untilProcess(g, id, (m) => m.processes[0]?.status === 'running' && m.processes[0].pid !== agentPid && !!m.processes[0].instanceId, 'the restarted agent online');
    expect(after.processes[0]).toMatchObject({ restarts: 1, lastExit: { code: null, signal: 'SIGKILL' } });
    // The killed agent's command (and its grandchild) carried its marker and were reaped.
    await waitFor(() => !running(child) && !running(grandchild), 'the orphaned command to be reaped', 15_000);
    expect(g.task(long).status).not.toBe('done');
    expect(g.core.auditQuery.query({ subject: `managed:${id}`, type: 'managed_process.exit', limit: 10 }).items).toHaveLength(1);
  });

  it('a long_running agent gets GAFFER_URL and its token in a file it deletes once read (GAFFER_TOKEN_FILE; never the operator token); a command change rolls without a gap', async () => {
    const g = await gaffer();
    const t1 = g.createTask('one', { codes: [0] }).id;
    // The long-running command is an agent of its own: here, the command agent, configured from the environment it is given.
    const a = g.core.managed.create({ name: 'lr', role: 'cmd', mode: 'long_running', command: [node, gafferBin, 'agent', '--role', 'cmd', '--poll-s', '0.2', '--', node, scripted] }, { actor: 'test' });
    await waitFor(() => g.task(t1).status === 'done', 'the task', 30_000);
    const out = g.task(t1).output as { env: Record<string, string>; tokenSeen: boolean };
    expect(out.tokenSeen).toBe(false);
    expect(out.env.GAFFER_MANAGED_PROCESS).toMatch(new RegExp(`/${a.id}/1/`));
    const before = await untilProcess(g, a.id, (m) => !!m.processes[0]?.instanceId, 'online');
    const oldPid = before.processes[0]!.pid!;

    g.core.managed.update('lr', { command: [node, gafferBin, 'agent', '--role', 'cmd', '--poll-s', '0.2', '--name', 'lr-v2', '--', node, scripted] }, { actor: 'test' });
    const rolled = await untilProcess(g, a.id, (m) => m.processes.length === 1 && m.processes[0]!.pid !== oldPid && m.processes[0]!.status === 'running', 'the replacement alone', 30_000);
    expect(rolled.processes[0]).toMatchObject({ version: 2, restarts: 0 });
    expect(running(oldPid)).toBe(false);
    const t2 = g.createTask('two', { codes: [0] }).id;
    await waitFor(() => g.task(t2).status === 'done', 'a task after the roll', 30_000);
    expect(g.core.instances.list().find((i) => i.id === rolled.processes[0]!.instanceId)?.name).toBe('lr-v2');
  });

  it('a command that cannot be started is "failed" (not a crash loop) with the reason in its output', async () => {
    const g = await gaffer();
    const a = g.core.managed.create({ name: 'ghost', role: 'cmd', command: ['/nonexistent/claude', '-p', 'x'] }, { actor: 'test' });
    const m = await untilProcess(g, a.id, (x) => x.processes[0]?.status === 'failed', 'failed', 30_000);
    expect(m.processes[0]).toMatchObject({ restarts: 0, lastExit: { code: 78 } });
    expect(m.processes[0]!.recentOutput!.map((l) => l.text).join('\n')).toMatch(/cannot start the command: \/nonexistent\/claude does not exist \(ENOENT\)/);
    const lr = g.core.managed.create({ name: 'ghost-lr', role: 'cmd', mode: 'long_running', command: ['/nonexistent/agent'] }, { actor: 'test' });
    const m2 = await untilProcess(g, lr.id, (x) => x.processes[0]?.status === 'failed', 'failed', 30_000);
    expect(m2.processes[0]!.recentOutput!.map((l) => l.text).join('\n')).toMatch(/cannot start \/nonexistent\/agent: ENOENT/);
  });
});
