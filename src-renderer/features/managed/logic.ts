/**
 * Pure logic of the Managed agents view: the editor form and its checks, what changed, how a
 * process's status reads, and a one-line summary per agent.
 */
import {
  COMMAND_AGENT_PARSE_FORMATS,
  envName,
  managedCwd,
  managedName,
  managedWorkspace,
  MAX_MANAGED_INSTANCES,
  MAX_RUN_TIMEOUT_S,
  RESERVED_ENV,
  type ManagedAgent,
  type ManagedDefinition,
  type ManagedMode,
  type ManagedProcess,
  type ManagedProcessStatus,
  type ManagedWorkspace,
} from '../../../src-main/common/managed-agents';
import { roleProblem } from '../../lib/roles';
import { PROCESS_STATUS_META } from '../../lib/status';

export interface ManagedForm {
  name: string;
  role: string;
  mode: ManagedMode;
  /** One argument per line. */
  command: string;
  instances: string;
  cwd: string;
  /** KEY=value per line; lines starting with # are comments. */
  env: string;
  timeoutS: string;
  shell: boolean;
  parse: string;
  /** A git repository: each run in its own worktree of it (empty: none). */
  workspace: string;
  /** The revision new branches start from (empty: the repository's HEAD). */
  workspaceBase: string;
  workspaceKeep: 'failed' | 'always' | 'never';
  workspaceOnRetry: 'resume' | 'fresh';
  workspaceSandbox: boolean;
}

export type FormErrors = Partial<Record<keyof ManagedForm, string>>;

const NO_WORKSPACE = { workspace: '', workspaceBase: '', workspaceKeep: 'failed', workspaceOnRetry: 'resume', workspaceSandbox: false } as const;

export function emptyForm(): ManagedForm {
  return { name: '', role: '', mode: 'per_task', command: '', instances: '1', cwd: '', env: '', timeoutS: '', shell: false, parse: '', ...NO_WORKSPACE };
}

export function formFromAgent(a: ManagedDefinition): ManagedForm {
  return {
    name: a.name,
    role: a.role,
    mode: a.mode,
    command: a.command.join('\n'),
    instances: String(a.instances),
    cwd: a.cwd ?? '',
    env: Object.entries(a.env)
      .map(([k, v]) => `${k}=${v}`)
      .join('\n'),
    timeoutS: a.timeoutS === null ? '' : String(a.timeoutS),
    shell: a.shell,
    parse: a.parse ?? '',
    ...(a.workspace
      ? {
          workspace: a.workspace.repo,
          workspaceBase: a.workspace.base ?? '',
          workspaceKeep: a.workspace.keep ?? 'failed',
          workspaceOnRetry: a.workspace.onRetry ?? 'resume',
          workspaceSandbox: a.workspace.sandbox ?? false,
        }
      : NO_WORKSPACE),
  };
}


/** Arguments, one per line (blank lines left out; spaces inside a line are kept). */
export function parseCommand(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((l) => l.replace(/\s+$/, ''))
    .filter((l) => l.trim().length > 0);
}

export function parseEnv(text: string): { env: Record<string, string>; error: string | null } {
  const env: Record<string, string> = {};
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (!line || line.startsWith('#')) continue;
    const eq = line.indexOf('=');
    const key = eq < 0 ? line : line.slice(0, eq).trim();
    if (eq < 0 || !envName.safeParse(key).success) return { env, error: `Line ${i + 1}: write NAME=value (letters, digits and "_" in the name).` };
    if ((RESERVED_ENV as readonly string[]).includes(key)) return { env, error: `Line ${i + 1}: Gaffer sets ${key} itself.` };
    env[key] = lines[i]!.slice(lines[i]!.indexOf('=') + 1);
  }
  return { env, error: null };
}

