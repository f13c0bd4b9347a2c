/**
 * PROTOCOL §17 in the desktop app. Chromium starts its helper processes (zygote, renderers, GPU)
 * with the environment the app was started with, before main.ts runs: a token in that environment
 * is in theirs, for as long as they live, and removing it from the main process changes nothing
 * there. `npm start` never does that (it hands the token over on a pipe,
 * GAFFER_OPERATOR_TOKEN_FD); an app started some other way with GAFFER_OPERATOR_TOKEN exported
 * starts itself again, with a clean environment and the token on a pipe, and leaves before it
 * does anything else (no lock, no window, no database).
 */
import type { ChildProcess, SpawnOptions } from 'node:child_process';
import { secretPipes, type ProcessSecrets } from '../../scripts/lib/process-secrets.mjs';

export interface RelaunchDeps {
  /** The app's executable and its arguments (process.execPath, process.argv.slice(1)). */
  execPath: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  platform: NodeJS.Platform;
  spawn(file: string, args: string[], opts: SpawnOptions): ChildProcess;
  /** Ends this process once the successor has the token. */
  exit(code: number): void;
}

/** True when a successor was started (this process is on its way out and must start nothing). */
export function relaunchWithoutTokens(secrets: ProcessSecrets, deps: RelaunchDeps): boolean {
  const fromEnvironment = Object.values(secrets.from).includes('environment');
  // Windows: no pipe hand-off to a GUI process there; its environment is not readable by others the /proc way.
  if (!fromEnvironment || deps.platform === 'win32') return false;
  const pipes = secretPipes(secrets.tokens, ['ignore', 'inherit', 'inherit'], deps.env);
  const child = deps.spawn(deps.execPath, deps.args, { env: pipes.env, stdio: pipes.stdio, detached: true });
  void pipes.send(child).then(() => {
    child.unref();
    deps.exit(0);
  });
  return true;
}
