/**
 * The Gaffer agent SDK: `connect()` returns an `Agent` that speaks PROTOCOL.md §1.
 *
 * Invariants:
 * 1. P1/P5: a task is worked only while this agent holds its lock. The lock is renewed about every
 *    lockWindow/4 (at most every 30 min) while the handler runs; when the server pushes `lock_lost`,
 *    a renewal is refused (`not_holder`/`not_found`), or a reconnect shows the lock is gone, the
 *    handler's `signal` is aborted, renewing stops, and nothing is reported for it (the report
 *    would be refused anyway).
 * 2. A task is released only through a report: `done` when the handler returns, otherwise the
 *    status its error maps to (errors.ts). Reports lost to a connection blip are repeated (a
 *    repeat is harmless, PROTOCOL P5 / claim-locks invariant 6); so are reports, checkpoints and
 *    results refused as `rate_limited` or `unavailable` (nothing happened: they are sent again
 *    after a growing pause), so a fast agent never abandons a report and leaves its lock held.
 *    In `work()` the report also claims the next task (PROTOCOL §10 `claimNext`) while more work is
 *    wanted: one round trip per task. A reply without `next` (an older Gaffer) or a replayed
 *    report (a repeat never claims) falls back to `claim`; `next: {task: null}` is "nothing to
 *    claim", as from `claim`.
 * 3. Jobs: `run_started` is sent before the handler runs (an unacknowledged trigger goes to
 *    another instance); `ctx.step` skips steps the server lists in `completedSteps` and records
 *    each finished step with `run_step` before the handler continues ("check, then compensate").
 *    On `run_cancelled` the handler's `signal` is aborted and nothing more is sent for the run:
 *    no `run_step` (`ctx.step` throws `RunCancelledError`), no `run_result`.
 * 4. After a reconnect that resumed the instance, locks the server still lists but nobody here
 *    works on (a claim whose reply was lost in the blip) are handed back at once (`backlog`).
 * 5. `close()` stops claiming, lets running handlers finish within a timeout, then aborts them
 *    (tasks go back to the backlog), and closes the socket.
 * 6. Every push is parsed with its schema (common/protocol.ts) before a handler sees it; a
 *    malformed or unknown push is logged and ignored.
 *
 * Additions to the public API (backward compatible): `JobContext` carries every field of the
 * trigger (`slotAt`, `trigger`, `backfillId`, `covers`, `previousError`); `LockLostError.lostBecause`
 * and the `task.lost` event's `lostBecause` carry the `lock_lost` reason when the server pushed one;
 * `RunCancelledError` (the reason a job handler's `signal` is aborted on `run_cancelled`) and the
 * `job.cancelled` event.
 */
import { EventEmitter } from 'node:events';
import type { Logger } from '../common/logger';
import { silentLogger } from '../common/logger';
import type { ReportStatus, Task } from '../common/model';
import { missingCase } from '../common/errors';
import type { UsageTotals } from '../common/logs';
import { MAX_DIFF_CHARS, MAX_DIFF_PART_CHARS, MAX_FRAME_BYTES, type AgentPush, type ArtifactKind, type ErrorClass, type HelloResult, type JobTriggerPush, type LogResult, type PrecheckPush, type UsageResult } from '../common/protocol';
import { Connection, type ConnectionOptions } from './connection';
import { withConsoleCapture } from './console-capture';
import { LogOutbox, type LogOptions, type LogOutboxOptions } from './log-outbox';
import { UsageCoalescer, type UsageInput } from './usage-coalescer';
import {
  AgentClosedError,
  AgentClosingError,
  ConnectionLostError,
  errorClassOf,
  errorMessage,
  GafferRequestError,
  LockLostError,
  reportStatusOf,
  RunCancelledError,
} from './errors';

export type AgentOptions = ConnectionOptions;

export interface ClaimedTask {
  task: Task;
  lock: { fence: number; expiresAt: string };
}

/** What `claim` answers; also a report's `next` (PROTOCOL §10). */
export interface ClaimReply {
  task: Task | null;
  lock?: { fence: number; expiresAt: string };
}

/** What a report answers (`next` with `claimNext`, on a Gaffer that has it). */
export interface ReportReply {
  task: Task;
  replayed?: boolean;
  next?: ClaimReply;
}

/** After a report in `work()`: the next task it claimed, null for none, undefined to `claim` as usual. */
type Handover = ClaimedTask | null | undefined;

export interface CreateTaskInput {
  title: string;
  /** Defaults to this agent's role. */
  role?: string;
  priority?: number;
  payload?: unknown;
  dependsOn?: number[];
  /** A spend cap on each attempt: past it the holder gets `lock_lost` (`budget`) and the task is blocked. */
  budget?: { maxCostUsdPerRun?: number; maxTokensPerRun?: number };
  idempotencyKey?: string;
}

// ---- work() ----

export interface ReportExtra {
  note?: string;
  output?: unknown;
  /** PROTOCOL §10: claim the next task in the same round trip (the reply's `next`). */
  claimNext?: boolean;
}

