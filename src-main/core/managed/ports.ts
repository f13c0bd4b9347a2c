/**
 * What the supervisor needs from the operating system, injected so the core stays testable with a
 * fake (and the ManualClock). The real one is `server/managed/spawner.ts`.
 */
import type { ManagedDefinition } from '../../common/managed-agents';
import type { RecordedProcess } from './definitions';

export interface LaunchRequest {
  managedId: string;
  definition: ManagedDefinition;
  /** 1-based. */
  instance: number;
  /** The instance name the process should say hello with. */
  name: string;
  agentUrl: string;
  /** The agent token (a secret: never logged). */
  token: string;
  /** GAFFER_MANAGED_PROCESS: found in the environment of the process and of everything it starts. */
  marker: string;
}

export interface ProcessExit {
  code: number | null;
  signal: string | null;
  /** Set when the process never started (ENOENT, EACCES, a missing cwd). */
  error?: string;
}

export interface LaunchedProcess {
  /** Undefined when it never started (an `exit` with `error` follows). */
  readonly pid: number | undefined;
  /** Identifies this process among later ones with the same pid (Linux: start time in ticks). */
  readonly startTicks: string | null;
  onOutput(fn: (stream: 'stdout' | 'stderr', text: string) => void): void;
  /** Called once, after the process has exited. */
  onExit(fn: (exit: ProcessExit) => void): void;
  /**
   * SIGTERM to its process group; SIGKILL `killAfterMs` later if anything of it is left. `urgent`
   * also closes its lifeline (stdin) first, so a command agent stops its commands at once instead
   * of letting them finish. Calling it again can only make the stop more urgent or sooner.
   */
  stop(killAfterMs: number, urgent?: boolean): void;
}

export interface ProcessSpawner {
  launch(req: LaunchRequest): LaunchedProcess;
  /**
   * Ends what an earlier Gaffer (killed with -9) left behind: the recorded groups that are verified
   * to be ours, and every process whose environment carries a marker starting with `markerPrefix`.
   * Resolves with how many processes were signalled.
   */
  reapLeftovers(records: readonly RecordedProcess[], markerPrefix: string): Promise<number>;
  /** Ends processes still carrying `marker` (a killed command agent's commands). */
  reapMarker(marker: string): Promise<number>;
}

/** The lifeline exit statuses of the command agent and the shim: the command cannot be started. */
export const EXIT_CANNOT_START = 78;
