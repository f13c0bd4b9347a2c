/**
 * `gaffer mcp` end to end: the MCP SDK's own client starts `node scripts/gaffer.mjs mcp …` over
 * stdio against a real headless Gaffer (a child process), and calls the tools as a model would.
 * The lock window is 2 s, so the session's automatic renewals show within the test.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, removeTempDirs, startServer, tempDir, type Server } from '../../../e2e/reliability/lib/server';
import { ROOT } from '../../../e2e/reliability/lib/procs';
import { parseMcpArgs, UsageError } from './args';

const GAFFER_BIN = path.join(ROOT, 'scripts', 'gaffer.mjs');

let gaffer: Server;
const clients: Array<{ client: Client; transport: StdioClientTransport }> = [];

async function api(method: string, p: string, body?: unknown): Promise<any> {
  const res = await fetch(`${gaffer.url}/api/v1${p}`, {
    method,
    headers: { authorization: `Bearer ${gaffer.operatorToken}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return res.json();
}

async function agentToken(role: string): Promise<string> {
  return ((await api('POST', '/tokens', { name: `mcp-${role}`, role })) as { token: string }).token;
}

/** Starts `gaffer mcp` with the MCP SDK's client; `problems` collects anything that was not clean MCP on stdout. */
async function mcp(args: string[], env: Record<string, string>): Promise<{ client: Client; transport: StdioClientTransport; stderr: () => string; problems: string[] }> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [GAFFER_BIN, 'mcp', ...args], env, cwd: ROOT, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
  const problems: string[] = [];
  const client = new Client({ name: 'gaffer-test', version: '1.0.0' });
  client.onerror = (e) => problems.push(String(e));
  await client.connect(transport);
  clients.push({ client, transport });
  return { client, transport, stderr: () => stderr, problems };
}

type CallResult = { isError?: boolean; content: Array<{ type: string; text: string }> };

async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<{ ok: boolean; value: any; text: string }> {
  const r = (await client.callTool({ name, arguments: args })) as CallResult;
  const text = r.content.map((c) => c.text).join('');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  return { ok: r.isError !== true, value, text };
}

