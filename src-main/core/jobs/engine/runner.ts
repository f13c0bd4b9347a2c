/**
 * The job runner's lifecycle: one clock timer on the earliest due instant, a safety sweep, its part
 * of a gap (stall, sleep, clock step — detected by core/time/gap-detector.ts), recovery after a
 * restart, and the passes that look at everything due. What a pass decides is the engine modules' (slots, evaluate, backfills, outcomes, dispatch).
 *
 * Invariants:
 * 1. Everything is in the database: `jobs.cursor` (slots before it were looked at), `jobs.next_check_at`,
 *    `runs.next_attempt_at` (re-check, retry due, deadline) and backfill deadlines. No worker sleeps; a
 *    process restart resumes from the rows alone.
 * 2. One clock timer on the earliest due instant, re-armed after every change, plus a safety sweep every
 *    `sweepIntervalS`. A slot looked at after its latest start (sleep, downtime, clock jump) gets exactly
 *    one decision by the missed-window policy; backfills are dispatched at most `backfillCapPerTick` per
 *    job per tick (a new slot opening).
 * 3. A wake-up runs passes; a wake-up asked for during a pass folds into one more pass. A pass works
 *    for at most PASS_BUDGET_MS, then yields to the event loop and continues at once. Each listing of
 *    due rows is worked off in one transaction (ending early when the time is up), so a slice
 *    commits once — every commit is an fsync — and its triggers leave at its commit. A failed pass
 *    is tried again after FAILED_PASS_RETRY_MS (never in a loop).
 * 5. A due job's row is taken with the due listing and used as listed: the transaction that works
 *    the listing off follows it directly (nothing commits, so no event listener writes, in between),
 *    and within it each job's slots write only that job's own row.
 * 4. A pass decides on a timeline every gap has been applied to, with the input that arrived during
 *    a gap in hand (gap-detector invariant 4): it reads the clocks first, and from the moment a gap
 *    is noticed (by anyone) passes are held until what the sockets delivered meanwhile has been read
 *    and committed. A result waiting in a socket at the wake is seen before a deadline, an overlap
 *    or an order decision.
 */
import type { TimerHandle } from '../../../common/clock';
import { isoTime } from '../../../common/iso-time';
import type { Disposable } from '../../events';
import type { ClockGap } from '../../time/gap-detector';
import { runPhase } from '../run-phase';
import { attemptFailed, backfillAttemptFailed, NO_OFFER } from './outcomes';
import { ACTOR, type EngineContext } from './context';
import { evaluateDue } from './evaluate';
import { offerLapsed, takenAway } from './offers';
import type { EngineRunSink } from './run-sink';
import { advanceJob } from './slots';

/**
 * Longest a pass runs before it yields to the event loop. The sockets are read between slices, but
 * what is read there is committed only after the next slice: the continuation (`soon`) and the
 * group commit of those frames are both queued with `setImmediate`, the continuation first. So the
 * acknowledgements of a slice's triggers do not hold up the next slice's, and a request read
 * between slices waits the next slice too (up to two budgets in all; bench/REPORT.md "stall1").
 * Shorter slices would shorten that wait and make a burst's last trigger later (REPORT "burst4").
 */
const PASS_BUDGET_MS = 200;
/**
 * A pass that failed (storage refused a write, a row it cannot read) is tried again after this long,
 * not at once: the work it failed on is still due, and the timer would spin on it.
 */
const FAILED_PASS_RETRY_MS = 5000;

export class JobRunner {
  private timer: TimerHandle | undefined;
  private timerAt: number | undefined;
  private sweepTimer: TimerHandle | undefined;
  private started = false;
  private passing = false;
  private again = false;
  private soonScheduled = false;
  /** After a failed pass: the timer fires no earlier than this. */
  private retryAfter: number | undefined;
  /** Gaps noticed whose input is not read yet: no pass meanwhile (invariant 4). */
  private heldForInput = 0;
  private readonly listeners: Disposable[] = [];

