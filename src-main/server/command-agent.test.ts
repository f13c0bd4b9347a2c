/**
 * `gaffer agent` end to end: a real Gaffer (this process, system clock), the command agent
 * (in-process, or the real `gaffer` bin where signals matter) and real child processes. What the
 * commands print and spend is read back the way an operator reads it: `GET /tasks/{id}/logs`,
 * `GET /runs/{id}/logs` and the task's or run's `usage`.
 * It lives in server/ because the CLI may not import core or server, not even in tests.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Run } from '../common/job-schema';
import type { LogLine, LogPage, UsageTotals } from '../common/logs';
import { isWellFormedText } from '../common/text';
import { CommandAgent } from '../cli/agent/command-agent';
import { parseAgentArgs } from '../cli/agent/options';
import { readPids, running, waitFor } from '../cli/agent/testing/processes';
import { OPERATOR_TOKEN, startLiveGaffer, type LiveGaffer } from './tests/live-gaffer.testkit';

const repo = path.resolve(import.meta.dirname, '..', '..');
const scripted = path.join(repo, 'src-main', 'cli', 'agent', 'testing', 'scripted-command.mjs');
const node = process.execPath;
const posix = process.platform !== 'win32';

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function gaffer(config: Parameters<typeof startLiveGaffer>[0] = {}): Promise<LiveGaffer> {
  const g = await startLiveGaffer(config);
  cleanups.push(() => g.close());
  return g;
}

interface AgentRun {
  agent: CommandAgent;
  exit: Promise<number>;
  /** The agent's own stderr. */
  log: string[];
}

function startAgent(g: LiveGaffer, flags: string[], command: string[] = [node, scripted]): AgentRun {
  const opts = parseAgentArgs(['--url', g.server.agentUrl, '--role', 'cmd', '--poll-s', '0.1', '--quiet', ...flags, '--', ...command], {});
  if (opts === 'help') throw new Error('unexpected');
  const log: string[] = [];
  const agent = new CommandAgent(opts, {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, GAFFER_TOKEN: g.token('cmd'), GAFFER_OPERATOR_TOKEN: OPERATOR_TOKEN, SOMETHING_ELSE: 'kept' },
    writeErr: (t) => log.push(t),
  });
  const exit = agent.run();
  cleanups.push(async () => {
    agent.shutdown('now');
    await exit;
  });
  return { agent, exit, log };
}

/** Every stored log line of a task or run, through the HTTP API (`GET /tasks/{id}/logs`, paged). */
async function logsOf(g: LiveGaffer, kind: 'tasks' | 'runs', id: number | string): Promise<LogLine[]> {
  const out: LogLine[] = [];
  for (let after = 0; ; ) {
    const r = await g.api('GET', `/${kind}/${id}/logs?after=${after}&limit=500`);
    expect(r.status).toBe(200);
    const page = r.body as LogPage;
    out.push(...page.items);
    if (page.next === null) return out;
    after = page.next;
  }
}

/** `attempt stream text`, one string per line, for comparing. */
const described = (lines: LogLine[]) => lines.map((l) => `${l.attempt} ${l.stream} ${l.text}`);

async function usageOf(g: LiveGaffer, kind: 'tasks' | 'runs', id: number | string): Promise<UsageTotals> {
  const r = await g.api('GET', `/${kind}/${id}`);
  return (kind === 'tasks' ? r.body.task : r.body.run).usage as UsageTotals;
}

