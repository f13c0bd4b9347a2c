/**
 * `npm run bench -- workspace` (PROTOCOL §15, docs/command-agent.md "Workspaces"):
 * 1. time to a ready worktree (`Workspaces.prepare`, what `gaffer agent --workspace` does before a
 *    command starts) for a repository of 10 000 files and ~200 MB of history, against
 *    `git clone --local` of the same repository (and a clone that copies, `--no-hardlinks`), and
 *    the time to find an existing tree again (a retry, `resume`);
 * 2. the per-task overhead of --workspace: prepare + summarise (diff) + remove, per task, on that
 *    repository and on a small one.
 * The repository is generated in the temp directory with `git fast-import` and removed afterwards.
 */
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Workspaces } from '../src-main/cli/agent/workspace';

const FILES = 10_000;
const HISTORY_COMMITS = 19;
const FILES_PER_COMMIT = 500;
const BLOB_BYTES = 20 * 1024;

function ms(start: bigint): number {
  return Number(process.hrtime.bigint() - start) / 1e6;
}

async function time<T>(fn: () => Promise<T> | T): Promise<[number, T]> {
  const t = process.hrtime.bigint();
  const v = await fn();
  return [ms(t), v];
}

/** A repository written by git fast-import: FILES small files, then commits of large random blobs. */
async function generate(dir: string, files: number, historyCommits: number): Promise<void> {
  execFileSync('git', ['init', '-q', '-b', 'main', dir]);
  const child = spawn('git', ['fast-import', '--quiet'], { cwd: dir, stdio: ['pipe', 'ignore', 'inherit'] });
  child.stdin.on('error', () => {}); // fast-import failing is reported by its exit status
  const done = new Promise<void>((resolve, reject) => child.on('exit', (c) => (c === 0 ? resolve() : reject(new Error(`fast-import exited ${c}`)))));
  const write = (s: string | Buffer) => (child.stdin.write(s) ? Promise.resolve() : new Promise<void>((r) => child.stdin.once('drain', () => r())));
  const data = async (b: Buffer) => {
    await write(`data ${b.length}\n`);
    await write(b);
    await write('\n');
  };
  let when = 1_700_000_000;
  // Commits on the branch follow each other from its tip (fast-import needs no `from` for that).
  const commit = async (message: string, ops: Array<[string, Buffer]>) => {
    await write(`commit refs/heads/main\ncommitter Bench <bench@example.invalid> ${when++} +0000\n`);
    await data(Buffer.from(message));
    for (const [p, b] of ops) {
      await write(`M 100644 inline ${p}\n`);
      await data(b);
    }
    await write('\n');
  };
  const first: Array<[string, Buffer]> = [];
  for (let i = 0; i < files; i++) first.push([`src/m${i % 100}/file${i}.txt`, Buffer.from(`file ${i}\n${'line of text\n'.repeat(60)}`)]);
  await commit('initial', first);
  for (let c = 0; c < historyCommits; c++) {
    const ops: Array<[string, Buffer]> = [];
    for (let k = 0; k < FILES_PER_COMMIT; k++) ops.push([`data/blob${c}-${k}.bin`, randomBytes(BLOB_BYTES)]);
    // Large blobs are history only: removed again so the checkout stays at FILES files.
    await commit(`history ${c}`, ops);
    await write('commit refs/heads/main\n');
    await write(`committer Bench <bench@example.invalid> ${when++} +0000\n`);
    await data(Buffer.from(`drop ${c}`));
    await write('D data\n\n');
  }
  child.stdin.end();
  await done;
  execFileSync('git', ['checkout', '-q', '-f', 'main'], { cwd: dir });
}

function duBytes(dir: string): number {
  return Number(execFileSync('du', ['-sb', dir], { encoding: 'utf8' }).split('\t')[0]);
}

async function perTask(repo: string, n: number): Promise<number> {
  const w = new Workspaces({ repo, onRetry: 'resume', keep: 'never' });
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const [t] = await time(async () => {
      const ws = await w.open(`task-bench-${i}`);
      fs.writeFileSync(path.join(ws.path, 'changed.txt'), `task ${i}\n`);
      await w.summarise(ws);
      await w.finish(ws, true);
    });
    times.push(t);
  }
  times.sort((a, b) => a - b);
  return times[times.length >> 1]!;
}

