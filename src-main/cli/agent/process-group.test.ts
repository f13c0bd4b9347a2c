/** Real processes: a child that starts a grandchild, ended as one group. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { GroupChild, lowerPriority } from './process-group';
import { autogroupNice, autogroups, familyScript, readPids, running, waitFor } from './testing/processes';

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

const hasNice = posix && spawnSync('nice', ['-n', '1', 'true']).status === 0;

describe.skipIf(!hasNice || os.getPriority() >= 6)('the CPU priority of a child (invariant 6)', () => {
  it("a GroupChild runs at its parent's nice value, its session's autogroup included (Linux)", async () => {
    // A parent at nice 6 (as a managed agent is) starts a command in a session of its own.
    const mod = path.join(import.meta.dirname, 'process-group.ts');
    const script = `const { GroupChild } = await import(${JSON.stringify(mod)}); const c = new GroupChild({ command: 'sleep', args: ['30'], env: { PATH: process.env.PATH } }); console.log(c.pid); setTimeout(() => c.terminate(0).then(() => process.exit(0)), 20000); process.stdin.on('end', () => c.terminate(0).then(() => process.exit(0))); process.stdin.resume();`;
    const parent = spawn('nice', ['-n', '6', process.execPath, '--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
    try {
      const pid = await new Promise<number>((resolve, reject) => {
        parent.stdout!.once('data', (d) => resolve(Number(String(d).trim())));
        parent.once('exit', (code) => reject(new Error(`the parent exited with ${code}`)));
      });
      expect(os.getPriority(pid)).toBe(6);
      if (autogroups) expect(autogroupNice(pid)).toBe(6);
    } finally {
      parent.stdin!.end();
    }
  });

  it.skipIf(!autogroups)("lowerPriority leaves a child's autogroup alone when the child shares its parent's session", async () => {
    const own = autogroupNice(process.pid);
    const child = spawn('sleep', ['30'], { stdio: 'ignore' }); // not detached: this process's session
    try {
      lowerPriority(child.pid!, 5);
      expect(os.getPriority(child.pid!)).toBe(5);
      expect(autogroupNice(child.pid!)).toBe(own);
    } finally {
      child.kill('SIGKILL');
    }
  });
});