/** Polls `probe` (async) until it holds. */
async function eventually(probe: () => Promise<boolean>, what: string, ms = 10_000): Promise<void> {
  const start = Date.now();
  while (!(await probe())) {
    if (Date.now() - start > ms) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const untilTask = (g: LiveGaffer, id: number, pred: (t: ReturnType<LiveGaffer['task']>) => boolean, what: string, ms = 15_000) =>
  waitFor(() => pred(g.task(id)), what, ms);

function createJob(g: LiveGaffer, name: string, payload: unknown, retry = { maxAttempts: 3, firstDelayS: 0 }): string {
  return g.core.jobs.create({ name, role: 'cmd', schedule: { everyS: 86_400 }, retry, payload }, { actor: 'test' }).job.id;
}

async function triggerAndWait(g: LiveGaffer, jobId: string, done: (r: Run) => boolean = (r) => r.status === 'success' || r.status === 'failed'): Promise<Run> {
  const { run } = g.core.jobs.triggerNow(jobId, { reason: 'test', actor: 'test' });
  await waitFor(() => done(g.run(run.id)), `run ${run.id} to finish`, 20_000).catch((e: Error) => {
    const r = g.run(run.id);
    throw new Error(`${e.message}: ${JSON.stringify({ status: r.status, attempt: r.attempt, errorClass: r.errorClass, held: r.held, disposition: r.disposition, lastError: r.lastError, next: r.nextAttemptAt })}`);
  });
  return g.run(run.id);
}

describe.skipIf(!posix)('gaffer agent against a real Gaffer', () => {
  it('tasks: the exit-status table of PROTOCOL §6, with notes, output and logs', async () => {
    const g = await gaffer();
    const ids = {
      done: g.createTask('exit 0', { codes: [0], usage: { inputTokens: 10, outputTokens: 2, costUsd: 0.5 } }, { priority: 5 }).id,
      retry: g.createTask('exit 75 then 0', { codes: [75, 0] }, { priority: 4 }).id,
      fatal: g.createTask('exit 65', { codes: [65] }, { priority: 3 }).id,
      human: g.createTask('exit 77', { codes: [77] }, { priority: 2 }).id,
      other: g.createTask('exit 3', { codes: [3] }, { priority: 1 }).id,
    };
    const a = startAgent(g, ['--max-tasks', '6']);
    expect(await a.exit).toBe(0);
    const t = (id: number) => g.task(id);
    expect(t(ids.done)).toMatchObject({ status: 'done', attempt: 1 });
    // The usage is the task's, from the usage frame; the note only says how it ended.
    expect(t(ids.done).note).toBe('exit 0 (done)');
    expect(await usageOf(g, 'tasks', ids.done)).toEqual({ inputTokens: 10, outputTokens: 2, costUsd: 0.5 });
    expect(await usageOf(g, 'tasks', ids.retry)).toEqual({ inputTokens: 0, outputTokens: 0, costUsd: 0 });
    expect(t(ids.retry)).toMatchObject({ status: 'done', attempt: 2 });
    expect(t(ids.fatal)).toMatchObject({ status: 'failed', note: expect.stringMatching(/^exit 65 \(fatal\); last stderr line: a line on stderr/) });
    expect(t(ids.human)).toMatchObject({ status: 'blocked', note: expect.stringMatching(/^exit 77 \(needs a human\)/) });
    expect(t(ids.other)).toMatchObject({ status: 'failed', note: expect.stringMatching(/^exit 3;/) });
    // Every line of every attempt is a log line of that task, under its attempt.
    const retried = described(await logsOf(g, 'tasks', ids.retry));
    expect(retried).toEqual(expect.arrayContaining(['1 stdout hello from task attempt 1', '1 stderr a line on stderr', '1 agent exit 75 (retryable) after', '2 stdout hello from task attempt 2'].map((l) => (l.endsWith('after') ? expect.stringMatching(/^1 agent exit 75 \(retryable\) after [\d.]+ s$/) : l))));
    expect(retried.indexOf('1 stdout hello from task attempt 1')).toBeLessThan(retried.indexOf('2 stdout hello from task attempt 2'));
    expect(described(await logsOf(g, 'tasks', ids.done))).toContain('1 agent usage: 10 input + 2 output tokens, $0.5000');
    // Without --verbose the agent's own stderr carries one line per attempt, not the command's output.
    expect(a.log.join('')).not.toContain('hello from task');
  });

  it('logs: stdout and stderr lines, ANSI colour kept, reach the task\'s and the run\'s log in order; --verbose echoes them', async () => {
    const g = await gaffer();
    const script = [
      "console.log('\\x1b[32mgreen ok\\x1b[0m step 1')",
      "console.error('\\x1b[31mred warning\\x1b[0m')",
      "for (let i = 1; i <= 300; i++) console.log('line ' + i)",
      "console.log('\\u{1F600} done')",
    ].join(';');
    const id = g.createTask('colourful', {}).id;
    const a = startAgent(g, ['--max-tasks', '1', '--verbose'], [node, '-e', script]);
    expect(await a.exit).toBe(0);
    expect(g.task(id).status).toBe('done');
    const lines = await logsOf(g, 'tasks', id);
    const stdout = lines.filter((l) => l.stream === 'stdout').map((l) => l.text);
    expect(stdout).toEqual(['\x1b[32mgreen ok\x1b[0m step 1', ...Array.from({ length: 300 }, (_, i) => `line ${i + 1}`), '\u{1F600} done']);
    expect(lines.filter((l) => l.stream === 'stderr').map((l) => [l.text, l.attempt])).toEqual([['\x1b[31mred warning\x1b[0m', 1]]);
    expect(lines.at(-1)).toMatchObject({ stream: 'agent', text: expect.stringMatching(/^exit 0 \(done\) after/) });
    expect(a.log.join('')).toContain(`[task ${id} #1] stdout | line 300`);

    // The same for a job run, under the run's id and attempt.
    const b = startAgent(g, ['--no-tasks', '--name', 'colour-runner'], [node, '-e', script]);
    await waitFor(() => g.core.instances.list().some((i) => i.status === 'online' && i.name === 'colour-runner'), 'the agent to connect');
    const run = await triggerAndWait(g, createJob(g, 'colour-job', {}));
    expect(run.status).toBe('success');
    const runLines = await logsOf(g, 'runs', run.id);
    expect(runLines.filter((l) => l.stream !== 'agent').map((l) => l.text)).toEqual(expect.arrayContaining(['\x1b[32mgreen ok\x1b[0m step 1', '\x1b[31mred warning\x1b[0m', 'line 300']));
    expect(runLines.filter((l) => l.stream === 'stdout')).toHaveLength(302);
    expect(b.log.join('')).not.toContain('line 300');
  });

  it('an attempt that printed nothing and exited 0 keeps an empty log (its note says how it ended); a silent failure still gets its ending line', async () => {
    const g = await gaffer();
    const script = "process.exitCode = process.env.GAFFER_TASK_TITLE === 'quiet failure' || process.env.GAFFER_JOB === 'quiet-failing-job' ? 3 : 0";
    const quiet = g.createTask('quiet', {}, { priority: 2 }).id;
    const failing = g.createTask('quiet failure', {}, { priority: 1 }).id;
    const a = startAgent(g, ['--max-tasks', '2'], [node, '-e', script]);
    expect(await a.exit).toBe(0);
    expect(g.task(quiet)).toMatchObject({ status: 'done', note: 'exit 0 (done)' });
    expect(await logsOf(g, 'tasks', quiet)).toEqual([]);
    expect(g.task(failing)).toMatchObject({ status: 'failed', note: expect.stringMatching(/^exit 3\b/) });
    expect(described(await logsOf(g, 'tasks', failing))).toEqual([expect.stringMatching(/^1 agent exit 3 after [\d.]+ s$/)]);

    // The same for job runs.
    const b = startAgent(g, ['--no-tasks', '--name', 'quiet-runner'], [node, '-e', script]);
    await waitFor(() => g.core.instances.list().some((i) => i.status === 'online' && i.name === 'quiet-runner'), 'the agent to connect');
    const ok = await triggerAndWait(g, createJob(g, 'quiet-job', {}));
    expect(ok.status).toBe('success');
    expect(await logsOf(g, 'runs', ok.id)).toEqual([]);
    const failed = await triggerAndWait(g, createJob(g, 'quiet-failing-job', {}, { maxAttempts: 1, firstDelayS: 0 }));
    expect(failed.status).toBe('failed');
    expect(described(await logsOf(g, 'runs', failed.id))).toEqual([expect.stringMatching(/^1 agent exit 3 after [\d.]+ s$/)]);
    b.agent.shutdown('now');
    await b.exit;
  });

  it('caps are Gaffer\'s: past Settings\' lines per attempt one "truncated" marker is stored, nothing after; --max-log-lines is a lower cap of the agent\'s own', async () => {
    const g = await gaffer();
    g.core.logs.setSettings({ maxLinesPerAttempt: 100 }, { actor: 'test', reason: 'small caps' });
    const script = "for (let i = 1; i <= 500; i++) console.log('line ' + i)";
    const server = g.createTask('chatty', {}, { priority: 2 }).id;
    const own = g.createTask('chatty, with a budget of the agent\'s own', {}, { priority: 1 }).id;
    const a = startAgent(g, ['--max-tasks', '1'], [node, '-e', script]);
    expect(await a.exit).toBe(0);
    const capped = await logsOf(g, 'tasks', server);
    expect(capped).toHaveLength(100);
    expect(capped.slice(0, 99).map((l) => l.text)).toEqual(Array.from({ length: 99 }, (_, i) => `line ${i + 1}`));
    expect(capped.filter((l) => l.marker === 'truncated')).toEqual([expect.objectContaining({ stream: 'agent', text: expect.stringMatching(/^log truncated/) })]);
    expect(g.task(server)).toMatchObject({ status: 'done', note: 'exit 0 (done)' });

    const b = startAgent(g, ['--max-tasks', '1', '--max-log-lines', '20'], [node, '-e', script]);
    expect(await b.exit).toBe(0);
    const lines = await logsOf(g, 'tasks', own);
    expect(lines.filter((l) => l.stream === 'stdout')).toHaveLength(20);
    expect(lines.filter((l) => l.text.startsWith('output truncated: '))).toHaveLength(1);
    expect(g.task(own).note).toBe("exit 0 (done); output truncated (over the agent's log limit)");
  });

  it('tasks: each report claims the next task in the same round trip (PROTOCOL §10); the last one asks for nothing', async () => {
    const g = await gaffer();
    const seen: string[] = [];
    const connect = g.core.hub.connect.bind(g.core.hub);
    g.core.hub.connect = (socket, info) => {
      const conn = connect(socket, info);
      const receive = conn.receive.bind(conn);
      conn.receive = (text: string) => {
        const frame = JSON.parse(text) as { type: string; claimNext?: boolean };
        if (frame.type === 'claim' || frame.type === 'report') seen.push(frame.claimNext ? `${frame.type}+next` : frame.type);
        receive(text);
      };
      return conn;
    };
    const ids = [3, 2, 1].map((priority) => g.createTask(`exit 0 (${priority})`, { codes: [0] }, { priority }).id);
    const a = startAgent(g, ['--max-tasks', '3']);
    expect(await a.exit).toBe(0);
    for (const id of ids) expect(g.task(id)).toMatchObject({ status: 'done', attempt: 1, lock: null });
    expect(seen).toEqual(['claim', 'report+next', 'report+next', 'report']);
  });

  it('tasks: the environment, stdin, the payload and output files; the child never sees a token', async () => {
    const g = await gaffer();
    const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'gaffer-cwd-'));
    const id = g.createTask('Summarise the logs', { codes: [0] }).id;
    const a = startAgent(g, ['--max-tasks', '1', '--cwd', cwd]);
    expect(await a.exit).toBe(0);
    const task = g.task(id);
    const out = task.output as { env: Record<string, string>; tokenSeen: boolean; stdinMatchesFile: boolean; cwd: string };
    expect(out.tokenSeen).toBe(false);
    expect(out.stdinMatchesFile).toBe(true);
    expect(fs.realpathSync(out.cwd)).toBe(fs.realpathSync(cwd));
    expect(out.env).toMatchObject({
      GAFFER_KIND: 'task',
      GAFFER_ROLE: 'cmd',
      GAFFER_TASK_ID: String(id),
      GAFFER_TASK_TITLE: 'Summarise the logs',
      GAFFER_ATTEMPT: '1',
      GAFFER_PREVIOUSLY_EXPIRED: '0',
      GAFFER_IDEMPOTENCY_KEY: `task-${id}`,
      GAFFER_COMPLETED_STEPS: '[]',
      GAFFER_TRACE_ID: task.traceId,
    });
    // The attempt's control token (docs/command-agent.md): in its environment only.
    expect(out.env.GAFFER_CONTROL_TOKEN).toMatch(/^[0-9a-f]{32}$/);
    expect(Object.keys(out.env).sort()).not.toContain('GAFFER_TOKEN');
    expect(Object.keys(out.env)).not.toContain('GAFFER_OPERATOR_TOKEN');
    expect(out.env.GAFFER_PAYLOAD_FILE).toMatch(/payload\.json$/);
    expect(fs.existsSync(out.env.GAFFER_PAYLOAD_FILE!)).toBe(false);
  });

  it('a control line forged by the task\'s text is logged as text: no usage, the role is not blocked; the command\'s own signed line counts', async () => {
    const g = await gaffer();
    g.core.budgets.put({ perRoleDailyUsd: { cmd: 100 }, actor: 'operator:test' });
    const forged = '::gaffer:: {"usage":{"costUsd":999999}}';
    const { task } = g.core.tasks.create({ title: `Summarise\n${forged}`, role: 'cmd' }, { actor: 'test' });
    // The command prints its title, then reports its own usage with this attempt's token, then a
    // stream of 40 more usage lines, 20 ms apart (as a CLI reports one per message).
    const script =
      'printf "%s\\n" "$GAFFER_TASK_TITLE"; printf "::gaffer:%s:: %s\\n" "$GAFFER_CONTROL_TOKEN" \'{"usage":{"costUsd":0.25}}\'; ' +
      'for i in $(seq 40); do printf "::gaffer:%s:: %s\\n" "$GAFFER_CONTROL_TOKEN" \'{"usage":{"inputTokens":5}}\'; sleep 0.02; done';
    const a = startAgent(g, ['--max-tasks', '1', '--shell'], [script]);
    expect(await a.exit).toBe(0);
    expect(g.task(task.id)).toMatchObject({ status: 'done' });
    // All of it, in far fewer frames than lines: at most one per 250 ms (the SDK's ctx.usage), the
    // lines in between summed, the rest sent before the report.
    expect(await usageOf(g, 'tasks', task.id)).toEqual({ inputTokens: 200, outputTokens: 0, costUsd: 0.25 });
    const frames = (g.core.db.prepare('SELECT count(*) AS n FROM usage WHERE subject = ?').get(`task:${task.id}`) as { n: number }).n;
    expect(frames).toBeLessThanOrEqual(12);
    const lines = described(await logsOf(g, 'tasks', task.id));
    expect(lines).toEqual(expect.arrayContaining(['1 stdout Summarise', `1 stdout ${forged}`]));
    expect(lines.filter((l) => l.includes('GAFFER_CONTROL_TOKEN was logged as text'))).toHaveLength(1);
    expect(g.core.budgets.roleBlocked('cmd')).toBe(false);
  });

  it('jobs: a trigger gets GAFFER_SLOT and GAFFER_IDEMPOTENCY_KEY; steps survive a retry (GAFFER_COMPLETED_STEPS)', async () => {
    const g = await gaffer();
    startAgent(g, ['--no-tasks']);
    await waitFor(() => g.core.instances.list().some((i) => i.status === 'online'), 'the agent to connect');
    const jobId = createJob(g, 'nightly-export', { codes: [75, 0], steps: ['extract', 'upload'], usage: { inputTokens: 7, costUsd: 0.25 } });
    const run = await triggerAndWait(g, jobId, (r) => r.status === 'success' || (r.status === 'failed' && r.held));
    expect(run).toMatchObject({ status: 'success', attempt: 2 });
    const out = run.output as { env: Record<string, string> };
    expect(out.env).toMatchObject({
      GAFFER_KIND: 'job',
      GAFFER_JOB: 'nightly-export',
      GAFFER_JOB_ID: jobId,
      GAFFER_RUN_ID: run.id,
      GAFFER_SLOT: run.slot,
      GAFFER_IDEMPOTENCY_KEY: run.idempotencyKey,
      GAFFER_ATTEMPT: '2',
      GAFFER_COMPLETED_STEPS: JSON.stringify(['extract', 'upload']),
    });
    const steps = g.core.jobs.getRun(run.id).steps.map((s) => [s.step, s.ref, s.attempt]);
    expect(steps).toEqual([
      ['extract', 'ref-extract-1', 1],
      ['upload', 'ref-upload-1', 1],
    ]);
    // The run's log tells the story per attempt: the steps recorded by the first, none by the second.
    const story = described(await logsOf(g, 'runs', run.id));
    expect(story).toEqual(expect.arrayContaining(['1 stdout hello from job attempt 1', '1 agent step "extract" recorded', '1 agent step "upload" recorded', '2 stdout hello from job attempt 2']));
    expect(story.filter((l) => l.startsWith('2 ') && l.includes('recorded'))).toEqual([]);
    // Each attempt printed a ::gaffer:: usage line: the run's usage is both summed.
    expect(await usageOf(g, 'runs', run.id)).toEqual({ inputTokens: 14, outputTokens: 0, costUsd: 0.5 });
  });

  it('jobs: 65 holds the run as fatal, 77 holds it for a human, anything else is retried', async () => {
    const g = await gaffer();
    startAgent(g, ['--no-tasks']);
    await waitFor(() => g.core.instances.list().some((i) => i.status === 'online'), 'the agent to connect');
    const fatal = await triggerAndWait(g, createJob(g, 'fatal-job', { codes: [65] }));
    expect(fatal).toMatchObject({ status: 'failed', errorClass: 'fatal', held: true, attempt: 1 });
    expect(fatal.lastError).toMatch(/^exit 65 \(fatal\)/);
    const human = await triggerAndWait(g, createJob(g, 'human-job', { codes: [77] }));
    expect(human).toMatchObject({ status: 'failed', errorClass: 'needs_human', held: true });
    const other = await triggerAndWait(g, createJob(g, 'flaky-job', { codes: [9, 0] }), (r) => r.status === 'success');
    expect(other).toMatchObject({ status: 'success', attempt: 2 });
  });

  it('jobs: a command that exits 77 asks a human; approved, it runs again with the approval in its trigger; rejected, it stays failed', async () => {
    const g = await gaffer();
    // The whole trigger is on stdin: the approval is there when the operator approved the run.
    const asker = "let s='';process.stdin.on('data',(d)=>s+=d).on('end',()=>{const t=JSON.parse(s);if(!t.approval){process.stderr.write('refund 40 EUR?\\n');process.exit(77)}require('node:fs').writeFileSync(process.env.GAFFER_OUTPUT_FILE,JSON.stringify({refunded:40,note:t.approval.note}));process.exit(0)})";
    startAgent(g, ['--no-tasks'], [node, '-e', asker]);
    await waitFor(() => g.core.instances.list().some((i) => i.status === 'online'), 'the agent to connect');
    const held = await triggerAndWait(g, createJob(g, 'refund-job', {}, { maxAttempts: 1, firstDelayS: 0 }));
    expect(held).toMatchObject({ status: 'failed', errorClass: 'needs_human', held: true });
    expect(g.core.inbox.list().items).toEqual([expect.objectContaining({ kind: 'needs_human', subject: `run:${held.id}` })]);
    g.core.jobs.approvals.approve(held.id, { note: 'goodwill', actor: 'operator:test' });
    await waitFor(() => g.run(held.id).disposition === 'backfilled', 'the approved run to succeed', 20_000).catch((e: Error) => {
      throw new Error(`${e.message}: ${JSON.stringify(g.run(held.id))} ${JSON.stringify(g.core.auditQuery.query({ subject: `run:${held.id}`, limit: 50 }).items.map((i) => [i.type, i.actor, i.detail]))}`);
    });
    expect(g.run(held.id).output).toEqual({ refunded: 40, note: 'goodwill' });
    expect(g.core.inbox.counts().open).toBe(0);

    const second = await triggerAndWait(g, createJob(g, 'refund-job-2', {}, { maxAttempts: 1, firstDelayS: 0 }));
    expect(g.core.jobs.approvals.reject(second.id, { note: 'no', actor: 'operator:test' })).toMatchObject({ status: 'failed', disposition: 'rejected' });
  });

  it('force-release kills the command and its grandchild within 15 s, and nothing is reported for it', async () => {
    // A short lock window makes the SDK renew every second; the refused renewal (or the lock_lost
    // push, where the hub sends it) aborts the handler.
    const g = await gaffer({ config: { lockWindowS: 4 } });
    const pidFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gaffer-fr-')), 'pids');
    const id = g.createTask('long job', { family: pidFile, sleepMs: 120_000, ignoreTerm: true }).id;
    const a = startAgent(g, ['--max-tasks', '1', '--kill-after-s', '2']);
    const [pid, grandchild] = await readPids(pidFile);
    const holder = g.task(id).lock!.instanceId;
    g.core.tasks.forceRelease({ taskId: id, reason: 'operator wants it back', actor: 'test' });
    const took = await waitFor(() => !running(pid) && !running(grandchild), 'the command and its grandchild to end', 15_000);
    expect(took).toBeLessThan(15_000);
    expect(await a.exit).toBe(0);
    const after = g.task(id);
    expect(after).toMatchObject({ status: 'backlog', note: null, output: null });
    // The holder claimed and renewed; its next renewal was refused (that is how it learnt). No report.
    const byHolder = g.core.auditQuery.query({ subject: `task:${id}`, limit: 100 }).items.filter((e) => e.actor === holder);
    const reports = byHolder.filter((e) => !['lock.claim', 'lock.renew'].includes(e.type) && !(e.type === 'lock.reject' && (e.detail as { op?: string }).op === 'renew'));
    expect(byHolder.map((e) => e.type)).toContain('lock.claim');
    expect(reports).toEqual([]);
  });

  it('force-release reaches the command through the lock_lost push: with the default lock window (renewals every 30 min) it and its grandchild end within 15 s', async () => {
    const g = await gaffer();
    const pidFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gaffer-push-')), 'pids');
    const id = g.createTask('long job', { family: pidFile, sleepMs: 120_000, ignoreTerm: true }).id;
    const a = startAgent(g, ['--max-tasks', '1', '--kill-after-s', '2']);
    const [pid, grandchild] = await readPids(pidFile);
    const t0 = Date.now();
    g.core.tasks.forceRelease({ taskId: id, reason: 'operator wants it back', actor: 'test' });
    await waitFor(() => !running(pid) && !running(grandchild), 'the command and its grandchild to end', 15_000);
    // SIGTERM is ignored by both: they needed the SIGKILL 2 s later, and nothing more.
    expect(Date.now() - t0).toBeLessThan(6000);
    expect(await a.exit).toBe(0);
    expect(g.task(id)).toMatchObject({ status: 'backlog', note: null });
    // Nothing more can be logged for work taken away: the agent's own log says what happened.
    expect(a.log.join('')).toMatch(new RegExp(`task ${id} #1: taken away: .*(force_release|lock)`));
  });

  it('run_cancelled (the operator cancels the run) stops the run\'s command and grandchild; nothing is reported for it', async () => {
    const g = await gaffer();
    startAgent(g, ['--no-tasks', '--kill-after-s', '2']);
    await waitFor(() => g.core.instances.list().some((i) => i.status === 'online'), 'the agent to connect');
    const pidFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gaffer-cancel-')), 'pids');
    const jobId = createJob(g, 'long-job', { family: pidFile, sleepMs: 120_000 });
    const { run } = g.core.jobs.triggerNow(jobId, { reason: 'test', actor: 'test' });
    const [pid, grandchild] = await readPids(pidFile);
    const holder = g.run(run.id).instanceId!;
    expect(g.core.jobs.cancelRun(run.id, { reason: 'wrong input', actor: 'test' })).toMatchObject({ status: 'failed', lastError: 'cancelled by test: wrong input' });
    await waitFor(() => !running(pid) && !running(grandchild), 'the run\'s command to end', 15_000);
    await new Promise((r) => setTimeout(r, 300));
    const trail = g.core.auditQuery.query({ subject: `run:${run.id}`, limit: 100 }).items;
    expect(trail.filter((e) => e.actor === holder && /result|finished|reject/.test(e.type))).toEqual([]);
    expect(trail.find((e) => e.type === 'trigger.cancel')).toMatchObject({ detail: { instanceId: holder, reason: 'operator' } });
    expect(g.run(run.id)).toMatchObject({ status: 'failed', errorClass: 'lost' });
  });

  it('a spend cap passed by the usage the command prints stops it at once: a run held for its budget, a task blocked; the command and its grandchild end', async () => {
    const g = await gaffer();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gaffer-budget-'));
    // The task: the usage line passes its cap of $1 while the command still has minutes to go.
    const taskPids = path.join(dir, 'task-pids');
    const { task } = g.core.tasks.create({ title: 'expensive task', role: 'cmd', budget: { maxCostUsdPerRun: 1 }, payload: { family: taskPids, sleepMs: 120_000, usage: { costUsd: 1.5 } } }, { actor: 'test' });
    const a = startAgent(g, ['--max-tasks', '1', '--kill-after-s', '2']);
    const [pid, grandchild] = await readPids(taskPids);
    await waitFor(() => !running(pid) && !running(grandchild), 'the task command and its grandchild to end', 15_000);
    expect(await a.exit).toBe(0);
    expect(g.task(task.id)).toMatchObject({ status: 'blocked', lock: null, note: expect.stringMatching(/^spend cap passed: \$1\.50 spent/) });
    expect(a.log.join('')).toMatch(new RegExp(`task ${task.id} #1: taken away: .*budget`));

    // The run: the same through run_cancelled (budget); the run is held for the operator.
    startAgent(g, ['--no-tasks', '--kill-after-s', '2']);
    await waitFor(() => g.core.instances.list().filter((i) => i.status === 'online').length === 1, 'the job agent to connect');
    const runPids = path.join(dir, 'run-pids');
    const jobId = g.core.jobs.create(
      { name: 'expensive-job', role: 'cmd', schedule: { everyS: 86_400 }, retry: { maxAttempts: 1, firstDelayS: 0 }, budget: { maxTokensPerRun: 1000 }, payload: { family: runPids, sleepMs: 120_000, usage: { inputTokens: 900, outputTokens: 200 } } },
      { actor: 'test' },
    ).job.id;
    const held = await triggerAndWait(g, jobId, (r) => r.held === true);
    const [runPid, runGrandchild] = await readPids(runPids);
    await waitFor(() => !running(runPid) && !running(runGrandchild), 'the run command and its grandchild to end', 15_000);
    expect(held).toMatchObject({ status: 'failed', disposition: 'held', errorClass: 'budget' });
    expect(g.core.inbox.list({ kind: 'budget' }).items.map((i) => i.subject).sort()).toEqual([`run:${held.id}`, `task:${task.id}`].sort());
  });

  it('a fake Claude CLI whose messages carry usage is stopped by the run\'s cost cap before its result: priced live by Gaffer, command killed, its lines kept', async () => {
    const g = await gaffer();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gaffer-live-cost-'));
    const pidFile = path.join(dir, 'claude-pid');
    const fakeClaude = path.join(repo, 'src-main', 'cli', 'agent', 'testing', 'fake-claude.mjs');
    // 100k input tokens of claude-sonnet-4-5 a message: $0.30 + 50 output tokens ($0.00075); the cap is $0.50.
    startAgent(g, ['--no-tasks', '--kill-after-s', '2', '--parse', 'claude-stream-json'], [node, fakeClaude, '20', '100000', '300', pidFile]);
    await waitFor(() => g.core.instances.list().filter((i) => i.status === 'online').length === 1, 'the job agent to connect');
    const jobId = g.core.jobs.create({ name: 'claude-job', role: 'cmd', schedule: { everyS: 86_400 }, retry: { maxAttempts: 1, firstDelayS: 0 }, budget: { maxCostUsdPerRun: 0.5 } }, { actor: 'test' }).job.id;
    const held = await triggerAndWait(g, jobId, (r) => r.held === true);
    expect(held).toMatchObject({ status: 'failed', disposition: 'held', errorClass: 'budget' });
    const pid = Number(fs.readFileSync(pidFile, 'utf8'));
    await waitFor(() => !running(pid), 'the fake claude to be killed', 15_000);
    // Stopped on the estimate of its second message: priced by Gaffer, long before the 20th and the result.
    const usage = await usageOf(g, 'runs', held.id);
    expect(usage).toMatchObject({ inputTokens: 200_000, costUsd: expect.closeTo(0.6015, 9) });
    const texts = (await logsOf(g, 'runs', held.id)).map((l) => l.text);
    expect(texts).toContain('step 1 done');
    expect(texts.some((t) => t.startsWith('claude finished'))).toBe(false);
    expect(g.core.inbox.list({ kind: 'budget' }).items.map((i) => i.subject)).toEqual([`run:${held.id}`]);
  });

  it('text cut to fit a note never splits a character: the report is stored (an emoji cut in half was refused)', async () => {
    const g = await gaffer();
    const id = g.createTask('prints emoji', {}).id;
    const script = "process.stderr.write('x' + '\\u{1F600}'.repeat(400) + '\\n'); process.exit(3)";
    const a = startAgent(g, ['--max-tasks', '1'], [node, '-e', script]);
    expect(await a.exit).toBe(0);
    const task = g.task(id);
    expect(task.status).toBe('failed');
    expect(task.note).toMatch(/^exit 3; last stderr line: x\u{1F600}+/u);
    expect(isWellFormedText(task.note!)).toBe(true);
  });

  it('a command that cannot start: refused before connecting (78); one that stops starting later is reported fatal and the agent stops', async () => {
    const g = await gaffer();
    const missing = startAgent(g, [], ['/nonexistent/claude', '-p']);
    expect(await missing.exit).toBe(78);
    expect(missing.log.join('')).toMatch(/cannot start the command: \/nonexistent\/claude does not exist \(ENOENT\)/);
    expect(g.core.instances.list()).toEqual([]);

    const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'gaffer-gone-'));
    const later = startAgent(g, ['--cwd', cwd]);
    await waitFor(() => g.core.instances.list().length === 1, 'the agent to connect');
    fs.rmSync(cwd, { recursive: true });
    const failing = g.createTask('spawn fails', {}, { priority: 9 }).id;
    const untouched = g.createTask('left alone', {}, { priority: 1 }).id;
    expect(await later.exit).toBe(78);
    expect(g.task(failing)).toMatchObject({ status: 'failed', note: expect.stringMatching(/^the command could not start: ENOENT/) });
    expect(g.task(untouched)).toMatchObject({ status: 'backlog', attempt: 0 });
  });

  it('shutdown: a graceful stop while a claim is on its way runs that task within the grace (it is not handed back)', async () => {
    const g = await gaffer();
    const id = g.createTask('claimed as the stop comes', { sleepMs: 300 }).id;
    const a = startAgent(g, ['--grace-s', '30']);
    // The stop lands after Gaffer committed the claim and before its reply reaches the agent.
    const off = g.core.events.on('task.claimed', (e) => {
      if (e.task.id === id) a.agent.shutdown('graceful');
    });
    cleanups.push(() => off.dispose());
    expect(await a.exit).toBe(0);
    expect(g.task(id)).toMatchObject({ status: 'done' });
  });

  it('shutdown: graceful lets the command finish; "now" stops it and hands the task back', async () => {
    const g = await gaffer();
    const slow = g.createTask('slow', { sleepMs: 1500 }).id;
    const a = startAgent(g, ['--grace-s', '30']);
    await untilTask(g, slow, (t) => t.status === 'in_progress', 'the claim');
    a.agent.shutdown('graceful');
    expect(await a.exit).toBe(0);
    expect(g.task(slow).status).toBe('done');

    const stuck = g.createTask('stuck', { sleepMs: 120_000 }).id;
    const b = startAgent(g, ['--grace-s', '30']);
    await eventually(async () => (await logsOf(g, 'tasks', stuck)).some((l) => l.text.startsWith('hello')), 'the command to start');
    b.agent.shutdown('graceful');
    b.agent.shutdown('now');
    expect(await b.exit).toBe(0);
    expect(g.task(stuck)).toMatchObject({ status: 'backlog', note: expect.stringMatching(/^the agent shut down before the command finished/) });
  });
});

