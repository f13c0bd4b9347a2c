/**
 * `gaffer agent --workspace` end to end (PROTOCOL §15): a real Gaffer in this process, the command
 * agent in-process, real git repositories in temporary directories, real commands (sh). What the
 * attempts changed is read back as an operator reads it: `GET /tasks/{id}/artifacts` and `/diff`.
 * It lives in server/ because the CLI may not import core or server, not even in tests.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CommandAgent } from '../cli/agent/command-agent';
import { parseAgentArgs } from '../cli/agent/options';
import { bwrapFailure, checkSandbox, findBwrap } from '../cli/agent/sandbox';
import { sanitiseKey } from '../cli/agent/workspace';
import { OPERATOR_TOKEN, startLiveGaffer, type LiveGaffer } from './tests/live-gaffer.testkit';

const IDENTITY = { GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.invalid', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.invalid' };
const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, env: { ...process.env, ...IDENTITY }, encoding: 'utf8' });

const VAR_TMP = fs.existsSync('/var/tmp') ? '/var/tmp' : os.tmpdir();

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function tmp(prefix: string, under = os.tmpdir()): string {
  const d = fs.mkdtempSync(path.join(under, prefix));
  cleanups.push(() => fs.rmSync(d, { recursive: true, force: true }));
  return d;
}

function repo(under?: string): string {
  const dir = tmp('gaffer-ws-repo-', under);
  git(dir, 'init', '-q', '-b', 'main');
  fs.writeFileSync(path.join(dir, 'README.md'), '# demo\n');
  git(dir, 'add', '.');
  git(dir, 'commit', '-qm', 'first');
  return dir;
}

async function gaffer(): Promise<LiveGaffer> {
  const g = await startLiveGaffer();
  cleanups.push(() => g.close());
  return g;
}

function runAgent(g: LiveGaffer, flags: string[], script: string, extraEnv: Record<string, string> = {}): { exit: Promise<number>; log: string[] } {
  const opts = parseAgentArgs(['--url', g.server.agentUrl, '--role', 'cmd', '--poll-s', '0.1', '--quiet', ...flags, '--', '/bin/sh', '-c', script], {});
  if (opts === 'help') throw new Error('unexpected');
  const log: string[] = [];
  const agent = new CommandAgent(opts, {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, GAFFER_TOKEN: g.token('cmd'), GAFFER_OPERATOR_TOKEN: OPERATOR_TOKEN, ...IDENTITY, ...extraEnv },
    writeErr: (t) => log.push(t),
  });
  const exit = agent.run();
  cleanups.push(async () => {
    agent.shutdown('now');
    await exit;
  });
  return { exit, log };
}

async function until(ok: () => boolean, what: () => string, ms = 20_000): Promise<void> {
  const start = Date.now();
  while (!ok()) {
    if (Date.now() - start > ms) throw new Error(`timed out waiting: ${what()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

interface Artifact {
  attempt: number;
  kind: string;
  name: string;
  data: Record<string, unknown>;
  diffChars?: number;
}

async function diffOf(g: LiveGaffer, id: number, attempt?: number): Promise<{ status: number; text: string }> {
  const res = await fetch(`${g.server.url}/api/v1/tasks/${id}/diff${attempt ? `?attempt=${attempt}` : ''}`, { headers: { authorization: `Bearer ${OPERATOR_TOKEN}` } });
  return { status: res.status, text: await res.text() };
}

/** Prints the attempt's workspace variables into the output file (JSON). */
const REPORT_ENV = `printf '{"ws":"%s","branch":"%s","base":"%s","attempt":"%s","resumed":"%s","pwd":"%s"}' "$GAFFER_WORKSPACE" "$GAFFER_BRANCH" "$GAFFER_BASE" "$GAFFER_ATTEMPT" "$GAFFER_WORKSPACE_RESUMED" "$(pwd)" > "$GAFFER_OUTPUT_FILE"`;

