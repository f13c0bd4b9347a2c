/**
 * `--sandbox` (PROTOCOL §15; Linux only, with bubblewrap's `bwrap`): the command runs in a mount
 * namespace where
 * 1. the whole file system is read-only (`--ro-bind / /`), with fresh `/dev` and `/proc`;
 * 2. `/tmp` is private (a tmpfs of its own), except the agent's directory of payload and output
 *    files, bound back read-write;
 * 3. its worktree is read-write, and so is the repository's git directory (a commit writes objects
 *    and the branch's ref there); nothing else is;
 * 4. Gaffer's data directory (its database, tokens, keys) is not there at all: an empty tmpfs
 *    covers it — the default one (`$GAFFER_DATA_DIR`, else `$XDG_DATA_HOME/gaffer` or
 *    `~/.local/share/gaffer`, as the server picks it) and every `--hide DIR`;
 * 5. the network is shared (agents call their APIs), and the command stays in the agent's process
 *    group (no `--new-session`, no pid namespace), so ending the group ends it; `--die-with-parent`
 *    ends it if bwrap is killed.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export class SandboxError extends Error {}

/** Where bwrap is looked for (PATH first). */
export function findBwrap(env: NodeJS.ProcessEnv): string | undefined {
  for (const dir of [...(env.PATH ?? '').split(path.delimiter).filter(Boolean), '/usr/bin', '/bin']) {
    const p = path.join(dir, 'bwrap');
    try {
      fs.accessSync(p, fs.constants.X_OK);
      return p;
    } catch {
      /* next */
    }
  }
  return undefined;
}

/**
 * Whether bwrap can make a sandbox here: it needs namespaces, which a container, a locked-down kernel
 * (`kernel.unprivileged_userns_clone=0`, AppArmor's userns restriction) or a seccomp filter may refuse.
 * Runs `true` in the same kind of mount namespace a command gets; undefined when it works, else bwrap's
 * own words.
 */
export function bwrapFailure(bwrap: string): string | undefined {
  const r = spawnSync(bwrap, ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp', '--die-with-parent', '--', 'true'], {
    encoding: 'utf8',
    stdio: ['ignore', 'ignore', 'pipe'],
    timeout: 10_000,
  });
  if (r.status === 0) return undefined;
  return (r.stderr ?? '').trim().split('\n')[0] || (r.error ? r.error.message : `exit ${r.status ?? r.signal}`);
}

/** Refuses at start (before connecting) what cannot work: another OS, no bwrap, a bwrap that cannot make a sandbox here. */
export function checkSandbox(
  env: NodeJS.ProcessEnv,
  platform: NodeJS.Platform = process.platform,
  find: (env: NodeJS.ProcessEnv) => string | undefined = findBwrap,
  probe: (bwrap: string) => string | undefined = bwrapFailure,
): string {
  if (platform !== 'linux') throw new SandboxError(`--sandbox is Linux-only (it uses bubblewrap); this is ${platform}`);
  const bwrap = find(env);
  if (!bwrap) throw new SandboxError('--sandbox needs bwrap, which was not found: install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap)');
  const failure = probe(bwrap);
  if (failure) throw new SandboxError(`--sandbox: bwrap cannot make a sandbox on this machine (${failure}); run without --sandbox, or allow it namespaces`);
  return bwrap;
}

/** Invariant 4: Gaffer's data directory as the server picks it by default (server/cli.ts `defaultDataDir`). */
export function defaultDataDirs(env: NodeJS.ProcessEnv): string[] {
  const dirs = [path.join(env.XDG_DATA_HOME ?? path.join(env.HOME ?? os.homedir(), '.local', 'share'), 'gaffer')];
  if (env.GAFFER_DATA_DIR) dirs.push(path.resolve(env.GAFFER_DATA_DIR));
  return dirs;
}

export interface SandboxSpec {
  bwrap: string;
  worktree: string;
  /** The repository's git directory (commits are written there). */
  gitDir: string;
  /** The agent's directory of payload and output files. */
  workDir: string;
  /** Directories that must not be visible (Gaffer's data directory). */
  hide: readonly string[];
}

/** The bwrap arguments that wrap a command (put the command after them). */
export function sandboxArgs(s: SandboxSpec): string[] {
  const args = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp'];
  // Order matters: later mounts cover earlier ones. The worktree lives inside the git directory.
  for (const dir of [s.workDir, s.gitDir, s.worktree]) args.push('--bind', dir, dir);
  for (const dir of s.hide) if (fs.existsSync(dir)) args.push('--tmpfs', fs.realpathSync(dir));
  args.push('--chdir', s.worktree, '--die-with-parent', '--');
  return args;
}
