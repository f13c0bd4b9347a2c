/**
 * One check of a "done when…" declaration (PROTOCOL §13), run by Gaffer itself.
 *
 * Invariants:
 * 1. A check never throws: a check that cannot start (no such program, a missing directory, no
 *    workspace to run in, a schema that does not compile) is a failed check whose detail says why.
 * 2. Commands run without a shell (argv), each in a process group of its own
 *    (cli/agent/process-group.ts); on its timeout, or when the verification is stopped (Gaffer
 *    stops), the whole group is ended, not only the leader.
 * 3. Only the tail of a command's output is kept (OUTPUT_TAIL characters, stdout and stderr as
 *    they came), well-formed text.
 * 4. Timeouts bound real I/O (a child process, an HTTP request), not scheduling, so they use real
 *    time by design (like core/jobs/preconditions.ts); durations are measured with performance.now.
 */
import { promises as fs } from 'node:fs';
import nodePath from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';
import type { CheckResult, VerifyCheck } from '../../common/verify';
import { toWellFormedText } from '../../common/text';
import { GroupChild } from '../../cli/agent/process-group';

export const OUTPUT_TAIL = 4096;
const DEFAULT_COMMAND_TIMEOUT_S = 300;
const GIT_TIMEOUT_MS = 30_000;
const HTTP_TIMEOUT_MS = 10_000;
/** After SIGTERM to a check's group, SIGKILL this much later if anything is left. */
const KILL_AFTER_MS = 2000;

/** Where the attempt worked (PROTOCOL §15), when Gaffer knows it. */
export interface AttemptWorkspace {
  path: string;
  base?: string;
  branch?: string;
}

export interface CheckContext {
  workspace?: AttemptWorkspace;
  /** When the judged attempt started (its claim / dispatch), epoch ms: `changedDuringAttempt`. */
  attemptStartedAt: number;
  /** The task's / run's reported `output`. */
  output: unknown;
  /** Aborted when Gaffer stops: running commands are ended at once. */
  signal: AbortSignal;
}

/** Runs one check; never throws (invariant 1). */
export async function runCheck(check: VerifyCheck, ctx: CheckContext): Promise<CheckResult> {
  const t0 = performance.now();
  let r: Omit<CheckResult, 'name' | 'kind' | 'durationMs'>;
  try {
    r = await CHECKS[check.kind](check as never, ctx);
  } catch (e) {
    r = { passed: false, detail: `could not run the check: ${e instanceof Error ? e.message : String(e)}` };
  }
  return { name: check.name, kind: check.kind, ...r, detail: toWellFormedText(r.detail), durationMs: Math.round(performance.now() - t0) };
}

type Outcome = Omit<CheckResult, 'name' | 'kind' | 'durationMs'>;
type Runner<K extends VerifyCheck['kind']> = (c: Extract<VerifyCheck, { kind: K }>, ctx: CheckContext) => Promise<Outcome>;

const CHECKS: { [K in VerifyCheck['kind']]: Runner<K> } = {
  command: checkCommand,
  file: checkFile,
  git: checkGit,
  output: checkOutput,
  http: checkHttp,
};

// ---- command ------------------------------------------------------------------------------------

export interface ChildResult {
  code: number | null;
  signal: string | null;
  /** Set when it never ran (ENOENT, EACCES, a missing cwd). */
  spawnError?: string;
  timedOut: boolean;
  stopped: boolean;
  tail: string;
}

