/**
 * The command agent: an SDK agent whose handlers run COMMAND once per task and per job run.
 *
 * Invariants:
 * 1. One task at a time (the SDK's `work` loop); job triggers run alongside it. The SDK renews the
 *    task's lock while the command runs and aborts the handler's `signal` when the work is taken
 *    away (a refused renewal, a reconnect without the lock, the `lock_lost` / `run_cancelled`
 *    pushes, the run's deadline): the attempt then ends the command's process group and nothing
 *    is reported for it.
 * 2. Outcomes follow the exit status exactly as outcome.ts says (PROTOCOL §6).
 * 3. Shutdown (Ctrl-C, SIGTERM, the supervisor's stdin closing, --max-tasks reached) first stops
 *    claiming and taking triggers, then lets running commands finish for up to `--grace-s` (none
 *    when stdin closed or on a second signal), then ends them: their tasks are handed back
 *    (`backlog`) and their runs fail `retryable`. A task whose claim was already on its way counts
 *    as running: its command starts and gets the same grace. Only then is the connection closed,
 *    so those reports go out.
 * 4. A command that cannot be started is refused before connecting (exit 78); if starting fails
 *    later (the file was removed, the cwd vanished), that task/run is reported fatal with the
 *    reason and the agent stops claiming and exits 78 — it never spins through the queue.
 * 5. The child never sees GAFFER_TOKEN, the operator token, or any variable holding them.
 * 6. What a command prints and spends goes to its task's or run's log and usage in Gaffer
 *    (log-sink.ts), through the handler context the SDK gives it; the agent's own stderr says
 *    one line per attempt (how it ended), and echoes the lines only with --verbose.
 * 7. The log gets the agent's line on how an attempt ended (with its duration) unless the
 *    attempt printed nothing, reported no usage, had nothing to warn about and exited 0: then
 *    the log stays empty and the report or result goes out without a `log` round trip first
 *    (its note, "exit 0 (done)", says how it ended; the agent's stderr line says how long).
 * 8. No command outlives its agent: a watchdog process (lifeline.ts, watchdog.mjs) ends every
 *    command's family when the agent exits in any way, kill -9 included.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Logger } from '../../common/logger';
import type { ReportStatus } from '../../common/model';
import {
  Agent,
  BacklogError,
  BlockedError,
  FatalError,
  GafferRequestError,
  NeedsHumanError,
  RetryableError,
  TaskFailedError,
  type ArtifactInput,
  type JobContext,
  type LogOutboxOptions,
  type WorkContext,
  type WorkResult,
} from '../../sdk';
import { ADAPTERS } from './adapters';
import { Attempt, type AttemptInput, type AttemptResult, type CommandSpec } from './attempt';
import { cutText } from './lines';
import { inheritedEnvironment, resolveCommand } from './environment';
import { Lifeline } from './lifeline';
import { attemptOutput, stderrEcho, workLabel, type CountedOutput, type LogEcho, type LogTarget, type WorkRef } from './log-sink';
import type { AgentCliOptions } from './options';
import { describeEnding, EXIT_CANNOT_START, runOutcomeFor, taskStatusFor } from './outcome';
import { resumeVariables, SessionMemory, workKey } from './resume';
import { describeUsage } from './usage';
import { checkSandbox, defaultDataDirs, SandboxError, sandboxArgs } from './sandbox';
import { WorkspaceError, Workspaces, type PreparedWorkspace } from './workspace';

export interface AgentIo {
  env: NodeJS.ProcessEnv;
  /** The agent's own log (its stderr). */
  writeErr(text: string): void;
  /** Watched when --exit-on-stdin-close is given. */
  stdin?: NodeJS.ReadableStream;
  /** Agent version sent in hello. */
  version?: string;
}

const NOTE_MAX = 4000;
/** A workspace artifact's `data` stays under this (the frame allows 64 KiB): the files list is cut to fit. */
const MAX_WORKSPACE_DATA_BYTES = 48 * 1024;