  constructor(
    private readonly e: EngineContext,
    private readonly sink: EngineRunSink,
  ) {
    e.soon = () => this.soon();
    e.arm = () => this.arm();
  }

  // ---- lifecycle ---------------------------------------------------------------------------

  start(): void {
    const e = this.e;
    if (this.started || e.closed) return;
    this.started = true;
    e.hub.setRunSink(this.sink);
    this.listeners.push(
      // The gap detector applies the runner's part of a gap inside its transaction; then a pass.
      e.ctx.gaps.onGap('runner', (gap) => this.onGap(gap)),
      e.ctx.events.on('clock.jumped', () => this.holdForInput()),
      e.ctx.events.on('instance.changed', ({ instance }) => {
        if (instance.status === 'offline') this.instanceGone(instance.id, `instance ${instance.id} went offline`);
      }),
      // Only an instance that takes runs can be offered one (offers.ts invariant 6).
      e.ctx.events.on('session.hello', ({ role, takesRuns }) => {
        if (takesRuns) this.instanceArrived(role);
      }),
      // Its offers move on at the next pass (the instance may have resumed on another socket by then).
      e.ctx.events.on('session.closed', ({ instanceId }) => {
        if (instanceId === null || e.closed) return;
        e.sessionsGone.add(instanceId);
        this.soon();
      }),
    );
    this.recover();
    this.armSweep();
    this.wake();
  }

  stop(): void {
    const e = this.e;
    e.closed = true;
    this.timer?.cancel();
    this.timer = undefined;
    this.sweepTimer?.cancel();
    this.sweepTimer = undefined;
    for (const l of this.listeners) l.dispose();
    this.listeners.length = 0;
    if (this.started) e.hub.setRunSink(undefined);
    e.dropOutbox();
  }

  get isStarted(): boolean {
    return this.started && !this.e.closed;
  }

  /** The instant the runner's timer is armed for (tests, console "next trigger"). */
  get nextWakeAt(): number | undefined {
    return this.timerAt;
  }

  /** Resolves once no asynchronous check or pending push continuation is in flight. */
  async settled(): Promise<void> {
    // A pass held for the input of a gap (invariant 4) is work still to come.
    while (this.e.inflightWork.size > 0 || this.soonScheduled || this.heldForInput > 0) {
      await Promise.allSettled([...this.e.inflightWork]);
      await new Promise((r) => setImmediate(r));
    }
  }

  /** Work to do as soon as the event loop is free (not on the clock: nothing is waited for). */
  soon(): void {
    if (this.soonScheduled || this.e.closed || !this.started) return;
    this.soonScheduled = true;
    setImmediate(() => {
      this.soonScheduled = false;
      this.wake();
    });
  }

  /** A gap was noticed: the next pass runs once the input that arrived during it is in (invariant 4). */
  private holdForInput(): void {
    const e = this.e;
    if (e.closed || !this.started) return;
    this.heldForInput++;
    e.ctx.clock.afterIo(() => {
      this.heldForInput--;
      this.wake();
    });
  }

  /**
   * Reads the clocks before a pass (invariant 4): a gap found now is applied first, and its
   * `clock.jumped` holds the pass. False when the pass must not run now.
   */
  private clocksAllowPass(): boolean {
    const e = this.e;
    try {
      e.ctx.gaps.check('runner');
    } catch (err) {
      // The gap is not recorded yet: deciding now would judge by time nobody lived.
      this.retryAfter = e.now() + FAILED_PASS_RETRY_MS;
      e.logger.error(`jobs: a gap could not be recorded; the pass waits ${FAILED_PASS_RETRY_MS / 1000} s`, { error: err instanceof Error ? err.message : String(err) });
      this.arm();
      return false;
    }
    return this.heldForInput === 0;
  }