export interface WorkContext {
  task: Task;
  /** 1 on the first claim. */
  attempt: number;
  /** An earlier holder's lock expired: the work may be half done — verify before redoing. */
  previouslyExpired: boolean;
  /**
   * Why the last attempt did not count, e.g. `verification failed: tests: npm exited with 1`
   * (Gaffer ran the task's checks after it said done, PROTOCOL §13): fix that this time.
   */
  previousError?: string;
  /** Aborted when the lock is lost or the agent is closing; stop and return/throw soon. */
  signal: AbortSignal;
  /** The current lock (expiresAt moves with each renewal). */
  readonly lock: { readonly fence: number; readonly expiresAt: string };
  agent: Agent;
  /**
   * Adds a line to this attempt's log (PROTOCOL §5). Batched and resent until acknowledged; the
   * lines are all in before the report goes out. Await it to slow down to the speed the server
   * takes lines; without awaiting, a handler far ahead of the server has lines dropped (counted).
   */
  log(text: string, opts?: LogOptions): Promise<void>;
  /**
   * Reports tokens and cost spent by this attempt (increments); resolves with its running total.
   * Reports are coalesced: at most one `usage` frame per 250 ms, summing the reports made
   * meanwhile (so awaiting each one can wait that long); all are in before the report goes out.
   */
  usage(u: UsageInput): Promise<UsageTotals>;
  /** Records what this attempt produced (PROTOCOL §15 `artifact`); a workspace's diff is sent in parts. */
  artifact(a: ArtifactInput): Promise<void>;
}

/** An `artifact` (PROTOCOL §15): `data` at most 64 KiB of JSON; `diff` (kind `workspace`) at most 1 MiB. */
export interface ArtifactInput {
  kind: ArtifactKind;
  name: string;
  data: Record<string, unknown>;
  diff?: string;
}

export type { UsageInput } from './usage-coalescer';

/** Log options of `work()` and `onJob()`. */
export interface LogCaptureOptions {
  /** Also send what the handler prints with `console.*` to its log (the console still prints it). */
  captureConsole?: boolean;
  /** Batching and memory bounds of the log outbox. */
  logs?: LogOutboxOptions;
}

export interface WorkResult {
  output?: unknown;
  note?: string;
}

export type WorkHandler = (ctx: WorkContext) => Promise<WorkResult | void> | WorkResult | void;

export interface WorkOptions extends LogCaptureOptions {
  /** Pause after finding nothing to claim (default 5000 ms). P2: no retry storm. */
  idleDelayMs?: number;
  /** Overrides the renewal interval (default min(lockWindow/4, 30 min)). */
  renewEveryMs?: number;
  /** Claim for another role than the agent's (the token must allow it). */
  role?: string;
  /** Stop after this many tasks (default: run until `close()` or `signal`). */
  maxTasks?: number;
  /**
   * Ask each report to claim the next task in the same round trip (PROTOCOL §10; default true).
   * Against a Gaffer without it the loop claims as before.
   */
  claimNext?: boolean;
  signal?: AbortSignal;
}

/** `s` without a trailing lone high surrogate (a cut never splits a character: Gaffer refuses broken text). */
function wholeChars(s: string): string {
  const last = s.charCodeAt(s.length - 1);
  return last >= 0xd800 && last <= 0xdbff ? s.slice(0, -1) : s;
}

// ---- onJob() ----

export interface StepOptions<T> {
  /** A reference to the side effect (message id, file path) recorded with the checkpoint. */
  ref?: string | ((value: T) => string | undefined);
}

/**
 * What a job handler gets: every field of the `job_trigger` push (`idempotencyKey`: pass it on to
 * every external system you call, the same for every attempt of the slot; the additions `slotAt`,
 * `trigger`, `backfillId`, `covers` and `previousError` when the server sends them), plus the
 * SDK's helpers. `approval` (`{decision: 'approved', note, by, at}`) is set when the operator
 * approved a run that was held for a human (PROTOCOL §8): throw `NeedsHumanError` to ask, and
 * read the answer here when the run comes back.
 */
export interface JobContext extends Omit<JobTriggerPush, 'type' | 'completedSteps'> {
  /** Steps a previous attempt finished (their side effects happened). */
  completedSteps: readonly string[];
  /** Aborted at the deadline or when the agent closes. */
  signal: AbortSignal;
  /**
   * Runs `fn` as checkpointed step `name`, unless a previous attempt already completed it (then
   * `fn` is not called and the result is undefined). After `fn` succeeds the checkpoint is sent
   * (`run_step`) and acknowledged before this resolves.
   */
  step<T>(name: string, fn: () => Promise<T> | T, opts?: StepOptions<T>): Promise<T | undefined>;
  agent: Agent;
  /** Adds a line to this run attempt's log (as `WorkContext.log`); all in before `run_result`. */
  log(text: string, opts?: LogOptions): Promise<void>;
  /** Reports tokens and cost spent by this run attempt; resolves with its running total (coalesced as `WorkContext.usage`). */
  usage(u: UsageInput): Promise<UsageTotals>;
  /** Records what this run attempt produced (as `WorkContext.artifact`). */
  artifact(a: ArtifactInput): Promise<void>;
}