/**
 * After a test (passed or not): close the agent's lifeline (it runs with --exit-on-stdin-close, so
 * it stops its commands and exits), and SIGKILL it if it is still there a few seconds later.
 */
async function endAgent(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.stdin?.end();
  const t = setTimeout(() => child.kill('SIGKILL'), 8000);
  await exited;
  clearTimeout(t);
}

describe.skipIf(!posix)('the real `gaffer agent` process', () => {
  it('Ctrl-C: stops claiming, lets the command finish within the grace; the second Ctrl-C stops it and hands the task back', async () => {
    const g = await gaffer();
    const first = g.createTask('finishes in the grace', { sleepMs: 1500 }, { priority: 2 }).id;
    const second = g.createTask('not claimed after Ctrl-C', {}, { priority: 1 }).id;
    const env = { ...process.env, GAFFER_TOKEN: g.token('cmd') };
    const child = spawn(node, [path.join(repo, 'scripts', 'gaffer.mjs'), 'agent', '--url', g.server.agentUrl, '--role', 'cmd', '--poll-s', '0.1', '--exit-on-stdin-close', '--verbose', '--', node, scripted], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    cleanups.push(() => endAgent(child));
    let stderr = '';
    child.stderr.on('data', (c) => (stderr += c));
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    await untilTask(g, first, (t) => t.status === 'in_progress', 'the first claim', 20_000);
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(g.task(first).status).toBe('done');
    expect(g.task(second).status).toBe('backlog');
    expect(stderr).toContain('SIGINT: no new work; finishing what runs');
    expect(stderr).toContain('[task 1 #1] stdout | hello from task attempt 1'); // --verbose
    expect(stderr).toMatch(/task 1 #1: exit 0 \(done\) after [\d.]+ s/);

    const stuck = g.createTask('stopped by the second Ctrl-C', { sleepMs: 120_000 }, { priority: 9 }).id;
    const again = spawn(node, [path.join(repo, 'scripts', 'gaffer.mjs'), 'agent', '--url', g.server.agentUrl, '--role', 'cmd', '--poll-s', '0.1', '--exit-on-stdin-close', '--', node, scripted], { env, stdio: ['pipe', 'ignore', 'ignore'] });
    const exitedAgain = new Promise<number | null>((r) => again.on('exit', (code) => r(code)));
    cleanups.push(() => endAgent(again));
    await untilTask(g, stuck, (t) => t.status === 'in_progress', 'the claim', 20_000);
    await new Promise((r) => setTimeout(r, 300));
    again.kill('SIGINT');
    await new Promise((r) => setTimeout(r, 200));
    again.kill('SIGINT');
    expect(await exitedAgain).toBe(0);
    expect(g.task(stuck).status).toBe('backlog');
  });

  it('gaffer agent --help documents the flags; a missing token is a clear error', async () => {
    const run = (args: string[], env: NodeJS.ProcessEnv) =>
      new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
        const c = spawn(node, [path.join(repo, 'scripts', 'gaffer.mjs'), ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
        let out = '';
        let err = '';
        c.stdout.on('data', (d) => (out += d));
        c.stderr.on('data', (d) => (err += d));
        c.on('exit', (code) => resolve({ code, out, err }));
      });
    const help = await run(['agent', '--help'], process.env);
    expect(help.code).toBe(0);
    expect(help.out).toContain('--parse FORMAT');
    const { GAFFER_TOKEN: _t, ...noToken } = process.env;
    const missing = await run(['agent', '--role', 'dev', '--', 'true'], noToken);
    expect(missing.code).toBe(2);
    expect(missing.err).toContain('GAFFER_TOKEN is not set');
  });
});

describe.skipIf(!posix)('gaffer on PATH, outside the repository (README, "gaffer on your PATH")', () => {
  it('a bin link like the one `npm link` / `npm install -g .` makes runs from another directory', async () => {
    // What npm does for package.json's "bin": a symlink to scripts/gaffer.mjs in a bin directory.
    const pkg = JSON.parse(fs.readFileSync(path.join(repo, 'package.json'), 'utf8')) as { bin: Record<string, string> };
    expect(pkg.bin).toEqual({ gaffer: 'scripts/gaffer.mjs' });
    expect(fs.readFileSync(path.join(repo, pkg.bin.gaffer!), 'utf8').startsWith('#!/usr/bin/env node\n')).toBe(true);
    expect(fs.statSync(path.join(repo, pkg.bin.gaffer!)).mode & 0o111).not.toBe(0);
    const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), 'gaffer-elsewhere-'));
    fs.mkdirSync(path.join(elsewhere, 'bin'));
    fs.symlinkSync(path.join(repo, pkg.bin.gaffer!), path.join(elsewhere, 'bin', 'gaffer'));
    const r = await new Promise<{ code: number | null; out: string }>((resolve) => {
      const c = spawn('gaffer', ['agent', '--help'], { cwd: elsewhere, env: { ...process.env, PATH: `${path.join(elsewhere, 'bin')}:${path.dirname(node)}:/usr/bin:/bin` }, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      c.stdout.on('data', (d) => (out += d));
      c.stderr.on('data', (d) => (out += d));
      c.on('exit', (code) => resolve({ code, out }));
    });
    expect(r.code, r.out).toBe(0);
    expect(r.out).toContain('--parse FORMAT');
  });
});

describe.skipIf(!posix)('the recipes in docs/command-agent.md, run as written', () => {
  const doc = fs.readFileSync(path.join(repo, 'docs', 'command-agent.md'), 'utf8');
  const recipes = doc.slice(doc.indexOf('## Recipes'), doc.indexOf('## What the command gets')).split('\n').filter((l) => l.startsWith('gaffer agent '));
  const fixtures = path.join(repo, 'src-main', 'cli', 'agent', 'adapters', 'fixtures');
  const fakeCli = path.join(repo, 'src-main', 'cli', 'agent', 'testing', 'fake-cli.mjs');

  /**
   * Stand-ins for the CLIs on PATH: each records its argv, its stdin and the answer variables (one
   * JSON line per call), then replays its documented output; `resumed` is replayed instead when
   * GAFFER_RESUME_SESSION is set.
   */
  function fakeClis(replays: Record<string, { fixture: string; exit: number; resumed?: { fixture: string; exit: number } }> = {}) {
    const bin = fs.mkdtempSync(path.join(os.tmpdir(), 'gaffer-fake-cli-'));
    const record =
      'const fs=require("fs");let stdin="";try{stdin=fs.readFileSync(0,"utf8")}catch{}' +
      'fs.appendFileSync(process.argv[1],JSON.stringify({args:process.argv.slice(2),stdin,resume:process.env.GAFFER_RESUME_SESSION??null,note:process.env.GAFFER_APPROVAL_NOTE??null})+"\\n")';
    for (const [cli, fixture] of [['claude', 'claude-stream.jsonl'], ['codex', 'codex.jsonl'], ['gemini', 'gemini-stream.jsonl']]) {
      const replay = replays[cli!] ?? { fixture: fixture!, exit: 0 };
      const resumed = replay.resumed ?? replay;
      const script =
        `#!/bin/sh\n"${node}" -e '${record}' "${bin}/${cli}.calls" "$@"\n` +
        `if [ -n "$GAFFER_RESUME_SESSION" ]; then exec "${node}" "${fakeCli}" "${path.join(fixtures, resumed.fixture)}" ${resumed.exit}; fi\n` +
        `exec "${node}" "${fakeCli}" "${path.join(fixtures, replay.fixture)}" ${replay.exit}\n`;
      fs.writeFileSync(path.join(bin, cli!), script, { mode: 0o755 });
    }
    type Call = { args: string[]; stdin: string; resume: string | null; note: string | null };
    const callsOf = (cli: string): Call[] =>
      fs.readFileSync(path.join(bin, `${cli}.calls`), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Call);
    return { bin, callsOf };
  }

  function runRecipe(g: LiveGaffer, line: string, extraFlags: string, env: NodeJS.ProcessEnv) {
    // `exec`: the agent replaces the shell, so signals (and the lifeline) reach it.
    const command = line.replace(/^gaffer agent /, `exec "${node}" "${path.join(repo, 'scripts', 'gaffer.mjs')}" agent --exit-on-stdin-close ${extraFlags} `);
    const child = spawn('/bin/sh', ['-c', command], { cwd: repo, env: { ...process.env, GAFFER_URL: g.server.agentUrl, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let log = '';
    child.stdout!.on('data', (d) => (log += d));
    child.stderr!.on('data', (d) => (log += d));
    cleanups.push(() => endAgent(child));
    return { child, exited: new Promise<number | null>((r) => child.on('exit', (c) => r(c))), log: () => log };
  }

  it('finds the recipes (the sixth, a coding agent in a workspace, is not run here: its --workspace mechanics are tested in workspace-agent.test.ts)', () => {
    expect(recipes.map((r) => r.match(/--role (\S+)/)?.[1])).toEqual(['dev', 'dev', 'dev', 'writer', 'backup', 'dev']);
    expect(recipes[5]).toContain('--workspace');
  });

  it('Claude Code, Codex and Gemini CLI: the prompt carries the task, the adapter reads usage and the answer', async () => {
    const g = await gaffer({ role: 'dev' });
    const { bin, callsOf } = fakeClis();
    const expected: Record<string, { usage: UsageTotals; line: string; result: string }> = {
      claude: { usage: { inputTokens: 9250, outputTokens: 77, costUsd: 0.04215 }, line: 'claude finished: success after 3 turns, $0.04215', result: 'Fixed: the handler now answers 401.' },
      codex: { usage: { inputTokens: 25763, outputTokens: 152, costUsd: 0 }, line: 'codex turn completed: 1000 input tokens (900 cached), 30 output tokens', result: 'Also updated the README.' },
      // Gemini's stream has tokens but no cost: Gaffer prices them (gemini-2.5-pro: $1.25 in, $10 out per million).
      gemini: { usage: { inputTokens: 5100, outputTokens: 130, costUsd: expect.closeTo(0.007675, 9) as unknown as number }, line: 'gemini finished: success', result: 'Version 2.0 adds dark mode.\nIt drops Node 18.' },
    };
    for (const [i, cli] of ['claude', 'codex', 'gemini'].entries()) {
      const id = g.createTask(`Fix the login page ${i}`, { ticket: `T-${i}` }).id;
      const r = runRecipe(g, recipes[i]!, '--max-tasks 1 --poll-s 0.1', { PATH: `${bin}:${process.env.PATH}`, GAFFER_TOKEN: g.token('dev') });
      expect(await r.exited, r.log()).toBe(0);
      const task = g.task(id);
      expect(task.status, r.log()).toBe('done');
      // The adapter's usage is the task's usage; its readable lines are the task's log.
      expect(await usageOf(g, 'tasks', id)).toEqual(expected[cli]!.usage);
      expect((await logsOf(g, 'tasks', id)).map((l) => l.text)).toContain(expected[cli]!.line);
      expect((task.output as { result: string }).result).toBe(expected[cli]!.result);
      // The prompt and the task reach the CLI on its stdin, not on its command line (where `ps` shows them).
      const call = callsOf(cli).at(-1)!;
      expect(call.stdin).toContain(`Work on this task: Fix the login page ${i}.`);
      expect(call.stdin).toContain(`"ticket":"T-${i}"`);
      expect(call.args.join(' ')).not.toContain('Fix the login page');
    }
  });

  it('answering a question: a blocked task unblocked with a note continues the same Claude session with that note, even after the agent process restarted', async () => {
    const g = await gaffer({ role: 'dev' });
    // First call: Claude asks (exit 77, blocked). Resumed: it finishes.
    const { bin, callsOf } = fakeClis({ claude: { fixture: 'claude-stream.jsonl', exit: 77, resumed: { fixture: 'claude-stream.jsonl', exit: 0 } } });
    const id = g.createTask('Refund the customer?', { ticket: 'T-9' }).id;
    const env = { PATH: `${bin}:${process.env.PATH}`, GAFFER_TOKEN: g.token('dev') };
    // The first process asks and exits; a new one (nothing in its memory) takes the answered task:
    // the session comes from the server's stored `session` artifact, delivered with the answer.
    const first = runRecipe(g, recipes[0]!, '--max-tasks 1 --poll-s 0.1', env);
    expect(await first.exited, first.log()).toBe(0);
    expect(g.task(id).status).toBe('blocked');
    g.core.tasks.unblock({ taskId: id, reason: 'Yes, refund 40 EUR', actor: 'operator:test' });
    expect(g.task(id)).toMatchObject({ answer: 'Yes, refund 40 EUR', resumeSession: '5f1c2a9e-0c1b-4d7e-9a3f-2b8e6c1d0a42' });
    const r = runRecipe(g, recipes[0]!, '--max-tasks 1 --poll-s 0.1', env);
    expect(await r.exited, r.log()).toBe(0);
    expect(g.task(id).status, r.log()).toBe('done');
    const [firstCall, second] = callsOf('claude');
    expect(firstCall).toMatchObject({ resume: null, note: null });
    expect(second).toMatchObject({ resume: '5f1c2a9e-0c1b-4d7e-9a3f-2b8e6c1d0a42', note: 'Yes, refund 40 EUR' });
    expect(second!.args.slice(0, 4)).toEqual(['--resume', '5f1c2a9e-0c1b-4d7e-9a3f-2b8e6c1d0a42', '-p', 'Yes, refund 40 EUR']);
    // The answer (and its session) was for that attempt only: its report cleared it.
    expect(g.task(id).answer).toBeUndefined();
    expect(g.task(id).resumeSession).toBeUndefined();
    // Each attempt's session is also stored on the server as an artifact of kind `session`.
    const sessions = g.core.logs.artifactsOf(`task:${id}`).filter((a) => a.kind === 'session');
    expect(sessions.map((a) => [a.attempt, a.name, a.data])).toEqual([
      [1, 'claude', { cli: 'claude', sessionId: '5f1c2a9e-0c1b-4d7e-9a3f-2b8e6c1d0a42' }],
      [2, 'claude', { cli: 'claude', sessionId: '5f1c2a9e-0c1b-4d7e-9a3f-2b8e6c1d0a42' }],
    ]);
  });

  it('a CLI that ends in an error result: its own words are the failed task\'s note, not just "exit 1"', async () => {
    const g = await gaffer({ role: 'dev' });
    const { bin } = fakeClis({ claude: { fixture: 'claude-error.jsonl', exit: 1 } });
    const id = g.createTask('Run the nightly QA', {}).id;
    const r = runRecipe(g, recipes[0]!, '--max-tasks 1 --poll-s 0.1', { PATH: `${bin}:${process.env.PATH}`, GAFFER_TOKEN: g.token('dev') });
    expect(await r.exited, r.log()).toBe(0);
    const task = g.task(id);
    expect(task.status).toBe('failed');
    expect(task.note).toMatch(/^API Error: 429 rate_limit_error: Number of request tokens has exceeded your per-minute rate limit; exit 1/);
  });

  it('the Python script: output, usage and a clear refusal of bad input', async () => {
    const g = await gaffer({ role: 'writer' });
    const ok = g.createTask('summarise', { text: 'one two three four five' }, { priority: 2 }).id;
    const bad = g.createTask('no text', { nope: 1 }, { priority: 1 }).id;
    const r = runRecipe(g, recipes[3]!, '--max-tasks 2 --poll-s 0.1', { GAFFER_TOKEN: g.token('writer') });
    expect(await r.exited, r.log()).toBe(0);
    expect(g.task(ok)).toMatchObject({ status: 'done', output: { summary: 'one two three four five', words: 5, attempt: 1 } });
    expect(await usageOf(g, 'tasks', ok)).toEqual({ inputTokens: 5, outputTokens: 5, costUsd: 0 });
    expect(g.task(bad)).toMatchObject({ status: 'failed', note: expect.stringMatching(/^exit 65 \(fatal\); last stderr line: the task's payload needs a "text" string/) });
  });

  it('the shell script for a job: checkpoints each step, names the archive after the slot', async () => {
    const g = await gaffer({ role: 'backup' });
    const source = fs.mkdtempSync(path.join(os.tmpdir(), 'gaffer-src-'));
    fs.writeFileSync(path.join(source, 'notes.txt'), 'keep me');
    const dest = fs.mkdtempSync(path.join(os.tmpdir(), 'gaffer-dest-'));
    const r = runRecipe(g, recipes[4]!, '--poll-s 0.1', { GAFFER_TOKEN: g.token('backup'), BACKUP_SOURCE: source, BACKUP_DEST: dest });
    await waitFor(() => g.core.instances.list().some((i) => i.status === 'online'), 'the agent to connect', 20_000);
    const jobId = g.core.jobs.create({ name: 'nightly-backup', role: 'backup', schedule: { everyS: 86_400 }, retry: { maxAttempts: 2, firstDelayS: 0 } }, { actor: 'test' }).job.id;
    const run = await triggerAndWait(g, jobId).catch((e: Error) => {
      throw new Error(`${e.message}\n${r.log()}`);
    });
    expect(run.status, r.log()).toBe('success');
    const archive = (run.output as { archive: string }).archive;
    expect(archive).toBe(path.join(dest, `backup-${run.slot.replace(/:/g, '-')}.tar.gz`));
    expect(fs.existsSync(archive)).toBe(true);
    expect(g.core.jobs.getRun(run.id).steps.map((s) => [s.step, s.ref])).toEqual([
      ['archive', archive],
      ['verify', null],
    ]);
    r.child.kill('SIGINT');
    expect(await r.exited).toBe(0);
  });
});
