/**
 * What `gaffer mcp --role R` holds between tool calls: the tasks its client has claimed and the
 * job runs it has taken, on one SDK agent (one Gaffer instance).
 *
 * Invariants:
 * 1. A task is claimed only when the client asks (one claim per `claim`), and held through the
 *    SDK's `workOne`: the SDK keeps the fence, renews the lock while the session is open, aborts on
 *    lock loss and hands the lock back after a reconnect that lost it — exactly as for `work()`.
 * 2. A held task is released only by the client's `report` (P5), or by the session closing (the
 *    SDK hands it back: `backlog`). A task whose lock was lost is remembered with the reason, so a
 *    later renew/report says why instead of "unknown task".
 * 3. Job runs are taken only with `jobs: true` (and only then does the instance's `hello` say it
 *    takes runs: main.ts); the SDK acknowledges each trigger (`run_started`) before the run is
 *    queued for `nextRun`, and records every checkpoint before `checkpoint` returns. An attempt is
 *    finished only by `finishRun` (or cancelled by Gaffer, or the deadline).
 * 4. Runs are remembered by run id, one entry each: the latest attempt taken here. A later attempt
 *    of a run (a retry, an approved held run) is a new run for the client, never a duplicate of the
 *    earlier one (docs/protocol.md §8 rule 3): it replaces the entry, and what ends an attempt (its
 *    abort, its finish) marks that attempt's entry only. The SDK starts a later attempt only once the
 *    earlier one is done here, so at most one attempt of a run is live at a time.
 */
import type { ReportStatus, Task } from '../../common/model';
import type { ErrorClass } from '../../common/protocol';
import { BacklogError, BlockedError, FatalError, NeedsHumanError, RetryableError, TaskFailedError, type Agent, type JobContext, type WorkContext } from '../../sdk';

export class SessionError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

interface Deferred<T> {
  promise: Promise<T>;
  resolve(v: T): void;
  reject(e: unknown): void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

/** How the client ended a task (the handler's return or throw, as the SDK maps it). */
interface TaskOutcome {
  status: ReportStatus;
  note?: string;
  output?: unknown;
}

interface HeldTask {
  task: Task;
  ctx: WorkContext;
  outcome: Deferred<TaskOutcome>;
  /** Resolves once the SDK is done with the task (reported, or lost). */
  finished: Promise<unknown>;
}

export interface ClaimedTaskView {
  task: Task;
  lock: { fence: number; expiresAt: string };
}

interface RunOutcome {
  outcome: 'success' | 'failed';
  errorClass?: ErrorClass;
  error?: string;
  output?: unknown;
}

interface TakenRun {
  ctx: JobContext;
  outcome: Deferred<RunOutcome>;
  delivered: boolean;
  finished: Deferred<{ outcome: string; errorClass?: string }>;
  /** Why this attempt is over (taken away, finished), once it is (invariant 4). */
  ended?: string;
}

/** Ended attempts remembered (so a late call says "over" rather than "unknown"); older ones are forgotten. */
const ENDED_RUNS_KEPT = 1000;

/** What the client sees of a run (the trigger's fields, without the SDK's helpers). */
export type RunView = Omit<JobContext, 'signal' | 'step' | 'agent'>;

const OUTCOME_ERRORS = { backlog: BacklogError, blocked: BlockedError, failed: TaskFailedError } as const;
const RUN_ERRORS = { retryable: RetryableError, fatal: FatalError, needs_human: NeedsHumanError } as const;

function reasonText(reason: unknown): string {
  return reason instanceof Error ? reason.message : String(reason ?? 'unknown reason');
}

export class AgentSession {
  private readonly held = new Map<number, HeldTask>();
  /** Tasks whose lock was taken away while held (invariant 2): id → why. */
  private readonly gone = new Map<number, string>();
  /** Run id → the latest attempt of the run taken here (invariant 4). */
  private readonly runs = new Map<string, TakenRun>();

  constructor(
    readonly agent: Agent,
    readonly opts: { jobs: boolean; finishTimeoutMs?: number },
  ) {
    // The SDK reports an attempt's result before it starts a later attempt of the run: the entry is that attempt's.
    agent.on('job.finished', ({ runId, outcome, errorClass }) => this.runs.get(runId)?.finished.resolve({ outcome, ...(errorClass ? { errorClass } : {}) }));
    if (opts.jobs) agent.onJob((ctx) => this.takeRun(ctx));
  }

