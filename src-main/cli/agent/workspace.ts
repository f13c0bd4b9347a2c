/**
 * A git worktree per attempt key (PROTOCOL §15, docs/command-agent.md "Workspaces").
 *
 * `--workspace REPO`: before the command starts, the attempt's key (tasks `task-<id>`, runs
 * `<job name>-<slot>`, sanitised) names a branch `gaffer/<key>` and a worktree path under the
 * repository's git directory (`<git common dir>/gaffer-worktrees/<key>`): the same work always
 * lands on the same branch and path, so a retry finds what the earlier attempt left.
 *
 * Invariants:
 * 1. The main checkout is never touched: no checkout, reset, stash or index change there. Only
 *    `git worktree add/remove/prune`, branch creation and the worktree's own files change.
 * 2. Two attempts never share a worktree: a lock file (`<key>.lock`, O_EXCL, holding the agent's
 *    pid) is taken before the tree is prepared and dropped when the attempt is finished; a lock
 *    whose pid is gone (kill -9) is taken over, one whose pid is alive is refused.
 * 3. `resume` (default) keeps the tree as the earlier attempt left it, uncommitted changes included;
 *    `fresh` resets branch and tree to the base (tracked, untracked and ignored files alike).
 * 4. The base is recorded with the branch when the branch is made (`git config
 *    branch.<branch>.gafferbase <commit>`), so a resumed attempt diffs against the same base even
 *    after `--base` (or the repository's HEAD) moved.
 * 5. The summary (and diff) is the tree's state against the base, committed or not (untracked
 *    files included, ignored ones not): a throw-away index takes a snapshot; the worktree's own
 *    index and HEAD are left alone.
 * 6. Branches stay. Worktrees are removed per `--keep` (`always`: never removed, `failed` (default):
 *    kept only when the attempt did not succeed, `never`: always removed) and pruned.
 * 7. Submodules are not checked out in the worktree (`git worktree add` does not do it): a command
 *    that needs them runs `git submodule update --init` itself (docs/command-agent.md).
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { MAX_DIFF_CHARS } from '../../common/protocol';

const run = promisify(execFile);

export type OnRetry = 'resume' | 'fresh';
export type Keep = 'always' | 'failed' | 'never';

export interface WorkspaceOptions {
  repo: string;
  /** A revision (branch, tag, commit); default the repository's HEAD (detached or not). */
  base?: string;
  onRetry: OnRetry;
  keep: Keep;
}

/** What §15 says a `workspace` artifact carries. */
export interface WorkspaceSummary {
  repo: string;
  branch: string;
  base: string;
  head: string;
  commits: number;
  filesChanged: number;
  insertions: number;
  deletions: number;
  /** Addition: the tree held changes not committed on the branch (they are in the diff). */
  uncommitted: boolean;
  /** Addition: per-file figures, for the console's files list. */
  files: Array<{ path: string; insertions: number; deletions: number; binary?: boolean }>;
}

export interface PreparedWorkspace {
  key: string;
  path: string;
  branch: string;
  /** The base commit (full sha). */
  base: string;
  /** The tree was there from an earlier attempt and was kept (`resume`). */
  resumed: boolean;
}

export class WorkspaceError extends Error {}

/** Longest sanitised key (a branch name and a directory name). */
const MAX_KEY = 100;
const MAX_FILES_LISTED = 2000;

/**
 * A key as a branch name component and a directory name: letters, digits, `.`, `_`, `-`; other
 * runs become `-`; no leading dot or dash, no `..`, no `.lock` ending. A key that had to change
 * (or be shortened) gets 8 hex characters of its hash, so two keys never map to one branch.
 */
export function sanitiseKey(key: string): string {
  let s = key.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/\.{2,}/g, '.').replace(/^[.-]+/, '').replace(/[.-]+$/, '');
  if (s.endsWith('.lock')) s = s.slice(0, -5);
  if (s === key && s.length <= MAX_KEY) return s;
  const hash = createHash('sha256').update(key).digest('hex').slice(0, 8);
  return `${s.slice(0, MAX_KEY - 9) || 'key'}-${hash}`;
}

