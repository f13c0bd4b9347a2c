/**
 * Managed agents (PROTOCOL §7): agent processes Gaffer starts, keeps running and stops. The shapes
 * shared by the core, the HTTP API, the console API and the renderer.
 */
import { z } from 'zod';
import { reason, roleName } from './schemas';

export const MANAGED_MODES = ['per_task', 'long_running'] as const;
export type ManagedMode = (typeof MANAGED_MODES)[number];

/** `--parse` formats of the command agent (src-main/cli/agent/adapters; a test keeps them equal). */
export const COMMAND_AGENT_PARSE_FORMATS = ['claude-stream-json', 'codex-json', 'gemini-stream-json'] as const;

/** Variables Gaffer sets itself; a definition may not set them. */
export const RESERVED_ENV = ['GAFFER_TOKEN', 'GAFFER_OPERATOR_TOKEN', 'GAFFER_URL', 'GAFFER_MANAGED_PROCESS', 'GAFFER_NAME', 'GAFFER_ROLE'] as const;

export const MAX_MANAGED_INSTANCES = 32;

/** The longest per-run time limit: 24 days (a Node timer cannot wait longer than 2^31 ms). */
export const MAX_RUN_TIMEOUT_S = 24 * 86_400;

export const managedName = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, 'a name is 1–64 letters, digits, "_", "-" or "." (it names the instances)');
const argv = z
  .array(z.string().max(8000).refine((s) => !s.includes('\0'), 'no NUL characters'))
  .min(1, 'the command needs at least the program')
  .max(200)
  .refine((a) => a.length === 0 || a[0]!.trim().length > 0, 'the program (first element) may not be empty');
export const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, 'an environment variable name is letters, digits and "_"');
const env = z
  .record(envName, z.string().max(16_000).refine((s) => !s.includes('\0'), 'no NUL characters'))
  .refine((e) => Object.keys(e).length <= 100, 'at most 100 variables')
  .refine((e) => !Object.keys(e).some((k) => (RESERVED_ENV as readonly string[]).includes(k)), `Gaffer sets ${RESERVED_ENV.join(', ')} itself`);
export const managedCwd = z.string().min(1).max(4000).refine((p) => p.startsWith('/') || /^[A-Za-z]:[\\/]/.test(p), 'the working directory must be an absolute path');

/**
 * per_task only: `--workspace REPO` and its options (PROTOCOL §15): each attempt in its own git
 * worktree of `repo`, on branch `gaffer/<key>`.
 */
export const managedWorkspace = z.strictObject({
  repo: managedCwd,
  base: z.string().min(1).max(200).refine((b) => !b.startsWith('-'), 'a revision, not an option').optional(),
  keep: z.enum(['always', 'failed', 'never']).optional(),
  onRetry: z.enum(['resume', 'fresh']).optional(),
  sandbox: z.boolean().optional(),
});
export type ManagedWorkspace = z.infer<typeof managedWorkspace>;

const definitionShape = {
  name: managedName,
  role: roleName,
  command: argv,
  mode: z.enum(MANAGED_MODES),
  instances: z.number().int().min(1).max(MAX_MANAGED_INSTANCES),
  cwd: managedCwd.nullable(),
  env,
  /** Per-run time limit (seconds), per_task only (`--timeout-s`). */
  timeoutS: z.number().int().min(1).max(MAX_RUN_TIMEOUT_S).nullable(),
  /** per_task only: run the command through the shell (`--shell`). */
  shell: z.boolean(),
  /** per_task only: `--parse FORMAT`. */
  parse: z.enum(COMMAND_AGENT_PARSE_FORMATS).nullable(),
  /** per_task only: a worktree per attempt (`--workspace`). */
  workspace: managedWorkspace.nullable(),
};

/** Options that only mean something for the command agent (per_task). */
const PER_TASK_ONLY = ['timeoutS', 'shell', 'parse', 'workspace'] as const;

function perTaskOnly(d: { mode?: ManagedMode; timeoutS?: number | null; shell?: boolean; parse?: string | null; workspace?: ManagedWorkspace | null }, ctx: z.RefinementCtx): void {
  if (d.mode !== 'long_running') return;
  for (const k of PER_TASK_ONLY) {
    const v = d[k];
    if (v !== undefined && v !== null && v !== false) ctx.addIssue({ code: 'custom', path: [k], message: `${k} applies to mode per_task only (a long_running command is an agent itself)` });
  }
}