  get lockWindowS(): number {
    return this.agent.lockWindowS;
  }

  heldTasks(): ClaimedTaskView[] {
    return [...this.held.values()].map((h) => ({ task: h.task, lock: { fence: h.ctx.lock.fence, expiresAt: h.ctx.lock.expiresAt } }));
  }

  // ---- tasks ----

  /** One claim (invariant 1): the task now held, or null when there is none (P2). */
  async claim(role?: string): Promise<ClaimedTaskView | null> {
    const started = deferred<HeldTask | null>();
    const finished = this.agent.workOne(
      (ctx) => {
        const h: HeldTask = { task: ctx.task, ctx, outcome: deferred<TaskOutcome>(), finished: Promise.resolve() };
        this.held.set(ctx.task.id, h);
        this.gone.delete(ctx.task.id);
        ctx.signal.addEventListener('abort', () => {
          if (this.held.get(ctx.task.id) === h) this.gone.set(ctx.task.id, reasonText(ctx.signal.reason));
          h.outcome.reject(ctx.signal.reason);
        });
        started.resolve(h);
        return h.outcome.promise.then((o) => {
          if (o.status === 'done') return { ...(o.output !== undefined ? { output: o.output } : {}), ...(o.note !== undefined ? { note: o.note } : {}) };
          throw new OUTCOME_ERRORS[o.status](o.note ?? `reported ${o.status} by the MCP client`, o.output === undefined ? {} : { output: o.output });
        });
      },
      role ? { role } : {},
    );
    // `workOne` resolves false (no task) or rejects (claim refused) without calling the handler;
    // once the handler has run, `started` is already settled and these are no-ops.
    const settled = finished.then(
      () => started.resolve(null),
      (e: unknown) => started.reject(e),
    );
    const h = await started.promise;
    if (!h) return null;
    h.finished = settled.finally(() => {
      if (this.held.get(h.task.id) === h) this.held.delete(h.task.id);
    });
    return { task: h.task, lock: { fence: h.ctx.lock.fence, expiresAt: h.ctx.lock.expiresAt } };
  }

  private holding(taskId: number): HeldTask {
    const h = this.held.get(taskId);
    if (h) return h;
    const why = this.gone.get(taskId);
    if (why !== undefined) throw new SessionError('lock_lost', `the lock on task ${taskId} was lost (${why}): stop working on it; nothing more is recorded for it`);
    throw new SessionError('not_held', `this session does not hold task ${taskId} (claim it first, or it was already reported)`);
  }

  async renew(taskId: number): Promise<{ taskId: number; fence: number; expiresAt: string }> {
    const h = this.holding(taskId);
    const r = await this.agent.renew(taskId, h.ctx.lock.fence);
    return { taskId, fence: h.ctx.lock.fence, expiresAt: r.expiresAt };
  }

  /** Ends the task (P5) and resolves once the SDK has reported it; a lock lost meanwhile is an error. */
  async report(taskId: number, outcome: TaskOutcome): Promise<{ taskId: number; status: ReportStatus }> {
    const h = this.holding(taskId);
    let reported: ReportStatus | undefined;
    const off = this.agent.on('task.reported', (e) => {
      if (e.taskId === taskId) reported = e.status;
    });
    try {
      h.outcome.resolve(outcome);
      await h.finished;
    } finally {
      off();
    }
    if (reported !== undefined) return { taskId, status: reported };
    const why = this.gone.get(taskId);
    if (why !== undefined) throw new SessionError('lock_lost', `the report was not recorded: the lock on task ${taskId} was lost (${why})`);
    throw new SessionError('report_failed', `the report of task ${taskId} did not go through (see the gaffer mcp log on stderr); the lock is kept until it expires`);
  }

  // ---- jobs ----

  private takeRun(ctx: JobContext): Promise<unknown> {
    const run: TakenRun = { ctx, outcome: deferred<RunOutcome>(), delivered: false, finished: deferred() };
    // A later attempt replaces the earlier one's entry (invariant 4); re-inserted, it queues last.
    this.runs.delete(ctx.runId);
    this.runs.set(ctx.runId, run);
    ctx.signal.addEventListener('abort', () => {
      this.end(run, `taken away: ${reasonText(ctx.signal.reason)}`);
      run.outcome.reject(ctx.signal.reason);
    });
    // The SDK records the result (`run_result`) as soon as this settles; `finishRun` waits for it.
    return run.outcome.promise.then((o) => {
      if (o.outcome === 'success') return o.output;
      throw new RUN_ERRORS[o.errorClass ?? 'retryable'](o.error ?? 'failed (reported by the MCP client)', o.output === undefined ? {} : { output: o.output });
    });
  }