/** Runs argv in its own process group, keeps the output's tail, ends the group on timeout or stop (invariant 2). */
export async function runChild(argv: readonly string[], cwd: string, timeoutMs: number, signal: AbortSignal): Promise<ChildResult> {
  if (signal.aborted) return { code: null, signal: null, timedOut: false, stopped: true, tail: '' };
  // A missing directory is named as such (spawn would call it ENOENT of the program).
  const dir = await fs.stat(cwd).catch(() => undefined);
  if (!dir?.isDirectory()) return { code: null, signal: null, spawnError: `the directory ${cwd} does not exist`, timedOut: false, stopped: false, tail: '' };
  const child = new GroupChild({ command: argv[0]!, args: argv.slice(1), cwd, env: checkEnv() });
  child.child.stdin?.end();
  let out = '';
  const keep = (b: Buffer) => {
    out += b.toString('utf8');
    if (out.length > OUTPUT_TAIL * 2) out = out.slice(-OUTPUT_TAIL);
  };
  child.child.stdout?.on('data', keep);
  child.child.stderr?.on('data', keep);
  let timedOut = false;
  let stopped = false;
  const timer = setTimeout(() => {
    timedOut = true;
    void child.terminate(KILL_AFTER_MS);
  }, timeoutMs);
  const onAbort = () => {
    stopped = true;
    void child.terminate(KILL_AFTER_MS);
  };
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    const exit = await child.settled(KILL_AFTER_MS);
    return {
      code: exit.code,
      signal: exit.signal,
      ...(exit.spawnError ? { spawnError: `${exit.spawnError.code ?? 'error'}: ${exit.spawnError.message}` } : {}),
      timedOut,
      stopped,
      tail: toWellFormedText(out.length > OUTPUT_TAIL ? out.slice(-OUTPUT_TAIL) : out),
    };
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', onAbort);
  }
}

/** The check's environment: Gaffer's own, minus anything that names a token (PROTOCOL §17). */
function checkEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !/TOKEN|SECRET/i.test(k)) env[k] = v;
  return env;
}

function whereToRun(explicit: string | undefined, ctx: CheckContext): string | undefined {
  if (explicit) return ctx.workspace && !nodePath.isAbsolute(explicit) ? nodePath.resolve(ctx.workspace.path, explicit) : explicit;
  return ctx.workspace?.path;
}

function describeExit(argv0: string, r: ChildResult, timeoutMs: number): string {
  if (r.spawnError) return `could not start ${argv0}: ${r.spawnError}`;
  if (r.stopped) return `${argv0} was stopped: Gaffer is stopping`;
  if (r.timedOut) return `${argv0} did not finish within ${Math.round(timeoutMs / 1000)} s (its processes were ended)`;
  if (r.code !== null) return `${argv0} exited with ${r.code}`;
  return `${argv0} was ended by ${r.signal ?? 'a signal'}`;
}

async function checkCommand(c: Extract<VerifyCheck, { kind: 'command' }>, ctx: CheckContext): Promise<Outcome> {
  const cwd = whereToRun(c.cwd, ctx);
  if (!cwd) return { passed: false, detail: 'no workspace is known for this attempt and the check names no directory (cwd) to run in' };
  const timeoutMs = (c.timeoutS ?? DEFAULT_COMMAND_TIMEOUT_S) * 1000;
  const r = await runChild(c.command, cwd, timeoutMs, ctx.signal);
  const passed = !r.spawnError && !r.timedOut && !r.stopped && r.code === 0;
  return { passed, detail: describeExit(c.command[0]!, r, timeoutMs), outputTail: r.tail };
}

// ---- file ---------------------------------------------------------------------------------------

async function checkFile(c: Extract<VerifyCheck, { kind: 'file' }>, ctx: CheckContext): Promise<Outcome> {
  const p = whereToRun(c.path, ctx)!;
  const st = await fs.stat(p).catch((e: NodeJS.ErrnoException) => e);
  if (st instanceof Error) return { passed: false, detail: st.code === 'ENOENT' ? `${p} does not exist` : `cannot read ${p}: ${st.message}` };
  if (c.nonEmpty && st.isFile() && st.size === 0) return { passed: false, detail: `${p} is empty` };
  if (c.changedDuringAttempt && st.mtimeMs < ctx.attemptStartedAt) {
    return { passed: false, detail: `${p} was last changed ${new Date(st.mtimeMs).toISOString()}, before the attempt started (${new Date(ctx.attemptStartedAt).toISOString()})` };
  }
  return { passed: true, detail: `${p} exists${c.nonEmpty ? ` (${st.size} bytes)` : ''}${c.changedDuringAttempt ? ', changed during the attempt' : ''}` };
}

// ---- git ----------------------------------------------------------------------------------------

