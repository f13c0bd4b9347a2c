/** Real processes: a child that starts a grandchild, ended as one group. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { GroupChild } from './process-group';
import { familyScript, readPids, running, waitFor } from './testing/processes';

const posix = process.platform !== 'win32';
const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'gaffer-pg-'));

function family(opts: Parameters<typeof familyScript>[1] = {}) {
  const pidFile = path.join(tmp(), 'pids');
  const child = new GroupChild({ command: '/bin/sh', args: ['-c', familyScript(pidFile, opts)], env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } });
  return { child, pids: readPids(pidFile) };
}

describe.skipIf(!posix)('GroupChild (process groups are POSIX)', () => {
  it('runs the child as the leader of its own group, and terminate() ends the child and its grandchild', async () => {
    const { child, pids } = family();
    const [pid, grandchild] = await pids;
    expect(pid).toBe(child.pid);
    expect(fs.readFileSync(`/proc/${grandchild}/stat`, 'utf8').split(') ')[1]!.split(' ')[2]).toBe(String(pid)); // pgrp = the child's pid
    expect(await child.terminate(5000)).toBe('terminated');
    expect(await child.exited).toMatchObject({ code: null, signal: 'SIGTERM' });
    expect(running(grandchild)).toBe(false);
  });

  it('SIGKILLs the group when SIGTERM is ignored, after the delay', async () => {
    const { child, pids } = family({ ignoreTerm: true });
    const [, grandchild] = await pids;
    const t0 = Date.now();
    expect(await child.terminate(300)).toBe('killed');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(300);
    expect(await child.exited).toMatchObject({ signal: 'SIGKILL' });
    expect(running(grandchild)).toBe(false);
  });

  it('settled() ends what a child left behind when it exited normally', async () => {
    const { child, pids } = family({ exitAfterSpawn: true });
    const [, grandchild] = await pids;
    expect(await child.settled(2000)).toMatchObject({ code: 0 });
    expect(running(grandchild)).toBe(false);
  });

  it('a command that cannot start resolves with the OS error instead of throwing', async () => {
    const missing = new GroupChild({ command: '/nonexistent/tool', args: [], env: {} });
    expect((await missing.exited).spawnError?.code).toBe('ENOENT');
    expect(await missing.terminate(100)).toBe('gone');
    const dir = tmp();
    const badCwd = new GroupChild({ command: '/bin/true', args: [], env: {}, cwd: path.join(dir, 'gone') });
    expect((await badCwd.exited).spawnError?.code).toBe('ENOENT');
    const plain = path.join(dir, 'plain');
    fs.writeFileSync(plain, 'echo');
    fs.chmodSync(plain, 0o644);
    const notExec = new GroupChild({ command: plain, args: [], env: {} });
    expect((await notExec.exited).spawnError?.code).toBe('EACCES');
  });

  it('waitFor helper really waits (sanity of the helpers the process tests rely on)', async () => {
    const { child, pids } = family();
    const [pid] = await pids;
    expect(running(pid)).toBe(true);
    void child.terminate(1000);
    expect(await waitFor(() => !running(pid), 'the child to end')).toBeLessThan(5000);
  });
});
