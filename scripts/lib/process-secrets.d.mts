/** Types of process-secrets.mjs (see its header for the invariants). */
import type { ChildProcess, StdioOptions } from 'node:child_process';

export declare const TOKEN_VARIABLES: readonly ['GAFFER_TOKEN', 'GAFFER_OPERATOR_TOKEN'];
export type TokenVariable = (typeof TOKEN_VARIABLES)[number];

export interface Cleared {
  /** True when no token is left in this process's start-up environment (/proc/self/environ). */
  ok: boolean;
  /** Why not. */
  reason: string | null;
  /** Set where there is nothing to overwrite the environment through (not Linux). */
  unsupported?: boolean;
}

export interface ProcessSecrets {
  /** The tokens this process was given. */
  readonly tokens: Readonly<Partial<Record<TokenVariable, string>>>;
  /** Where each came from: a hand-off pipe (`NAME_FD`), a hand-off file (`NAME_FILE`), or the environment. */
  readonly from: Readonly<Partial<Record<TokenVariable, 'pipe' | 'file' | 'environment'>>>;
  readonly cleared: Cleared;
  /** Hand-offs that failed (`GAFFER_TOKEN_FD=3: cannot read it (EBADF)`). */
  readonly problems: readonly string[];
}

export declare function fdVariable(name: string): string;
export declare function fileVariable(name: string): string;
export declare function secretFiles(
  secrets: Partial<Record<TokenVariable, string | undefined>>,
  env: Record<string, string | undefined>,
): { env: Record<string, string>; cleanup(): void };
export declare function takeProcessSecrets(env?: NodeJS.ProcessEnv): ProcessSecrets;
export declare function clearStartupEnvironment(names: ReadonlySet<string>, values: readonly string[]): Cleared;
export declare function secretPipes(
  secrets: Partial<Record<TokenVariable, string | undefined>>,
  stdio: readonly unknown[],
  env: Record<string, string | undefined>,
): { stdio: StdioOptions; env: Record<string, string>; send(child: ChildProcess): Promise<void> };
export interface Exposure {
  pid: number;
  command: string;
  where: 'environ' | 'cmdline';
}
export declare function exposedAncestors(values: readonly (string | undefined)[]): Exposure[];
export declare function secretWarnings(secrets: ProcessSecrets): string[];