async function git(repo: string, args: string[], signal: AbortSignal): Promise<{ ok: true; out: string } | { ok: false; why: string }> {
  const r = await runChild(['git', '-C', repo, ...args], repo, GIT_TIMEOUT_MS, signal);
  if (r.code === 0) return { ok: true, out: r.tail.trim() };
  return { ok: false, why: r.spawnError ? `could not start git: ${r.spawnError}` : `git ${args[0]} failed: ${r.tail.trim().split('\n').pop() ?? describeExit('git', r, GIT_TIMEOUT_MS)}` };
}

async function checkGit(c: Extract<VerifyCheck, { kind: 'git' }>, ctx: CheckContext): Promise<Outcome> {
  const repo = whereToRun(c.repo, ctx);
  if (!repo) return { passed: false, detail: 'no workspace is known for this attempt and the check names no repository' };
  const min = c.minCommits ?? 1;
  const details: string[] = [];
  if (min > 0) {
    const base = c.base ?? ctx.workspace?.base;
    if (!base) return { passed: false, detail: 'no base to count commits over: name one (base) or run the agent with a workspace' };
    const n = await git(repo, ['rev-list', '--count', `${base}..HEAD`], ctx.signal);
    if (!n.ok) return { passed: false, detail: n.why };
    const count = Number(n.out);
    if (!(count >= min)) return { passed: false, detail: `${count} commit${count === 1 ? '' : 's'} over ${base}, expected at least ${min}` };
    details.push(`${count} commit${count === 1 ? '' : 's'} over ${base}`);
  }
  if (c.clean) {
    const s = await git(repo, ['status', '--porcelain'], ctx.signal);
    if (!s.ok) return { passed: false, detail: s.why };
    if (s.out !== '') {
      const files = s.out.split('\n');
      return { passed: false, detail: `${files.length} uncommitted change${files.length === 1 ? '' : 's'} (${files.slice(0, 3).map((l) => l.slice(3)).join(', ')}${files.length > 3 ? ', …' : ''})` };
    }
    details.push('nothing uncommitted');
  }
  return { passed: true, detail: details.join(', ') || 'the repository is there' };
}

// ---- output -------------------------------------------------------------------------------------

const ajv = new Ajv({ allErrors: true, strict: false });
const compiled = new WeakMap<object, ValidateFunction>();

/** Compiles a schema, or says why it does not compile (checked when a declaration is saved, too). */
export function compileSchema(schema: Record<string, unknown>): ValidateFunction {
  let v = compiled.get(schema);
  if (!v) {
    v = ajv.compile(schema);
    compiled.set(schema, v);
  }
  return v;
}

async function checkOutput(c: Extract<VerifyCheck, { kind: 'output' }>, ctx: CheckContext): Promise<Outcome> {
  let validate: ValidateFunction;
  try {
    validate = compileSchema(c.schema);
  } catch (e) {
    return { passed: false, detail: `the schema does not compile: ${e instanceof Error ? e.message : String(e)}` };
  }
  if (ctx.output === undefined || ctx.output === null) return { passed: false, detail: 'no output was reported' };
  if (validate(ctx.output)) return { passed: true, detail: 'the output matches the schema' };
  const errs = (validate.errors ?? []).slice(0, 3).map((e) => `${e.instancePath || 'the output'} ${e.message ?? 'is not valid'}`);
  return { passed: false, detail: errs.join('; ') };
}

// ---- http ---------------------------------------------------------------------------------------

async function checkHttp(c: Extract<VerifyCheck, { kind: 'http' }>, ctx: CheckContext): Promise<Outcome> {
  const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(HTTP_TIMEOUT_MS)]);
  let status: number;
  try {
    const res = await fetch(c.url, { signal, redirect: 'manual' });
    status = res.status;
    await res.body?.cancel();
  } catch (e) {
    const why = e instanceof Error && e.name === 'TimeoutError' ? `no answer within ${HTTP_TIMEOUT_MS / 1000} s` : e instanceof Error ? ((e.cause as Error | undefined)?.message ?? e.message) : String(e);
    return { passed: false, detail: `GET ${c.url}: ${why}` };
  }
  const passed = c.expectStatus === undefined ? status >= 200 && status < 300 : status === c.expectStatus;
  return { passed, detail: `GET ${c.url} answered ${status}${passed ? '' : `, expected ${c.expectStatus ?? '2xx'}`}` };
}
