/**
 * The bottom of the jobs engine: what every engine module works with — its dependencies, the
 * after-commit outbox, the pass cache and the book of work in flight.
 *
 * Invariants:
 * 1. A push leaves only after the transaction that decided it committed: modules queue it with
 *    `afterCommit`, and `write` flushes the outbox once the outermost transaction is over (and drops
 *    what a failed transaction queued). The outermost transaction of engine work is a `write`.
 * 2. Within one synchronous pass nothing else can write (one thread, one writer process), so the
 *    settings row, "is any backfill queued or in flight" and each role's spend verdict (at the
 *    pass's instant) are read at most once per pass: spend only grows by usage reports and caps only
 *    change by the operator, both read from sockets between passes, never inside one. A burst of
 *    a thousand slots of one role asks core/budgets once, and the next pass asks afresh.
 *    Likewise the offers out to an instance (its load when the next offer is placed) are counted
 *    once per pass and instance, then kept by the pass as it places offers: they are cleared only by
 *    acknowledgements (read from sockets between passes) and by the engine's own moves of an offer,
 *    which within a pass can only leave the count a little high for an instance just passed over.
 *    The instances' status and held locks (the rest of their load, the hub's `pick`) are read once
 *    per pass and instance too: locks and statuses change by what sockets and timers deliver
 *    between passes; a stale count can only tilt which instance is picked, and an instance that
 *    went away meanwhile is not picked (the hub picks only among its live sessions).
 * 3. A run (or backfill) whose asynchronous checks are in flight is in `checkingRuns`
 *    (`checkingBackfills`): nothing else evaluates it until its continuation ran.
 */
import type { VerifyHooks } from '../../tasks';
import type { Logger } from '../../../common/logger';
import type { JobSettings } from '../../../common/job-schema';
import type { CoreContext } from '../../context';
import type { InstanceLoads, JobsHubPort } from '../../hub';
import type { InstanceRegistry } from '../../instances';
import type { Signals } from '../../signals';
import type { BackfillRepo } from '../backfill-repo';
import { evaluatePrecondition, type PreconditionEvaluator } from '../preconditions';
import { OFFER_LOAD_CAP, type JobRepo } from '../repo';
import type { JobSettingsStore } from '../settings';

export const ACTOR = 'runner';

/** What the engine needs from the hub: pick an instance, send a push, who is online, prechecks, the run sink. */
export type EngineHub = JobsHubPort;

/** Layer 3's spend verdict for a role (core/budgets): the first daily cap reached, with spend and reset. */
export interface BudgetGate {
  verdict(role: string, now: number): BudgetVerdict;
}

export interface BudgetVerdict {
  ok: boolean;
  reason: string;
  evidence: Record<string, unknown>;
}

/** Where a run attempt's verification is opened (core/verify), and whether its "already done?" checks ran. */
export interface RunVerifyHooks extends VerifyHooks {
  /** True when the `before` checks of `subject`'s `attempt` ran (they are not run twice for one attempt). */
  checkedBefore(subject: string, attempt: number): boolean;
}

/** The loop breaker (core/budgets/loop-breaker.ts), inside the write that records an attempt's end. */
export interface RunLoopBreaker {
  /** The streak when the same error came too many times in a row (the retry is refused; the item is raised), else 0. */
  runFailed(run: { id: string; jobId: string; job: string; slot: string; role: string; attempt: number }, error: string, times?: number): number;
  runSucceeded(runId: string): void;
}

export interface EngineDeps {
  /** Daily spend caps (absent: none apply). */
  budgets?: BudgetGate;
  ctx: CoreContext;
  repo: JobRepo;
  backfillRows: BackfillRepo;
  settings: JobSettingsStore;
  hub: EngineHub;
  signals: Signals;
  instances: Pick<InstanceRegistry, 'get'>;
  logger: Logger;
  /** Evaluates a precondition (default: for real, `evaluatePrecondition`); a rehearsal scripts it. */
  preconditions?: PreconditionEvaluator;
  /** Opens a run attempt's verification (core/verify) in the write that moves it to verifying; absent: success is taken as reported. */
  verify?: RunVerifyHooks;
  /** The loop breaker; absent (a rehearsal): retries follow the retry policy only. */
  breaker?: RunLoopBreaker;
}

export class EngineContext {
  readonly ctx: CoreContext;
  readonly repo: JobRepo;
  readonly backfillRows: BackfillRepo;
  readonly hub: EngineHub;
  readonly signals: Signals;
  readonly logger: Logger;
  readonly checkPrecondition: PreconditionEvaluator;
  readonly budgets: BudgetGate | undefined;
  readonly verify: RunVerifyHooks | undefined;
  readonly breaker: RunLoopBreaker | undefined;
  /** Runs / backfills with asynchronous checks in flight. */
  readonly checkingRuns = new Set<string>();
  readonly checkingBackfills = new Set<number>();
  /** Instances whose session ended since the last pass: their offers move on (offers.ts invariant 4). */
  readonly sessionsGone = new Set<string>();
  closed = false;
  /** Work to do as soon as the event loop is free (the runner's; a no-op until it starts). */
  soon: () => void = () => {};
  /** Re-arms the timer after a change made outside a pass (the runner's). */
  arm: () => void = () => {};
  private outbox: Array<() => void> = [];
  private readonly inflight = new Set<Promise<unknown>>();
  private passCache: { settings?: JobSettings; backfills?: boolean; budget?: Map<string, BudgetVerdict>; offersOut?: Map<string, number>; loads?: InstanceLoads } | undefined;

