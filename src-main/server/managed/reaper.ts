/**
 * Ending managed processes that outlived what should have ended them (Gaffer killed with -9; a
 * command agent killed while its command ran).
 *
 * Invariants:
 * 1. Nothing is signalled unless it is verified to be ours just before: a process whose initial
 *    environment (/proc/PID/environ) carries GAFFER_MANAGED_PROCESS with this Gaffer's marker, or
 *    the leader of a recorded group whose start time still matches the recorded one (a pid the
 *    kernel has since given to someone else has another start time).
 * 2. Verified processes get SIGTERM, then SIGKILL after `killAfterMs` if still running.
 * 3. Where there is no /proc (macOS, Windows) nothing can be verified, so nothing is reaped here:
 *    those systems rely on the lifeline alone (the pipe from Gaffer closing).
 */
import fs from 'node:fs';
import { listProcesses, readProcStat, type ProcEntry } from '../../cli/agent/process-group';
import type { RecordedProcess } from '../../core/managed';

const MARKER_VAR = 'GAFFER_MANAGED_PROCESS=';

function markerOf(pid: number): string | undefined {
  let environ: string;
  try {
    environ = fs.readFileSync(`/proc/${pid}/environ`, 'utf8');
  } catch {
    return undefined;
  }
  for (const entry of environ.split('\0')) if (entry.startsWith(MARKER_VAR)) return entry.slice(MARKER_VAR.length);
  return undefined;
}

const live = (p: ProcEntry | undefined) => !!p && p.state !== 'Z' && p.state !== 'X';

/** Processes to end: carrying a marker `match` accepts, or members of a verified recorded group. */
function targets(match: (marker: string) => boolean, records: readonly RecordedProcess[]): ProcEntry[] {
  const all = listProcesses();
  if (!all) return [];
  const verifiedGroups = new Set(
    records.filter((r) => {
      const leader = all.find((p) => p.pid === r.pgid);
      return live(leader) && r.startTicks !== null && leader!.startTicks === r.startTicks;
    }).map((r) => r.pgid),
  );
  return all.filter((p) => p.pid !== process.pid && live(p) && (verifiedGroups.has(p.pgrp) || (() => {
    const m = markerOf(p.pid);
    return m !== undefined && match(m);
  })()));
}

async function endAll(procs: ProcEntry[], killAfterMs: number): Promise<number> {
  for (const p of procs) signal(p.pid, 'SIGTERM');
  const deadline = Date.now() + killAfterMs;
  const stillOurs = () => procs.filter((p) => {
    const now = readProcStat(p.pid);
    return live(now) && now!.startTicks === p.startTicks;
  });
  let left = stillOurs();
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    left = stillOurs();
  }
  for (const p of left) signal(p.pid, 'SIGKILL');
  return procs.length;
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    /* gone meanwhile */
  }
}

/** What an earlier Gaffer left: verified recorded groups, and every process with our marker prefix. */
export function reapLeftovers(records: readonly RecordedProcess[], markerPrefix: string, killAfterMs = 10_000): Promise<number> {
  return endAll(targets((m) => m.startsWith(markerPrefix), records), killAfterMs);
}

/** Everything still carrying exactly `marker` (the process itself has exited). */
export function reapMarker(marker: string, killAfterMs = 10_000): Promise<number> {
  return endAll(targets((m) => m === marker, []), killAfterMs);
}
