/**
 * No managed process outlives Gaffer: a real headless Gaffer (a child process) runs a per_task
 * agent busy with a command that has a grandchild, and a long_running command with a grandchild;
 * then Gaffer gets SIGTERM, or kill -9. A process that left its group on purpose (setsid) is
 * ended too: by its family's marker, at a clean stop and through the lifeline after kill -9. What
 * nothing could end (the shim killed with Gaffer) is found by its marker and ended by the next
 * start of Gaffer on the same data directory.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ManagedAgent } from '../../common/managed-agents';
import { readPids, running, waitFor } from '../../cli/agent/testing/processes';
import { sourceRoot } from '.';

const root = sourceRoot();
const scripted = path.join(root, 'src-main', 'cli', 'agent', 'testing', 'scripted-command.mjs');
const TOKEN = 'gfo_lifetime-test-operator-token-0123456789';
const hasSetsid = fs.existsSync('/usr/bin/setsid') || fs.existsSync('/bin/setsid');
const linux = process.platform === 'linux';
/** The agents at Gaffer's own priority: at the default nice 10 a loaded 2-core CI machine took over 20 s to start one. */
const AT_GAFFERS_PRIORITY = ['--agent-nice', '0'];

interface GafferProcess {
  proc: ChildProcess;
  url: string;
  api(method: string, p: string, body?: unknown): Promise<any>;
  exited: Promise<number | null>;
}

const started: ChildProcess[] = [];
const pidsToCheck: number[] = [];
afterEach(() => {
  for (const p of started.splice(0)) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
  for (const pid of pidsToCheck.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* gone, as it should be */
    }
  }
});

async function startGaffer(dataDir: string): Promise<GafferProcess> {
  const proc = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'src-main', 'headless', 'main.ts'), '--port', '0', '--data-dir', dataDir, ...AT_GAFFERS_PRIORITY], {
    cwd: root,
    env: { ...process.env, GAFFER_OPERATOR_TOKEN: TOKEN },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.push(proc);
  let out = '';
  proc.stdout!.on('data', (d) => (out += d));
  proc.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
  const port = await new Promise<number>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`gaffer did not start:\n${out}`)), 60_000);
    proc.stdout!.on('data', () => {
      const m = /agents connect to ws:\/\/127\.0\.0\.1:(\d+)\/agent/.exec(out);
      if (m) {
        clearTimeout(t);
        resolve(Number(m[1]));
      }
    });
    void exited.then((code) => reject(new Error(`gaffer exited with ${code}:\n${out}`)));
  });
  const url = `http://127.0.0.1:${port}`;
  return {
    proc,
    url,
    exited,
    async api(method, p, body) {
      const res = await fetch(`${url}/api/v1${p}`, { method, headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, ...(body ? { body: JSON.stringify(body) } : {}) });
      return res.json();
    },
  };
}

/** Two managed agents with work in hand; resolves with every pid that must end with Gaffer. */
async function busyAgents(g: GafferProcess, dir: string, opts: { escapee?: boolean } = {}): Promise<{ pids: number[]; escapee?: number }> {
  const taskPids = path.join(dir, 'task-pids');
  const lrPids = path.join(dir, 'lr-pids');
  const escapeePid = path.join(dir, 'escapee-pid');
  await g.api('POST', '/managed-agents', { name: 'pt', role: 'cmd', command: [process.execPath, scripted] });
  const lrScript = [`sleep 300 &`, `echo "$$ $!" > '${lrPids}'`, 'wait'].join('\n');
  await g.api('POST', '/managed-agents', { name: 'lr', role: 'other', mode: 'long_running', command: ['/bin/sh', '-c', lrScript] });
  await g.api('POST', '/tasks', { title: 'long', role: 'cmd', payload: { family: taskPids, sleepMs: 300_000, ...(opts.escapee ? { escapee: escapeePid } : {}) } });
  const [cmd, grandchild] = await readPids(taskPids);
  const [lr, lrGrandchild] = await readPids(lrPids);
  const agents = ((await g.api('GET', '/managed-agents')).items as ManagedAgent[]).flatMap((a) => a.processes.map((p) => p.pid!));
  const pids = [...agents, cmd, grandchild, lr, lrGrandchild];
  pidsToCheck.push(...pids);
  let escapee: number | undefined;
  if (opts.escapee) {
    await waitFor(() => fs.existsSync(escapeePid) && fs.readFileSync(escapeePid, 'utf8').trim() !== '', 'the escapee');
    escapee = Number(fs.readFileSync(escapeePid, 'utf8'));
    pidsToCheck.push(escapee);
  }
  expect(pids.every(running)).toBe(true);
  return { pids, ...(escapee !== undefined ? { escapee } : {}) };
}