  /** After a process restart: the rows say what was in flight. */
  private recover(): void {
    const e = this.e;
    const now = e.now();
    e.write(() => {
      for (const r of e.repo.openRuns()) {
        const phase = runPhase(r);
        if (phase === 'offered') {
          // A trigger was out when the process stopped; its session is gone. It is offered again
          // (same attempt) as soon as an instance is there — to any, as if for the first time.
          if (r.offer_to !== null) e.ctx.audit.append({ type: 'trigger.lost', actor: ACTOR, subject: `run:${r.id}`, detail: { instanceId: r.offer_to, why: 'Gaffer restarted' }, traceId: r.trace_id });
          e.repo.patchRun(r.id, { ...NO_OFFER, offered: '[]', next_attempt_at: now });
        } else if (phase === 'started' && !this.instanceAlive(r.instance_id!)) {
          attemptFailed(e, r, 'lost', `instance ${r.instance_id} is gone (Gaffer restarted)`, ACTOR);
        }
      }
      for (const b of e.backfillRows.allDispatched()) {
        if (b.instance_id === null || !this.instanceAlive(b.instance_id)) backfillAttemptFailed(e, b, 'lost', 'the backfill was in flight when Gaffer stopped');
      }
    });
  }

  private instanceAlive(id: string): boolean {
    const st = this.e.instanceStatus(id);
    return st === 'online' || st === 'disconnected';
  }

  /** An instance of `role` said hello: runs whose next offer waits only for an instance are looked at now. */
  private instanceArrived(role: string): void {
    const e = this.e;
    if (e.closed || !this.started) return;
    const now = e.now();
    const waiting = e.repo.waitingOnInstance(role, now);
    if (waiting.length === 0) return;
    e.write(() => {
      for (const id of waiting) e.repo.patchRun(id, { next_attempt_at: now });
    });
    this.soon();
  }

  /** The instance is gone: its attempts in flight are lost (retryable). */
  private instanceGone(instanceId: string, why: string): void {
    const e = this.e;
    if (e.closed || !this.started) return;
    try {
      e.write(() => {
        for (const r of e.repo.startedBy(instanceId)) attemptFailed(e, r, 'lost', why, ACTOR);
        for (const b of e.backfillRows.allDispatched()) if (b.instance_id === instanceId) backfillAttemptFailed(e, b, 'lost', why);
      });
    } catch (err) {
      e.logger.error('jobs: instance loss handling failed', { instanceId, error: String(err) });
    }
    this.arm();
  }

  // ---- timer -------------------------------------------------------------------------------

  private armSweep(): void {
    const e = this.e;
    if (e.closed) return;
    this.sweepTimer = e.ctx.clock.setTimeout(() => {
      this.sweepTimer = undefined;
      try {
        this.sweep();
      } catch (err) {
        // A timer must never take the process down (e.g. a full disk refuses the sweep's writes).
        e.logger.error('jobs: sweep failed; retrying at the next sweep', { error: err instanceof Error ? err.message : String(err) });
      } finally {
        this.armSweep();
      }
    }, e.ctx.config.sweepIntervalS * 1000);
  }

  /** Safety net: lost attempts, then a wake-up. (Gaps were applied before this timer ran.) */
  sweep(): void {
    const e = this.e;
    if (e.closed || !this.started) return;
    const connected = new Set(e.hub.connectedInstances());
    e.write(() => {
      for (const r of e.repo.openRuns()) {
        // An offer to an instance without a session moves on (its `session.closed` normally did that).
        if (r.offer_to !== null && !connected.has(r.offer_to)) e.sessionsGone.add(r.offer_to);
        if (runPhase(r) !== 'started') continue;
        const st = e.instanceStatus(r.instance_id!);
        if (st !== 'online' && st !== 'disconnected') attemptFailed(e, r, 'lost', `instance ${r.instance_id} is ${st ?? 'unknown'}`, ACTOR);
      }
      for (const b of e.backfillRows.allDispatched()) {
        if (b.instance_id === null) continue;
        const st = e.instanceStatus(b.instance_id);
        if (st !== 'online' && st !== 'disconnected') backfillAttemptFailed(e, b, 'lost', `instance ${b.instance_id} is ${st ?? 'unknown'}`);
      }
    });
    this.wake();
  }

