/**
 * Starts one of the core's worker threads. From the sources (tests, `tsx`) the worker runs its
 * TypeScript file through tsx's loader; from a build it runs the bundled file the build puts next
 * to the main bundle (scripts/start.mjs, electron.vite.config.ts), found beside the caller's own
 * module, which is then that bundle.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';

export interface WorkerFiles {
  /** The caller's `import.meta.url`. */
  from: string;
  /** The bundled worker's file name (beside the main bundle). */
  bundled: string;
  /** The worker's TypeScript source, relative to the caller's directory. */
  source: string;
}

export function startWorkerThread(files: WorkerFiles, workerData: unknown): Worker {
  const here = path.dirname(fileURLToPath(files.from));
  const bundled = path.join(here, files.bundled);
  if (fs.existsSync(bundled)) return new Worker(bundled, { workerData });
  const source = pathToFileURL(path.join(here, files.source)).href;
  const tsx = import.meta.resolve('tsx/esm/api');
  const boot = `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(source)}); });`;
  return new Worker(boot, { eval: true, workerData });
}

/**
 * Lowers the calling worker thread's CPU priority (a nice value), so that when the CPUs are short
 * its work waits, not the thread that serves claims. Only on Linux, where a nice value belongs to
 * the thread that sets it; elsewhere it would apply to the whole process, claims included.
 */
export function niceThisThread(nice: number | undefined): void {
  if (!nice || process.platform !== 'linux') return;
  try {
    os.setPriority(nice); // pid 0: this thread only, on Linux
  } catch {
    // not allowed here (a sandbox): the worker keeps the process's priority
  }
}

/**
 * Puts the calling worker thread in Linux's SCHED_IDLE class: it runs only on a CPU that nothing
 * else wants, and any other thread that wakes — the thread that serves claims, an agent's process —
 * takes the CPU from it at once, and the scheduler places such a wake-up on its CPU as on an idle
 * one. A nice value cannot give that: nice weighs threads only against others of the same
 * scheduling group (with autogroup, the same session), so a niced worker still holds a CPU against
 * an agent's process woken in another session (bench/REPORT.md, "flood3"). Node has no call for
 * sched_setscheduler, so `chrt` (util-linux) sets it for this thread's id. Best effort: false when
 * not on Linux, `chrt` is missing or refused; the thread keeps its nice value then.
 */
export function idleThisThread(): boolean {
  if (process.platform !== 'linux') return false;
  try {
    const tid = /task\/(\d+)$/.exec(fs.readlinkSync('/proc/thread-self'))?.[1];
    if (!tid) return false;
    return spawnSync('chrt', ['--idle', '--pid', '0', tid], { stdio: 'ignore', timeout: 5000 }).status === 0;
  } catch {
    return false;
  }
}
