/**
 * What a managed process is started as: the command agent around the command (`per_task`), or the
 * shim around the command (`long_running`), with which environment.
 *
 * 1. The environment is Gaffer's own minus its secrets (the operator token, any agent token),
 *    plus the definition's variables, plus what Gaffer sets: the marker (GAFFER_MANAGED_PROCESS)
 *    always; the user's umask (GAFFER_UMASK: Gaffer itself runs with 077, its agents' commands
 *    should not) where known; GAFFER_URL / GAFFER_NAME / GAFFER_ROLE for a long-running command.
 * 2. The agent token is in neither the environment nor the argv (PROTOCOL §17: process lists and
 *    /proc/<pid>/environ are readable by every process of the user): it is `tokens`, which the
 *    spawner hands over on a pipe (GAFFER_TOKEN_FD, scripts/lib/process-secrets.mjs). The command
 *    agent keeps it from its commands; the shim hands it on to a long-running command, which
 *    is an agent itself, in a 0600 file (GAFFER_TOKEN_FILE, scripts/managed-shim.mjs).
 */
import path from 'node:path';
import { drainGraceS, type ManagedWorkspace } from '../../common/managed-agents';
import type { LaunchRequest } from '../../core/managed';

export interface LaunchPaths {
  /** A Node.js binary (not Electron's). */
  node: string;
  /** scripts/gaffer.mjs */
  gafferBin: string;
  /** scripts/managed-shim.mjs */
  shim: string;
  /** Gaffer's data directory: a sandboxed command must not see it (`--hide`). */
  dataDir?: string;
}

/** The scripts of a source checkout at `root` (the repository, or the unpacked app). */
export function launchPaths(root: string, node: string): LaunchPaths {
  return { node, gafferBin: path.join(root, 'scripts', 'gaffer.mjs'), shim: path.join(root, 'scripts', 'managed-shim.mjs') };
}

export interface LaunchSpec {
  file: string;
  args: string[];
  cwd: string | undefined;
  env: Record<string, string>;
  /** Handed over on pipes, never in `env` or `args` (invariant 2). */
  tokens: { GAFFER_TOKEN: string };
}

const GAFFER_SECRETS = ['GAFFER_OPERATOR_TOKEN', 'GAFFER_TOKEN'];

/** `--workspace` and its options; a sandbox also hides this Gaffer's data directory (PROTOCOL §15). */
function workspaceArgs(w: ManagedWorkspace, dataDir: string | undefined): string[] {
  return [
    '--workspace',
    w.repo,
    ...(w.base !== undefined ? ['--base', w.base] : []),
    ...(w.keep !== undefined ? ['--keep', w.keep] : []),
    ...(w.onRetry !== undefined ? ['--on-retry', w.onRetry] : []),
    ...(w.sandbox ? ['--sandbox', ...(dataDir ? ['--hide', dataDir] : [])] : []),
  ];
}

export function launchSpec(req: LaunchRequest, paths: LaunchPaths, base: NodeJS.ProcessEnv, userUmask?: number): LaunchSpec {
  const d = req.definition;
  const env: Record<string, string> = {};
  const secrets = GAFFER_SECRETS.map((k) => base[k]).filter((v): v is string => !!v && v.length >= 8);
  for (const [k, v] of Object.entries(base)) {
    if (v === undefined || GAFFER_SECRETS.includes(k) || k.startsWith('GAFFER_')) continue;
    if (secrets.some((s) => v.includes(s))) continue;
    env[k] = v;
  }
  Object.assign(env, d.env, { GAFFER_MANAGED_PROCESS: req.marker }, userUmask !== undefined ? { GAFFER_UMASK: userUmask.toString(8) } : {});
  const cwd = d.cwd ?? undefined;
  const tokens = { GAFFER_TOKEN: req.token };
  if (d.mode === 'long_running') {
    Object.assign(env, { GAFFER_URL: req.agentUrl, GAFFER_NAME: req.name, GAFFER_ROLE: d.role });
    return { file: paths.node, args: [paths.shim, '--', ...d.command], cwd, env, tokens };
  }
  const args = [
    paths.gafferBin,
    'agent',
    '--url',
    req.agentUrl,
    '--role',
    d.role,
    '--name',
    req.name,
    '--exit-on-stdin-close',
    '--grace-s',
    String(drainGraceS(d)),
    ...(d.timeoutS !== null ? ['--timeout-s', String(d.timeoutS)] : []),
    ...(d.shell ? ['--shell'] : []),
    ...(d.parse !== null ? ['--parse', d.parse] : []),
    ...(d.cwd !== null && d.workspace === null ? ['--cwd', d.cwd] : []),
    ...(d.workspace !== null ? workspaceArgs(d.workspace, paths.dataDir) : []),
    '--',
    ...d.command,
  ];
  return { file: paths.node, args, cwd, env, tokens };
}