  /** Marks one attempt over (the first reason wins) and forgets the oldest ended attempts past the cap. */
  private end(run: TakenRun, why: string): void {
    run.ended ??= why;
    if (this.runs.size <= ENDED_RUNS_KEPT) return;
    for (const [id, r] of this.runs) {
      if (this.runs.size <= ENDED_RUNS_KEPT) break;
      if (r.ended !== undefined) this.runs.delete(id);
    }
  }

  private jobsOn(): void {
    if (!this.opts.jobs) throw new SessionError('jobs_off', 'this session does not take job runs (start gaffer mcp with --jobs)');
  }

  /** The oldest acknowledged attempt not yet handed to the client, or null. */
  nextRun(): RunView | null {
    this.jobsOn();
    for (const run of this.runs.values()) {
      if (run.delivered || run.ended !== undefined) continue;
      run.delivered = true;
      return this.view(run.ctx);
    }
    return null;
  }

  private view(ctx: JobContext): RunView {
    const { signal: _s, step: _st, agent: _a, ...fields } = ctx;
    return fields;
  }

  /** The live attempt of `runId` (the one `attempt` names, when given), or a typed refusal. */
  private taken(runId: string, attempt?: number): TakenRun {
    this.jobsOn();
    const run = this.runs.get(runId);
    if (!run) throw new SessionError('unknown_run', `this session has no run ${runId} (next_run hands out the runs it took)`);
    const current = run.ctx.attempt;
    if (attempt !== undefined && attempt < current) throw new SessionError('run_ended', `attempt ${attempt} of run ${runId} is over; attempt ${current} is the current one`);
    if (attempt !== undefined && attempt > current) throw new SessionError('unknown_run', `this session has no attempt ${attempt} of run ${runId} (its latest is attempt ${current})`);
    if (run.ended !== undefined) throw new SessionError('run_ended', `attempt ${current} of run ${runId} is over (${run.ended})`);
    return run;
  }

  /** Records a finished step (`run_step`) unless an earlier attempt already did. */
  async checkpoint(runId: string, step: string, ref?: string, attempt?: number): Promise<{ runId: string; attempt: number; step: string; skipped: boolean }> {
    const run = this.taken(runId, attempt);
    let recorded = false;
    await run.ctx.step(
      step,
      () => {
        recorded = true;
        return ref;
      },
      { ref: (r) => r },
    );
    return { runId, attempt: run.ctx.attempt, step, skipped: !recorded };
  }

  async finishRun(runId: string, outcome: RunOutcome, attempt?: number): Promise<{ runId: string; attempt: number; outcome: string; errorClass?: string }> {
    const run = this.taken(runId, attempt);
    run.outcome.resolve(outcome);
    const timeout = new Promise<undefined>((r) => setTimeout(() => r(undefined), this.opts.finishTimeoutMs ?? 35_000).unref());
    const done = await Promise.race([run.finished.promise, timeout]);
    this.end(run, done ? `finished: ${done.outcome}` : 'its result could not be recorded');
    if (!done) throw new SessionError('result_failed', `the result of run ${runId} could not be recorded (see the gaffer mcp log on stderr)`);
    return { runId, attempt: run.ctx.attempt, ...done };
  }

  // ---- logs and usage (PROTOCOL §5) ----

  log(target: { taskId?: number; runId?: string }, lines: Array<{ text: string; level?: string; stream?: string }>): Promise<unknown> {
    return this.agent.request('log', { ...target, lines });
  }

  usage(target: { taskId?: number; runId?: string }, usage: { inputTokens?: number; outputTokens?: number; costUsd?: number; model?: string }): Promise<unknown> {
    return this.agent.request('usage', { ...target, ...usage });
  }

  /** The session ends: held tasks go back to the backlog, unfinished runs fail retryable (the SDK's close). */
  close(): Promise<void> {
    return this.agent.close({ timeoutMs: 0 });
  }
}