  constructor(private readonly deps: EngineDeps) {
    this.ctx = deps.ctx;
    this.repo = deps.repo;
    this.backfillRows = deps.backfillRows;
    this.hub = deps.hub;
    this.signals = deps.signals;
    this.logger = deps.logger;
    this.checkPrecondition = deps.preconditions ?? ((p, index, ctx) => evaluatePrecondition(p, index, ctx, { signals: deps.signals, hub: deps.hub }));
    this.budgets = deps.budgets;
    this.verify = deps.verify;
    this.breaker = deps.breaker;
  }

  now(): number {
    return this.ctx.clock.now();
  }

  /**
   * One transaction (a savepoint when nested); the outbox leaves once the outermost one committed.
   * Pushes queued inside a (sub)transaction that failed are dropped with it: the rows that decided
   * them were rolled back.
   */
  write<T>(fn: () => T): T {
    const mark = this.outbox.length;
    let v: T;
    try {
      v = this.ctx.store.write(fn);
    } catch (err) {
      this.outbox.length = Math.min(this.outbox.length, mark);
      throw err;
    }
    if (!this.ctx.db.inTransaction) this.flushOutbox();
    return v;
  }

  /** Queues `send` for after the current transaction commits. */
  afterCommit(send: () => void): void {
    this.outbox.push(send);
  }

  flushOutbox(): void {
    const out = this.outbox;
    this.outbox = [];
    for (const send of out) {
      try {
        send();
      } catch (e) {
        this.logger.error('jobs: push failed', { error: String(e) });
      }
    }
  }

  dropOutbox(): void {
    this.outbox = [];
  }

  /** Keeps `p` in the book until it settles (`settled()` waits for it). */
  track<T>(p: Promise<T>): Promise<T> {
    this.inflight.add(p);
    const done = () => this.inflight.delete(p);
    p.then(done, done);
    return p;
  }

  get inflightWork(): ReadonlySet<Promise<unknown>> {
    return this.inflight;
  }

  beginPass(): void {
    this.passCache = {};
  }

  endPass(): void {
    this.passCache = undefined;
  }

  settings(): JobSettings {
    if (!this.passCache) return this.deps.settings.read();
    return (this.passCache.settings ??= this.deps.settings.read());
  }

  /** Layer 3's spend verdict for `role` at `now` (invariant 2: once per role per pass); undefined without budgets. */
  budgetVerdict(role: string, now: number): BudgetVerdict | undefined {
    if (!this.budgets) return undefined;
    if (!this.passCache) return this.budgets.verdict(role, now);
    const cache = (this.passCache.budget ??= new Map());
    const key = `${now} ${role}`;
    let v = cache.get(key);
    if (!v) cache.set(key, (v = this.budgets.verdict(role, now)));
    return v;
  }

  /** Offers out to `instanceId`, counted up to OFFER_LOAD_CAP (its load for the next offer; invariant 2: read once per pass). */
  offersOut(instanceId: string): number {
    if (!this.passCache) return this.repo.offersOutTo(instanceId);
    const cache = (this.passCache.offersOut ??= new Map());
    let n = cache.get(instanceId);
    if (n === undefined) cache.set(instanceId, (n = this.repo.offersOutTo(instanceId)));
    return n;
  }

  /** An offer to `instanceId` is being placed in this pass: its count goes up by one (up to the cap). */
  offerCounted(instanceId: string): void {
    const n = this.passCache?.offersOut?.get(instanceId);
    if (n !== undefined) this.passCache!.offersOut!.set(instanceId, Math.min(OFFER_LOAD_CAP, n + 1));
  }

  /** The hub's memo of instances' loads for this pass (invariant 2); undefined outside a pass (read afresh). */
  instanceLoads(): InstanceLoads | undefined {
    return this.passCache && (this.passCache.loads ??= new Map());
  }

  anyBackfill(): boolean {
    if (!this.passCache) return this.backfillRows.anyQueuedOrDispatched();
    return (this.passCache.backfills ??= this.backfillRows.anyQueuedOrDispatched());
  }

  /** A backfill was queued in this pass: the cached "none queued" no longer holds. */
  backfillQueued(): void {
    if (this.passCache) this.passCache.backfills = true;
  }

  /** The instance's status, or null when it is unknown. */
  instanceStatus(id: string): string | null {
    try {
      return this.deps.instances.get(id).status;
    } catch {
      return null;
    }
  }
}