  /** Arms the one timer on the earliest due instant. */
  arm(): void {
    const e = this.e;
    if (e.closed || !this.started) return;
    const cands: number[] = [];
    const j = e.repo.nextJobDue();
    if (j !== null) cands.push(j);
    const runs = e.repo.nextRunsDue(e.checkingRuns.size + 1);
    const r = runs.find((x) => !e.checkingRuns.has(x.id));
    if (r) cands.push(r.next_attempt_at);
    const b = e.backfillRows.nextDue();
    if (b !== null) cands.push(b);
    if (cands.length === 0) {
      this.timer?.cancel();
      this.timer = undefined;
      this.timerAt = undefined;
      return;
    }
    const at = Math.max(Math.min(...cands), this.retryAfter ?? -Infinity);
    // Keep a timer armed for the same instant unless that instant has passed by the wall clock
    // (after a sleep or a forward step the old timer would still wait its monotonic delay).
    if (this.timer && this.timerAt === at && at > e.now()) return;
    this.timer?.cancel();
    this.timerAt = at;
    // A `wakeups` timer: a gap that made it late (or early) is applied before it fires.
    this.timer = e.ctx.clock.setTimeout(() => {
      this.timer = undefined;
      this.timerAt = undefined;
      this.wake();
    }, Math.max(0, at - e.now()));
  }

  /**
   * The runner's part of a gap (core/time/gap-detector.ts), inside the gap's transaction; the
   * detector records it once, with these counts. Only what was set on the old timeline moves:
   * attempts dispatched before a stall or a sleep keep the time they had left (their deadlines move
   * by the gap: nobody lived it), and missed slots are then decided by the next pass, once each.
   * After a backward step, deadlines and relative waits (retry backoff, re-checks) move back with the
   * clock, and the schedule positions (`jobs.cursor`, `next_check_at`) come back to the new "now":
   * slots that already have a run are skipped as ever (one run per slot), slots without one are
   * looked at when they come due on the new wall clock — not an hour later.
   */
  private onGap(gap: ClockGap): Record<string, number> {
    const e = this.e;
    const runs = e.repo.shiftDeadlines(gap);
    const backfills = e.backfillRows.shiftDeadlines(gap);
    const offers = e.repo.shiftAcks(gap);
    if (gap.gapMs > 0) return { runs, backfills, offers };
    // A wait for a window to open is an instant of the schedule and stays; the others were "in x seconds".
    return { runs, backfills, offers, waits: e.repo.shiftWaits(gap), jobs: e.repo.rewindSchedules(gap.to) };
  }

  // ---- passes ------------------------------------------------------------------------------

  /** Looks at every due job, run and backfill deadline. A wake-up during a pass folds into one more pass. */
  wake(): void {
    const e = this.e;
    if (e.closed) return;
    if (!this.started) {
      e.flushOutbox(); // a trigger by hand before start still leaves after its commit
      return;
    }
    if (this.passing) {
      this.again = true;
      return;
    }
    if (!this.clocksAllowPass()) return;
    this.passing = true;
    try {
      do {
        this.again = false;
        e.beginPass();
        if (this.pass(performance.now() + PASS_BUDGET_MS)) this.soon();
        e.endPass();
      } while (this.again && !e.closed);
      this.retryAfter = undefined;
    } catch (err) {
      this.retryAfter = e.now() + FAILED_PASS_RETRY_MS;
      e.logger.error(`jobs: pass failed; trying again in ${FAILED_PASS_RETRY_MS / 1000} s`, { error: err instanceof Error ? err.stack : String(err) });
    } finally {
      e.endPass();
      this.passing = false;
      e.flushOutbox();
      this.arm();
    }
  }

