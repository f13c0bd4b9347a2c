/** Processes seen from outside, through Linux /proc: the process tree, CPU ticks, wake-ups, RSS. */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/** Every descendant of `pid`, from /proc. */
export function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const e of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${e}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(e)]);
    } catch {
      /* exited meanwhile */
    }
  }
  const out: number[] = [];
  const walk = (p: number) => {
    for (const c of children.get(p) ?? []) {
      out.push(c);
      walk(c);
    }
  };
  walk(pid);
  return out;
}

export interface ProcSample {
  /** utime + stime, clock ticks. */
  cpuTicks: number;
  /** Voluntary context switches summed over the process's threads (each is a sleep that ended: a wake-up). */
  wakeups: number;
  /** The main thread's alone (timers, sockets: the event loop). */
  mainWakeups: number;
  rssKb: number;
  threads: number;
}

export function sampleProc(pid: number): ProcSample {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const field = (text: string, name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(text)?.[1] ?? 0);
  let wakeups = 0;
  let mainWakeups = 0;
  const tasks = fs.readdirSync(`/proc/${pid}/task`);
  for (const t of tasks) {
    try {
      const n = field(fs.readFileSync(`/proc/${pid}/task/${t}/status`, 'utf8'), 'voluntary_ctxt_switches');
      wakeups += n;
      if (Number(t) === pid) mainWakeups = n;
    } catch {
      /* thread ended */
    }
  }
  return { cpuTicks: Number(f[11]) + Number(f[12]), wakeups, mainWakeups, rssKb: field(fs.readFileSync(`/proc/${pid}/status`, 'utf8'), 'VmRSS'), threads: tasks.length };
}

/** The Node processes of the chain (npm and what it started) and their RSS together. */
export function chainFootprint(rootPid: number): { nodeProcesses: number; rssMb: number; commands: string[] } {
  let nodeProcesses = 0;
  let rssKb = 0;
  const commands: string[] = [];
  for (const pid of [rootPid, ...descendants(rootPid)]) {
    try {
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
      const exe = fs.readlinkSync(`/proc/${pid}/exe`);
      const s = sampleProc(pid);
      rssKb += s.rssKb;
      if (path.basename(exe).startsWith('node')) nodeProcesses++;
      commands.push(`${cmd.slice(0, 2).map((a) => path.basename(a)).join(' ')} (${Math.round(s.rssKb / 1024)} MB)`);
    } catch {
      /* gone */
    }
  }
  return { nodeProcesses, rssMb: Math.round(rssKb / 102.4) / 10, commands };
}

let ticks: number | undefined;
export function ticksPerSecond(): number {
  ticks ??= Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;
  return ticks;
}

/** CPU time (user + system) of a process so far, µs. */
export function processCpuUs(pid: number): number {
  return (sampleProc(pid).cpuTicks * 1e6) / ticksPerSecond();
}

/**
 * Milliseconds the main thread of `pid` has stood ready on a run queue while others had the CPU
 * (Linux schedstat, field 2; 0 where it cannot be read): the difference over a window is the time
 * that process lost to CPU contention, whatever it was doing.
 */
export function runQueueMs(pid: number | 'self' = 'self'): number {
  try {
    return Number(fs.readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[1]) / 1e6;
  } catch {
    return 0;
  }
}

/** The threads of `pid` at nice 10 (the server's log and export workers), leaving out those in `except`. */
export function nicedThreads(pid: number, except: ReadonlySet<string> = new Set()): string[] {
  return fs.readdirSync(`/proc/${pid}/task`).filter((t) => {
    if (except.has(t)) return false;
    const stat = fs.readFileSync(`/proc/${pid}/task/${t}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16] === '10';
  });
}

/** Puts threads in SCHED_IDLE (`idle`) or back in the normal class, with `chrt`: the benches' experiments. */
export function setThreadsIdle(tids: readonly string[], idle: boolean): void {
  for (const t of tids) spawnSync('chrt', [idle ? '--idle' : '--other', '--pid', '0', t]);
}

/**
 * The fsync / fdatasync times (ms, sorted) per thread id in `strace -f -T` output: a line starts
 * with the thread id and ends with the call's time in `<…>` seconds.
 */
export function fsyncTimesByThread(straceOutput: string): Map<string, number[]> {
  const byTid = new Map<string, number[]>();
  for (const l of straceOutput.split('\n')) {
    const t = /^(\d+)\s.*<([\d.]+)>$/.exec(l);
    if (t) byTid.set(t[1]!, [...(byTid.get(t[1]!) ?? []), Number(t[2]) * 1000]);
  }
  for (const d of byTid.values()) d.sort((a, b) => a - b);
  return byTid;
}
