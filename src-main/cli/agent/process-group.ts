/**
 * A child in a process group of its own, and ending that whole group.
 *
 * Invariants:
 * 1. The child is spawned `detached` (POSIX: setsid), so its pid is its process group id and every
 *    process it starts stays in that group unless it leaves on purpose. Signals go to the group
 *    (`kill(-pgid)`), never to a pid we merely remember.
 * 2. `terminate` sends SIGTERM to the group and SIGKILL `killAfterMs` later if anything of the
 *    group is still there. Whether it is, is polled (`kill(-pgid, 0)`), and polling stops the
 *    moment the group is empty: a group id is only ever signalled while the group exists, so a
 *    number the kernel later reuses for someone else's group is never signalled.
 * 3. The child having exited does not mean its group has: `settled` resolves once the leader has
 *    exited AND no member is left (leftovers of a normal exit are ended the same way).
 * 4. A child that cannot start (ENOENT, EACCES, a missing cwd) resolves `exited` with
 *    `{ spawnError }` instead of throwing or emitting an unhandled 'error'.
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import fs from 'node:fs';

export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Set when the command never ran (ENOENT, EACCES, bad cwd): the OS error. */
  spawnError?: NodeJS.ErrnoException;
}

export interface GroupChildOptions {
  command: string;
  args: readonly string[];
  cwd?: string;
  env: Record<string, string>;
  /** Run `command` (with `args` joined by spaces) through the platform shell. */
  shell?: boolean;
}

export const POLL_MS = 50;

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/**
 * True while any process of group `pgid` still runs (EPERM: it exists but is not ours to signal).
 * Members that have exited but wait to be reaped (zombies; a reparented grandchild waits for init)
 * are not running: where /proc exists they are left out, so "the group is gone" is not delayed by
 * how often init reaps.
 */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
  return procGroupRunning(pgid) ?? true;
}

/** Whether /proc lists a member of `pgid` that is not a zombie; undefined without /proc. */
function procGroupRunning(pgid: number): boolean | undefined {
  const all = listProcesses();
  if (!all) return undefined;
  return all.some((p) => p.pgrp === pgid && p.state !== 'Z' && p.state !== 'X');
}

export interface ProcEntry {
  pid: number;
  /** R, S, D, Z (zombie), … */
  state: string;
  ppid: number;
  pgrp: number;
  /** Start time in clock ticks since boot: with the pid, it names one process for good. */
  startTicks: string;
}

/** One process's /proc stat, or undefined (gone, or no /proc). */
export function readProcStat(pid: number): ProcEntry | undefined {
  let stat: string;
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // "pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime
  //  cutime cstime priority nice threads itrealvalue starttime …" — comm may hold spaces and ')'.
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { pid, state: f[0] ?? '?', ppid: Number(f[1]), pgrp: Number(f[2]), startTicks: f[19] ?? '' };
}

/** Every process /proc lists, or undefined where there is no /proc (macOS, Windows). */
export function listProcesses(): ProcEntry[] | undefined {
  let entries: string[];
  try {
    entries = fs.readdirSync('/proc');
  } catch {
    return undefined;
  }
  const out: ProcEntry[] = [];
  for (const name of entries) {
    if (name.charCodeAt(0) < 48 || name.charCodeAt(0) > 57) continue;
    const e = readProcStat(Number(name));
    if (e) out.push(e);
  }
  return out;
}

/** Signals the group; false when it is already gone. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

/**
 * SIGTERM to the group, SIGKILL after `killAfterMs` if any member is left; resolves when the group
 * is empty (`terminated`: it ended on SIGTERM, `killed`: it needed SIGKILL, `gone`: nothing was
 * there). Gives up waiting `giveUpMs` after the SIGKILL (a member in uninterruptible sleep).
 */
export async function terminateGroup(pgid: number, killAfterMs: number, giveUpMs = 5000): Promise<'gone' | 'terminated' | 'killed'> {
  if (!signalGroup(pgid, 'SIGTERM')) return 'gone';
  const killAt = Date.now() + killAfterMs;
  while (groupAlive(pgid)) {
    if (Date.now() >= killAt) {
      signalGroup(pgid, 'SIGKILL');
      const end = Date.now() + giveUpMs;
      while (groupAlive(pgid) && Date.now() < end) await sleep(POLL_MS);
      return 'killed';
    }
    await sleep(POLL_MS);
  }
  return 'terminated';
}

export class GroupChild {
  readonly child: ChildProcess;
  /** The leader's exit (or why it never started). */
  readonly exited: Promise<ChildExit>;
  private ending: Promise<unknown> | undefined;

  constructor(opts: GroupChildOptions) {
    const spawnOpts: SpawnOptions = {
      cwd: opts.cwd,
      env: opts.env,
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: process.platform !== 'win32',
      windowsHide: true,
    };
    this.child = opts.shell ? spawn([opts.command, ...opts.args].join(' '), { ...spawnOpts, shell: true }) : spawn(opts.command, [...opts.args], spawnOpts);
    this.exited = new Promise<ChildExit>((resolve) => {
      this.child.once('error', (e: NodeJS.ErrnoException) => {
        // 'error' without a pid: it never started. With a pid, a later 'exit' still follows.
        if (this.child.pid === undefined) resolve({ code: null, signal: null, spawnError: e });
      });
      this.child.once('exit', (code, signal) => resolve({ code, signal }));
    });
    // Writes to a child that does not read its stdin (EPIPE) are not our failure.
    this.child.stdin?.on('error', () => {});
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Ends the whole group (invariant 2); safe to call more than once. */
  terminate(killAfterMs: number): Promise<unknown> {
    const pid = this.pid;
    if (pid === undefined) return Promise.resolve('gone');
    if (process.platform === 'win32') {
      this.child.kill();
      return this.exited;
    }
    this.ending ??= terminateGroup(pid, killAfterMs);
    return this.ending;
  }

  /** Resolves when the leader has exited and its group is empty (invariant 3). */
  async settled(killAfterMs: number): Promise<ChildExit> {
    const exit = await this.exited;
    const pid = this.pid;
    if (pid !== undefined && process.platform !== 'win32' && groupAlive(pid)) await this.terminate(killAfterMs);
    else if (this.ending) await this.ending;
    return exit;
  }
}