/** The summary with as many files listed as fit (the figures always count them all). */
function fitData(summary: Record<string, unknown> & { files: unknown[] }): Record<string, unknown> {
  let files = summary.files;
  while (files.length > 0 && Buffer.byteLength(JSON.stringify({ ...summary, files })) > MAX_WORKSPACE_DATA_BYTES) files = files.slice(0, Math.floor(files.length / 2));
  return { ...summary, files, ...(files.length < summary.files.length ? { filesListed: files.length } : {}) };
}
const LOCK_GONE = new Set(['not_holder', 'not_found']);

/**
 * The SDK's log outbox for a command's output (invariant 6). A frame is sent as soon as 1 000 lines
 * wait, and the pipes are read again once fewer than 4 000 wait, so frames go out back to back
 * while the command prints; with lines of up to 64 Ki characters the agent holds at most a few
 * hundred MB even then (ordinary output: a few hundred KB).
 */
const COMMAND_LOGS: LogOutboxOptions = { maxFrameLines: 1000, highWaterLines: 4000, maxBufferedLines: 50_000 };

function agentLogger(write: (t: string) => void, quiet: boolean): Logger {
  const put = (level: string) => (msg: string, fields?: Record<string, unknown>) => {
    const extra = fields && Object.keys(fields).length ? ` ${Object.entries(fields).map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`).join(' ')}` : '';
    write(`gaffer agent: ${level === 'info' ? '' : `${level}: `}${msg}${extra}\n`);
  };
  return { info: quiet ? () => {} : put('info'), warn: put('warn'), error: put('error') };
}

/** Waits for `p`, at most `ms`; never keeps the process alive with a leftover timer. */
async function within(p: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([p.catch(() => {}), new Promise<void>((r) => (timer = setTimeout(r, ms)))]);
  clearTimeout(timer);
}

export class CommandAgent {
  private readonly log: Logger;
  private readonly echo: LogEcho | undefined;
  private readonly spec: CommandSpec;
  private agent: Agent | undefined;
  private readonly stopClaiming = new AbortController();
  private readonly active = new Set<{ attempt: Attempt; done: Promise<unknown> }>();
  /** PROTOCOL §16: the CLI session each task/run last had, for its answered re-dispatch (resume.ts). */
  private readonly sessions = new SessionMemory();
  private stopRequested!: (kind: 'graceful' | 'now') => void;
  private readonly stopSignal: Promise<'graceful' | 'now'>;
  private hurry = new AbortController();
  private stopping = false;
  /** Set once the grace is over (or was skipped): a command starting now is ended at once. */
  private graceOver = false;
  private exitCode = 0;
  private workDir = '';
  /** What every command inherits (invariant 5), worked out at the first attempt. */
  private inheritedEnv: Record<string, string> | undefined;
  /** The watchdog that ends the commands if this agent dies (invariant 8), from the first attempt. */
  private lifeline: Lifeline | undefined;
  private unsubscribeJob: (() => void) | undefined;
  /** PROTOCOL §15: a worktree per attempt key (workspace.ts), and bwrap when sandboxed. */
  private readonly workspaces: Workspaces | undefined;
  private bwrap: string | undefined;

  constructor(
    private readonly opts: AgentCliOptions,
    private readonly io: AgentIo,
  ) {
    this.log = agentLogger(io.writeErr, opts.quiet);
    this.echo = opts.verbose ? stderrEcho(io.writeErr) : undefined;
    this.spec = {
      command: opts.command,
      args: opts.args,
      shell: opts.shell,
      ...(opts.cwd ? { cwd: opts.cwd } : {}),
      ...(opts.timeoutS !== undefined ? { timeoutS: opts.timeoutS } : {}),
      killAfterMs: opts.killAfterS * 1000,
      ...(opts.maxLogLines !== undefined || opts.maxLogBytes !== undefined
        ? { limits: { maxLines: opts.maxLogLines ?? Number.MAX_SAFE_INTEGER, maxBytes: opts.maxLogBytes ?? Number.MAX_SAFE_INTEGER } }
        : {}),
      ...(opts.parse ? { adapter: ADAPTERS[opts.parse]! } : {}),
      ...(opts.model ? { model: opts.model } : {}),
    };
    this.stopSignal = new Promise((resolve) => (this.stopRequested = resolve));
    const w = opts.workspace;
    this.workspaces = w ? new Workspaces({ repo: w.repo, ...(w.base !== undefined ? { base: w.base } : {}), keep: w.keep, onRetry: w.onRetry }) : undefined;
  }

  /**
   * Asks the agent to stop (invariant 3): `graceful` lets running commands finish within the
   * grace; `now` (or a second request) ends them at once.
   */
  shutdown(kind: 'graceful' | 'now'): void {
    if (this.stopping || kind === 'now') this.hurry.abort();
    this.stopping = true;
    this.stopRequested(kind);
  }

  /** Runs until shut down; resolves with the process exit status. */
  async run(): Promise<number> {
    const { opts, io } = this;
    // With --workspace the command runs in a worktree of the repository: it is looked for there.
    const cwd = opts.workspace?.repo ?? opts.cwd ?? process.cwd();
    if (this.workspaces) {
      try {
        await this.workspaces.check();
        if (opts.workspace?.sandbox) this.bwrap = checkSandbox(io.env);
      } catch (e) {
        if (!(e instanceof WorkspaceError || e instanceof SandboxError)) throw e;
        this.log.error(e.message);
        return EXIT_CANNOT_START;
      }
    }
    if (!fs.existsSync(cwd)) {
      this.log.error(`the working directory ${cwd} does not exist`);
      return EXIT_CANNOT_START;
    }
    if (!opts.shell) {
      const found = resolveCommand(opts.command, io.env, cwd);
      if (!found.ok) {
        this.log.error(`cannot start the command: ${found.reason}`);
        return EXIT_CANNOT_START;
      }
    }
    const token = io.env.GAFFER_TOKEN;
    if (!token) {
      this.log.error('GAFFER_TOKEN is not set: create an agent token (POST /api/v1/tokens, or the console) and export it');
      return 2;
    }
    if (opts.exitOnStdinClose && io.stdin) {
      io.stdin.on('data', () => {});
      io.stdin.once('end', () => this.onLifelineClosed());
      io.stdin.once('close', () => this.onLifelineClosed());
      io.stdin.once('error', () => this.onLifelineClosed());
    }

    this.workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gaffer-agent-'));
    fs.chmodSync(this.workDir, 0o700);
    const agent = new Agent({ url: opts.url, token, role: opts.role, name: opts.name, version: io.version ?? 'gaffer-agent', logger: this.log });
    this.agent = agent;
    // The job handler is in place before hello: a trigger may arrive right after it.
    if (opts.jobs) this.unsubscribeJob = agent.onJob((ctx) => this.runJob(ctx), { logs: COMMAND_LOGS });
    try {
      await agent.start();
    } catch (e) {
      fs.rmSync(this.workDir, { recursive: true, force: true });
      this.log.error(`cannot connect to ${opts.url}: ${e instanceof Error ? e.message : String(e)}`);
      return 1;
    }
    this.log.info(`connected as ${agent.instanceId} (role ${opts.role}); running: ${[opts.command, ...opts.args].join(' ')}`);
    agent.on('closed', ({ error }) => {
      if (this.stopping) return;
      this.log.error(`the connection ended for good${error ? `: ${error.message}` : ''}`);
      this.exitCode = 1;
      this.shutdown('now');
    });

    try {
      const work = opts.tasks
        ? agent.work((ctx) => this.runTask(ctx), {
            signal: this.stopClaiming.signal,
            idleDelayMs: opts.pollS * 1000,
            logs: COMMAND_LOGS,
            ...(opts.maxTasks !== undefined ? { maxTasks: opts.maxTasks } : {}),
          })
        : undefined;
      const kind = await Promise.race([this.stopSignal, work?.then(() => 'graceful' as const) ?? new Promise<never>(() => {})]);
      if (!this.stopping) this.shutdown(kind);
      await this.drain(work);
      // What was handed back is reported now. In a hurry (the supervisor is gone, a second Ctrl-C)
      // that gets a few seconds, not the SDK's whole request timeout against a server that is gone.
      await within(work ?? Promise.resolve(), this.hurry.signal.aborted ? 3000 : 30_000);
      await agent.close({ timeoutMs: 1000 });
      await work?.catch((e: unknown) => this.log.warn('the work loop ended with an error', { error: e instanceof Error ? e.message : String(e) }));
    } finally {
      this.lifeline?.close();
      fs.rmSync(this.workDir, { recursive: true, force: true });
    }
    this.log.info('stopped');
    return this.exitCode;
  }

  private onLifelineClosed(): void {
    if (this.hurry.signal.aborted) return;
    this.log.warn('stdin closed (the supervisor is gone): stopping now');
    this.shutdown('now');
  }

  /**
   * Invariant 3: stop taking work, wait out the grace, then end what is still running. The work
   * loop ends only once the task of a claim already sent has been run, so waiting for it covers
   * a command that has not started yet.
   */
  private async drain(work: Promise<unknown> | undefined): Promise<void> {
    this.stopClaiming.abort();
    this.unsubscribeJob?.();
    if (!this.hurry.signal.aborted) {
      if (this.active.size > 0) this.log.info(`waiting up to ${this.opts.graceS} s for ${this.active.size} running command(s) to finish (Ctrl-C again to stop them now)`);
      const hurried = new Promise<void>((resolve) => this.hurry.signal.addEventListener('abort', () => resolve(), { once: true }));
      const finished = Promise.all([work?.catch(() => {}), ...[...this.active].map((a) => a.done)]);
      await within(Promise.race([finished, hurried]), this.opts.graceS * 1000);
    }
    this.graceOver = true;
    for (const a of this.active) a.attempt.interrupt({ kind: 'shutdown' });
    await Promise.all([...this.active].map((a) => a.done));
  }

  private async attempt(input: AttemptInput & { out: CountedOutput; ws?: PreparedWorkspace | undefined }): Promise<AttemptResult> {
    const { out } = input;
    const inheritedEnv = (this.inheritedEnv ??= inheritedEnvironment(this.io.env, [this.io.env.GAFFER_TOKEN ?? '']));
    this.lifeline ??= new Lifeline({ env: inheritedEnv, killAfterMs: this.spec.killAfterMs, onProblem: (m) => this.log.warn(m) });
    const spec = input.ws ? await this.workspaceSpec(input.ws) : this.spec;
    const attempt = new Attempt({ spec, inheritedEnv, workDir: this.workDir, lifeline: this.lifeline }, input);
    const done = attempt.run();
    const entry = { attempt, done: done.catch(() => {}) };
    this.active.add(entry);
    if (this.graceOver || this.hurry.signal.aborted) attempt.interrupt({ kind: 'shutdown' });
    try {
      const result = await done;
      if (result.session) this.sessions.remember(workKey(input.ref.kind, input.ref.id), result.session.sessionId);
      // These lines go out with the report (the SDK sends a task's lines before its report).
      const ended = `${describeEnding(result.ending)} after ${(attempt.runningForMs / 1000).toFixed(1)} s`;
      const ok = result.ending.kind === 'exited' && result.ending.code === 0;
      // Invariant 7: an attempt that printed nothing and exited 0 leaves its log empty.
      const silentSuccess = ok && out.lines === 0 && !result.usage && result.problems.length === 0;
      if (!silentSuccess) {
        if (result.usage) void out.log({ text: `usage: ${describeUsage(result.usage)}`, stream: 'agent' });
        void out.log({ text: ended, stream: 'agent', level: ok ? 'info' : 'warn' });
        for (const p of result.problems) void out.log({ text: p, stream: 'agent', level: 'warn' });
      }
      // Written once the report is on its way: a write to a supervisor's pipe wakes Gaffer, which
      // should read the report first rather than these lines.
      const { ending } = result;
      setImmediate(() => {
        this.log[ending.kind === 'taken_away' ? 'warn' : 'info'](`${workLabel(input.ref)}: ${ended}`);
        if (ending.kind === 'spawn_failed') this.log.error(`the command could not start (${ending.reason}); stopping`);
      });
      if (result.ending.kind === 'spawn_failed') {
        // Invariant 4: report this one (the caller does), take nothing more.
        this.exitCode = EXIT_CANNOT_START;
        this.stopClaiming.abort();
        queueMicrotask(() => this.shutdown('now'));
      }
      return result;
    } finally {
      this.active.delete(entry);
    }
  }

  /** Invariant 6: the attempt's lines and usage to the handler context's log and usage. */
  private output(ref: WorkRef, target: LogTarget): CountedOutput {
    return attemptOutput(ref, target, this.echo);
  }

  private note(result: AttemptResult, failed: boolean): string {
    // The CLI's own error words first (the operator reads the note's start): "rate limited …", not "exit 1".
    const parts = failed && result.cliError ? [result.cliError, describeEnding(result.ending)] : [describeEnding(result.ending)];
    if (failed && result.lastStderr) parts.push(`last stderr line: ${result.lastStderr}`);
    // Usage is not repeated here: it is the task's or run's `usage` (a refused report of it is a problem).
    parts.push(...result.problems);
    return cutText(parts.join('; '), NOTE_MAX, '…');
  }

  private async runTask(ctx: WorkContext): Promise<WorkResult> {
    const { task } = ctx;
    const ref: WorkRef = { kind: 'task', id: String(task.id), attempt: task.attempt };
    const vars: Record<string, string> = {
      GAFFER_KIND: 'task',
      GAFFER_ROLE: task.role,
      GAFFER_TASK_ID: String(task.id),
      GAFFER_TASK_TITLE: task.title,
      GAFFER_ATTEMPT: String(task.attempt),
      GAFFER_PREVIOUSLY_EXPIRED: task.previouslyExpired ? '1' : '0',
      GAFFER_IDEMPOTENCY_KEY: `task-${task.id}`,
      GAFFER_COMPLETED_STEPS: '[]',
      ...(task.traceId ? { GAFFER_TRACE_ID: task.traceId } : {}),
      // PROTOCOL §13: why the last attempt did not count ("verification failed: tests: exited with 1").
      ...(task.previousError ? { GAFFER_PREVIOUS_ERROR: task.previousError } : {}),
      // The server's stored session first (it survives this process restarting), then this process's memory.
      ...resumeVariables(task.answer, task.resumeSession ?? this.sessions.get(workKey('task', String(task.id)))),
    };
    const ws = await this.openWorkspace(`task-${task.id}`, vars, (note) => {
      throw note.inUse ? new BacklogError(note.message) : new TaskFailedError(note.message);
    });
    const out = this.output(ref, ctx);
    let result: AttemptResult | undefined;
    try {
      result = await this.attempt({ ref, out, vars, payload: task, signal: ctx.signal, ws });
    } finally {
      if (ws) await this.closeWorkspace(ws, result, ctx, out, result !== undefined && taskStatusFor(result.ending) === 'done');
    }
    await this.sendArtifacts(result, ctx, out);
    const status: ReportStatus | undefined = taskStatusFor(result.ending);
    if (status === undefined) throw ctx.signal.reason instanceof Error ? ctx.signal.reason : new Error(describeEnding(result.ending));
    const note = this.note(result, status !== 'done');
    const output = result.output !== undefined ? { output: result.output } : {};
    switch (status) {
      case 'done':
        return { note, ...output };
      case 'backlog':
        throw new BacklogError(note, output);
      case 'blocked':
        throw new BlockedError(note, output);
      case 'failed':
        throw new TaskFailedError(note, output);
    }
  }

  private async runJob(ctx: JobContext): Promise<unknown> {
    const { signal, agent: _agent, step, log: _log, usage: _usage, artifact: _artifact, ...trigger } = ctx;
    const ref: WorkRef = { kind: 'job', id: ctx.runId, attempt: ctx.attempt };
    const previouslyExpired = (trigger as { previouslyExpired?: unknown }).previouslyExpired === true;
    const vars: Record<string, string> = {
      GAFFER_KIND: 'job',
      GAFFER_ROLE: this.opts.role,
      GAFFER_JOB: ctx.job,
      GAFFER_JOB_ID: ctx.jobId,
      GAFFER_RUN_ID: ctx.runId,
      GAFFER_SLOT: ctx.slot,
      GAFFER_ATTEMPT: String(ctx.attempt),
      GAFFER_PREVIOUSLY_EXPIRED: previouslyExpired ? '1' : '0',
      GAFFER_IDEMPOTENCY_KEY: ctx.idempotencyKey,
      GAFFER_COMPLETED_STEPS: JSON.stringify(ctx.completedSteps),
      GAFFER_DEADLINE: ctx.deadline,
      ...(ctx.traceId ? { GAFFER_TRACE_ID: ctx.traceId } : {}),
      ...(ctx.previousError ? { GAFFER_PREVIOUS_ERROR: ctx.previousError } : {}),
      ...resumeVariables(ctx.approval?.note, ctx.approval?.session ?? this.sessions.get(workKey('job', ctx.runId))),
    };
    const ws = await this.openWorkspace(`${ctx.job}-${ctx.slot}`, vars, (note) => {
      throw new RetryableError(note.message);
    });
    const out = this.output(ref, ctx);
    let result: AttemptResult | undefined;
    try {
      result = await this.attempt({
      ws,
      ref,
      out,
      vars,
      payload: trigger,
      signal,
      onStep: async (s) => {
        if (ctx.completedSteps.includes(s.name)) {
          void out.log({ text: `step "${s.name}" was already recorded by an earlier attempt`, stream: 'agent' });
          return;
        }
        await step(s.name, () => true, s.ref !== undefined ? { ref: s.ref } : {});
        void out.log({ text: `step "${s.name}" recorded`, stream: 'agent' });
      },
      isTakenAway: (e) => e instanceof GafferRequestError && LOCK_GONE.has(e.code),
    });
    } finally {
      if (ws) await this.closeWorkspace(ws, result, ctx, out, result !== undefined && runOutcomeFor(result.ending)?.outcome === 'success');
    }
    await this.sendArtifacts(result, ctx, out);
    const outcome = runOutcomeFor(result.ending);
    if (!outcome) throw signal.reason instanceof Error ? signal.reason : new Error(describeEnding(result.ending));
    if (outcome.outcome === 'success') return result.output;
    const message = this.note(result, true);
    const output = result.output !== undefined ? { output: result.output } : {};
    switch (outcome.errorClass) {
      case 'retryable':
        throw new RetryableError(message, output);
      case 'fatal':
        throw new FatalError(message, output);
      case 'needs_human':
        throw new NeedsHumanError(message, output);
    }
  }

  /**
   * The `link` / `file` artifacts the command announced (PROTOCOL §15) and the CLI session its
   * adapter saw (kind `session`, `{cli, sessionId}`, PROTOCOL §16: stored on the server, so the
   * operator sees which conversation to resume), before the report; never for work taken away.
   */
  private async sendArtifacts(result: AttemptResult, target: { artifact: (a: ArtifactInput) => Promise<void> }, out: CountedOutput): Promise<void> {
    if (result.ending.kind === 'taken_away') return;
    const session: ArtifactInput[] = result.session ? [{ kind: 'session', name: result.session.cli, data: { cli: result.session.cli, sessionId: result.session.sessionId } }] : [];
    for (const a of [...result.artifacts, ...session]) {
      try {
        await target.artifact(a);
      } catch (e) {
        const text = `the ${a.kind} "${a.name}" could not be recorded: ${e instanceof Error ? e.message : String(e)}`;
        result.problems.push(text);
        void out.log({ text, stream: 'agent', level: 'warn' });
      }
    }
  }

  // ---- workspaces (PROTOCOL §15) ----

  /**
   * The attempt's worktree, made or found for `key`, its variables added to `vars`; undefined
   * without --workspace. A worktree that cannot be made ends the attempt through `refuse` (in use
   * by a live attempt elsewhere: handed back; anything else: failed, with git's words).
   */
  private async openWorkspace(key: string, vars: Record<string, string>, refuse: (why: { message: string; inUse: boolean }) => never): Promise<PreparedWorkspace | undefined> {
    if (!this.workspaces) return undefined;
    let ws: PreparedWorkspace;
    try {
      ws = await this.workspaces.open(key);
    } catch (e) {
      const message = `the workspace could not be prepared: ${e instanceof Error ? e.message : String(e)}`;
      this.log.warn(message);
      return refuse({ message, inUse: /in use/.test(message) });
    }
    Object.assign(vars, {
      GAFFER_WORKSPACE: ws.path,
      GAFFER_BRANCH: ws.branch,
      GAFFER_BASE: ws.base,
      // Addition: 1 when the tree holds what an earlier attempt left (resume), 0 when it is new or reset.
      GAFFER_WORKSPACE_RESUMED: ws.resumed ? '1' : '0',
    });
    return ws;
  }

  /** The command as it runs in `ws`: there, and inside bwrap with --sandbox (sandbox.ts). */
  private async workspaceSpec(ws: PreparedWorkspace): Promise<CommandSpec> {
    const spec: CommandSpec = { ...this.spec, cwd: ws.path };
    if (!this.bwrap || !this.workspaces) return spec;
    const wrap = sandboxArgs({
      bwrap: this.bwrap,
      worktree: ws.path,
      gitDir: await this.workspaces.gitCommonDir(),
      workDir: this.workDir,
      hide: [...defaultDataDirs(this.io.env), ...(this.opts.workspace?.hide ?? [])],
    });
    const inner = this.spec.shell ? ['/bin/sh', '-c', [this.spec.command, ...this.spec.args].join(' ')] : [this.spec.command, ...this.spec.args];
    return { ...spec, command: this.bwrap, args: [...wrap, ...inner], shell: false };
  }

  /**
   * After the command: unless the work was taken away (nothing may be sent for it then), the
   * `workspace` artifact with the diff goes out before the report; then the worktree is removed
   * per --keep and its lock dropped. Problems become log lines, never a changed outcome.
   */
  private async closeWorkspace(ws: PreparedWorkspace, result: AttemptResult | undefined, target: { artifact: (a: ArtifactInput) => Promise<void> }, out: CountedOutput, succeeded: boolean): Promise<void> {
    const workspaces = this.workspaces!;
    try {
      if (result && result.ending.kind !== 'taken_away') {
        const { summary, diff, truncated } = await workspaces.summarise(ws);
        await target.artifact({ kind: 'workspace', name: 'workspace', data: fitData({ ...summary, ...(truncated ? { diffTruncated: true } : {}) }), diff });
        void out.log({ text: `workspace ${summary.branch}: ${summary.commits} commit(s), +${summary.insertions} −${summary.deletions} in ${summary.filesChanged} file(s)`, stream: 'agent' });
      }
    } catch (e) {
      const text = `the workspace's changes could not be recorded: ${e instanceof Error ? e.message : String(e)}`;
      result?.problems.push(text);
      void out.log({ text, stream: 'agent', level: 'warn' });
    }
    try {
      await workspaces.finish(ws, succeeded);
    } catch (e) {
      this.log.warn(`the worktree ${ws.path} could not be removed: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
}