export type JobHandler = (ctx: JobContext) => Promise<unknown> | unknown;

export interface JobOptions extends LogCaptureOptions {
  /** errorClass for errors that are none of RetryableError / FatalError / NeedsHumanError (default `retryable`). */
  defaultErrorClass?: ErrorClass;
}

// ---- onPrecheck() ----

export interface PrecheckContext {
  requestId: string;
  check: string;
  slot: string;
}

export type PrecheckAnswer = boolean | { ready: boolean; reason?: string; evidence?: unknown };
export type PrecheckHandler = (ctx: PrecheckContext) => Promise<PrecheckAnswer> | PrecheckAnswer;

// ---- events ----

export interface AgentEventMap {
  ready: [{ instanceId: string; resumed: boolean; first: boolean }];
  disconnected: [{ code: number; reason: string }];
  reconnecting: [{ attempt: number; delayMs: number }];
  closed: [{ error?: Error }];
  'task.claimed': [{ task: Task; fence: number }];
  'task.renewed': [{ taskId: number; expiresAt: string }];
  'task.reported': [{ taskId: number; status: ReportStatus }];
  /** `lostBecause`: the `lock_lost` push's reason (`force_release`, `expired`, `cancelled`, `budget`), when pushed. */
  'task.lost': [{ taskId: number; reason: string; lostBecause?: string }];
  'job.started': [{ runId: string; slot: string }];
  'job.step': [{ runId: string; step: string; skipped: boolean }];
  'job.finished': [{ runId: string; outcome: 'success' | 'failed'; errorClass?: ErrorClass }];
  /** The server took the run attempt away (`run_cancelled`); nothing more is sent for it. */
  'job.cancelled': [{ runId: string; reason: string }];
}

interface ActiveTask {
  taskId: number;
  fence: number;
  expiresAt: string;
  controller: AbortController;
  lost: boolean;
  done: Promise<void>;
  stopRenewing(): void;
  outbox: LogOutbox;
  /** `ctx.usage` of this attempt, coalesced (usage-coalescer.ts). */
  usage: UsageCoalescer;
}

interface ActiveRun {
  attempt: number;
  controller: AbortController;
  done: Promise<void>;
  /** Set by `run_cancelled`. */
  cancelled?: RunCancelledError;
}

/** How long a finished handler's lines may take to be acknowledged before the report goes anyway. */
const LOG_FLUSH_TIMEOUT_MS = 30_000;

const THIRTY_MIN = 30 * 60_000;

