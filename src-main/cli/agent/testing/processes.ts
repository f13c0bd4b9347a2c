/** Test helpers about real processes (Linux /proc where it helps). */
import fs from 'node:fs';

/** True while `pid` runs (a zombie waiting to be reaped counts as gone). */
export function running(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    try {
      process.kill(pid, 0);
      return !fs.existsSync('/proc/self');
    } catch {
      return false;
    }
  }
}

/** Polls (real time) until `pred` holds; returns how long it took. */
export async function waitFor(pred: () => boolean, what: string, timeoutMs = 10_000): Promise<number> {
  const start = Date.now();
  while (!pred()) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return Date.now() - start;
}

/**
 * A shell script body that starts a grandchild (`sleep`), writes both pids to `pidFile`
 * ("child grandchild"), and waits. With `ignoreTerm` both ignore SIGTERM (only SIGKILL ends them).
 */
export function familyScript(pidFile: string, opts: { ignoreTerm?: boolean; exitAfterSpawn?: boolean } = {}): string {
  return [
    opts.ignoreTerm ? "trap '' TERM" : '',
    'sleep 300 &',
    `echo "$$ $!" > '${pidFile}'`,
    opts.exitAfterSpawn ? 'exit 0' : 'wait',
  ]
    .filter(Boolean)
    .join('\n');
}

export async function readPids(pidFile: string): Promise<[number, number]> {
  await waitFor(() => fs.existsSync(pidFile) && fs.readFileSync(pidFile, 'utf8').trim().split(' ').length === 2, 'the pid file');
  const [a, b] = fs.readFileSync(pidFile, 'utf8').trim().split(' ').map(Number) as [number, number];
  return [a, b];
}

/** Whether this kernel schedules by autogroup (Linux; the file is absent elsewhere). */
export const autogroups = fs.existsSync('/proc/self/autogroup');

/**
 * The autogroup nice value of `pid`'s session, or null when its session has no autogroup of its
 * own: the kernel prints nothing for a process in the first session of the machine or container
 * (the default group, which is the root task group), as on a CI runner whose processes never left
 * it. A session made with setsid gets one.
 */
export function autogroupNice(pid: number): number | null {
  const m = /nice (-?\d+)/.exec(fs.readFileSync(`/proc/${pid}/autogroup`, 'utf8'));
  return m ? Number(m[1]) : null;
}
