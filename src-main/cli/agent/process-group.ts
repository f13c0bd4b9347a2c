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
 * 5. With a `marker`, "the group" above means the child's whole family (process-family.mjs): its
 *    group, what carries the marker (a grandchild that left the group with setsid), and their
 *    descendants. Ending it and `settled` both cover all of it.
 * 6. The child runs at this process's CPU priority, also where Linux shares the CPU out per session
 *    (autogroup): a child in a session of its own would otherwise get a whole session's share, as
 *    much as Gaffer's server, whatever its nice value (`lowerPriority`).
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import { endFamily, familyOf, groupAlive, type FamilyMarker } from './process-family.mjs';

export { groupAlive, listProcesses, POLL_MS, readProcStat, signalGroup, type ProcEntry } from './process-family.mjs';

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
  /**
   * Set in the child's environment (`env` plus this variable): what carries it is of the child's
   * family even after leaving the group (setsid), and is ended with it (invariant 5).
   */
  marker?: { variable: string; value: string };
}

/**
 * SIGTERM to the group (and the rest of the family when `marker` is given), SIGKILL after
 * `killAfterMs` if any of it is left; resolves when it is gone (`terminated`: it ended on SIGTERM,
 * `killed`: it needed SIGKILL, `gone`: nothing was there). Gives up waiting `giveUpMs` after the
 * SIGKILL (a member in uninterruptible sleep).
 */
export function terminateGroup(pgid: number, killAfterMs: number, giveUpMs = 5000, marker?: FamilyMarker): Promise<'gone' | 'terminated' | 'killed'> {
  return endFamily({ groups: [pgid], ...(marker ? { marker } : {}), killAfterMs, giveUpMs });
}

/** A write to /proc/<pid>/autogroup is refused (EAGAIN) within 100 ms of the last one anywhere on the machine. */
const AUTOGROUP_RETRY_MS = 110;
const AUTOGROUP_TRIES = 5;

/**
 * Runs the process `pid` and what it starts at `nice` (0–19; 0 or less, or Windows: nothing is done).
 * POSIX: its nice value (on Linux that of its main thread, which every thread and process it starts
 * later inherits; so call this right after the spawn). Linux: also its session's autogroup nice value,
 * when `pid` leads a session of its own (a `detached` spawn): with autogroup scheduling (the default of
 * most distributions) the CPU is shared out per session first, and a nice value only orders the
 * threads inside one session. Best effort: a refusal (a sandbox, no /proc) leaves the process as it is.
 */
export function lowerPriority(pid: number, nice: number): void {
  if (!(nice > 0) || process.platform === 'win32') return;
  try {
    os.setPriority(pid, nice);
  } catch {
    return; // gone already, or not ours to change
  }
  if (process.platform !== 'linux' || !leadsSession(pid)) return;
  const write = (triesLeft: number) => {
    try {
      fs.writeFileSync(`/proc/${pid}/autogroup`, String(nice));
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EAGAIN' && triesLeft > 1) setTimeout(() => write(triesLeft - 1), AUTOGROUP_RETRY_MS).unref();
      // ENOENT: no autogroup scheduling in this kernel (or the process is gone): the nice value is all there is.
    }
  };
  write(AUTOGROUP_TRIES);
}

/** Whether `pid` is the leader of its session (/proc/<pid>/stat field 6). */
function leadsSession(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[3] === String(pid);
  } catch {
    return false;
  }
}

/** This process's own nice value (0 where it cannot be read). */
export function ownNice(): number {
  try {
    return os.getPriority();
  } catch {
    return 0;
  }
}

export class GroupChild {
  readonly child: ChildProcess;
  /** The leader's exit (or why it never started). */
  readonly exited: Promise<ChildExit>;
  private ending: Promise<unknown> | undefined;
  private readonly marker: GroupChildOptions['marker'];

  constructor(opts: GroupChildOptions) {
    this.marker = opts.marker;
    const spawnOpts: SpawnOptions = {
      cwd: opts.cwd,
      env: opts.marker ? { ...opts.env, [opts.marker.variable]: opts.marker.value } : opts.env,
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: process.platform !== 'win32',
      windowsHide: true,
    };
    this.child = opts.shell ? spawn([opts.command, ...opts.args].join(' '), { ...spawnOpts, shell: true }) : spawn(opts.command, [...opts.args], spawnOpts);
    if (this.child.pid !== undefined) lowerPriority(this.child.pid, ownNice()); // invariant 6
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
    this.ending ??= terminateGroup(pid, killAfterMs, undefined, this.marker);
    return this.ending;
  }

  private familyLeft(pid: number): boolean {
    if (groupAlive(pid)) return true;
    return !!this.marker && (familyOf({ marker: this.marker })?.length ?? 0) > 0;
  }

  /** Resolves when the leader has exited and its group is empty (invariant 3). */
  async settled(killAfterMs: number): Promise<ChildExit> {
    const exit = await this.exited;
    const pid = this.pid;
    if (pid !== undefined && process.platform !== 'win32' && this.familyLeft(pid)) await this.terminate(killAfterMs);
    else if (this.ending) await this.ending;
    return exit;
  }
}
