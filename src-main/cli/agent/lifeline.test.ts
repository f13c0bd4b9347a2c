/**
 * Real processes: a command's family — its group, what left the group with setsid carrying its
 * marker, and a descendant that also cleared its environment — is ended whole: by the watchdog
 * when the pipe from its agent closes (what kill -9 of the agent does), and by GroupChild when the
 * command exits or is ended.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { Lifeline, LIFELINE_VARIABLE } from './lifeline';
import { GroupChild } from './process-group';
import { running, waitFor } from './testing/processes';

const linux = process.platform === 'linux' && fs.existsSync('/usr/bin/setsid');
const WATCHDOG = path.join(path.dirname(fileURLToPath(import.meta.url)), 'watchdog.mjs');
const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'gaffer-lifeline-'));
const ENV = { PATH: process.env.PATH ?? '/usr/bin:/bin' };

const leftovers: number[] = [];
const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const pid of leftovers.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* gone, as it should be */
    }
  }
});

/**
 * A shell body that starts a grandchild in its group, one that leaves the group (setsid, keeping
 * the environment and so the marker), and one that leaves it and clears its environment; writes
 * "shell grandchild escapee bare" to `pidFile`, then waits (or exits at once with `exit`).
 */
function familyScript(pidFile: string, opts: { ignoreTerm?: boolean; exit?: boolean } = {}): string {
  return [
    opts.ignoreTerm ? "trap '' TERM" : '',
    'sleep 300 & g=$!',
    'setsid sleep 301 & e=$!',
    'setsid env -i sleep 302 & b=$!',
    `echo "$$ $g $e $b" > '${pidFile}'`,
    opts.exit ? 'exit 0' : 'wait',
  ].filter(Boolean).join('\n');
}

async function family(pidFile: string): Promise<{ shell: number; grandchild: number; escapee: number; bare: number }> {
  await waitFor(() => fs.existsSync(pidFile) && fs.readFileSync(pidFile, 'utf8').trim().split(' ').length === 4, 'the pid file');
  const [shell, grandchild, escapee, bare] = fs.readFileSync(pidFile, 'utf8').trim().split(' ').map(Number) as [number, number, number, number];
  leftovers.push(shell, grandchild, escapee, bare);
  await waitFor(() => [shell, grandchild, escapee, bare].every(running), 'the family to run');
  return { shell, grandchild, escapee, bare };
}

/**
 * Whether the watchdog has set up its signal handlers: it has one for SIGHUP (bit 0 of SigCgt in
 * /proc/PID/status), set with the others. (Node catches SIGINT and SIGTERM from its start.)
 */