const gitIn = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8' });

/**
 * Designs that write fewer files than a checkout of the whole tree (issue 30's 10× target against
 * `git clone --local`), timed on the same repository, git commands only (no Gaffer bookkeeping):
 * - `--no-checkout`: the worktree and branch, no files (what the command would see: nothing);
 * - that, plus a sparse checkout of one folder (only what a command declared it needs);
 * - a retired worktree reused for a new key: `git worktree move` to the key's path, `checkout -B`
 *   the key's branch at the base, `reset --hard` and `clean -ffdx` (so nothing of the earlier
 *   attempt stays): only files that differ from what the tree held are written.
 */
async function designVariants(big: string, root: string): Promise<{ noCheckoutMs: number; sparseMs: number; sparseFiles: number; reuseSameBaseMs: number; reuseMovedBaseMs: number; movedFiles: number }> {
  const wt = path.join(root, 'variants');
  fs.mkdirSync(wt);
  const base = gitIn(big, 'rev-parse', 'HEAD').trim();
  const [noCheckoutMs] = await time(() => gitIn(big, 'worktree', 'add', '-q', '--no-checkout', '-b', 'v/nocheckout', path.join(wt, 'nocheckout'), base));
  const [sparseMs] = await time(() => {
    gitIn(big, 'worktree', 'add', '-q', '--no-checkout', '-b', 'v/sparse', path.join(wt, 'sparse'), base);
    gitIn(path.join(wt, 'sparse'), 'sparse-checkout', 'set', 'src/m7');
    gitIn(path.join(wt, 'sparse'), 'checkout', '-q', 'v/sparse');
  });
  const sparseFiles = Number(execFileSync('find', [path.join(wt, 'sparse', 'src'), '-type', 'f'], { encoding: 'utf8' }).split('\n').filter(Boolean).length);
  // A retired tree: an attempt's worktree that finished, with its own leftovers.
  const retired = path.join(wt, 'retired');
  gitIn(big, 'worktree', 'add', '-q', '-b', 'v/old', retired, base);
  fs.writeFileSync(path.join(retired, 'leftover.txt'), 'from the earlier attempt\n');
  fs.appendFileSync(path.join(retired, 'src/m1/file1.txt'), 'changed by the earlier attempt\n');
  const reuse = (from: string, to: string, branch: string, at: string) => {
    gitIn(big, 'worktree', 'move', from, to);
    gitIn(to, 'checkout', '-q', '-f', '-B', branch, at);
    gitIn(to, 'reset', '-q', '--hard', at);
    gitIn(to, 'clean', '-q', '-ffdx');
  };
  const [reuseSameBaseMs] = await time(() => reuse(retired, path.join(wt, 'key-a'), 'v/key-a', base));
  // The base moved on: 200 files differ from what the retired tree holds.
  const moved = path.join(root, 'moved-base');
  gitIn(big, 'worktree', 'add', '-q', '--detach', moved, base);
  for (let i = 0; i < 200; i++) fs.appendFileSync(path.join(moved, `src/m${i % 100}/file${i}.txt`), 'a newer base\n');
  execFileSync('git', ['-c', 'user.name=b', '-c', 'user.email=b@example.invalid', 'commit', '-qam', 'newer base'], { cwd: moved });
  const newer = gitIn(moved, 'rev-parse', 'HEAD').trim();
  gitIn(big, 'worktree', 'remove', '--force', moved);
  gitIn(path.join(wt, 'key-a'), 'checkout', '-q', '--detach');
  const [reuseMovedBaseMs] = await time(() => reuse(path.join(wt, 'key-a'), path.join(wt, 'key-b'), 'v/key-b', newer));
  const clean = gitIn(path.join(wt, 'key-b'), 'status', '--porcelain', '--ignored');
  if (clean !== '') throw new Error(`a reused tree was not clean: ${clean.slice(0, 200)}`);
  for (const d of ['nocheckout', 'sparse', 'key-b']) gitIn(big, 'worktree', 'remove', '--force', path.join(wt, d));
  return { noCheckoutMs, sparseMs, sparseFiles, reuseSameBaseMs, reuseMovedBaseMs, movedFiles: 200 };
}

