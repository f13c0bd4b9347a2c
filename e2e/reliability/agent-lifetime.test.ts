/**
 * Scenario — kill -9 of a plain `gaffer agent` while its command runs (real headless server, real
 * `gaffer agent` processes, a shell command with a child, a grandchild and a process that left the
 * group with setsid).
 *
 * Expected outcome:
 * - within 2 s of the kill every process of the command's family is gone: the command, its child
 *   and grandchild (its process group) and the setsid escapee (found by the attempt's
 *   GAFFER_LIFELINE marker). The agent's watchdog does it: it holds a pipe from the agent, which
 *   the kernel closes when the agent dies.
 * - once the lock is released (reconnect grace), the task is claimed again (attempt 2, previously
 *   expired) by another agent and, while attempt 2 runs, no process of attempt 1 exists: one
 *   executor, never two.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { apiOk, createAgentToken } from './lib/http';
import { figures, until } from './lib/mode';
import { killAllChildren, ROOT, spawnTsx, type Proc } from './lib/procs';
import { freePort, newOperatorToken, startServer, tempDir, removeTempDirs } from './lib/server';

const GAFFER = path.join(ROOT, 'scripts', 'gaffer.mjs');
const linux = process.platform === 'linux' && fs.existsSync('/usr/bin/setsid');
const leftovers: number[] = [];

afterAll(async () => {
  await killAllChildren();
  for (const pid of leftovers) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* gone, as it should be */
    }
  }
  removeTempDirs();
});

/** Running: listed by /proc and not a zombie (a reparented one waits for init to reap it). */
function running(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** Pids of running processes whose environment names this task (GAFFER_TASK_ID), by attempt. */
function executors(taskId: number): Map<string, number[]> {
  const byAttempt = new Map<string, number[]>();
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || !running(Number(name))) continue;
    let env: string[];
    try {
      env = fs.readFileSync(`/proc/${name}/environ`, 'utf8').split('\0');
    } catch {
      continue;
    }
    if (!env.includes(`GAFFER_TASK_ID=${taskId}`)) continue;
    const attempt = env.find((e) => e.startsWith('GAFFER_ATTEMPT='))?.slice('GAFFER_ATTEMPT='.length) ?? '?';
    byAttempt.set(attempt, [...(byAttempt.get(attempt) ?? []), Number(name)]);
  }
  return byAttempt;
}

function startAgent(agentUrl: string, token: string, name: string, script: string): Proc {
  return spawnTsx(GAFFER, ['agent', '--url', agentUrl, '--role', 'dev', '--name', name, '--poll-s', '0.2', '--', '/bin/sh', '-c', script], { env: { GAFFER_TOKEN: token } });
}

describe.skipIf(!linux)('kill -9 of a gaffer agent while its command runs', () => {
  it('the command\'s whole family dies with the agent; the task claimed again has one executor', async () => {
    const dir = tempDir('agent-lifetime');
    const s = await startServer({ dataDir: path.join(dir, 'data'), port: await freePort(), operatorToken: newOperatorToken(), lockWindowS: 3, sweepIntervalS: 0.25, reconnectGraceS: 2 });
    // Each attempt: a child and a grandchild in the command's group, and one that leaves it.
    const script = [
      'sleep 300 & c=$!',
      "sh -c 'sleep 300 & wait' & g=$!",
      'setsid sleep 300 & e=$!',
      `echo "$$ $c $g $e" > '${dir}/attempt-'"$GAFFER_ATTEMPT"`,
      'wait',
    ].join('\n');
    const task = (await apiOk(s.port, s.operatorToken, 'POST', '/tasks', { title: 'long work', role: 'dev' })).json.task.id as number;

    const first = startAgent(s.agentUrl, (await createAgentToken(s.port, s.operatorToken, 'first', 'dev')).token, 'first', script);
    const pidFile = path.join(dir, 'attempt-1');
    await until(() => fs.existsSync(pidFile) && fs.readFileSync(pidFile, 'utf8').trim().split(' ').length === 4, 'attempt 1 to start', 60_000, 50);
    const family = fs.readFileSync(pidFile, 'utf8').trim().split(' ').map(Number);
    // The grandchild: the child of the inner shell.
    await until(() => executors(task).get('1')!.length >= 5, 'the whole family of attempt 1 to run', 10_000, 20);
    const attempt1 = executors(task).get('1')!;
    leftovers.push(...attempt1);
    expect(family.every((p) => attempt1.includes(p))).toBe(true);

    await first.kill9();
    const killedAt = Date.now();
    await until(() => attempt1.every((p) => !running(p)), 'every process of attempt 1 to be gone', 2000, 10).catch((e: Error) => {
      throw new Error(`${e.message}; still running: ${attempt1.filter(running).join(' ')}\n${first.output().slice(-2000)}`);
    });
    const goneAfterMs = Date.now() - killedAt;

    // The lock is released after the reconnect grace; another agent claims the task again.
    const second = startAgent(s.agentUrl, (await createAgentToken(s.port, s.operatorToken, 'second', 'dev')).token, 'second', script);
    await until(() => fs.existsSync(path.join(dir, 'attempt-2')) && fs.readFileSync(path.join(dir, 'attempt-2'), 'utf8').trim().split(' ').length === 4, 'attempt 2 to start', 60_000, 50);
    const claimed = (await apiOk(s.port, s.operatorToken, 'GET', `/tasks/${task}`)).json.task;
    expect(claimed).toMatchObject({ status: 'in_progress', attempt: 2 });
    const now = executors(task);
    leftovers.push(...(now.get('2') ?? []));
    expect([...now.keys()]).toEqual(['2']);

    // Stopping the second agent at once ends its command too (a normal exit, the same watchdog).
    second.signal('SIGTERM');
    second.signal('SIGTERM');
    await second.exited;
    await until(() => executors(task).size === 0, 'attempt 2 to be ended with its agent', 15_000, 50);
    figures('agent-lifetime', { familySize: attempt1.length, goneAfterMs });
    await s.stop();
  }, 180_000);
});