  /** One slice of work; true when it stopped at the time budget with work left. */
  private pass(budgetEnd: number): boolean {
    const e = this.e;
    const now = e.now();
    const over = () => performance.now() > budgetEnd;
    // 0. Offers out to instances whose session ended move on to the next instance.
    if (e.sessionsGone.size > 0) this.offersOfGoneSessions();
    // 1. Jobs whose next slot is due: claim the slots (one decision each for missed ones).
    //    The slots claimed due now are evaluated in the same transaction, so each chunk's triggers
    //    leave as soon as it commits (a burst of many jobs is not held back by the last claim).
    const seen = new Set<string>();
    const jobsDone = this.inTransaction(() => e.repo.dueJobs(now), over, (listed) => {
      // Invariant 5: the row as listed is the row as it stands.
      if (listed.enabled !== 1 || listed.next_check_at === null || listed.next_check_at > now) return;
      const advanced = advanceJob(e, listed, now);
      for (let k = 0; k < advanced.open.length; k++) {
        // The first open run is as claimed; evaluating it may have touched the later ones (order,
        // overlap). The job row stays as advanceJob left it: evaluation writes runs only.
        const claimed = advanced.open[k]!;
        const run = k === 0 ? claimed : e.repo.maybeRun(claimed.id);
        if (!run || run.next_attempt_at === null || run.next_attempt_at > now || e.checkingRuns.has(run.id)) continue;
        seen.add(run.id);
        evaluateDue(e, run, now, advanced.job);
      }
    });
    if (!jobsDone) return true;
    // 2. Runs due: evaluate, retry, re-dispatch, or declare lost.
    const runsDone = this.inTransaction(
      () => e.repo.dueRunIds(now).filter((id) => !seen.has(id) && !e.checkingRuns.has(id)),
      over,
      (id) => {
        seen.add(id);
        const run = e.repo.maybeRun(id);
        if (run && run.next_attempt_at !== null && run.next_attempt_at <= now && !e.checkingRuns.has(id)) evaluateDue(e, run, now);
      },
    );
    if (!runsDone) return true;
    // 3. Backfills past their deadline, or whose offer's ack is due.
    const due = e.backfillRows.due(now);
    if (due.length > 0) {
      e.write(() => {
        for (const b of due) {
          const cur = e.backfillRows.get(b.id);
          if (cur.status !== 'dispatched') continue;
          const run = e.repo.run(cur.run_id);
          if (cur.deadline !== null && cur.deadline <= now) {
            backfillAttemptFailed(e, cur, 'lost', `no result before the deadline ${isoTime(cur.deadline)}`);
            if (cur.instance_id !== null) takenAway(e, run, cur.instance_id, 'deadline');
          } else if (cur.instance_id === null && run.offer_to !== null && run.ack_due_at !== null && run.ack_due_at <= now) {
            offerLapsed(e, run, e.repo.jobRow(run.job_id), { kind: 'timeout' }, cur);
          }
        }
      });
    }
    return false;
  }

  /** Offers out to instances whose session ended (and that have not resumed on another) go to the next instance. */
  private offersOfGoneSessions(): void {
    const e = this.e;
    const gone = [...e.sessionsGone];
    e.sessionsGone.clear();
    const connected = new Set(e.hub.connectedInstances());
    e.write(() => {
      for (const id of gone) {
        if (connected.has(id)) continue;
        for (const run of e.repo.offeredTo(id)) {
          const job = e.repo.jobRow(run.job_id);
          const b = e.backfillRows.dispatchedOfRun(run.id);
          if (b ? b.instance_id === null : runPhase(run) === 'offered') offerLapsed(e, run, job, { kind: 'lost', why: 'session closed' }, b);
        }
      }
    });
  }

  /**
   * Works off what `due()` lists, each listing in one transaction that ends when the list is done or
   * the time budget is over, asking again until it lists nothing. One commit per listing, not one per
   * few rows: a burst's slice is one fsync, and its triggers leave at that commit (invariant 3).
   * False when it stopped at the time budget with work left.
   */
  private inTransaction<T>(due: () => T[], over: () => boolean, each: (row: T) => void): boolean {
    for (let guard = 0; guard < 1000; guard++) {
      const rows = due();
      if (rows.length === 0) break;
      if (over()) return false;
      let i = 0;
      this.e.write(() => {
        do each(rows[i++]!);
        while (i < rows.length && !over());
      });
      if (i < rows.length) return false;
    }
    return true;
  }
}