export async function runWorkspaceBench(): Promise<Record<string, number>> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'gaffer-bench-ws-'));
  try {
    const big = path.join(root, 'big');
    console.log(`\n## workspace: a worktree per attempt\n\ngenerating ${FILES} files + ${HISTORY_COMMITS} commits of ${FILES_PER_COMMIT} × ${BLOB_BYTES / 1024} KiB random blobs with git fast-import…`);
    const [genMs] = await time(() => generate(big, FILES, HISTORY_COMMITS));
    const gitBytes = duBytes(path.join(big, '.git'));
    const files = Number(execFileSync('git', ['ls-files'], { cwd: big, encoding: 'utf8' }).split('\n').filter(Boolean).length);
    console.log(`generated in ${(genMs / 1000).toFixed(1)} s: ${files} files checked out, .git ${(gitBytes / 1e6).toFixed(0)} MB`);

    const w = new Workspaces({ repo: big, onRetry: 'resume', keep: 'always' });
    await w.check();
    const [worktreeMs, ws] = await time(() => w.open('task-1'));
    await w.finish(ws, false);
    const [resumeMs, again] = await time(() => w.open('task-1'));
    await w.finish(again, false);
    const [cloneMs] = await time(() => execFileSync('git', ['clone', '-q', '--local', big, path.join(root, 'clone-local')]));
    const [copyMs] = await time(() => execFileSync('git', ['clone', '-q', '--no-hardlinks', big, path.join(root, 'clone-copy')]));
    console.log(`ready worktree (new): ${worktreeMs.toFixed(0)} ms; found again (retry): ${resumeMs.toFixed(0)} ms`);
    console.log(`git clone --local: ${cloneMs.toFixed(0)} ms (${(cloneMs / worktreeMs).toFixed(1)}× the worktree); git clone --no-hardlinks: ${copyMs.toFixed(0)} ms (${(copyMs / worktreeMs).toFixed(1)}×)`);

    const v = await designVariants(big, root);
    console.log(
      `other designs for a new key: --no-checkout ${v.noCheckoutMs.toFixed(0)} ms (an empty tree), + sparse checkout of one folder (${v.sparseFiles} files) ${v.sparseMs.toFixed(0)} ms; ` +
        `a retired tree reused (worktree move + checkout -B + reset --hard + clean -ffdx): ${v.reuseSameBaseMs.toFixed(0)} ms at the same base, ${v.reuseMovedBaseMs.toFixed(0)} ms when the base moved by ${v.movedFiles} files; ` +
        `clone --local ÷ reuse: ${(cloneMs / v.reuseSameBaseMs).toFixed(1)}× / ${(cloneMs / v.reuseMovedBaseMs).toFixed(1)}×`,
    );

    const small = path.join(root, 'small');
    await generate(small, 100, 0);
    const smallTask = await perTask(small, 10);
    const bigTask = await perTask(big, 3);
    console.log(`per-task overhead of --workspace (prepare + diff + remove, median): ${smallTask.toFixed(0)} ms on a 100-file repository, ${bigTask.toFixed(0)} ms on the ${FILES}-file one`);
    return {
      repoFiles: files,
      repoGitMB: Math.round(gitBytes / 1e6),
      worktreeReadyMs: Math.round(worktreeMs),
      worktreeResumeMs: Math.round(resumeMs),
      cloneLocalMs: Math.round(cloneMs),
      cloneCopyMs: Math.round(copyMs),
      cloneOverWorktree: Number((cloneMs / worktreeMs).toFixed(2)),
      cloneOverResume: Number((cloneMs / resumeMs).toFixed(1)),
      noCheckoutMs: Math.round(v.noCheckoutMs),
      sparseOneFolderMs: Math.round(v.sparseMs),
      reuseSameBaseMs: Math.round(v.reuseSameBaseMs),
      reuseMovedBaseMs: Math.round(v.reuseMovedBaseMs),
      cloneOverReuse: Number((cloneMs / v.reuseSameBaseMs).toFixed(1)),
      perTaskSmallMs: Math.round(smallTask),
      perTaskBigMs: Math.round(bigTask),
    };
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}