async function until<T>(fn: () => Promise<T | undefined | false>, what: string, ms = 10_000): Promise<T> {
  const start = Date.now();
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() - start > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeAll(async () => {
  gaffer = await startServer({ dataDir: tempDir('mcp'), port: await freePort(), lockWindowS: 2, sweepIntervalS: 1 });
}, 60_000);

afterAll(async () => {
  for (const { client } of clients.splice(0)) await client.close().catch(() => {});
  await gaffer?.stop();
  removeTempDirs();
}, 30_000);

describe('gaffer mcp --role (agent mode)', () => {
  it('claims, keeps the lock renewed, reports, creates tasks idempotently; stdout stays clean MCP', async () => {
    const token = await agentToken('dev');
    const { client, problems, stderr, transport } = await mcp(['--role', 'dev', '--url', gaffer.agentUrl], { GAFFER_TOKEN: token });
    // PROTOCOL §17: the token left the server's environment as it started (scripts/gaffer.mjs).
    if (process.platform === 'linux') expect(fs.readFileSync(`/proc/${transport.pid}/environ`, 'latin1')).not.toContain(token);

    const tools = (await client.listTools()).tools;
    expect(tools.map((t) => t.name).sort()).toEqual(['claim_task', 'create_task', 'held_tasks', 'log', 'renew_task', 'report_task', 'report_usage']);
    for (const t of tools) {
      expect(t.description!.length, t.name).toBeGreaterThan(80);
      expect(t.inputSchema.type).toBe('object');
    }
    expect(tools.find((t) => t.name === 'report_task')!.inputSchema).toMatchObject({
      required: expect.arrayContaining(['taskId', 'status']),
      properties: { status: { enum: ['done', 'failed', 'blocked', 'backlog'] } },
    });
    expect(client.getInstructions()).toContain('P2');

    // P2: nothing to claim is a plain answer, not an error.
    const none = await call(client, 'claim_task');
    expect(none).toMatchObject({ ok: true, value: { task: null } });

    const first = await call(client, 'create_task', { title: 'Fix the redirect', idempotencyKey: 'fix-redirect', payload: { issue: 881 }, priority: 5 });
    const again = await call(client, 'create_task', { title: 'Fix the redirect', idempotencyKey: 'fix-redirect', payload: { issue: 881 }, priority: 5 });
    expect(first.value).toMatchObject({ replayed: false, task: { title: 'Fix the redirect', role: 'dev', status: 'backlog' } });
    expect(again.value).toMatchObject({ replayed: true, task: { id: first.value.task.id } });
    const conflict = await call(client, 'create_task', { title: 'Something else', idempotencyKey: 'fix-redirect' });
    expect(conflict.ok).toBe(false);
    expect(conflict.text).toMatch(/^conflict: /);

    const claimed = await call(client, 'claim_task');
    expect(claimed.value).toMatchObject({ task: { id: first.value.task.id, payload: { issue: 881 }, attempt: 1 }, lock: { fence: expect.any(Number) }, lockWindowS: 2 });
    const id = claimed.value.task.id as number;

    // The lock window is 2 s: the task is still ours after 3 s because the session renews it.
    await new Promise((r) => setTimeout(r, 3000));
    const held = await call(client, 'held_tasks');
    expect(held.value.tasks.map((t: { task: { id: number } }) => t.task.id)).toEqual([id]);
    const renewals = await api('GET', `/audit?type=lock.renew&subject=task:${id}`);
    expect(renewals.items.length).toBeGreaterThanOrEqual(2);
    expect((await api('GET', `/tasks/${id}`)).task).toMatchObject({ status: 'in_progress', attempt: 1 });

    const renewed = await call(client, 'renew_task', { taskId: id });
    expect(renewed.value).toMatchObject({ taskId: id, expiresAt: expect.any(String) });

    const done = await call(client, 'report_task', { taskId: id, status: 'done', note: 'merged', output: { pr: 1207 } });
    expect(done.value).toEqual({ taskId: id, status: 'done' });
    expect((await api('GET', `/tasks/${id}`)).task).toMatchObject({ status: 'done', note: 'merged', output: { pr: 1207 }, lock: null });
    const twice = await call(client, 'report_task', { taskId: id, status: 'done' });
    expect(twice.ok).toBe(false);
    expect(twice.text).toMatch(/^not_held: /);

    // Bad arguments are refused by the tool's schema or its own check, and change nothing.
    const badStatus = (await client.callTool({ name: 'report_task', arguments: { taskId: id, status: 'finished' } })) as CallResult;
    expect(badStatus.isError).toBe(true);
    const noTarget = await call(client, 'log', { lines: [{ text: 'hello' }] });
    expect(noTarget.text).toMatch(/^bad_request: give exactly one of taskId/);

    expect(problems).toEqual([]);
    expect(stderr()).not.toContain(token);
  }, 60_000);

  it('a lock taken away is reported as lock_lost, and the late report changes nothing', async () => {
    const { client } = await mcp(['--role', 'qa', '--url', gaffer.agentUrl], { GAFFER_TOKEN: await agentToken('qa') });
    const created = await call(client, 'create_task', { title: 'Flaky test', idempotencyKey: 'flaky-1' });
    const id = (await call(client, 'claim_task')).value.task.id as number;
    expect(id).toBe(created.value.task.id);
    await api('POST', `/tasks/${id}/release`, { reason: 'operator takes it back' });
    // The session notices at its next renewal (or at once with a lock_lost push).
    await until(async () => (await call(client, 'held_tasks')).value.tasks.length === 0, 'the session to drop the task');
    const late = await call(client, 'report_task', { taskId: id, status: 'done', note: 'too late' });
    expect(late.ok).toBe(false);
    expect(late.text).toMatch(/^lock_lost: /);
    expect((await api('GET', `/tasks/${id}`)).task).toMatchObject({ status: 'backlog', note: null, lock: null });
    expect((await call(client, 'renew_task', { taskId: id })).text).toMatch(/^lock_lost: /);
  }, 30_000);

  it('closing the session hands held tasks back and the process exits', async () => {
    const { client, transport } = await mcp(['--role', 'ops', '--url', gaffer.agentUrl], { GAFFER_TOKEN: await agentToken('ops') });
    await call(client, 'create_task', { title: 'Rotate logs', idempotencyKey: 'rotate-1' });
    const id = (await call(client, 'claim_task')).value.task.id as number;
    const pid = transport.pid!;
    await client.close();
    await until(async () => (await api('GET', `/tasks/${id}`)).task.status === 'backlog', 'the task back in the backlog');
    await until(async () => {
      try {
        process.kill(pid, 0);
        return false;
      } catch {
        return true;
      }
    }, 'the mcp process to exit');
  }, 30_000);

  it('with --jobs takes a job run: next_run, checkpoint_step (skips recorded steps), finish_run', async () => {
    const { client } = await mcp(['--role', 'reporter', '--url', gaffer.agentUrl, '--jobs'], { GAFFER_TOKEN: await agentToken('reporter') });
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(expect.arrayContaining(['next_run', 'checkpoint_step', 'finish_run']));
    expect((await call(client, 'next_run')).value).toEqual({ run: null });
    const { job } = await api('POST', '/jobs', { name: 'daily-report', role: 'reporter', schedule: { everyS: 86400 }, payload: { channel: 'sales' } });
    const triggered = await api('POST', `/jobs/${job.id}/trigger`, { reason: 'test' });
    const run = await until(async () => (await call(client, 'next_run')).value.run, 'the run to arrive');
    expect(run).toMatchObject({ runId: triggered.run.id, job: 'daily-report', attempt: 1, payload: { channel: 'sales' }, completedSteps: [], idempotencyKey: expect.any(String) });
    expect(await call(client, 'checkpoint_step', { runId: run.runId, step: 'collect', ref: 'rows:42' })).toMatchObject({ value: { step: 'collect', skipped: false } });
    expect(await call(client, 'checkpoint_step', { runId: run.runId, step: 'collect' })).toMatchObject({ value: { skipped: true } });
    const finished = await call(client, 'finish_run', { runId: run.runId, outcome: 'success', output: { sent: 3 } });
    expect(finished.value).toMatchObject({ runId: run.runId, outcome: 'success' });
    const detail = await api('GET', `/runs/${run.runId}`);
    expect(detail.run).toMatchObject({ status: 'success' });
    expect(detail.steps.map((s: { step?: string; name?: string }) => s.step ?? s.name)).toEqual(['collect']);
    expect((await call(client, 'finish_run', { runId: run.runId, outcome: 'success' })).text).toMatch(/^run_ended: /);
  }, 30_000);

  it('without --jobs the session is never offered a run: one with --jobs gets it at the first offer; alone, the run waits and explain says why', async () => {
    await mcp(['--role', 'courier', '--url', gaffer.agentUrl], { GAFFER_TOKEN: await agentToken('courier') });
    const { job } = await api('POST', '/jobs', { name: 'courier-round', role: 'courier', schedule: { everyS: 86400 } });
    // Only the session without --jobs is online: nobody takes the run, and Gaffer says so.
    const waiting = await api('POST', `/jobs/${job.id}/trigger`, { reason: 'test' });
    expect(waiting).toMatchObject({ dispatched: false, message: expect.stringMatching(/no online instance of role courier takes job runs/) });
    expect((await api('GET', `/jobs/${job.id}/explain?at=${encodeURIComponent(waiting.run.slotAt)}`)).explanation.layers.execution.reason).toMatch(/takes job runs: 1 online said takesRuns: false/);
    // A session with --jobs (connected later: without the flag the earlier one would win the pick) gets it at once.
    const { client } = await mcp(['--role', 'courier', '--url', gaffer.agentUrl, '--jobs'], { GAFFER_TOKEN: await agentToken('courier') });
    const run = await until(async () => (await call(client, 'next_run')).value.run, 'the run on the --jobs session');
    expect(run).toMatchObject({ runId: waiting.run.id, attempt: 1 });
    await call(client, 'finish_run', { runId: run.runId, outcome: 'success' });
    const offers = (await api('GET', `/audit?type=trigger.offer&subject=run:${run.runId}`)).items;
    expect(offers).toHaveLength(1);
    expect((await api('GET', `/audit?type=trigger.timeout&subject=run:${run.runId}`)).items).toEqual([]);
  }, 30_000);

  it('a retry of a run that comes back to the same session is a new attempt: next_run hands it out and finish_run ends it', async () => {
    const { client } = await mcp(['--role', 'retrier', '--url', gaffer.agentUrl, '--jobs'], { GAFFER_TOKEN: await agentToken('retrier') });
    const { job } = await api('POST', '/jobs', { name: 'flaky-export', role: 'retrier', schedule: { everyS: 86400 }, retry: { maxAttempts: 2, firstDelayS: 0 } });
    const triggered = await api('POST', `/jobs/${job.id}/trigger`, { reason: 'test' });
    const first = await until(async () => (await call(client, 'next_run')).value.run, 'attempt 1');
    expect(first).toMatchObject({ runId: triggered.run.id, attempt: 1 });
    expect(await call(client, 'checkpoint_step', { runId: first.runId, step: 'extract', ref: 'rows:7' })).toMatchObject({ value: { skipped: false } });
    const failed = await call(client, 'finish_run', { runId: first.runId, outcome: 'failed', errorClass: 'retryable', error: 'upstream timeout' });
    expect(failed.value).toMatchObject({ runId: first.runId, outcome: 'failed', errorClass: 'retryable' });
    // The retry is due at once and this session is the only instance of the role: it comes back here.
    const second = await until(async () => (await call(client, 'next_run')).value.run, 'attempt 2');
    expect(second).toMatchObject({ runId: first.runId, attempt: 2, completedSteps: ['extract'] });
    expect((await call(client, 'checkpoint_step', { runId: second.runId, step: 'extract' })).value).toMatchObject({ skipped: true });
    const done = await call(client, 'finish_run', { runId: second.runId, outcome: 'success', output: { rows: 7 } });
    expect(done.value).toMatchObject({ runId: first.runId, outcome: 'success' });
    expect((await api('GET', `/runs/${first.runId}`)).run).toMatchObject({ status: 'success', attempt: 2, retryCount: 1, output: { rows: 7 } });
    // An attempt that is over stays over, by number too.
    expect((await call(client, 'finish_run', { runId: first.runId, attempt: 1, outcome: 'success' })).text).toMatch(/^run_ended: /);
    expect((await call(client, 'next_run')).value).toEqual({ run: null });
  }, 30_000);
});

describe('gaffer mcp --operator (read-only)', () => {
  it('answers status, runs, failures, tasks, explain and audit questions over the HTTP API', async () => {
    const { client, problems } = await mcp(['--operator', '--url', gaffer.url], { GAFFER_OPERATOR_TOKEN: gaffer.operatorToken });
    const names = (await client.listTools()).tools.map((t) => t.name).sort();
    expect(names).toEqual(['explain_job', 'gaffer_status', 'get_run', 'get_task', 'list_jobs', 'list_tasks', 'recent_failures', 'recent_runs', 'search_audit']);
    for (const t of (await client.listTools()).tools) expect(t.annotations?.readOnlyHint, t.name).toBe(true);

    expect((await call(client, 'gaffer_status')).value).toMatchObject({ ok: true, counts: { tasks: expect.any(Object) } });
    expect((await call(client, 'list_tasks', { status: 'done' })).value.items.map((t: { title: string }) => t.title)).toContain('Fix the redirect');
    // A task whose checks Gaffer ran: its verification, check by check.
    const { task: checked } = await api('POST', '/tasks', { title: 'Checked work', role: 'mcp-checked', verify: { checks: [{ kind: 'output', name: 'has url', schema: { required: ['url'] } }] } });
    const worker = (await mcp(['--role', 'mcp-checked', '--url', gaffer.agentUrl], { GAFFER_TOKEN: await agentToken('mcp-checked') })).client;
    await call(worker, 'claim_task');
    await call(worker, 'report_task', { taskId: checked.id, status: 'done', output: { link: 'x' } });
    const verified = await until(async () => {
      const t = (await call(client, 'get_task', { taskId: checked.id })).value.task;
      return t.verification && t;
    }, 'the checks to run');
    expect(verified).toMatchObject({ status: 'backlog', previousError: expect.stringContaining('verification failed: has url'), verification: { passed: false, checks: [{ name: 'has url', passed: false }] } });
    const explained = await call(client, 'explain_job', { job: 'daily-report', at: new Date().toISOString() });
    expect(explained.value).toHaveProperty('explanation');
    const latest = (await call(client, 'recent_runs', { job: 'daily-report' })).value.items[0];
    expect(latest).toMatchObject({ status: 'success' });
    expect((await call(client, 'get_run', { runId: latest.id })).value.run).toMatchObject({ id: latest.id, status: 'success' });
    expect((await call(client, 'get_run', { runId: 'no-such-run' })).text).toMatch(/^not_found: /);
    expect((await call(client, 'recent_failures')).value).toEqual({ failedRuns: expect.any(Array), awaitingDecision: expect.any(Array), failedTasks: expect.any(Array), blockedTasks: expect.any(Array) });
    const audit = await call(client, 'search_audit', { type: 'operator.force_release', limit: 5 });
    expect(audit.value.items).toHaveLength(1);
    expect((await call(client, 'explain_job', { job: 'no-such-job' })).text).toMatch(/^not_found: /);
    expect(problems).toEqual([]);
  }, 30_000);

  it('recent_failures: a run that succeeded after approval is settled (not a failure); a held run is listed with its open question', async () => {
    const agent = (await mcp(['--role', 'payer', '--url', gaffer.agentUrl, '--jobs'], { GAFFER_TOKEN: await agentToken('payer') })).client;
    const { client } = await mcp(['--operator', '--url', gaffer.url], { GAFFER_OPERATOR_TOKEN: gaffer.operatorToken });
    const needsHuman = async (name: string, question: string) => {
      const { job } = await api('POST', '/jobs', { name, role: 'payer', schedule: { everyS: 86400 }, retry: { maxAttempts: 1 } });
      const { run } = await api('POST', `/jobs/${job.id}/trigger`, { reason: 'test' });
      await until(async () => (await call(agent, 'next_run')).value.run, `${name} to arrive`);
      await call(agent, 'finish_run', { runId: run.id, outcome: 'failed', errorClass: 'needs_human', error: question });
      return run.id as string;
    };
    const paid = await needsHuman('pay-invoice', 'pay invoice 2231 (4 200 EUR)?');
    const waiting = await needsHuman('raise-limit', 'raise the card limit to 10 000 EUR?');
    expect((await api('POST', `/runs/${paid}/approve`, { note: 'yes, pay it' })).run).toMatchObject({ id: paid });
    const again = await until(async () => (await call(agent, 'next_run')).value.run, 'the approved re-run');
    expect(again).toMatchObject({ runId: paid, attempt: 2, approval: { note: 'yes, pay it' } });
    await call(agent, 'finish_run', { runId: paid, outcome: 'success' });
    expect((await api('GET', `/runs/${paid}`)).run).toMatchObject({ status: 'failed', disposition: 'backfilled' });

    const { value } = await call(client, 'recent_failures');
    const runIds = (xs: Array<{ id: string }>) => xs.map((r) => r.id);
    expect(runIds(value.failedRuns)).not.toContain(paid);
    expect(runIds(value.failedRuns)).not.toContain(waiting);
    expect(value.awaitingDecision.map((x: { run: { id: string }; question: string }) => [x.run.id, x.question])).toEqual([[waiting, 'raise the card limit to 10 000 EUR?']]);
  }, 30_000);

  it('refuses to start without its token, with a usage line on stderr and status 2', async () => {
    const run = spawnSync(process.execPath, [GAFFER_BIN, 'mcp', '--operator'], { cwd: ROOT, env: { PATH: process.env.PATH }, encoding: 'utf8', input: '' });
    expect(run.status).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('GAFFER_OPERATOR_TOKEN is not set');
    expect(run.stderr).toContain('usage: gaffer mcp');
    expect(() => parseMcpArgs(['--operator'], {})).toThrow(UsageError);
    expect(() => parseMcpArgs(['--role', 'dev'], {})).toThrow(/GAFFER_TOKEN/);
    expect(() => parseMcpArgs(['--role', 'bad role!'], { GAFFER_TOKEN: 't' })).toThrow(/not a role name/);
    expect(() => parseMcpArgs(['--operator', '--role', 'dev'], { GAFFER_OPERATOR_TOKEN: 't' })).toThrow(/read-only/);
    expect(parseMcpArgs(['--role', 'dev', '--url=ws://127.0.0.1:1/agent'], { GAFFER_TOKEN: 't' })).toMatchObject({ mode: 'agent', role: 'dev', url: 'ws://127.0.0.1:1/agent', jobs: false });
    expect(parseMcpArgs(['--operator', '--url', 'ws://127.0.0.1:9/agent'], { GAFFER_OPERATOR_TOKEN: 't' })).toMatchObject({ mode: 'operator', url: 'http://127.0.0.1:9' });
  });
});
