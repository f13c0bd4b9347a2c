import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifySpec, describeVerify } from '../../common/verify';
import { tempDir } from '../tests/test-core';
import { runCheck, type CheckContext } from './checks';
import { VerifyRunner } from './runner';
import { groupAlive } from '../../cli/agent/process-group';
import { running } from '../../cli/agent/testing/processes';

const never = new AbortController().signal;
let dir: string;
let server: http.Server;
let base: string;

function ctx(extra: Partial<CheckContext> = {}): CheckContext {
  return { workspace: { path: dir }, attemptStartedAt: 0, output: null, signal: never, ...extra };
}

beforeAll(async () => {
  dir = tempDir('gaffer-verify-');
  server = http.createServer((req, res) => {
    res.statusCode = req.url === '/ok' ? 200 : 503;
    res.end('x');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('check kinds: each passes and fails', () => {
  it('command: exit 0 passes with the output tail kept; exit 1 fails naming the status', async () => {
    const ok = await runCheck({ kind: 'command', name: 'tests', command: ['sh', '-c', 'echo 12 passing'] }, ctx());
    expect(ok).toMatchObject({ name: 'tests', kind: 'command', passed: true, detail: expect.stringContaining('exited with 0') });
    expect(ok.outputTail).toContain('12 passing');
    const bad = await runCheck({ kind: 'command', name: 'tests', command: ['sh', '-c', 'echo 3 failing >&2; exit 1'] }, ctx());
    expect(bad.passed).toBe(false);
    expect(bad.detail).toContain('exited with 1');
    expect(bad.outputTail).toContain('3 failing');
  });

  it('command: runs in the workspace by default, and fails clearly when it has none', async () => {
    const r = await runCheck({ kind: 'command', name: 'pwd', command: ['pwd'] }, ctx());
    expect(fs.realpathSync(r.outputTail!.trim())).toBe(fs.realpathSync(dir));
    const none = await runCheck({ kind: 'command', name: 'pwd', command: ['true'] }, ctx({ workspace: undefined }));
    expect(none).toMatchObject({ passed: false, detail: expect.stringContaining('no workspace') });
  });

  it('command: one that cannot start is a failure with the reason, not a crash', async () => {
    const r = await runCheck({ kind: 'command', name: 'x', command: ['/no/such/program-gaffer'] }, ctx());
    expect(r.passed).toBe(false);
    expect(r.detail).toMatch(/could not start \/no\/such\/program-gaffer: ENOENT/);
    const noDir = await runCheck({ kind: 'command', name: 'x', command: ['true'], cwd: '/no/such/dir-gaffer' }, ctx());
    expect(noDir.detail).toContain('the directory /no/such/dir-gaffer does not exist');
  });

  it('command: on its timeout the whole process group is ended', async () => {
    const pidFile = path.join(dir, 'grandchild.pid');
    // The check starts a grandchild that would outlive a kill of the leader alone.
    const script = `sleep 60 & echo $! > ${JSON.stringify(pidFile)}; sleep 60`;
    const r = await runCheck({ kind: 'command', name: 'slow', command: ['sh', '-c', script], timeoutS: 0.3 }, ctx());
    expect(r).toMatchObject({ passed: false, detail: expect.stringContaining('did not finish within') });
    const grandchild = Number(fs.readFileSync(pidFile, 'utf8'));
    // Gone (a zombie waiting for init to reap it counts as gone).
    expect(running(grandchild)).toBe(false);
  });

  it('file: exists / non-empty / changed during the attempt', async () => {
    const f = path.join(dir, 'report.md');
    expect((await runCheck({ kind: 'file', name: 'r', path: 'report.md' }, ctx())).passed).toBe(false);
    fs.writeFileSync(f, '');
    expect((await runCheck({ kind: 'file', name: 'r', path: 'report.md' }, ctx())).passed).toBe(true);
    expect(await runCheck({ kind: 'file', name: 'r', path: f, nonEmpty: true }, ctx())).toMatchObject({ passed: false, detail: `${f} is empty` });
    fs.writeFileSync(f, 'hello');
    const mtime = fs.statSync(f).mtimeMs;
    expect((await runCheck({ kind: 'file', name: 'r', path: f, nonEmpty: true, changedDuringAttempt: true }, ctx({ attemptStartedAt: mtime - 1000 }))).passed).toBe(true);
    const old = await runCheck({ kind: 'file', name: 'r', path: f, changedDuringAttempt: true }, ctx({ attemptStartedAt: mtime + 60_000 }));
    expect(old).toMatchObject({ passed: false, detail: expect.stringContaining('before the attempt started') });
  });

  it('git: commits over the base, and a clean tree', async () => {
    const repo = path.join(dir, 'repo');
    fs.mkdirSync(repo);
    const g = (...a: string[]) => execFileSync('git', ['-C', repo, '-c', 'user.name=t', '-c', 'user.email=t@t', ...a], { stdio: 'pipe' });
    g('init', '-q', '-b', 'main');
    g('commit', '-q', '--allow-empty', '-m', 'base');
    g('checkout', '-q', '-b', 'gaffer/task-1');
    const ws = { workspace: { path: repo, base: 'main' } };
    expect(await runCheck({ kind: 'git', name: 'g' }, ctx(ws))).toMatchObject({ passed: false, detail: '0 commits over main, expected at least 1' });
    fs.writeFileSync(path.join(repo, 'a.txt'), 'a');
    g('add', 'a.txt');
    g('commit', '-q', '-m', 'work');
    expect(await runCheck({ kind: 'git', name: 'g', clean: true }, ctx(ws))).toMatchObject({ passed: true, detail: '1 commit over main, nothing uncommitted' });
    fs.writeFileSync(path.join(repo, 'b.txt'), 'b');
    expect(await runCheck({ kind: 'git', name: 'g', clean: true }, ctx(ws))).toMatchObject({ passed: false, detail: '1 uncommitted change (b.txt)' });
    expect(await runCheck({ kind: 'git', name: 'g' }, ctx({ workspace: { path: repo } }))).toMatchObject({ passed: false, detail: expect.stringContaining('no base') });
  });

  it('output: validated against its JSON Schema (ajv)', async () => {
    const schema = { type: 'object', required: ['url'], properties: { url: { type: 'string' } } };
    expect((await runCheck({ kind: 'output', name: 'o', schema }, ctx({ output: { url: 'x' } }))).passed).toBe(true);
    const bad = await runCheck({ kind: 'output', name: 'o', schema }, ctx({ output: { link: 'x' } }));
    expect(bad).toMatchObject({ passed: false, detail: expect.stringContaining("must have required property 'url'") });
    expect((await runCheck({ kind: 'output', name: 'o', schema }, ctx({ output: null }))).detail).toBe('no output was reported');
  });

  it('http: the status matches (2xx by default, or the one expected)', async () => {
    expect((await runCheck({ kind: 'http', name: 'h', url: `${base}/ok` }, ctx())).passed).toBe(true);
    expect(await runCheck({ kind: 'http', name: 'h', url: `${base}/down` }, ctx())).toMatchObject({ passed: false, detail: expect.stringContaining('answered 503, expected 2xx') });
    expect((await runCheck({ kind: 'http', name: 'h', url: `${base}/down`, expectStatus: 503 }, ctx())).passed).toBe(true);
  });
});

describe('the runner', () => {
  it('runs at most its concurrency at once, and stop() ends running checks’ processes', async () => {
    const runner = new VerifyRunner(1);
    const pids: number[] = [];
    const done: string[] = [];
    const marker = path.join(dir, 'running');
    const slow = { kind: 'command' as const, name: 's', command: ['sh', '-c', `echo $$ >> ${marker}; sleep 60`] };
    runner.submit({ key: 'a', checks: [slow], context: { workspace: { path: dir }, attemptStartedAt: 0, output: null }, finished: () => done.push('a') });
    runner.submit({ key: 'b', checks: [slow], context: { workspace: { path: dir }, attemptStartedAt: 0, output: null }, finished: () => done.push('b') });
    expect(runner.submit({ key: 'a', checks: [slow], context: { attemptStartedAt: 0, output: null }, finished: () => {} })).toBe(false);
    // Only one process at a time: wait for the first to print its pid.
    for (let i = 0; i < 200 && pids.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 20));
      if (fs.existsSync(marker)) pids.push(...fs.readFileSync(marker, 'utf8').trim().split('\n').map(Number));
    }
    await new Promise((r) => setTimeout(r, 100));
    expect(fs.readFileSync(marker, 'utf8').trim().split('\n')).toHaveLength(1);
    expect(runner.pending).toBe(2);
    runner.stop();
    await runner.idle();
    for (let i = 0; i < 100 && groupAlive(pids[0]!); i++) await new Promise((r) => setTimeout(r, 20));
    expect(groupAlive(pids[0]!)).toBe(false);
    expect(done).toEqual([]);
  });
});

describe('declarations', () => {
  it('are described in plain words', () => {
    const spec = verifySpec.parse({ checks: [{ kind: 'command', name: 'tests', command: ['npm', 'test'] }, { kind: 'git', name: 'commit' }] });
    expect(describeVerify(spec)).toBe('done when `npm test` passes in the workspace and the branch has a commit; otherwise it is tried again, told what failed.');
  });
  it('refuse two checks of one name', () => {
    const r = verifySpec.safeParse({ checks: [{ kind: 'file', name: 'a', path: 'x' }, { kind: 'file', name: 'a', path: 'y' }] });
    expect(r.success).toBe(false);
  });
});