/** The definition the form describes, or the problems field by field. */
export function formToDefinition(f: ManagedForm): { definition: ManagedDefinition | null; errors: FormErrors } {
  const errors: FormErrors = {};
  const name = f.name.trim();
  const role = f.role.trim();
  if (!managedName.safeParse(name).success) errors.name = 'A name is 1–64 letters, digits, "_", "-" or "." (its instances are called name-1, name-2, …).';
  const badRole = roleProblem(role);
  if (badRole) errors.role = badRole;
  const command = parseCommand(f.command);
  if (command.length === 0) errors.command = 'The program to run, then one argument per line.';
  const instances = Number(f.instances);
  if (!/^\d+$/.test(f.instances.trim()) || instances < 1 || instances > MAX_MANAGED_INSTANCES) errors.instances = `From 1 to ${MAX_MANAGED_INSTANCES}.`;
  const cwd = f.cwd.trim();
  if (cwd && !managedCwd.safeParse(cwd).success) errors.cwd = 'An absolute path (or leave it empty for Gaffer’s own directory).';
  const env = parseEnv(f.env);
  if (env.error) errors.env = env.error;
  const perTask = f.mode === 'per_task';
  let timeoutS: number | null = null;
  if (f.timeoutS.trim()) {
    timeoutS = Number(f.timeoutS);
    if (!perTask) errors.timeoutS = 'Only for “one run per task”: a long-running command times itself.';
    else if (!/^\d+$/.test(f.timeoutS.trim()) || timeoutS < 1 || timeoutS > MAX_RUN_TIMEOUT_S) errors.timeoutS = 'Whole seconds, from 1 to 24 days.';
  }
  if (f.parse && !(COMMAND_AGENT_PARSE_FORMATS as readonly string[]).includes(f.parse)) errors.parse = 'Pick one of the listed formats.';
  const repo = f.workspace.trim();
  let workspace: ManagedWorkspace | null = null;
  if (repo) {
    const base = f.workspaceBase.trim();
    const w = managedWorkspace.safeParse({
      repo,
      ...(base ? { base } : {}),
      keep: f.workspaceKeep,
      onRetry: f.workspaceOnRetry,
      ...(f.workspaceSandbox ? { sandbox: true } : {}),
    });
    if (!perTask) errors.workspace = 'Only for “one run per task”.';
    else if (!w.success) errors.workspace = 'An absolute path to a git repository (and a revision that does not start with “-”).';
    else workspace = w.data;
  }
  if (Object.keys(errors).length > 0) return { definition: null, errors };
  return {
    definition: {
      name,
      role,
      command,
      mode: f.mode,
      instances,
      cwd: cwd || null,
      env: env.env,
      timeoutS: perTask ? timeoutS : null,
      shell: perTask && f.shell,
      parse: perTask && f.parse ? (f.parse as ManagedDefinition['parse']) : null,
      workspace,
    },
    errors,
  };
}

const FIELDS = ['role', 'command', 'mode', 'instances', 'cwd', 'env', 'timeoutS', 'shell', 'parse', 'workspace'] as const;

/** The fields of `next` that differ from `current` (a PATCH; the name cannot change). */
export function changedFields(current: ManagedDefinition, next: ManagedDefinition): Partial<ManagedDefinition> {
  const patch: Record<string, unknown> = {};
  for (const k of FIELDS) if (JSON.stringify(current[k]) !== JSON.stringify(next[k])) patch[k] = next[k];
  return patch as Partial<ManagedDefinition>;
}

/** Whether saving `patch` replaces the running processes (anything but the instance count does). */
export function replacesProcesses(patch: Partial<ManagedDefinition>): boolean {
  return Object.keys(patch).some((k) => k !== 'instances');
}

/** One line for the agent list: how many instances run, and the worst thing about the others. */
export function summarise(a: Pick<ManagedAgent, 'desired' | 'instances' | 'processes' | 'supervised'>): { text: string; tone: string } {
  if (!a.supervised) return { text: 'Not run by this Gaffer', tone: 'offline' };
  if (a.desired === 'stopped') return { text: 'Stopped', tone: 'offline' };
  const main = a.processes.filter((p) => p.status !== 'draining');
  const running = main.filter((p) => p.status === 'running').length;
  const order: ManagedProcessStatus[] = ['failed', 'crash_looping', 'backoff', 'starting', 'stopping', 'stopped'];
  const worst = order.find((s) => main.some((p) => p.status === s));
  const text = `${running} of ${a.instances} running`;
  if (!worst || running === a.instances) return { text, tone: 'online' };
  return { text: `${text} · ${PROCESS_STATUS_META[worst].label.toLowerCase()}`, tone: PROCESS_STATUS_META[worst].tone };
}

/** "3 s", "4 min", "2 h 5 min", "3 d 4 h". */
export function formatUptime(startedAt: string | null, now: number): string {
  if (!startedAt) return '—';
  const s = Math.max(0, Math.floor((now - Date.parse(startedAt)) / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 24) return `${h} h${m % 60 ? ` ${m % 60} min` : ''}`;
  return `${Math.floor(h / 24)} d${h % 24 ? ` ${h % 24} h` : ''}`;
}

export function describeLastExit(p: Pick<ManagedProcess, 'lastExit'>): string {
  return p.lastExit ? p.lastExit.description : 'none yet';
}

export const MODE_LABELS: Record<ManagedMode, { label: string; help: string }> = {
  per_task: {
    label: 'One run per task',
    help: 'Gaffer claims tasks and job runs of the role and runs the command once for each, with the task in its environment, on stdin and in a file. Exit 0 = done, 75 = retry, 65 = fatal, 77 = needs a human.',
  },
  long_running: {
    label: 'Long-running agent',
    help: 'The command is an agent itself (it uses the SDK or speaks the protocol). It gets GAFFER_URL and GAFFER_TOKEN in its environment.',
  },
};