function ready(pid: number): boolean {
  const m = /SigCgt:\s*([0-9a-f]+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return !!m && (BigInt(`0x${m[1]}`) & 1n) !== 0n;
}

async function startWatchdog(prefix: string): Promise<ChildProcess> {
  const w = spawn(process.execPath, [WATCHDOG, '--marker-prefix', prefix, '--kill-after-ms', '500'], { stdio: ['pipe', 'ignore', 'pipe'], env: ENV });
  children.push(w);
  await waitFor(() => ready(w.pid!), 'the watchdog to be ready');
  return w;
}

function startCommand(script: string, marker: string | undefined): ChildProcess {
  const c = spawn('/bin/sh', ['-c', script], { detached: true, stdio: 'ignore', env: { ...ENV, ...(marker ? { [LIFELINE_VARIABLE]: marker } : {}) } });
  children.push(c);
  return c;
}

describe.skipIf(!linux)('the watchdog (what kill -9 of the agent sets off)', () => {
  it('when the pipe from the agent closes, it ends the listed group and everything carrying its marker, setsid or not', async () => {
    const dir = tmp();
    const watchdog = await startWatchdog('agent-a/');
    const cmd = startCommand(familyScript(path.join(dir, 'pids')), 'agent-a/1');
    startCommand(familyScript(path.join(dir, 'marked-pids')), 'agent-a/2'); // never listed: found by its marker
    const stranger = startCommand(familyScript(path.join(dir, 'stranger-pids')), 'agent-b/1');
    const ours = [await family(path.join(dir, 'pids')), await family(path.join(dir, 'marked-pids'))];
    const theirs = await family(path.join(dir, 'stranger-pids'));
    watchdog.stdin!.write(`+${cmd.pid}\n`);
    // A supervisor's SIGTERM to the agent's group, a Ctrl-C: meant for the agent, not the watchdog.
    watchdog.kill('SIGTERM');
    watchdog.kill('SIGINT');
    await new Promise((r) => setTimeout(r, 100));
    expect([watchdog.exitCode, watchdog.signalCode, running(watchdog.pid!)]).toEqual([null, null, true]);

    watchdog.stdin!.destroy(); // the agent is gone
    const exited = new Promise((r) => watchdog.once('exit', r));
    const pids = ours.flatMap((f) => Object.values(f));
    await waitFor(() => pids.every((p) => !running(p)), `the agent's commands to be gone (left: ${pids.filter(running).join(' ')})`, 10_000);
    await exited;
    expect(watchdog.exitCode).toBe(0);
    // Not ours: another agent's command, however alike.
    expect(Object.values(theirs).every(running)).toBe(true);
    stranger.kill('SIGKILL');
  });

  it('SIGKILLs what ignores SIGTERM, after its delay', async () => {
    const dir = tmp();
    const watchdog = await startWatchdog('agent-c/');
    const cmd = startCommand(familyScript(path.join(dir, 'pids'), { ignoreTerm: true }), 'agent-c/1');
    const f = await family(path.join(dir, 'pids'));
    watchdog.stdin!.write(`+${cmd.pid}\n`);
    watchdog.stdin!.end();
    await waitFor(() => !running(f.shell) && !running(f.grandchild) && !running(f.escapee), 'the family to be killed', 10_000);
    expect(cmd.signalCode ?? (await new Promise((r) => cmd.once('exit', (_c, s) => r(s))))).toBe('SIGKILL');
  });

  it('a group it was told is gone is not signalled (its id may be someone else\'s by then)', async () => {
    const dir = tmp();
    const watchdog = await startWatchdog('agent-d/');
    const unmarked = startCommand(familyScript(path.join(dir, 'pids')), undefined);
    const f = await family(path.join(dir, 'pids'));
    watchdog.stdin!.write(`+${unmarked.pid}\n-${unmarked.pid}\n`);
    watchdog.stdin!.end();
    await new Promise((r) => watchdog.once('exit', r));
    expect([f.shell, f.grandchild, f.escapee].every(running)).toBe(true);
  });
});

describe.skipIf(!linux)('GroupChild with a marker (the agent\'s commands)', () => {
  it('a command that exits leaves nothing behind: what left its group with setsid goes too', async () => {
    const dir = tmp();
    const child = new GroupChild({ command: '/bin/sh', args: ['-c', familyScript(path.join(dir, 'pids'), { exit: true })], env: ENV, marker: { variable: LIFELINE_VARIABLE, value: 'agent-e/1' } });
    const pidFile = path.join(dir, 'pids');
    await waitFor(() => fs.existsSync(pidFile) && fs.readFileSync(pidFile, 'utf8').trim().split(' ').length === 4, 'the pid file');
    const [, grandchild, escapee, bare] = fs.readFileSync(pidFile, 'utf8').trim().split(' ').map(Number) as [number, number, number, number];
    // `bare` cleared its environment and lost its parent when the shell exited: nothing can tell
    // it is of this family (the documented limit). It is cleaned up here, not asserted.
    leftovers.push(grandchild, escapee, bare);
    expect(await child.settled(2000)).toMatchObject({ code: 0 });
    expect(running(grandchild)).toBe(false);
    expect(running(escapee)).toBe(false);
  });

  it('terminate() ends the family, including a descendant that left the group and cleared its environment', async () => {
    const dir = tmp();
    const child = new GroupChild({ command: '/bin/sh', args: ['-c', familyScript(path.join(dir, 'pids'))], env: ENV, marker: { variable: LIFELINE_VARIABLE, value: 'agent-f/1' } });
    const f = await family(path.join(dir, 'pids'));
    expect(fs.readFileSync(`/proc/${f.escapee}/environ`, 'utf8')).toContain(`${LIFELINE_VARIABLE}=agent-f/1`);
    expect(await child.terminate(5000)).toBe('terminated');
    expect(Object.values(f).filter(running)).toEqual([]);
  });

  it('Lifeline: the watchdog runs once a marker is handed out, and exits when the agent closes it', async () => {
    const lifeline = new Lifeline({ env: ENV, killAfterMs: 500, onProblem: () => {} });
    const marker = lifeline.nextMarker();
    expect(marker).toEqual({ variable: LIFELINE_VARIABLE, value: `${lifeline.key}/1` });
    expect(lifeline.nextMarker().value).toBe(`${lifeline.key}/2`);
    const pid = lifeline.watchdogPid!;
    leftovers.push(pid);
    await waitFor(() => running(pid), 'the watchdog');
    const dir = tmp();
    // A command that left its group and was never released: closing the lifeline ends it.
    const cmd = startCommand(familyScript(path.join(dir, 'pids')), marker.value);
    lifeline.hold(cmd.pid);
    const f = await family(path.join(dir, 'pids'));
    lifeline.close();
    await waitFor(() => !running(pid) && Object.values(f).every((p) => !running(p)), 'the watchdog to end the command and exit', 10_000);
  });
});