describe.skipIf(!linux)('no managed process outlives Gaffer', () => {
  it('SIGTERM: Gaffer stops its agents (and their commands) before it exits', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gaffer-life-'));
    const g = await startGaffer(path.join(dir, 'data'));
    const { pids } = await busyAgents(g, dir);
    g.proc.kill('SIGTERM');
    expect(await g.exited).toBe(0);
    // Gaffer waited for them: they are gone when it has exited (allow the reparented reaping).
    await waitFor(() => pids.every((p) => !running(p)), 'every managed process to be gone', 5000);
  });

  it.skipIf(!hasSetsid)('SIGTERM: what left its group on purpose (setsid) ends with Gaffer too', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gaffer-life-'));
    const g = await startGaffer(path.join(dir, 'data'));
    const escapees = { lr: path.join(dir, 'lr-escapee'), pt: path.join(dir, 'pt-escapee') };
    const escape = (file: string) => `setsid sh -c 'trap "" TERM; echo $$ > "${file}"; exec sleep 1000' &\nsleep 1000`;
    await g.api('POST', '/managed-agents', { name: 'lr', role: 'other', mode: 'long_running', command: ['/bin/sh', '-c', escape(escapees.lr)] });
    await g.api('POST', '/managed-agents', { name: 'pt', role: 'cmd', command: ['/bin/sh', '-c', escape(escapees.pt)] });
    await g.api('POST', '/tasks', { title: 'escape', role: 'cmd' });
    const pids: number[] = [];
    for (const file of Object.values(escapees)) {
      await waitFor(() => fs.existsSync(file) && fs.readFileSync(file, 'utf8').trim() !== '', `the escapee of ${file}`, 30_000);
      pids.push(Number(fs.readFileSync(file, 'utf8')));
    }
    pidsToCheck.push(...pids);
    expect(pids.every(running)).toBe(true);
    g.proc.kill('SIGTERM');
    expect(await g.exited).toBe(0);
    await waitFor(() => pids.every((p) => !running(p)), 'every escapee to be gone', 5000);
  }, 90_000);

  it('kill -9: the lifeline ends them, what left its group too; what nothing could end is ended by the next start', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gaffer-life-'));
    const data = path.join(dir, 'data');
    const g = await startGaffer(data);
    const { pids, escapee } = await busyAgents(g, dir, { escapee: true });
    // The long-running agent's shim is frozen, then killed with Gaffer: nothing ends its command.
    const agents = (await g.api('GET', '/managed-agents')).items as ManagedAgent[];
    const shim = agents.find((a) => a.name === 'lr')!.processes[0]!.pid!;
    const [lr, lrGrandchild] = await readPids(path.join(dir, 'lr-pids'));
    process.kill(shim, 'SIGSTOP');
    g.proc.kill('SIGKILL');
    await g.exited;
    process.kill(shim, 'SIGKILL');
    const orphans = [lr, lrGrandchild];
    const ended = [...pids.filter((p) => !orphans.includes(p) && p !== shim), escapee!];
    await waitFor(() => ended.every((p) => !running(p)), 'the per_task agent, its command and what that started to end after kill -9', 15_000).catch((e: Error) => {
      throw new Error(`${e.message}: still running ${ended.filter(running).map((p) => `${p} ${fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').replace(/\0/g, ' ')}`).join('; ')}`);
    });
    expect(orphans.every(running)).toBe(true);
    const again = await startGaffer(data);
    await waitFor(() => orphans.every((p) => !running(p)), 'the next start to reap what the frozen shim left', 15_000);
    const restarted = (await again.api('GET', '/managed-agents')).items as ManagedAgent[];
    expect(restarted.map((a) => a.name).sort()).toEqual(['lr', 'pt']);
    again.proc.kill('SIGTERM');
    expect(await again.exited).toBe(0);
  }, 90_000);
});