/** PROTOCOL P4: renew about every lockWindow/4, and at most every 30 min. */
export function renewIntervalMs(lockWindowS: number): number {
  return Math.max(1, Math.min((lockWindowS * 1000) / 4, THIRTY_MIN));
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

const LOCK_GONE = new Set(['not_holder', 'not_found']);
/** Refusals that mean "not done, try again later". */
const RETRY_LATER = new Set(['rate_limited', 'unavailable']);

export class Agent {
  private readonly conn: Connection;
  private readonly logger: Logger;
  private readonly events = new EventEmitter();
  private readonly active = new Map<number, ActiveTask>();
  private readonly runs = new Map<string, ActiveRun>();
  private readonly prechecks = new Map<string, PrecheckHandler>();
  private jobHandler: { fn: JobHandler; opts: JobOptions } | undefined;
  private readonly stop = new AbortController();
  private closing: Promise<void> | undefined;
  private previousInstance: string | undefined;

  /** Use `connect()`. */
  constructor(readonly options: AgentOptions) {
    this.logger = options.logger ?? silentLogger;
    this.conn = new Connection(options, {
      ready: (hello, first) => this.onReady(hello, first),
      down: (code, reason) => this.emit('disconnected', { code, reason }),
      reconnecting: (attempt, delayMs) => this.emit('reconnecting', { attempt, delayMs }),
      closed: (error) => {
        this.stop.abort();
        for (const t of this.active.values()) this.lose(t, 'the connection is closed');
        this.emit('closed', error ? { error } : {});
      },
      push: (p) => this.onPush(p),
    });
  }

  /** Opens the connection and says hello. */
  async start(): Promise<this> {
    await this.conn.open();
    return this;
  }

  get instanceId(): string {
    return this.conn.instanceId ?? '';
  }

  get role(): string {
    return this.options.role;
  }

  get lockWindowS(): number {
    return this.conn.hello?.lockWindowS ?? 7200;
  }

  get connected(): boolean {
    return this.conn.state === 'ready';
  }

  get hello(): HelloResult | undefined {
    return this.conn.hello;
  }

  on<K extends keyof AgentEventMap>(event: K, fn: (...args: AgentEventMap[K]) => void): () => void {
    this.events.on(event, fn as (...a: unknown[]) => void);
    return () => this.events.off(event, fn as (...a: unknown[]) => void);
  }

  private emit<K extends keyof AgentEventMap>(event: K, ...args: AgentEventMap[K]): void {
    try {
      this.events.emit(event, ...args);
    } catch (e) {
      this.logger.error('event listener failed', { event, error: errorMessage(e) });
    }
  }

  // ---- plain requests ----

  /** Claims the best claimable task of the role, or `null` (P2: never waits for one). */
  async claim(role?: string): Promise<ClaimedTask | null> {
    return this.claimed(await this.conn.request<ClaimReply>('claim', role ? { role } : {}));
  }

  private claimed(r: ClaimReply): ClaimedTask | null {
    if (!r.task || !r.lock) return null;
    this.emit('task.claimed', { task: r.task, fence: r.lock.fence });
    return { task: r.task, lock: r.lock };
  }

  renew(taskId: number, fence: number): Promise<{ expiresAt: string }> {
    return this.conn.request('renew', { taskId, fence });
  }

  /** Reports a task (P5). With `claimNext` the reply may carry the next task, already claimed (PROTOCOL §10). */
  async report(taskId: number, fence: number, status: ReportStatus, extra: ReportExtra = {}): Promise<ReportReply> {
    const fields: Record<string, unknown> = { taskId, fence, status };
    if (extra.note !== undefined) fields.note = extra.note;
    if (extra.output !== undefined) fields.output = extra.output;
    if (extra.claimNext) fields.claimNext = true;
    const r = await this.conn.request<ReportReply>('report', fields);
    this.emit('task.reported', { taskId, status });
    return r;
  }

  createTask(input: CreateTaskInput): Promise<{ task: Task; replayed: boolean }> {
    const fields: Record<string, unknown> = { ...input, role: input.role ?? this.options.role };
    for (const k of Object.keys(fields)) if (fields[k] === undefined) delete fields[k];
    return this.conn.request('create_task', fields);
  }

  heartbeat(): Promise<{ serverTime: string }> {
    return this.conn.request('heartbeat');
  }

  /**
   * Sends any request of the protocol on this agent's connection and resolves with its `result`
   * (rejects with GafferRequestError when refused): for frames this SDK has no helper for yet,
   * e.g. `log` and `usage` (PROTOCOL §5). Addition; no behaviour of the other methods changes.
   */
  request<R = Record<string, unknown>>(type: string, fields: Record<string, unknown> = {}): Promise<R> {
    return this.conn.request<R>(type, fields);
  }

  // ---- work loop ----

  /**
   * Claims and works tasks until `close()` (or `opts.signal`, or `opts.maxTasks`). One task at a
   * time per call; call it N times for N in parallel.
   */
  async work(handler: WorkHandler, opts: WorkOptions = {}): Promise<void> {
    const idle = opts.idleDelayMs ?? 5000;
    const stopped = () => this.stop.signal.aborted || opts.signal?.aborted === true;
    const wake = opts.signal ? AbortSignal.any([this.stop.signal, opts.signal]) : this.stop.signal;
    let done = 0;
    let handed: Handover;
    while (!stopped() && (opts.maxTasks === undefined || done < opts.maxTasks)) {
      let claimed: ClaimedTask | null;
      if (handed !== undefined) {
        claimed = handed;
        handed = undefined;
      } else {
        try {
          claimed = await this.claim(opts.role);
        } catch (e) {
          if (e instanceof AgentClosedError || stopped()) break;
          // A lost reply (ConnectionLost) is not retried blindly: if the claim did land, the
          // reconnect reconciliation hands that lock back (invariant 4).
          this.logger.warn('claim failed', { error: errorMessage(e) });
          // Asked to slow down: at least a second, or retrying at once would keep the bucket empty.
          const later = e instanceof GafferRequestError && RETRY_LATER.has(e.code);
          await sleep(e instanceof ConnectionLostError ? Math.min(idle, 250) : later ? Math.max(idle, 1000) : idle, wake);
          continue;
        }
      }
      if (!claimed) {
        await sleep(idle, wake);
        continue;
      }
      if (this.stop.signal.aborted) {
        await this.safeReport(claimed.task.id, claimed.lock.fence, 'backlog', { note: 'agent shutting down before starting' });
        break;
      }
      const wanted = done + 1;
      const more = () => opts.claimNext !== false && !stopped() && (opts.maxTasks === undefined || wanted < opts.maxTasks);
      handed = await this.runTask(claimed, handler, opts, more);
      done++;
    }
    // Claimed by the last report but not wanted any more (closing, signal): give it back.
    if (handed) await this.safeReport(handed.task.id, handed.lock.fence, 'backlog', { note: 'agent shutting down before starting' });
  }

  /**
   * Claims once and, when that found a task, works it exactly like `work()` (renewals, lock loss,
   * the report). Resolves `true` after a task was worked, `false` when there was none (P2: a normal
   * answer); a refused or lost claim rejects. Addition, for callers that decide themselves when
   * to ask for work (the MCP server asks when its client calls a tool).
   */
  async workOne(handler: WorkHandler, opts: Pick<WorkOptions, 'renewEveryMs' | 'role'> = {}): Promise<boolean> {
    const claimed = await this.claim(opts.role);
    if (!claimed) return false;
    if (this.stop.signal.aborted) {
      await this.safeReport(claimed.task.id, claimed.lock.fence, 'backlog', { note: 'agent shutting down before starting' });
      return false;
    }
    await this.runTask(claimed, handler, opts);
    return true;
  }

  /** Works one claimed task to its report; returns what the report handed over (asked for when `claimNext()`). */
  private async runTask(claimed: ClaimedTask, handler: WorkHandler, opts: WorkOptions, claimNext: () => boolean = () => false): Promise<Handover> {
    const { task } = claimed;
    let finish!: () => void;
    let timer: NodeJS.Timeout | undefined;
    let running = true;
    const t: ActiveTask = {
      taskId: task.id,
      fence: claimed.lock.fence,
      expiresAt: claimed.lock.expiresAt,
      controller: new AbortController(),
      lost: false,
      done: new Promise<void>((r) => (finish = r)),
      outbox: this.outbox({ taskId: task.id, fence: claimed.lock.fence }, opts.logs),
      usage: new UsageCoalescer((u) => this.sendUsage({ taskId: task.id, fence: claimed.lock.fence }, u)),
      stopRenewing: () => {
        running = false;
        if (timer) clearTimeout(timer);
      },
    };
    this.active.set(task.id, t);
    const every = opts.renewEveryMs ?? renewIntervalMs(this.lockWindowS);
    const scheduleRenew = (ms: number) => {
      timer = setTimeout(() => void renewOnce(), ms);
    };
    const renewOnce = async () => {
      if (!running || t.lost) return;
      try {
        const r = await this.renew(t.taskId, t.fence);
        t.expiresAt = r.expiresAt;
        this.emit('task.renewed', { taskId: t.taskId, expiresAt: r.expiresAt });
        if (running) scheduleRenew(every);
      } catch (e) {
        if (e instanceof GafferRequestError && LOCK_GONE.has(e.code)) {
          this.lose(t, `renew refused: ${e.message}`);
          return;
        }
        if (e instanceof AgentClosedError) return;
        // Transient (connection blip, timeout): try again soon; the request waits for the reconnect.
        this.logger.warn('renew failed; retrying', { taskId: t.taskId, error: errorMessage(e) });
        if (running) scheduleRenew(Math.min(every, 1000));
      }
    };
    scheduleRenew(every);

    const lock = {
      fence: t.fence,
      get expiresAt() {
        return t.expiresAt;
      },
    };
    let status: ReportStatus = 'done';
    let note: string | undefined;
    let output: unknown;
    try {
      const target = { taskId: task.id, fence: t.fence };
      const ctx: WorkContext = {
        task,
        attempt: task.attempt,
        previouslyExpired: task.previouslyExpired,
        ...(task.previousError ? { previousError: task.previousError } : {}),
        signal: t.controller.signal,
        lock,
        agent: this,
        log: (text, o) => t.outbox.write(text, o),
        usage: (u) => t.usage.report(u),
        artifact: (a) => this.sendArtifact(target, a),
      };
      const r = await this.capture(opts, t.outbox, () => handler(ctx));
      if (r && typeof r === 'object') ({ output, note } = r);
    } catch (e) {
      const reason: unknown = t.controller.signal.reason;
      status = reason instanceof AgentClosingError ? 'backlog' : reportStatusOf(e);
      note = errorMessage(e);
      output = (e as { output?: unknown } | null)?.output;
      this.logger.warn('task handler failed', { taskId: task.id, status, error: note });
    } finally {
      running = false;
      if (timer) clearTimeout(timer);
    }
    try {
      // The lines and the usage go in while the lock is still ours: after the report they would be refused.
      if (!t.lost) await Promise.all([flushWithin(t.outbox, LOG_FLUSH_TIMEOUT_MS), usageWithin(t.usage, LOG_FLUSH_TIMEOUT_MS)]);
      if (t.lost) {
        this.logger.warn('not reporting: the lock was lost', { taskId: task.id });
        return undefined;
      }
      const extra: ReportExtra = { ...(note !== undefined ? { note } : {}), ...(output !== undefined ? { output } : {}) };
      if (claimNext()) extra.claimNext = true;
      const r = await this.safeReport(task.id, t.fence, status, extra);
      // A repeat never claims (the server answers no task): claim as usual then.
      return extra.claimNext && r?.next && !r.replayed ? this.claimed(r.next) : undefined;
    } finally {
      this.active.delete(task.id);
      finish();
    }
  }

  /** Reports, repeating after a connection blip (a repeated report is harmless); the reply, or undefined when it failed. */
  private async safeReport(taskId: number, fence: number, status: ReportStatus, extra: ReportExtra): Promise<ReportReply | undefined> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.report(taskId, fence, status, extra);
      } catch (e) {
        if (e instanceof ConnectionLostError && attempt < 5) continue;
        if (await this.pausedAfterRefusal(e, attempt)) continue;
        if (e instanceof GafferRequestError && LOCK_GONE.has(e.code)) {
          this.logger.warn('report refused: the lock is no longer ours', { taskId, error: e.message });
          const t = this.active.get(taskId);
          if (t) this.lose(t, e.message);
          return undefined;
        }
        this.logger.error('report failed', { taskId, status, error: errorMessage(e) });
        return undefined;
      }
    }
  }

  private lose(t: ActiveTask, reason: string, lostBecause?: string): void {
    if (t.lost) return;
    t.lost = true;
    t.stopRenewing();
    t.outbox.stop(`lock lost: ${reason}`);
    this.logger.warn('lock lost', { taskId: t.taskId, reason });
    this.emit('task.lost', { taskId: t.taskId, reason, ...(lostBecause !== undefined ? { lostBecause } : {}) });
    t.controller.abort(new LockLostError(t.taskId, reason, lostBecause));
  }

  // ---- logs and usage (PROTOCOL §5) ----

  private outbox(target: { taskId: number; fence: number } | { runId: string }, opts?: LogOutboxOptions): LogOutbox {
    return new LogOutbox((lines) => this.conn.request<LogResult>('log', { ...target, lines }), opts, (msg, fields) => this.logger.warn(msg, { ...target, ...fields }));
  }

  private capture<T>(opts: LogCaptureOptions, outbox: LogOutbox, fn: () => T): T {
    if (!opts.captureConsole) return fn();
    return withConsoleCapture((text, o) => void outbox.write(text, o), fn);
  }

  private async sendUsage(target: { taskId: number; fence: number } | { runId: string }, u: UsageInput): Promise<UsageTotals> {
    const r = (await this.persistent('usage', { ...target, ...u })) as UsageResult;
    return r.usage;
  }

  /**
   * PROTOCOL §15: one `artifact` frame, or for a long diff several: each part is at most
   * MAX_DIFF_PART_CHARS and small enough to keep its frame under the frame limit once JSON-escaped;
   * the first carries `data`, the next ones continue at `diffOffset` (the characters sent so far).
   */
  private async sendArtifact(target: { taskId: number; fence: number } | { runId: string }, a: ArtifactInput): Promise<void> {
    const diff = a.diff === undefined ? undefined : wholeChars(a.diff.slice(0, MAX_DIFF_CHARS));
    const frame = { ...target, kind: a.kind, name: a.name };
    if (diff === undefined) {
      await this.persistent('artifact', { ...frame, data: a.data });
      return;
    }
    const room = MAX_FRAME_BYTES - 16 * 1024 - Buffer.byteLength(JSON.stringify(a.data));
    let offset = 0;
    do {
      let part = diff.slice(offset, offset + MAX_DIFF_PART_CHARS);
      while (part.length > 1 && Buffer.byteLength(JSON.stringify(part)) > room) part = part.slice(0, Math.floor(part.length / 2));
      part = wholeChars(part);
      await this.persistent('artifact', { ...frame, data: offset === 0 ? a.data : {}, diff: part, diffOffset: offset });
      offset += part.length;
    } while (offset < diff.length);
  }

  /**
   * Adds a line to the log of a task this agent is working on in `work()` (the same outbox as
   * `ctx.log`). Throws when this agent holds no such task.
   */
  log(taskId: number, text: string, opts?: LogOptions): Promise<void> {
    const t = this.active.get(taskId);
    if (!t || t.lost) return Promise.reject(new LockLostError(taskId, 'this agent is not working on the task'));
    return t.outbox.write(text, opts);
  }

  /** Reports usage for a task this agent is working on in `work()`; resolves with the attempt's total. */
  usage(taskId: number, u: UsageInput): Promise<UsageTotals> {
    const t = this.active.get(taskId);
    if (!t || t.lost) return Promise.reject(new LockLostError(taskId, 'this agent is not working on the task'));
    return t.usage.report(u);
  }

  // ---- jobs and prechecks ----

  /** Handles `job_trigger` pushes. Returns an unsubscribe function. */
  onJob(handler: JobHandler, opts: JobOptions = {}): () => void {
    this.jobHandler = { fn: handler, opts };
    return () => {
      if (this.jobHandler?.fn === handler) this.jobHandler = undefined;
    };
  }

  /** Answers `precheck` pushes for check `name`. Returns an unsubscribe function. */
  onPrecheck(name: string, handler: PrecheckHandler): () => void {
    this.prechecks.set(name, handler);
    return () => {
      if (this.prechecks.get(name) === handler) this.prechecks.delete(name);
    };
  }

  private onPush(p: AgentPush): void {
    switch (p.type) {
      case 'job_trigger':
        void this.runJob(p);
        return;
      case 'precheck':
        void this.answerPrecheck(p);
        return;
      case 'lock_lost': {
        const t = this.active.get(p.taskId);
        if (t && t.fence === p.fence) this.lose(t, `the server took the lock away (${p.reason})`, p.reason);
        return;
      }
      case 'run_cancelled': {
        const r = this.runs.get(p.runId);
        if (!r || r.cancelled) return;
        r.cancelled = new RunCancelledError(p.runId, p.reason);
        this.logger.warn('run cancelled by the server', { runId: p.runId, reason: p.reason });
        this.emit('job.cancelled', { runId: p.runId, reason: p.reason });
        r.controller.abort(r.cancelled);
        return;
      }
      default:
        missingCase(p);
    }
  }

  private async runJob(trigger: JobTriggerPush): Promise<void> {
    const job = this.jobHandler;
    if (!job) {
      // Not acknowledging lets the hub offer the run to another instance.
      this.logger.warn('job_trigger received but no onJob handler is registered', { runId: trigger.runId });
      return;
    }
    const previous = this.runs.get(trigger.runId);
    if (previous) {
      // A re-offer of the attempt running here is a duplicate. A later attempt (an approved held
      // run, a retry) can arrive while the earlier one is still finishing here — its result
      // committed, the reply not yet read — and must not be dropped: it starts once that is done.
      if (trigger.attempt <= previous.attempt) return;
      await previous.done;
      if (this.runs.has(trigger.runId)) return;
    }
    if (this.stop.signal.aborted) return;
    const controller = new AbortController();
    let finish!: () => void;
    const entry: ActiveRun = { attempt: trigger.attempt, controller, done: new Promise<void>((r) => (finish = r)) };
    this.runs.set(trigger.runId, entry);
    // Invariant 3: after `run_cancelled` nothing more goes out for the run. (A function, not a
    // field read: the push can arrive at any await.)
    const cancelled = (): RunCancelledError | undefined => entry.cancelled;
    const stillOurs = () => {
      const c = cancelled();
      if (c) throw c;
    };
    const runId = trigger.runId;
    let deadlineTimer: NodeJS.Timeout | undefined;
    let runOutbox: LogOutbox | undefined;
    try {
      try {
        await this.conn.request('run_started', { runId });
      } catch (e) {
        this.logger.warn('run not started', { runId, error: errorMessage(e) });
        return;
      }
      if (cancelled()) return;
      this.emit('job.started', { runId, slot: trigger.slot });
      const untilDeadline = Date.parse(trigger.deadline) - Date.now();
      if (Number.isFinite(untilDeadline)) {
        deadlineTimer = setTimeout(() => controller.abort(new Error(`deadline ${trigger.deadline} passed`)), Math.max(0, Math.min(untilDeadline, 2_147_483_647)));
      }
      const completed = new Set(trigger.completedSteps ?? []);
      const outbox = this.outbox({ runId }, job.opts.logs);
      runOutbox = outbox;
      const usage = new UsageCoalescer((u) => this.sendUsage({ runId }, u));
      // Every field of the push (the schema dropped anything unknown), then the SDK's helpers.
      const { type: _type, completedSteps: _completed, ...fields } = trigger;
      const ctx: JobContext = {
        log: (text, o) => outbox.write(text, o),
        usage: (u) => usage.report(u),
        artifact: (a) => this.sendArtifact({ runId }, a),
        ...fields,
        completedSteps: [...completed],
        signal: controller.signal,
        agent: this,
        step: async <T>(name: string, fn: () => Promise<T> | T, stepOpts: StepOptions<T> = {}): Promise<T | undefined> => {
          if (completed.has(name)) {
            this.emit('job.step', { runId, step: name, skipped: true });
            return undefined;
          }
          stillOurs();
          const value = await fn();
          stillOurs();
          const ref = typeof stepOpts.ref === 'function' ? stepOpts.ref(value) : stepOpts.ref;
          // The checkpoint must be recorded before anything else happens (invariant 3).
          await this.persistent('run_step', { runId, step: name, ...(ref !== undefined ? { ref } : {}) });
          completed.add(name);
          this.emit('job.step', { runId, step: name, skipped: false });
          return value;
        },
      };
      let result: Record<string, unknown>;
      try {
        const output = await this.capture(job.opts, outbox, () => job.fn(ctx));
        result = { outcome: 'success', ...(output !== undefined ? { output } : {}) };
      } catch (e) {
        const errorClass = errorClassOf(e, job.opts.defaultErrorClass ?? 'retryable');
        result = { outcome: 'failed', errorClass, error: errorMessage(e) };
        const output = (e as { output?: unknown } | null)?.output;
        if (output !== undefined) result.output = output;
        this.logger.warn('job handler failed', { runId, errorClass, error: result.error });
      }
      const c = cancelled();
      if (c) {
        this.logger.warn('not sending run_result: the run was cancelled', { runId, reason: c.reason });
        return;
      }
      await Promise.all([flushWithin(outbox, LOG_FLUSH_TIMEOUT_MS), usageWithin(usage, LOG_FLUSH_TIMEOUT_MS)]);
      try {
        await this.persistent('run_result', { runId, ...result });
        this.emit('job.finished', {
          runId,
          outcome: result.outcome as 'success' | 'failed',
          ...(result.errorClass ? { errorClass: result.errorClass as ErrorClass } : {}),
        });
      } catch (e) {
        this.logger.error('run_result failed', { runId, error: errorMessage(e) });
      }
    } finally {
      if (deadlineTimer) clearTimeout(deadlineTimer);
      runOutbox?.stop('the run finished');
      this.runs.delete(runId);
      finish();
    }
  }

  /** A request repeated across connection blips (for checkpoints and results). */
  private async persistent(type: string, fields: Record<string, unknown>): Promise<unknown> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.conn.request(type, fields);
      } catch (e) {
        if (e instanceof ConnectionLostError && attempt < 5) continue;
        if (await this.pausedAfterRefusal(e, attempt)) continue;
        throw e;
      }
    }
  }

  /**
   * Invariant 2: a request the server refused without doing it (`rate_limited`, `unavailable`) is
   * worth sending again: waits 100 ms, doubling up to 5 s, for at most 20 tries (false: give up).
   */
  private async pausedAfterRefusal(e: unknown, attempt: number): Promise<boolean> {
    if (!(e instanceof GafferRequestError) || !RETRY_LATER.has(e.code) || attempt >= 20 || this.conn.state === 'closed') return false;
    await sleep(Math.min(5000, 100 * 2 ** (attempt - 1)));
    return true;
  }

  private async answerPrecheck(p: PrecheckPush): Promise<void> {
    const fn = this.prechecks.get(p.check);
    let answer: { ready: boolean; reason?: string; evidence?: unknown };
    if (!fn) answer = { ready: false, reason: `this agent has no precheck named "${p.check}"` };
    else {
      try {
        const r = await fn({ requestId: p.requestId, check: p.check, slot: p.slot });
        answer = typeof r === 'boolean' ? { ready: r } : r;
      } catch (e) {
        answer = { ready: false, reason: `precheck failed: ${errorMessage(e, 1900)}` };
      }
    }
    const fields: Record<string, unknown> = { requestId: p.requestId, ready: answer.ready === true };
    if (answer.reason !== undefined) fields.reason = errorMessage(answer.reason, 2000);
    if (answer.evidence !== undefined) fields.evidence = answer.evidence;
    try {
      await this.conn.request('precheck_result', fields);
    } catch (e) {
      this.logger.warn('precheck_result failed', { requestId: p.requestId, error: errorMessage(e) });
    }
  }

  // ---- reconnect reconciliation ----

  private onReady(hello: HelloResult, first: boolean): void {
    const previous = this.previousInstance;
    this.previousInstance = hello.instanceId;
    const resumed = !first && (hello.resumed ?? hello.instanceId === previous);
    this.emit('ready', { instanceId: hello.instanceId, resumed, first });
    if (first) return;
    if (!resumed) {
      for (const t of this.active.values()) this.lose(t, 'the instance could not be resumed: its locks are gone');
      return;
    }
    if (!hello.locks) return;
    const held = new Map(hello.locks.map((l) => [l.taskId, l.fence]));
    for (const t of this.active.values()) {
      if (held.get(t.taskId) !== t.fence) this.lose(t, 'the lock did not survive the reconnect');
    }
    for (const l of hello.locks) {
      if (this.active.get(l.taskId)?.fence === l.fence) continue;
      // Invariant 4: a claim whose reply was lost. Give it back now rather than after the lock window.
      this.logger.warn('returning a lock nobody here is working on', { taskId: l.taskId });
      void this.safeReport(l.taskId, l.fence, 'backlog', { note: 'claim reply lost in a reconnect; returned unworked' });
    }
  }

  // ---- shutdown ----

  /**
   * Graceful shutdown: stop claiming, wait up to `timeoutMs` for running handlers, then abort
   * them (their tasks are reported `backlog`), and close the socket.
   */
  close(opts: { timeoutMs?: number } = {}): Promise<void> {
    this.closing ??= (async () => {
      this.stop.abort();
      const busy = () => [...[...this.active.values()].map((t) => t.done), ...[...this.runs.values()].map((r) => r.done)];
      if (busy().length > 0) {
        await Promise.race([Promise.all(busy()), sleep(opts.timeoutMs ?? 10_000)]);
        if (busy().length > 0) {
          const closingError = new AgentClosingError();
          for (const t of this.active.values()) t.controller.abort(closingError);
          for (const r of this.runs.values()) r.controller.abort(closingError);
          await Promise.race([Promise.all(busy()), sleep(5000)]);
        }
      }
      await this.conn.close(1000, 'agent closing');
    })();
    return this.closing;
  }
}

/** Waits for the outbox to drain, at most `ms` (then the report goes; unsent lines are dropped). */
async function flushWithin(outbox: LogOutbox, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((r) => (timer = setTimeout(() => r(true), ms)));
  const timedOut = await Promise.race([outbox.flush().then(() => false), late]);
  clearTimeout(timer);
  if (timedOut) outbox.stop(`its lines were not acknowledged within ${ms} ms`);
}

/** Sends the attempt's coalesced usage now and waits for it, at most `ms` (then the report goes). */
async function usageWithin(usage: UsageCoalescer, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([usage.flush(), new Promise<void>((r) => (timer = setTimeout(r, ms)))]);
  clearTimeout(timer);
}

/** Connects, says hello, and returns a ready agent. */
export function connect(options: AgentOptions): Promise<Agent> {
  return new Agent(options).start();
}