async function git(cwd: string, args: string[], env?: NodeJS.ProcessEnv): Promise<string> {
  try {
    const { stdout } = await run('git', args, { cwd, maxBuffer: 256 * 1024 * 1024, encoding: 'utf8', ...(env ? { env } : {}) });
    return stdout;
  } catch (e) {
    const err = e as NodeJS.ErrnoException & { stderr?: string };
    if (err.code === 'ENOENT') throw new WorkspaceError('git was not found on PATH (needed by --workspace)');
    throw new WorkspaceError(`git ${args[0]} failed: ${(err.stderr ?? err.message).trim().split('\n').slice(-3).join(' ')}`);
  }
}

async function gitOk(cwd: string, args: string[]): Promise<boolean> {
  try {
    await run('git', args, { cwd });
    return true;
  } catch {
    return false;
  }
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The worktrees of one repository (one per `gaffer agent --workspace`). */
export class Workspaces {
  private commonDir: string | undefined;
  /** Worktree operations of one repository one at a time (git's own locks refuse concurrent adds). */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(readonly opts: WorkspaceOptions) {}

  /** Checks at start that REPO is a git repository and the base resolves; throws WorkspaceError. */
  async check(): Promise<void> {
    if (!fs.existsSync(this.opts.repo)) throw new WorkspaceError(`--workspace: ${this.opts.repo} does not exist`);
    await this.root();
    await this.resolveBase();
  }

  /** Where this repository's worktrees live (inside its git directory: invariant 1). */
  async root(): Promise<string> {
    if (this.commonDir === undefined) {
      const out = (await git(this.opts.repo, ['rev-parse', '--path-format=absolute', '--git-common-dir']).catch(() => {
        throw new WorkspaceError(`--workspace: ${this.opts.repo} is not a git repository`);
      })).trim();
      this.commonDir = out;
    }
    return path.join(this.commonDir, 'gaffer-worktrees');
  }

  /** The git directory all worktrees share (the sandbox lets the command write to it: commits). */
  async gitCommonDir(): Promise<string> {
    await this.root();
    return this.commonDir!;
  }

  private async resolveBase(): Promise<string> {
    const ref = this.opts.base ?? 'HEAD';
    return (await git(this.opts.repo, ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`]).catch(() => {
      throw new WorkspaceError(`--base: "${ref}" is not a commit of ${this.opts.repo}`);
    })).trim();
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.queue.then(fn, fn);
    this.queue = next.catch(() => {});
    return next;
  }

  /** Makes (or finds) the worktree of `key` (invariants 2–4). */
  async open(rawKey: string): Promise<PreparedWorkspace> {
    const key = sanitiseKey(rawKey);
    const root = await this.root();
    fs.mkdirSync(root, { recursive: true });
    const lock = path.join(root, `${key}.lock`);
    this.takeLock(lock, key);
    try {
      return await this.serial(() => this.make(key, root));
    } catch (e) {
      fs.rmSync(lock, { force: true });
      throw e;
    }
  }

  /** Invariant 2. */
  private takeLock(lock: string, key: string): void {
    for (let i = 0; i < 2; i++) {
      try {
        fs.writeFileSync(lock, String(process.pid), { flag: 'wx' });
        return;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
        const holder = Number(fs.readFileSync(lock, 'utf8').trim());
        if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && pidAlive(holder)) {
          throw new WorkspaceError(`the worktree of ${key} is in use by process ${holder}`);
        }
        if (holder === process.pid) throw new WorkspaceError(`the worktree of ${key} is in use by another attempt of this agent`);
        fs.rmSync(lock, { force: true }); // its holder is gone (kill -9): take it over
      }
    }
    throw new WorkspaceError(`could not lock the worktree of ${key}`);
  }

  private async make(key: string, root: string): Promise<PreparedWorkspace> {
    const { repo } = this.opts;
    const dir = path.join(root, key);
    const branch = `gaffer/${key}`;
    const branchExists = await gitOk(repo, ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}`]);
    const registered = fs.existsSync(path.join(dir, '.git')) && (await gitOk(dir, ['rev-parse', '--is-inside-work-tree']));
    const fresh = this.opts.onRetry === 'fresh';
    let base = branchExists ? await this.recordedBase(branch) : undefined;
    if (!base || fresh) base = await this.resolveBase();

    if (registered) {
      if (fresh) {
        await git(dir, ['reset', '--hard', '--quiet', base]);
        await git(dir, ['clean', '-fdxq']);
        await this.recordBase(branch, base);
      }
      return { key, path: dir, branch, base, resumed: !fresh };
    }
    // A directory git no longer knows (a crash mid-add, or removed by hand): start over there.
    fs.rmSync(dir, { recursive: true, force: true });
    await git(repo, ['worktree', 'prune']);
    if (branchExists && !fresh) {
      await git(repo, ['worktree', 'add', '--quiet', dir, branch]);
    } else {
      // -B: a fresh attempt resets an existing branch to the base (invariant 3).
      await git(repo, ['worktree', 'add', '--quiet', '-B', branch, dir, base]);
      await this.recordBase(branch, base);
    }
    return { key, path: dir, branch, base, resumed: branchExists && !fresh };
  }

  private async recordedBase(branch: string): Promise<string | undefined> {
    const v = await git(this.opts.repo, ['config', '--get', `branch.${branch}.gafferbase`]).catch(() => '');
    return v.trim() || undefined;
  }

  private recordBase(branch: string, base: string): Promise<string> {
    return git(this.opts.repo, ['config', `branch.${branch}.gafferbase`, base]);
  }

  /**
   * What the attempt changed (invariant 5): the summary and the unified diff (at most
   * MAX_DIFF_CHARS; `truncated` when cut).
   */
  async summarise(ws: PreparedWorkspace): Promise<{ summary: WorkspaceSummary; diff: string; truncated: boolean }> {
    const tree = await this.snapshot(ws.path);
    const head = (await git(ws.path, ['rev-parse', 'HEAD'])).trim();
    const headTree = (await git(ws.path, ['rev-parse', 'HEAD^{tree}'])).trim();
    const commits = Number((await git(ws.path, ['rev-list', '--count', `${ws.base}..HEAD`])).trim()) || 0;
    const numstat = await git(ws.path, ['diff', '--numstat', '-z', '--no-renames', ws.base, tree]);
    const files: WorkspaceSummary['files'] = [];
    let insertions = 0;
    let deletions = 0;
    let filesChanged = 0;
    for (const rec of numstat.split('\0')) {
      const m = /^(\d+|-)\t(\d+|-)\t(.*)$/s.exec(rec);
      if (!m) continue;
      filesChanged++;
      const binary = m[1] === '-';
      const ins = binary ? 0 : Number(m[1]);
      const del = binary ? 0 : Number(m[2]);
      insertions += ins;
      deletions += del;
      if (files.length < MAX_FILES_LISTED) files.push({ path: m[3]!, insertions: ins, deletions: del, ...(binary ? { binary } : {}) });
    }
    let diff = await git(ws.path, ['diff', '--no-color', '--no-renames', '--no-ext-diff', ws.base, tree]);
    const truncated = diff.length > MAX_DIFF_CHARS;
    if (truncated) diff = diff.slice(0, diff.lastIndexOf('\n', MAX_DIFF_CHARS) + 1);
    return {
      summary: { repo: path.resolve(this.opts.repo), branch: ws.branch, base: ws.base, head, commits, filesChanged, insertions, deletions, uncommitted: tree !== headTree, files },
      diff,
      truncated,
    };
  }

  /** The tree's state as a git tree object, through a throw-away index (invariant 5). */
  private async snapshot(dir: string): Promise<string> {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gaffer-index-'));
    try {
      const indexFile = path.join(tmp, 'index');
      const own = (await git(dir, ['rev-parse', '--path-format=absolute', '--git-path', 'index'])).trim();
      if (fs.existsSync(own)) fs.copyFileSync(own, indexFile); // a warm start: unchanged files are not hashed again
      const env = { ...process.env, GIT_INDEX_FILE: indexFile };
      await git(dir, ['add', '-A'], env);
      return (await git(dir, ['write-tree'], env)).trim();
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  }

  /** After the attempt: removes the worktree per `--keep` (the branch stays) and drops the lock. */
  async finish(ws: PreparedWorkspace, succeeded: boolean): Promise<void> {
    const root = await this.root();
    try {
      const remove = this.opts.keep === 'never' || (this.opts.keep === 'failed' && succeeded);
      if (remove) {
        await this.serial(async () => {
          await git(this.opts.repo, ['worktree', 'remove', '--force', ws.path]).catch(() => fs.rmSync(ws.path, { recursive: true, force: true }));
          await git(this.opts.repo, ['worktree', 'prune']);
        });
      }
    } finally {
      fs.rmSync(path.join(root, `${ws.key}.lock`), { force: true });
    }
  }
}
