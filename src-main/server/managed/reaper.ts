/**
 * Ending managed processes that outlived what should have ended them (Gaffer killed with -9; a
 * command agent killed while its command ran; what a process started with setsid before Gaffer
 * stopped it).
 *
 * Invariants:
 * 1. Nothing is signalled unless it is verified to be ours just before: a process whose initial
 *    environment (/proc/PID/environ) carries GAFFER_MANAGED_PROCESS with this Gaffer's marker, a
 *    descendant of one, or a member of a recorded group whose leader's start time still matches
 *    the recorded one (a pid the kernel has since given to someone else has another start time).
 * 2. They are ended as one family (process-family.mjs): SIGTERM, then SIGKILL after `killAfterMs`
 *    if still running.
 * 3. Where there is no /proc (macOS, Windows) nothing can be verified, so nothing is reaped here:
 *    those systems rely on the lifeline alone (the pipe from Gaffer closing).
 */
import { endFamily, familyOf, listProcesses, running, type FamilySpec } from '../../cli/agent/process-family.mjs';
import type { RecordedProcess } from '../../core/managed';

export const MARKER_VARIABLE = 'GAFFER_MANAGED_PROCESS';

/** Ends the family `spec` names; resolves with how many processes it had when found. */
async function reap(spec: FamilySpec, killAfterMs: number): Promise<number> {
  const found = familyOf(spec)?.length ?? 0;
  if (found > 0) await endFamily({ ...spec, killAfterMs });
  return found;
}

/** What an earlier Gaffer left: verified recorded groups, and every process with our marker prefix. */
export function reapLeftovers(records: readonly RecordedProcess[], markerPrefix: string, killAfterMs = 10_000): Promise<number> {
  const all = listProcesses();
  if (!all) return Promise.resolve(0);
  const groups = records
    .filter((r) => {
      const leader = all.find((p) => p.pid === r.pgid);
      return running(leader) && r.startTicks !== null && leader.startTicks === r.startTicks;
    })
    .map((r) => r.pgid);
  return reap({ groups, marker: { variable: MARKER_VARIABLE, prefix: markerPrefix } }, killAfterMs);
}

/** Everything still carrying exactly `marker`, and its descendants (the process itself has exited). */
export function reapMarker(marker: string, killAfterMs = 10_000): Promise<number> {
  if (!listProcesses()) return Promise.resolve(0);
  return reap({ marker: { variable: MARKER_VARIABLE, value: marker } }, killAfterMs);
}