/** The fields with defaults: optional when creating, and (with role and command) in a PATCH. */
const optionalShape = z.object(definitionShape).omit({ name: true, role: true, command: true }).partial().shape;

export const managedAgentInput = z
  .strictObject({ name: definitionShape.name, role: definitionShape.role, command: definitionShape.command, ...optionalShape, reason: reason.optional() })
  .superRefine(perTaskOnly);
export type ManagedAgentInput = z.infer<typeof managedAgentInput>;

/** PATCH: any field but the name; `null` clears an optional one. */
export const managedAgentPatch = z
  .strictObject({ role: definitionShape.role.optional(), command: definitionShape.command.optional(), ...optionalShape, reason: reason.optional() })
  .refine((p) => Object.keys(p).some((k) => k !== 'reason'), 'nothing to change');
export type ManagedAgentPatch = z.infer<typeof managedAgentPatch>;

/** The stored definition, complete, after defaults. */
export const managedDefinition = z.strictObject(definitionShape).superRefine(perTaskOnly);
export type ManagedDefinition = z.infer<typeof managedDefinition>;

export const MANAGED_ACTIONS = ['start', 'stop', 'restart'] as const;
export type ManagedAction = (typeof MANAGED_ACTIONS)[number];

export const managedControlInput = z.strictObject({
  reason: reason.optional(),
  /** 1-based: one process of the agent instead of all of them. */
  instance: z.number().int().min(1).max(MAX_MANAGED_INSTANCES).optional(),
});

export const MANAGED_PROCESS_STATUSES = ['starting', 'running', 'stopping', 'draining', 'backoff', 'crash_looping', 'failed', 'stopped'] as const;
export type ManagedProcessStatus = (typeof MANAGED_PROCESS_STATUSES)[number];

export interface ManagedExit {
  code: number | null;
  signal: string | null;
  at: string;
  /** Plain words: "exit 1 after 2 s", "could not start: …". */
  description: string;
}

export interface OutputLine {
  at: string;
  stream: 'stdout' | 'stderr';
  text: string;
}

export interface ManagedProcess {
  /** 1-based. */
  instance: number;
  pid: number | null;
  status: ManagedProcessStatus;
  startedAt: string | null;
  /** Times this instance was started again after an exit. */
  restarts: number;
  lastExit: ManagedExit | null;
  /** The agent instance the process became once it said hello. */
  instanceId: string | null;
  /** When a process in backoff starts again. */
  nextStartAt: string | null;
  /** Why it is in this status (crash looping, cannot start, stopped by …). */
  message: string | null;
  /** The definition version it runs. */
  version: number;
  /** Latest output lines (only in single-agent reads). */
  recentOutput?: OutputLine[];
}

/** A definition as stored, with what Gaffer keeps about it. */
export interface ManagedAgentRecord extends ManagedDefinition {
  id: string;
  /** `running`: Gaffer keeps it running; `stopped`: the operator stopped it. */
  desired: 'running' | 'stopped';
  version: number;
  createdAt: string;
  updatedAt: string;
  updatedBy: string;
  /** The agent token Gaffer minted for it (id only; the secret never leaves Gaffer). */
  tokenId: string | null;
}

export interface ManagedAgent extends ManagedAgentRecord {
  /** False when no supervisor runs in this Gaffer (processes are then not started). */
  supervised: boolean;
  processes: ManagedProcess[];
}

export const DEFINITION_DEFAULTS = { mode: 'per_task' as ManagedMode, instances: 1, cwd: null, env: {}, timeoutS: null, shell: false, parse: null, workspace: null };

/**
 * How long a per_task agent being drained (stop, restart, a changed definition) may let its
 * running command finish before it is stopped and its task handed back: the per-run time limit
 * when there is one, else 5 minutes.
 */
export function drainGraceS(d: Pick<ManagedDefinition, 'mode' | 'timeoutS'>): number {
  return d.mode === 'per_task' ? (d.timeoutS ?? 300) : 0;
}
