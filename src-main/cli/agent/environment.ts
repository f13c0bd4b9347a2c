/**
 * The child's environment and how to find its command.
 *
 * 1. The child inherits the agent's environment minus Gaffer's secrets: `GAFFER_TOKEN`,
 *    `GAFFER_OPERATOR_TOKEN`, and any variable whose value contains one of them (a token copied
 *    into another name is still the token). Every `GAFFER_*` variable the agent sets replaces an
 *    inherited one of the same name.
 * 2. Values never carry NUL (the OS would refuse to start the child).
 */
import fs from 'node:fs';
import path from 'node:path';

/** Variables that hold Gaffer secrets; never passed on. */
export const SECRET_VARIABLES = ['GAFFER_TOKEN', 'GAFFER_OPERATOR_TOKEN'] as const;
/** Variables about the agent's own connection; the command is not an agent. */
const AGENT_VARIABLES = ['GAFFER_URL'];

export function childEnvironment(base: NodeJS.ProcessEnv, vars: Record<string, string>, extraSecrets: readonly string[] = []): Record<string, string> {
  return withVariables(inheritedEnvironment(base, extraSecrets), vars);
}

/** What every child inherits (invariant 1): worked out once per agent, not once per attempt. */
export function inheritedEnvironment(base: NodeJS.ProcessEnv, extraSecrets: readonly string[] = []): Record<string, string> {
  const secrets = [...SECRET_VARIABLES.map((k) => base[k]), ...extraSecrets].filter((s): s is string => typeof s === 'string' && s.length >= 8);
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(base)) {
    if (v === undefined || (SECRET_VARIABLES as readonly string[]).includes(k) || AGENT_VARIABLES.includes(k)) continue;
    if (secrets.some((s) => v.includes(s))) continue;
    env[k] = v;
  }
  return env;
}

/** `inherited` plus the attempt's own variables (invariant 2); `inherited` is left as it is. */
export function withVariables(inherited: Readonly<Record<string, string>>, vars: Record<string, string>): Record<string, string> {
  const env = { ...inherited };
  for (const [k, v] of Object.entries(vars)) env[k] = v.replace(/\0/g, '');
  return env;
}

/**
 * Where `command` would be found the way the OS looks for it (a path as is, else each PATH entry),
 * or why it cannot run: so a missing or non-executable command is one clear error at start-up
 * instead of a failure per task.
 */
export function resolveCommand(command: string, env: NodeJS.ProcessEnv, cwd: string): { ok: true; path: string } | { ok: false; reason: string } {
  const executable = (p: string): 'ok' | 'missing' | 'not_executable' => {
    try {
      const st = fs.statSync(p);
      if (!st.isFile()) return 'missing';
      if (process.platform === 'win32') return 'ok';
      fs.accessSync(p, fs.constants.X_OK);
      return 'ok';
    } catch (e) {
      return (e as NodeJS.ErrnoException).code === 'EACCES' ? 'not_executable' : 'missing';
    }
  };
  if (command.includes('/') || (process.platform === 'win32' && command.includes('\\'))) {
    const p = path.resolve(cwd, command);
    const v = executable(p);
    return v === 'ok' ? { ok: true, path: p } : { ok: false, reason: v === 'missing' ? `${p} does not exist (ENOENT)` : `${p} is not executable (EACCES)` };
  }
  const exts = process.platform === 'win32' ? (env.PATHEXT ?? '.EXE;.CMD;.BAT;.COM').split(';').concat(['']) : [''];
  let denied: string | undefined;
  for (const dir of (env.PATH ?? '').split(path.delimiter).filter(Boolean)) {
    for (const ext of exts) {
      const p = path.resolve(cwd, dir, command + ext);
      const v = executable(p);
      if (v === 'ok') return { ok: true, path: p };
      if (v === 'not_executable') denied ??= p;
    }
  }
  return { ok: false, reason: denied ? `${denied} is not executable (EACCES)` : `"${command}" was not found on PATH (ENOENT)` };
}