describe.skipIf(process.platform === 'win32')('gaffer agent --workspace against a real Gaffer', () => {
  it('a retry resumes the same branch and tree; the workspace artifact of each attempt and its diff (in parts: > 192 KiB) match git', async () => {
    const g = await gaffer();
    const r = repo();
    fs.writeFileSync(path.join(r, 'README.md'), '# uncommitted in the main checkout\n');
    const base = git(r, 'rev-parse', 'HEAD').trim();
    const id = g.createTask('Write the notes').id;
    // Attempt 1 commits half the work and asks for a retry (75); attempt 2 finds it and finishes.
    const script = [
      'set -e',
      'if [ "$GAFFER_ATTEMPT" = 1 ]; then echo "half" > notes.txt; git add notes.txt; git commit -qm half; exit 75; fi',
      'test -f notes.txt',
      'seq 1 40000 > big.txt',
      'echo "whole" >> notes.txt',
      'git add -A; git commit -qm whole',
      'echo "not committed" > scratch.txt',
      'echo "::gaffer:$GAFFER_CONTROL_TOKEN:: {\\"link\\":\\"https://example.invalid/pr/7\\",\\"name\\":\\"pull request\\"}"',
      REPORT_ENV,
    ].join('\n');
    const a = runAgent(g, ['--max-tasks', '2', '--workspace', r], script);
    expect(await a.exit).toBe(0);
    const task = g.task(id);
    expect(task.status).toBe('done');
    const out = task.output as Record<string, string>;
    const key = `task-${id}`;
    expect(out).toMatchObject({ branch: `gaffer/${key}`, base, attempt: '2', resumed: '1' });
    expect(out.pwd).toBe(out.ws);
    expect(out.ws).toContain(`gaffer-worktrees/${key}`);

    const items = (await g.api('GET', `/tasks/${id}/artifacts`)).body.items as Artifact[];
    expect(items.map((i) => [i.attempt, i.kind, i.name])).toEqual([
      [1, 'workspace', 'workspace'],
      [2, 'workspace', 'workspace'],
      [2, 'link', 'pull request'],
    ]);
    expect(items[2]!.data).toEqual({ url: 'https://example.invalid/pr/7' });
    expect(items[0]!.data).toMatchObject({ branch: `gaffer/${key}`, base, commits: 1, filesChanged: 1, insertions: 1, deletions: 0, uncommitted: false });
    expect(items[1]!.data).toMatchObject({ commits: 2, filesChanged: 3, insertions: 40_003, deletions: 0, uncommitted: true, head: git(r, 'rev-parse', `gaffer/${key}`).trim() });

    // The diff of attempt 2 is longer than one frame: it came in parts and is whole.
    const d = await diffOf(g, id);
    expect(d.status).toBe(200);
    expect(d.text.length).toBeGreaterThan(192 * 1024);
    expect(items[1]!.diffChars).toBe(d.text.length);
    const committed = git(r, 'diff', '--no-renames', base, `gaffer/${key}`);
    // Committed work plus the uncommitted file: the committed part is git's own diff, the file follows.
    expect(d.text.startsWith(committed.slice(0, committed.indexOf('diff --git a/notes.txt')))).toBe(true);
    expect(d.text).toContain('+++ b/scratch.txt\n@@ -0,0 +1 @@\n+not committed\n');
    expect((await diffOf(g, id, 1)).text).toBe(git(r, 'diff', '--no-renames', base, `gaffer/${key}~1`));
    expect((await diffOf(g, id, 3)).status).toBe(404);

    // --keep failed (default): the successful attempt's tree is gone, the branch stays; the main checkout is as it was.
    expect(fs.existsSync(out.ws!)).toBe(false);
    expect(git(r, 'worktree', 'list', '--porcelain')).not.toContain(key);
    expect(git(r, 'status', '--porcelain')).toBe(' M README.md\n');
  });

  it('a periodic job\'s run: its worktree is on the branch of the run\'s key, the commit lands there, a retry resumes it; the artifact is on the run over HTTP', async () => {
    const g = await gaffer();
    const r = repo();
    const base = git(r, 'rev-parse', 'HEAD').trim();
    const jobId = g.core.jobs.create({ name: 'nightly-notes', role: 'cmd', schedule: { everyS: 86_400 }, retry: { maxAttempts: 3, firstDelayS: 0 } }, { actor: 'test' }).job.id;
    // Attempt 1 commits half the work and asks for a retry (75); attempt 2 finds it on the same branch and finishes.
    const script = [
      'set -e',
      'if [ "$GAFFER_ATTEMPT" = 1 ]; then echo "half" > notes.txt; git add notes.txt; git commit -qm half; exit 75; fi',
      'grep -q half notes.txt',
      'echo "whole" >> notes.txt; git add notes.txt; git commit -qm whole',
      `printf '{"key":"%s","slot":"%s","branch":"%s","attempt":"%s","resumed":"%s","ws":"%s"}' "$GAFFER_IDEMPOTENCY_KEY" "$GAFFER_SLOT" "$GAFFER_BRANCH" "$GAFFER_ATTEMPT" "$GAFFER_WORKSPACE_RESUMED" "$GAFFER_WORKSPACE" > "$GAFFER_OUTPUT_FILE"`,
    ].join('\n');
    const a = runAgent(g, ['--no-tasks', '--workspace', r], script);
    const { run } = g.core.jobs.triggerNow(jobId, { reason: 'test', actor: 'test' });
    await until(() => g.run(run.id).status === 'success' || g.run(run.id).status === 'failed', () => `run ${run.id}: ${JSON.stringify(g.run(run.id))}\n${a.log.join('')}`);
    const done = g.run(run.id);
    expect(done).toMatchObject({ status: 'success', attempt: 2 });
    const out = done.output as Record<string, string>;
    // The run's idempotency key is `<job>:<slot>`; a ':' may not be in a branch name, so the
    // worktree's key is `<job>-<slot>`, sanitised (PROTOCOL §15): the same run, the same branch.
    expect(out.key).toBe(run.idempotencyKey);
    const key = sanitiseKey(`nightly-notes-${run.slot}`);
    expect(out).toMatchObject({ slot: run.slot, branch: `gaffer/${key}`, attempt: '2', resumed: '1' });
    expect(out.ws).toContain(`gaffer-worktrees/${key}`);
    // Both commits are on that branch, on top of the base; the main checkout did not move.
    expect(git(r, 'log', '--format=%s', `${base}..gaffer/${key}`)).toBe('whole\nhalf\n');
    expect(git(r, 'rev-parse', 'HEAD').trim()).toBe(base);
    expect(git(r, 'show', `gaffer/${key}:notes.txt`)).toBe('half\nwhole\n');

    const res = await g.api('GET', `/runs/${run.id}/artifacts`);
    expect(res.status).toBe(200);
    const items = res.body.items as Artifact[];
    expect(items.map((i) => [i.attempt, i.kind, i.name])).toEqual([
      [1, 'workspace', 'workspace'],
      [2, 'workspace', 'workspace'],
    ]);
    expect(items[1]!.data).toMatchObject({ branch: `gaffer/${key}`, base, head: git(r, 'rev-parse', `gaffer/${key}`).trim(), commits: 2, filesChanged: 1, insertions: 2, deletions: 0, uncommitted: false });
    const diff = await fetch(`${g.server.url}/api/v1/runs/${run.id}/diff`, { headers: { authorization: `Bearer ${OPERATOR_TOKEN}` } });
    expect(diff.status).toBe(200);
    expect(await diff.text()).toBe(git(r, 'diff', '--no-renames', base, `gaffer/${key}`));
    // --keep failed (default): the run succeeded, so its tree is gone; the branch stays.
    expect(fs.existsSync(out.ws!)).toBe(false);
  });

  // Why the sandbox cannot run here, in checkSandbox's own words ('' when it can).
  const noSandbox = ((): string => {
    try {
      checkSandbox(process.env);
      return '';
    } catch (e) {
      return ` (skipped: ${(e as Error).message})`;
    }
  })();
  it.skipIf(noSandbox !== '')(`--sandbox: the command cannot read Gaffer's data directory or write outside its worktree; its worktree and /tmp are its own${noSandbox}`, async () => {
    const g = await gaffer();
    // Not under /tmp: the sandbox's /tmp is a private one, where these would not be visible at all.
    const r = repo(VAR_TMP);
    const outside = tmp('gaffer-ws-outside-', VAR_TMP);
    fs.writeFileSync(path.join(outside, 'secret.txt'), 'outside');
    const id = g.createTask('Try to escape').id;
    const script = [
      `if ls "${g.dir}" | grep -q .; then db=visible; else db=hidden; fi`,
      `if echo x > "${outside}/written.txt" 2>/dev/null; then out=written; else out=refused; fi`,
      `if echo x > "${r}/README.md" 2>/dev/null; then main=written; else main=refused; fi`,
      `if cat "${outside}/secret.txt" >/dev/null 2>&1; then read=yes; else read=no; fi`,
      'echo mine > inside.txt && git add inside.txt && git commit -qm inside && inside=ok',
      'echo t > /tmp/private && tmpw=ok',
      'printf \'{"db":"%s","outside":"%s","main":"%s","read":"%s","inside":"%s","tmp":"%s"}\' "$db" "$out" "$main" "$read" "$inside" "$tmpw" > "$GAFFER_OUTPUT_FILE"',
    ].join('\n');
    const a = runAgent(g, ['--max-tasks', '1', '--workspace', r, '--sandbox', '--hide', g.dir], script);
    expect(await a.exit).toBe(0);
    expect(g.task(id).status).toBe('done');
    // Reading elsewhere is allowed (the rest of the file system is read-only, not hidden).
    expect(g.task(id).output).toEqual({ db: 'hidden', outside: 'refused', main: 'refused', read: 'yes', inside: 'ok', tmp: 'ok' });
    expect(fs.existsSync(path.join(outside, 'written.txt'))).toBe(false);
    expect(fs.existsSync('/tmp/private')).toBe(false);
    expect(fs.readFileSync(path.join(r, 'README.md'), 'utf8')).toBe('# demo\n');
    const items = (await g.api('GET', `/tasks/${id}/artifacts`)).body.items as Artifact[];
    expect(items[0]!.data).toMatchObject({ commits: 1, filesChanged: 1 });
  });

  it('--sandbox is refused at start where it cannot work: another OS, no bwrap, or a bwrap that cannot make a sandbox here', () => {
    expect(() => checkSandbox({}, 'darwin')).toThrow(/--sandbox is Linux-only/);
    expect(() => checkSandbox({}, 'linux', () => undefined)).toThrow(/needs bwrap, which was not found: install bubblewrap/);
    // A bwrap that fails as one does where namespaces are not allowed (a container, a locked-down kernel).
    const dir = tmp('gaffer-fake-bwrap-');
    const fake = path.join(dir, 'bwrap');
    fs.writeFileSync(fake, '#!/bin/sh\necho "bwrap: No permissions to create a new namespace" >&2\nexit 1\n', { mode: 0o755 });
    expect(findBwrap({ PATH: dir })).toBe(fake);
    expect(bwrapFailure(fake)).toBe('bwrap: No permissions to create a new namespace');
    expect(() => checkSandbox({ PATH: dir }, 'linux')).toThrow(/bwrap cannot make a sandbox on this machine \(bwrap: No permissions to create a new namespace\)/);
    const real = findBwrap(process.env);
    if (real && bwrapFailure(real) === undefined) expect(checkSandbox(process.env, 'linux')).toBe(real);
  });
});
