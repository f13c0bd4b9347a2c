/**
 * Worktrees per attempt key (workspace.ts) on real git repositories in temporary directories.
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sanitiseKey, Workspaces, type WorkspaceOptions } from './workspace';

const IDENTITY = { GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.invalid', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.invalid' };
const env = { ...process.env, ...IDENTITY };
const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, env, encoding: 'utf8' });

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** A repository with two commits on `main`. */
function repo(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gaffer-ws-'));
  dirs.push(dir);
  git(dir, 'init', '-q', '-b', 'main');
  fs.writeFileSync(path.join(dir, 'a.txt'), 'one\ntwo\n');
  git(dir, 'add', '.');
  git(dir, 'commit', '-qm', 'first');
  fs.writeFileSync(path.join(dir, 'b.txt'), 'bee\n');
  git(dir, 'add', '.');
  git(dir, 'commit', '-qm', 'second');
  return dir;
}

const make = (r: string, o: Partial<WorkspaceOptions> = {}) => new Workspaces({ repo: r, onRetry: 'resume', keep: 'always', ...o });

describe.skipIf(process.platform === 'win32')('workspaces: a git worktree per attempt key', () => {
  it('two attempts at once get their own trees on their own branches; the main checkout, dirty, is untouched', async () => {
    const r = repo();
    fs.writeFileSync(path.join(r, 'a.txt'), 'uncommitted in main\n');
    const w = make(r);
    const [one, two] = await Promise.all([w.open('task-1'), w.open('task-2')]);
    expect(one.path).not.toBe(two.path);
    expect([one.branch, two.branch]).toEqual(['gaffer/task-1', 'gaffer/task-2']);
    fs.writeFileSync(path.join(one.path, 'only-one.txt'), '1');
    fs.writeFileSync(path.join(two.path, 'a.txt'), 'two was here\n');
    expect(fs.existsSync(path.join(two.path, 'only-one.txt'))).toBe(false);
    expect(fs.readFileSync(path.join(one.path, 'a.txt'), 'utf8')).toBe('one\ntwo\n');
    // The main checkout: its uncommitted change stays, nothing new appears, HEAD is where it was.
    expect(fs.readFileSync(path.join(r, 'a.txt'), 'utf8')).toBe('uncommitted in main\n');
    expect(git(r, 'status', '--porcelain')).toBe(' M a.txt\n');
    expect(git(r, 'rev-parse', '--abbrev-ref', 'HEAD').trim()).toBe('main');
    // The same key again while it is held: refused (two attempts never share a tree).
    await expect(w.open('task-1')).rejects.toThrow(/in use/);
  });

  it('resume keeps the earlier attempt\'s tree and base; fresh resets the branch and tree to the base', async () => {
    const r = repo();
    const base = git(r, 'rev-parse', 'HEAD').trim();
    const w = make(r);
    const first = await w.open('task-7');
    expect(first).toMatchObject({ resumed: false, base });
    fs.writeFileSync(path.join(first.path, 'half.txt'), 'half done');
    git(first.path, 'commit', '--allow-empty', '-qm', 'wip');
    await w.finish(first, false);
    // main moves on: a resumed attempt keeps its recorded base.
    git(r, 'commit', '--allow-empty', '-qm', 'later');
    const again = await w.open('task-7');
    expect(again).toMatchObject({ path: first.path, branch: 'gaffer/task-7', resumed: true, base });
    expect(fs.readFileSync(path.join(again.path, 'half.txt'), 'utf8')).toBe('half done');
    await w.finish(again, false);

    const fresh = make(r, { onRetry: 'fresh' });
    const reset = await fresh.open('task-7');
    expect(reset.resumed).toBe(false);
    expect(reset.base).toBe(git(r, 'rev-parse', 'HEAD').trim());
    expect(fs.existsSync(path.join(reset.path, 'half.txt'))).toBe(false);
    expect(git(reset.path, 'rev-parse', 'HEAD').trim()).toBe(reset.base);
  });

  it('kill -9 of the process holding a tree mid-attempt: the next claim takes the tree over, work included', async () => {
    const r = repo();
    const w = make(r);
    const first = await w.open('task-9');
    fs.writeFileSync(path.join(first.path, 'progress.txt'), 'step 1 of 3');
    // The tree's lock names its holder's pid: make it another live process (as another agent's
    // would be), then kill -9 that process without any cleanup.
    const holder = spawn('sleep', ['60'], { stdio: 'ignore' });
    const lock = `${first.path}.lock`;
    fs.writeFileSync(lock, String(holder.pid));
    await expect(w.open('task-9')).rejects.toThrow(new RegExp(`in use by process ${holder.pid}`));
    holder.kill('SIGKILL');
    await new Promise((res) => holder.once('exit', res));
    const taken = await w.open('task-9');
    expect(taken).toMatchObject({ path: first.path, resumed: true });
    expect(fs.readFileSync(path.join(taken.path, 'progress.txt'), 'utf8')).toBe('step 1 of 3');
    expect(fs.readFileSync(lock, 'utf8')).toBe(String(process.pid));
  });

  it('--keep: failed keeps only failed attempts\' trees, never removes every one, always keeps all; branches stay; pruned', async () => {
    const r = repo();
    const exists = (p: string) => fs.existsSync(p);
    const failed = make(r, { keep: 'failed' });
    const ok = await failed.open('task-1');
    await failed.finish(ok, true);
    const bad = await failed.open('task-2');
    await failed.finish(bad, false);
    expect([exists(ok.path), exists(bad.path)]).toEqual([false, true]);
    const never = make(r, { keep: 'never' });
    const n = await never.open('task-3');
    await never.finish(n, false);
    expect(exists(n.path)).toBe(false);
    const always = make(r, { keep: 'always' });
    const a = await always.open('task-4');
    await always.finish(a, true);
    expect(exists(a.path)).toBe(true);
    expect(git(r, 'for-each-ref', '--format=%(refname:short)', 'refs/heads/gaffer').split('\n').filter(Boolean)).toEqual(['gaffer/task-1', 'gaffer/task-2', 'gaffer/task-3', 'gaffer/task-4']);
    // Removed trees are no longer registered with git.
    expect(git(r, 'worktree', 'list', '--porcelain')).not.toContain(ok.path);
    // A removed tree comes back from its branch (committed work kept).
    const back = await failed.open('task-1');
    expect(back.resumed).toBe(true);
  });

  it('the summary and diff: committed and uncommitted changes against the base, as git diff shows them', async () => {
    const r = repo();
    const w = make(r);
    const ws = await w.open('job-x-2026-12-01T09:00');
    fs.appendFileSync(path.join(ws.path, 'a.txt'), 'three\n');
    git(ws.path, 'commit', '-qam', 'more');
    fs.writeFileSync(path.join(ws.path, 'new.ts'), 'export const x = 1;\n');
    fs.rmSync(path.join(ws.path, 'b.txt'));
    const { summary, diff, truncated } = await w.summarise(ws);
    expect(summary).toMatchObject({ branch: ws.branch, base: ws.base, commits: 1, filesChanged: 3, insertions: 2, deletions: 1, uncommitted: true });
    expect(summary.files.map((f) => f.path).sort()).toEqual(['a.txt', 'b.txt', 'new.ts']);
    // git diff of the same state (stage it all, diff the index against the base).
    git(ws.path, 'add', '-A');
    expect(diff).toBe(git(ws.path, 'diff', '--no-renames', '--cached', ws.base));
    expect(truncated).toBe(false);
    // The worktree's own index was not what the summary used: before `git add` above nothing was staged.
    expect(summary.head).toBe(git(ws.path, 'rev-parse', 'HEAD').trim());
  });

  it('a detached HEAD as the base, a tag as --base; a bad base is a clear error', async () => {
    const r = repo();
    const first = git(r, 'rev-parse', 'HEAD~1').trim();
    git(r, 'checkout', '-q', '--detach', first);
    expect((await make(r).open('task-1')).base).toBe(first);
    git(r, 'tag', 'v1', 'main');
    expect((await make(r, { base: 'v1' }).open('task-2')).base).toBe(git(r, 'rev-parse', 'main').trim());
    await expect(make(r, { base: 'nope' }).check()).rejects.toThrow(/--base: "nope" is not a commit/);
    await expect(make(os.tmpdir()).check()).rejects.toThrow(/not a git repository/);
  });

  it('keys become safe branch and directory names; a changed key gets a hash so two never collide', () => {
    expect(sanitiseKey('task-12')).toBe('task-12');
    const a = sanitiseKey('daily report-2026-12-01T09:00');
    expect(a).toMatch(/^daily-report-2026-12-01T09-00-[0-9a-f]{8}$/);
    expect(sanitiseKey('daily report-2026-12-01T09_00')).not.toBe(sanitiseKey('daily/report-2026-12-01T09_00'));
    expect(sanitiseKey('../x.lock')).toMatch(/^x-[0-9a-f]{8}$/);
    expect(sanitiseKey('x'.repeat(300)).length).toBeLessThanOrEqual(100);
  });
});
