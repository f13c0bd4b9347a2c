/**
 * Done means verified (PROTOCOL §13) with real agent processes against a real Gaffer: a retried
 * attempt is told why the last one did not count (`GAFFER_PREVIOUS_ERROR`), and work whose agent
 * was killed -9 between its side effect and its report is found done, not redone.
 * It lives in server/ because the CLI may not import core or server, not even in tests.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CommandAgent } from '../cli/agent/command-agent';
import { parseAgentArgs } from '../cli/agent/options';
import { running, waitFor } from '../cli/agent/testing/processes';
import type { SchedulerConfig } from '../common/config';
import type { VerifySpec } from '../common/verify';
import { tempDir } from '../core/tests/test-core';
import { startLiveGaffer, type LiveGaffer } from './tests/live-gaffer.testkit';

const repo = path.resolve(import.meta.dirname, '..', '..');
const posix = process.platform !== 'win32';
const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function gaffer(config: Partial<SchedulerConfig> = {}): Promise<LiveGaffer> {
  const g = await startLiveGaffer({ config });
  cleanups.push(() => g.close());
  return g;
}

function inProcessAgent(g: LiveGaffer, command: string[]): void {
  const opts = parseAgentArgs(['--url', g.server.agentUrl, '--role', 'cmd', '--poll-s', '0.1', '--quiet', '--', ...command], {});
  if (opts === 'help') throw new Error('unexpected');
  const agent = new CommandAgent(opts, { env: { PATH: process.env.PATH, HOME: process.env.HOME, GAFFER_TOKEN: g.token('cmd') }, writeErr: () => {} });
  const exit = agent.run();
  cleanups.push(async () => {
    agent.shutdown('now');
    await exit;
  });
}

function task(g: LiveGaffer, verify: VerifySpec): number {
  return g.core.tasks.create({ title: 'write the report', role: 'cmd', verify }, { actor: 'operator:test' }).task.id;
}

describe.skipIf(!posix)('done means verified, with real agents', () => {
  it('a failed check sends the task back; the next attempt gets GAFFER_PREVIOUS_ERROR, fixes it, and is done with the evidence over HTTP', async () => {
    const g = await gaffer();
    const ws = tempDir('gaffer-ws-');
    const report = path.join(ws, 'report.md');
    const id = task(g, { checks: [{ kind: 'command', name: 'report written', command: ['test', '-s', report], cwd: ws }] });
    // Says done without doing the work; told what failed, it does it.
    inProcessAgent(g, ['sh', '-c', `if [ -n "$GAFFER_PREVIOUS_ERROR" ]; then printf %s "$GAFFER_PREVIOUS_ERROR" > ${ws}/told; echo ok > ${report}; fi`]);
    await waitFor(() => g.task(id).status === 'done', 'the task to be verified done', 20_000);
    expect(g.task(id).attempt).toBe(2);
    expect(fs.readFileSync(path.join(ws, 'told'), 'utf8')).toBe('verification failed: report written: test exited with 1');
    const { status, body } = await g.api('GET', `/tasks/${id}`);
    expect(status).toBe(200);
    expect(body.task.verification).toMatchObject({ passed: true, attempt: 2, checks: [{ name: 'report written', kind: 'command', passed: true, detail: 'test exited with 0' }] });
    const types = g.core.auditQuery.query({ subject: `task:${id}`, limit: 100 }).items.map((e) => e.type);
    expect(types.filter((t) => t.startsWith('verify.'))).toEqual(['verify.fail', 'verify.pass']);
  });

  it('job runs: the attempt is verifying after its success, retried with GAFFER_PREVIOUS_ERROR when the check fails, then success with the evidence', async () => {
    const g = await gaffer();
    const ws = tempDir('gaffer-ws-');
    const report = path.join(ws, 'report.md');
    const verify: VerifySpec = { checks: [{ kind: 'command', name: 'report written', command: ['test', '-s', report], cwd: ws }] };
    const jobId = g.core.jobs.create({ name: 'nightly-report', role: 'cmd', schedule: { everyS: 86_400 }, retry: { maxAttempts: 3, firstDelayS: 0 }, verify }, { actor: 'test' }).job.id;
    inProcessAgent(g, ['sh', '-c', `if [ -n "$GAFFER_PREVIOUS_ERROR" ]; then printf %s "$GAFFER_PREVIOUS_ERROR" > ${ws}/told; echo ok > ${report}; fi`]);
    const { run } = g.core.jobs.triggerNow(jobId, { reason: 'test', actor: 'test' });
    await waitFor(() => g.run(run.id).status === 'success', 'the run to be verified', 20_000);
    expect(g.run(run.id).attempt).toBe(2);
    expect(fs.readFileSync(path.join(ws, 'told'), 'utf8')).toBe('verification failed: report written: test exited with 1');
    const { body } = await g.api('GET', `/runs/${run.id}`);
    expect(body.run.verification).toMatchObject({ passed: true, attempt: 2, checks: [{ name: 'report written', passed: true }] });
    const phases = g.core.auditQuery.query({ subject: `run:${run.id}`, limit: 100 }).items.map((e) => e.type);
    expect(phases.filter((t) => ['run.verify', 'verify.fail', 'verify.pass', 'run.retry', 'run.succeed'].includes(t))).toEqual(['run.verify', 'verify.fail', 'run.retry', 'run.verify', 'verify.pass', 'run.succeed']);
  });

  it('before: true — the agent is killed -9 after its side effect, before its report: the work is found done (already_done), not redone', async () => {
    const g = await gaffer({ reconnectGraceS: 1, sweepIntervalS: 1 });
    const ws = tempDir('gaffer-ws-');
    const report = path.join(ws, 'report.md');
    const id = task(g, { checks: [{ kind: 'file', name: 'report', path: report, nonEmpty: true }], before: true });
    const pidFile = path.join(ws, 'cmd.pid');
    const agent = spawn(
      process.execPath,
      [path.join(repo, 'scripts', 'gaffer.mjs'), 'agent', '--url', g.server.agentUrl, '--role', 'cmd', '--poll-s', '0.1', '--', 'sh', '-c', `echo $$ > ${pidFile}; echo work > ${report}; sleep 60`],
      { env: { ...process.env, GAFFER_TOKEN: g.token('cmd') }, stdio: ['pipe', 'ignore', 'ignore'] },
    );
    cleanups.push(() => agent.exitCode === null && agent.signalCode === null && agent.kill('SIGKILL'));
    await waitFor(() => fs.existsSync(report) && fs.existsSync(pidFile), 'the side effect', 20_000);
    agent.kill('SIGKILL');
    const cmd = Number(fs.readFileSync(pidFile, 'utf8'));
    cleanups.push(() => running(cmd) && process.kill(cmd, 'SIGKILL'));
    // Its lock expires after the reconnect grace; a second agent would redo the work.
    await waitFor(() => g.task(id).status === 'backlog', 'the lock to expire', 20_000);
    inProcessAgent(g, ['sh', '-c', `touch ${ws}/redone`]);
    await waitFor(() => g.task(id).status === 'done', 'the already-done checks', 20_000);
    expect(g.task(id)).toMatchObject({ status: 'done', disposition: 'already_done', attempt: 1 });
    expect(fs.existsSync(path.join(ws, 'redone'))).toBe(false);
    const { body } = await g.api('GET', `/tasks/${id}`);
    expect(body.task.verification).toMatchObject({ passed: true, before: true, attempt: 1 });
  });
});
