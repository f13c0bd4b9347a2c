/**
 * The job runner (SPEC §3, §5, §6): decides, for every slot of every job, whether it runs now, later,
 * or not at all, and why — and pushes `job_trigger`s to exactly one instance through the hub.
 *
 * Invariants:
 * 1. One run per (job, slot). The run row is inserted ("claimed", status pending) in the
 *    transaction that first acts on the slot, before anything is dispatched; pushes leave only after
 *    that transaction committed (the outbox is flushed after the outermost write).
 * 2. Everything is in the database: `jobs.cursor` (slots before it were looked at), `jobs.next_check_at`,
 *    `runs.next_attempt_at` (re-check, retry due, deadline) and backfill deadlines. No worker sleeps; a
 *    process restart resumes from the rows alone.
 * 3. One clock timer on the earliest due instant, re-armed after every change, plus a safety sweep every
 *    `sweepIntervalS`. A slot looked at after its latest start (sleep, downtime, clock jump) gets exactly
 *    one decision by the missed-window policy; backfills are dispatched at most `backfillCapPerTick` per
 *    job per tick (a new slot opening). Nothing is ever decided twice: the run row is the proof.
 * 4. Layers in order (time → preconditions → execution) with each verdict recorded in `checks`;
 *    asynchronous checks run outside any transaction, and their continuation re-reads the row and
 *    acts only if it is still the same undispatched attempt.
 * 5. Retries are counted (`retry_count`, `next_attempt_at`), never a status flip. A lost attempt
 *    (instance gone, deadline passed, trigger undeliverable) is a retryable failure. A stale instance's
 *    late message is refused with `not_holder`.
 */
import type { TimerHandle } from '../../common/clock';
import { GafferError } from '../../common/errors';
import type { Logger } from '../../common/logger';
import { ERROR_CLASSES, type AgentRequestOf } from '../../common/protocol';
import { retryDelayS, type JobSettings, type JobSpec, type RunApproval, type RunErrorClass } from '../../common/job-schema';
import type { CoreContext } from '../context';
import type { Disposable } from '../events';
import type { Hub } from '../hub/hub';
import type { JobTrigger, RunSink, TriggerOutcome } from '../hub/ports';
import type { InstanceRegistry } from '../instances/registry';
import { onOldTimeline, type ClockGap } from '../time/gap-detector';
import type { Signals } from '../signals/signals';
import { firstLook, JobPlan, missedOutcome, type MissedOutcome } from './plan';
import { evaluatePrecondition, type CheckOutcome } from './preconditions';
import { slotRunBase, specOf, toBackfill, toRun, type BackfillRow, type JobRepo, type JobRow, type RunPatch, type RunRow } from './repo';
import { localClock, localInstant } from './time-util';

const ACTOR = 'runner';
/** Slots enumerated per job per pass (a long gap is worked off in passes, each its own transaction). */
const SLOTS_PER_PASS = 500;
/** Rows handled per transaction. */
const CHUNK = 50;
/** Longest a pass runs before it yields to the event loop. */
const PASS_BUDGET_MS = 30;

/** Layer 3's spend verdict for a role (core/budgets): the first daily cap reached, with spend and reset. */
export interface BudgetGate {
  verdict(role: string, now: number): { ok: boolean; reason: string; evidence: Record<string, unknown> };
}

export interface RunnerDeps {
  /** Daily spend caps (absent: none apply). */
  budgets?: BudgetGate;
  ctx: CoreContext;
  repo: JobRepo;
  hub: Hub;
  signals: Signals;
  instances: InstanceRegistry;
  logger: Logger;
}

/** The verdict of layer 3 for one evaluation. */
interface ExecVerdict {
  action: 'dispatch' | 'wait' | 'skip_overlap';
  blocker: string | null;
  reason: string;
  waitUntil?: number;
  evidence: Record<string, unknown>;
}

export class JobRunner implements RunSink {
  private timer: TimerHandle | undefined;
  private timerAt: number | undefined;
  private sweepTimer: TimerHandle | undefined;
  private started = false;
  private closed = false;
  private ticking = false;
  private again = false;
  private soonScheduled = false;
  private outbox: Array<() => void> = [];
  private readonly listeners: Disposable[] = [];
  /** Runs / backfills with asynchronous checks in flight. */
  private readonly evaluating = new Set<string>();
  private readonly evaluatingBackfills = new Set<number>();
  /** Pushes waiting for the hub's outcome (`run:<id>` / `bf:<id>`). */
  private readonly pushing = new Set<string>();
  private readonly inflight = new Set<Promise<unknown>>();
  private readonly ctx: CoreContext;
  private readonly repo: JobRepo;
  private readonly q;

  constructor(private readonly deps: RunnerDeps) {
    this.ctx = deps.ctx;
    this.repo = deps.repo;
    const db = deps.ctx.db;
    this.q = {
      dueJobIds: db.prepare<[number], { id: string }>('SELECT id FROM jobs WHERE enabled = 1 AND next_check_at IS NOT NULL AND next_check_at <= ? ORDER BY next_check_at'),
      dueRunIds: db.prepare<[number], { id: string }>('SELECT id FROM runs WHERE next_attempt_at IS NOT NULL AND next_attempt_at <= ? ORDER BY next_attempt_at, slot_at, slot'),
      nextRuns: db.prepare<[number], { id: string; next_attempt_at: number }>('SELECT id, next_attempt_at FROM runs WHERE next_attempt_at IS NOT NULL ORDER BY next_attempt_at LIMIT ?'),
      lateBackfills: db.prepare<[number], BackfillRow>(`SELECT * FROM backfills WHERE status = 'dispatched' AND deadline <= ?`),
      anyBackfill: db.prepare<[], { n: number }>(`SELECT count(*) AS n FROM (SELECT 1 FROM backfills WHERE status IN ('queued','dispatched') LIMIT 1)`),
    };
  }

  /**
   * Within one synchronous pass nothing else can write (one thread, one writer process), so the
   * settings row and "is any backfill queued or in flight" are read once per pass.
   */
  private passCache: { settings?: JobSettings; backfills?: boolean } | undefined;

  private settings(): JobSettings {
    if (!this.passCache) return this.repo.settings();
    return (this.passCache.settings ??= this.repo.settings());
  }

  private anyBackfill(): boolean {
    if (!this.passCache) return this.q.anyBackfill.get()!.n > 0;
    return (this.passCache.backfills ??= this.q.anyBackfill.get()!.n > 0);
  }

  // ---- lifecycle ---------------------------------------------------------------------------

  start(): void {
    if (this.started || this.closed) return;
    this.started = true;
    this.deps.hub.setRunSink(this);
    this.listeners.push(
      // The gap detector applies the runner's part of a gap inside its transaction; then a pass.
      this.ctx.gaps.onGap('runner', (gap) => this.onGap(gap)),
      this.ctx.events.on('clock.jumped', () => this.soon()),
      this.ctx.events.on('instance.changed', ({ instance }) => {
        if (instance.status === 'offline') this.instanceGone(instance.id, `instance ${instance.id} went offline`);
      }),
      this.ctx.events.on('session.hello', ({ role }) => this.instanceArrived(role)),
    );
    this.recover();
    this.armSweep();
    this.tick();
  }

  stop(): void {
    this.closed = true;
    this.timer?.cancel();
    this.timer = undefined;
    this.sweepTimer?.cancel();
    this.sweepTimer = undefined;
    for (const l of this.listeners) l.dispose();
    this.listeners.length = 0;
    if (this.started) this.deps.hub.setRunSink(undefined);
    this.outbox = [];
  }

  get isStarted(): boolean {
    return this.started && !this.closed;
  }

  /** The instant the runner's timer is armed for (tests, console "next trigger"). */
  get nextWakeAt(): number | undefined {
    return this.timerAt;
  }

  /** Resolves once no asynchronous check or pending push continuation is in flight. */
  async settled(): Promise<void> {
    while (this.inflight.size > 0 || this.soonScheduled) {
      await Promise.allSettled([...this.inflight]);
      await new Promise((r) => setImmediate(r));
    }
  }

  /** Work to do as soon as the event loop is free (not on the clock: nothing is waited for). */
  soon(): void {
    if (this.soonScheduled || this.closed || !this.started) return;
    this.soonScheduled = true;
    setImmediate(() => {
      this.soonScheduled = false;
      this.tick();
    });
  }

  /** After a process restart: the rows say what was in flight. */
  private recover(): void {
    const now = this.ctx.clock.now();
    this.write(() => {
      for (const r of this.repo.q.allOpenRuns.all()) {
        if (r.dispatched_at === null) continue;
        if (r.instance_id === null) {
          // A trigger was out when the process stopped: offer it again (same attempt).
          this.repo.patchRun(r.id, { next_attempt_at: now });
          continue;
        }
        const inst = this.instanceStatus(r.instance_id);
        if (inst !== 'online' && inst !== 'disconnected') this.attemptFailed(r, 'lost', `instance ${r.instance_id} is gone (Gaffer restarted)`, ACTOR);
      }
      for (const b of this.repo.q.allDispatchedBackfills.all()) {
        const inst = b.instance_id === null ? null : this.instanceStatus(b.instance_id);
        if (inst !== 'online' && inst !== 'disconnected') this.backfillAttemptFailed(b, 'lost', 'the backfill was in flight when Gaffer stopped');
      }
    });
  }

  private instanceStatus(id: string): string | null {
    try {
      return this.deps.instances.get(id).status;
    } catch {
      return null;
    }
  }

  // ---- timer -------------------------------------------------------------------------------

  private armSweep(): void {
    if (this.closed) return;
    this.sweepTimer = this.ctx.clock.setTimeout(() => {
      this.sweepTimer = undefined;
      try {
        this.sweep();
      } catch (e) {
        // A timer must never take the process down (e.g. a full disk refuses the sweep's writes).
        this.deps.logger.error('jobs: sweep failed; retrying at the next sweep', { error: e instanceof Error ? e.message : String(e) });
      } finally {
        this.armSweep();
      }
    }, this.ctx.config.sweepIntervalS * 1000);
  }

  /** Safety net: lost attempts, then a normal tick. (Gaps were applied before this timer ran.) */
  sweep(): void {
    if (this.closed || !this.started) return;
    this.write(() => {
      for (const r of this.repo.q.allOpenRuns.all()) {
        if (r.status !== 'running' || r.dispatched_at === null || r.instance_id === null) continue;
        const st = this.instanceStatus(r.instance_id);
        if (st !== 'online' && st !== 'disconnected') this.attemptFailed(r, 'lost', `instance ${r.instance_id} is ${st ?? 'unknown'}`, ACTOR);
      }
      for (const b of this.repo.q.allDispatchedBackfills.all()) {
        if (b.instance_id === null) continue;
        const st = this.instanceStatus(b.instance_id);
        if (st !== 'online' && st !== 'disconnected') this.backfillAttemptFailed(b, 'lost', `instance ${b.instance_id} is ${st ?? 'unknown'}`);
      }
    });
    this.tick();
  }

  /** Arms the one timer on the earliest due instant. */
  arm(): void {
    if (this.closed || !this.started) return;
    const cands: number[] = [];
    const j = this.repo.q.nextJobDue.get()?.t;
    if (j !== null && j !== undefined) cands.push(j);
    const runs = this.q.nextRuns.all(this.evaluating.size + 1);
    const r = runs.find((x) => !this.evaluating.has(x.id));
    if (r) cands.push(r.next_attempt_at);
    const b = this.repo.q.nextBackfillDeadline.get()?.t;
    if (b !== null && b !== undefined) cands.push(b);
    if (cands.length === 0) {
      this.timer?.cancel();
      this.timer = undefined;
      this.timerAt = undefined;
      return;
    }
    const at = Math.min(...cands);
    // Keep a timer armed for the same instant unless that instant has passed by the wall clock
    // (after a sleep or a forward step the old timer would still wait its monotonic delay).
    if (this.timer && this.timerAt === at && at > this.ctx.clock.now()) return;
    this.timer?.cancel();
    this.timerAt = at;
    // A `wakeups` timer: a gap that made it late (or early) is applied before it ticks.
    this.timer = this.ctx.clock.setTimeout(() => {
      this.timer = undefined;
      this.timerAt = undefined;
      this.tick();
    }, Math.max(0, at - this.ctx.clock.now()));
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
    const at = { gap: gap.gapMs, newFrom: gap.newFrom, to: gap.to, from: Math.min(gap.from, gap.to) };
    const runs = this.ctx.db
      .prepare(`UPDATE runs SET deadline = deadline + @gap, next_attempt_at = CASE WHEN next_attempt_at = deadline THEN deadline + @gap ELSE next_attempt_at END
                WHERE status IN ('pending','running') AND dispatched_at IS NOT NULL AND deadline > @from AND ${onOldTimeline('dispatched_at')}`)
      .run(at).changes;
    const backfills = this.ctx.db
      .prepare(`UPDATE backfills SET deadline = deadline + @gap WHERE status = 'dispatched' AND deadline > @from AND ${onOldTimeline('dispatched_at')}`)
      .run(at).changes;
    if (gap.gapMs > 0) return { runs, backfills };
    // A wait for a window to open is an instant of the schedule and stays; the others were "in x seconds".
    const waits = this.ctx.db
      .prepare(`UPDATE runs SET next_attempt_at = max(@to, next_attempt_at + @gap)
                WHERE status IN ('pending','running') AND dispatched_at IS NULL AND next_attempt_at > @to AND next_attempt_at IS NOT opens_at
                  AND ${onOldTimeline('updated_at')}`)
      .run({ gap: gap.gapMs, newFrom: gap.newFrom, to: gap.to }).changes;
    const jobs = this.ctx.db
      .prepare(`UPDATE jobs SET cursor = @cursor, next_check_at = CASE WHEN enabled = 1 THEN @to ELSE next_check_at END WHERE cursor > @cursor`)
      .run({ cursor: gap.to + 1, to: gap.to }).changes;
    return { runs, backfills, waits, jobs };
  }

  private write<T>(fn: () => T): T {
    const v = this.ctx.store.write(fn);
    if (!this.ctx.db.inTransaction) this.flushOutbox();
    return v;
  }

  private flushOutbox(): void {
    const out = this.outbox;
    this.outbox = [];
    for (const send of out) {
      try {
        send();
      } catch (e) {
        this.deps.logger.error('jobs: push failed', { error: String(e) });
      }
    }
  }

  private track<T>(p: Promise<T>): Promise<T> {
    this.inflight.add(p);
    const done = () => this.inflight.delete(p);
    p.then(done, done);
    return p;
  }

  // ---- the tick ----------------------------------------------------------------------------

  /** Looks at every due job, run and backfill deadline. Re-entrant calls fold into one more pass. */
  tick(): void {
    if (this.closed) return;
    if (!this.started) {
      this.flushOutbox(); // a trigger by hand before start still leaves after its commit
      return;
    }
    if (this.ticking) {
      this.again = true;
      return;
    }
    this.ticking = true;
    try {
      do {
        this.again = false;
        this.passCache = {};
        // A pass works for at most PASS_BUDGET_MS, then yields to the event loop (agents' messages,
        // HTTP) and continues at once: a burst of a thousand due jobs never freezes the process.
        if (this.pass(performance.now() + PASS_BUDGET_MS)) this.soon();
        this.passCache = undefined;
      } while (this.again && !this.closed);
    } catch (e) {
      this.deps.logger.error('jobs: tick failed', { error: e instanceof Error ? e.stack : String(e) });
    } finally {
      this.passCache = undefined;
      this.ticking = false;
      this.flushOutbox();
      this.arm();
    }
  }

  /** One slice of work; true when it stopped at the time budget with work left. */
  private pass(budgetEnd: number): boolean {
    const now = this.ctx.clock.now();
    const over = () => performance.now() > budgetEnd;
    // 1. Jobs whose next slot is due: claim the slots (one decision each for missed ones).
    //    The slots claimed due now are evaluated in the same transaction, so each chunk's triggers
    //    leave as soon as it commits (a burst of many jobs is not held back by the last claim).
    const seen = new Set<string>();
    for (let guard = 0; guard < 1000; guard++) {
      const due = this.q.dueJobIds.all(now);
      if (due.length === 0) break;
      for (let i = 0; i < due.length; i += CHUNK) {
        if (over()) return true;
        const ids = due.slice(i, i + CHUNK);
        this.write(() => {
          for (const { id } of ids) {
            const job = this.repo.maybeJobRow(id);
            if (!job || job.enabled !== 1 || job.next_check_at === null || job.next_check_at > now) continue;
            for (const runId of this.advanceJob(job, now)) {
              const run = this.repo.q.runById.get(runId);
              if (!run || run.next_attempt_at === null || run.next_attempt_at > now || this.evaluating.has(runId)) continue;
              seen.add(runId);
              this.evaluateDue(run, now);
            }
          }
        });
      }
    }
    // 2. Runs due: evaluate, retry, re-dispatch, or declare lost.
    for (let guard = 0; guard < 1000; guard++) {
      const due = this.q.dueRunIds
        .all(now)
        .filter((r) => !seen.has(r.id) && !this.evaluating.has(r.id));
      if (due.length === 0) break;
      for (let i = 0; i < due.length; i += CHUNK) {
        if (over()) return true;
        const ids = due.slice(i, i + CHUNK);
        this.write(() => {
          for (const { id } of ids) {
            seen.add(id);
            const run = this.repo.q.runById.get(id);
            if (run && run.next_attempt_at !== null && run.next_attempt_at <= now && !this.evaluating.has(id)) this.evaluateDue(run, now);
          }
        });
      }
    }
    // 3. Backfills past their deadline.
    const late = this.q.lateBackfills.all(now);
    if (late.length > 0) {
      this.write(() => {
        for (const b of late) {
          const cur = this.repo.backfill(b.id);
          if (cur.status === 'dispatched' && cur.deadline !== null && cur.deadline <= now) this.backfillAttemptFailed(cur, 'lost', `no result before the deadline ${new Date(cur.deadline).toISOString()}`);
        }
      });
    }
    return false;
  }

  // ---- layer 1: slots ----------------------------------------------------------------------

  private planOf(job: JobRow, spec: JobSpec = specOf(job)): JobPlan {
    return new JobPlan(spec, spec.calendar ? this.repo.scheduleCalendar(spec.calendar) : undefined);
  }

  /**
   * Claims every slot due in [cursor, now] of one job and decides what it can decide at once.
   * Returns the ids of the claimed slots that are open (in slot order), to be evaluated next.
   */
  private advanceJob(job: JobRow, now: number): string[] {
    const spec = specOf(job);
    const open: string[] = [];
    let plan: JobPlan;
    try {
      plan = this.planOf(job, spec);
    } catch (e) {
      this.deps.logger.error('jobs: cannot compute slots', { job: job.name, error: String(e) });
      this.repo.patchJob(job.id, { next_check_at: null });
      return open;
    }
    const settings = this.settings();
    const stops = { paused: job.paused_at !== null, killSwitch: settings.killSwitch.on };
    const { entries, truncated } = plan.slotsLimited(job.cursor, now + 1, SLOTS_PER_PASS);
    const lastEntry = entries[entries.length - 1];
    const cursor = truncated && lastEntry ? lastEntry.at : now + 1;
    // The job's next slot; it also closes the window of the last slot claimed now (no window set).
    const following = truncated ? undefined : (plan.firstAtOrAfter(cursor) ?? null);
    let newestOpen: RunRow | undefined;
    for (let k = 0; k < entries.length; k++) {
      const occ = entries[k]!;
      if (this.repo.q.runBySlot.get(job.id, occ.slot)) continue; // claimed before (by hand, or an earlier pass)
      const w = plan.windowOf(occ, k + 1 < entries.length ? entries[k + 1] : following);
      const look = firstLook(occ, w, now, spec.missedWindow, stops);
      const run = this.repo.claim(
        {
          ...slotRunBase(job, occ, spec.retry.maxAttempts),
          trigger: look.kind === 'open' && look.late ? 'catch_up' : 'schedule',
          nextAttemptAt: look.kind === 'open' ? Math.max(now, w.opensAt) : null,
          opensAt: w.opensAt,
          windowClosesAt: w.latestStart,
        },
        ACTOR,
        { local: occ.local, ...(occ.movedFrom ? { movedFrom: occ.movedFrom } : {}), ...(occ.shifted ? { shifted: occ.shifted } : {}) },
      );
      const timeEvidence = {
        slot: occ.slot,
        dueAt: new Date(occ.at).toISOString(),
        local: occ.local,
        zone: plan.zone,
        dayType: occ.dayType ?? null,
        movedFrom: occ.movedFrom ?? null,
        shifted: occ.shifted ?? null,
        window: { opensAt: new Date(w.opensAt).toISOString(), closesAt: new Date(w.closesAt).toISOString(), latestStart: new Date(w.latestStart).toISOString(), explicit: w.explicit },
        firstLookedAt: new Date(now).toISOString(),
      };
      if (look.kind === 'skip') {
        this.check(run, 'time', 'time', 'not_ready', look.reason, timeEvidence);
        this.repo.transition(run, 'skip', 'skipped', { disposition: look.disposition, last_error: look.reason, finished_at: now, next_attempt_at: null }, ACTOR, { reason: look.reason });
      } else if (look.kind === 'missed') {
        this.check(run, 'time', 'time', 'not_ready', look.outcome.reason, timeEvidence);
        this.applyMissed(run, spec, look.outcome, now);
      } else {
        const reason = now < w.opensAt
          ? `slot ${occ.slot} due ${occ.local} (${plan.zone}); its window opens at ${new Date(w.opensAt).toISOString()}`
          : `slot ${occ.slot} due ${occ.local} (${plan.zone})${look.late ? `, looked at late (${Math.round((now - occ.at) / 1000)} s after due)` : ''}; window open until ${new Date(w.latestStart).toISOString()}`;
        this.check(run, 'time', 'time', now < w.opensAt ? 'not_ready' : 'ready', reason, timeEvidence);
        if (!newestOpen || run.slot_at >= newestOpen.slot_at) newestOpen = run;
        open.push(run.id);
      }
    }
    const next = truncated ? now : (following?.at ?? null);
    this.repo.patchJob(job.id, { cursor, next_check_at: next });
    if (newestOpen) this.selectBackfills(job, spec, newestOpen, now);
    return open;
  }

  // ---- evaluation of a due run -------------------------------------------------------------

  private evaluateDue(run: RunRow, now: number): void {
    const job = this.repo.maybeJobRow(run.job_id);
    if (!job) {
      this.repo.patchRun(run.id, { next_attempt_at: null });
      return;
    }
    if (run.status === 'pending' && run.dispatched_at === null) {
      if (run.attempt === 0) this.evaluateSlot(run, job, now);
      else this.evaluateRetry(run, job, now);
    } else if (run.status === 'running' && run.dispatched_at === null) {
      this.evaluateRetry(run, job, now);
    } else if (run.dispatched_at !== null && run.instance_id === null && !this.pushing.has(`run:${run.id}`) && (run.deadline === null || run.deadline > now)) {
      // A trigger was out when the process stopped and nobody acknowledged it: offer it again
      // (same attempt) once an instance of the role is there.
      const spec = specOf(job);
      const ex = this.execution(run, job, spec, now, run.trigger === 'manual' ? 'manual' : 'retry');
      this.recordExec(run, ex);
      if (ex.action === 'dispatch') this.dispatch(run, job, now, 'redispatch');
      else this.repo.patchRun(run.id, { next_attempt_at: Math.min(run.deadline ?? Infinity, ex.waitUntil ?? now + new JobPlan(spec, undefined).recheckMs(now)) });
    } else if (run.dispatched_at !== null) {
      this.attemptFailed(run, 'lost', `no result before the deadline ${run.deadline === null ? '?' : new Date(run.deadline).toISOString()}`, ACTOR);
    } else {
      this.repo.patchRun(run.id, { next_attempt_at: null });
    }
  }

  /** Layers 1–3 for a slot not dispatched yet. */
  private evaluateSlot(run: RunRow, job: JobRow, now: number): void {
    const spec = specOf(job);
    if (job.enabled !== 1 && run.trigger !== 'manual') {
      this.repo.transition(run, 'skip', 'skipped', { disposition: 'skipped_disabled', last_error: 'the job is disabled', finished_at: now, next_attempt_at: null }, ACTOR);
      return;
    }
    if (now >= (run.window_closes_at ?? Infinity) && !this.queuedBehindOverlap(run, spec)) {
      this.closeWindow(run, job, spec, now);
      return;
    }
    if (now < run.opens_at) {
      this.repo.patchRun(run.id, { next_attempt_at: run.opens_at });
      return;
    }
    // Hard stops first: with the kill switch on or the job paused nothing is dispatched, so
    // upstream systems are not probed for a slot that cannot run (recorded as layer-3 verdicts).
    if (run.trigger !== 'manual') {
      const stop = this.hardStop(job);
      if (stop) {
        this.recordExec(run, { action: 'wait', blocker: stop.name, reason: stop.reason, evidence: { [stop.name]: { verdict: 'not_ready', reason: stop.reason, ...stop.evidence } } });
        this.recheck(run, spec, now);
        return;
      }
    }
    // A run by hand overrides the preconditions unless the operator asked for them.
    const override = run.trigger === 'manual' && this.repo.q.checkGet.get(run.job_id, run.slot, 'manual') !== undefined;
    const results = override ? [] : this.runPreconditions(run, job, spec);
    if (results instanceof Promise) {
      this.evaluating.add(run.id);
      const attempt = run.attempt;
      void this.track(
        results.then(
          (res) => this.afterChecks(run.id, attempt, res),
          (e: unknown) => {
            this.evaluating.delete(run.id);
            this.deps.logger.error('jobs: precondition evaluation failed', { run: run.id, error: String(e) });
          },
        ),
      );
      return;
    }
    this.continueSlot(run, job, spec, results, now);
  }

  private runPreconditions(run: RunRow, job: JobRow, spec: JobSpec, slot = run.slot, slotAt = run.slot_at): CheckOutcome[] | Promise<CheckOutcome[]> {
    const ctx = { slot, slotAt, zone: spec.schedule.timezone ?? 'UTC', role: job.role };
    const outs = spec.preconditions.map((p, i) => evaluatePrecondition(p, i, ctx, { signals: this.deps.signals, hub: this.deps.hub }));
    return outs.some((o) => o instanceof Promise) ? Promise.all(outs) : (outs as CheckOutcome[]);
  }

  private afterChecks(runId: string, attempt: number, results: CheckOutcome[]): void {
    this.evaluating.delete(runId);
    if (this.closed) return;
    try {
      this.write(() => {
        const run = this.repo.q.runById.get(runId);
        if (!run || run.status !== 'pending' || run.dispatched_at !== null || run.attempt !== attempt) return;
        const job = this.repo.maybeJobRow(run.job_id);
        if (!job) return;
        this.continueSlot(run, job, specOf(job), results, this.ctx.clock.now());
      });
    } catch (e) {
      this.deps.logger.error('jobs: continuation failed', { run: runId, error: String(e) });
    }
    this.arm();
  }

  private continueSlot(run: RunRow, job: JobRow, spec: JobSpec, results: CheckOutcome[], now: number): void {
    for (const r of results) this.check(run, 'precondition', r.name, r.verdict, r.reason, { kind: r.kind, ...r.evidence });
    const blocking = results.filter((r) => r.verdict !== 'ready');
    if (now >= (run.window_closes_at ?? Infinity) && (blocking.length > 0 || !this.queuedBehindOverlap(run, spec))) {
      this.closeWindow(run, job, spec, now);
      return;
    }
    if (blocking.length > 0) {
      this.recheck(run, spec, now);
      return;
    }
    const ex = this.execution(run, job, spec, now, run.trigger === 'manual' ? 'manual' : 'slot');
    this.recordExec(run, ex);
    if (ex.action === 'dispatch') this.dispatch(run, job, now, 'first');
    else if (ex.action === 'skip_overlap') {
      this.repo.transition(run, 'skip', 'skipped', { disposition: 'skipped_overlap', last_error: ex.reason, finished_at: now, next_attempt_at: null }, ACTOR, { reason: ex.reason });
    } else this.recheck(run, spec, now, ex.waitUntil);
  }

  /** A retry (or a re-offer of an undelivered attempt) whose due time came. */
  private evaluateRetry(run: RunRow, job: JobRow, now: number): void {
    const spec = specOf(job);
    if (now >= (run.window_closes_at ?? Infinity) && run.trigger !== 'manual') {
      this.finalFail(run, spec, run.error_class ?? 'retryable', `${run.last_error ?? 'the previous attempt failed'}; the window closed before the retry could start`, now, ACTOR);
      return;
    }
    const ex = this.execution(run, job, spec, now, run.trigger === 'manual' ? 'manual' : 'retry');
    this.recordExec(run, ex);
    if (ex.action === 'dispatch') this.dispatch(run, job, now, 'retry');
    else this.recheck(run, spec, now, ex.waitUntil);
  }

  private recheck(run: RunRow, spec: JobSpec, now: number, until?: number): void {
    const plan = new JobPlan(spec, undefined);
    let next = until ?? now + plan.recheckMs(now);
    const close = run.window_closes_at;
    if (close !== null && next > close && !(this.queuedBehindOverlap(run, spec) && until === undefined)) next = close;
    if (next <= now) next = now + 1000;
    this.repo.patchRun(run.id, { next_attempt_at: next, disposition: run.status === 'running' ? 'retry_scheduled' : run.attempt > 0 ? 'retry_scheduled' : 'waiting' });
  }

  private hardStop(job: JobRow): { name: string; reason: string; evidence: Record<string, unknown> } | null {
    const s = this.settings();
    if (s.killSwitch.on) {
      return { name: 'killSwitch', reason: `the kill switch is on (by ${s.killSwitch.by} at ${s.killSwitch.at}: ${s.killSwitch.reason})`, evidence: { ...s.killSwitch } };
    }
    if (job.paused_at !== null) {
      const at = new Date(job.paused_at).toISOString();
      const until = job.paused_until === null ? null : new Date(job.paused_until).toISOString();
      return { name: 'pause', reason: `the job is paused (${pauseWords(job)})`, evidence: { by: job.paused_by, at, reason: job.paused_reason, until, role: job.pause_scope === 'role' ? job.role : null } };
    }
    if (job.enabled !== 1) return { name: 'enabled', reason: 'the job is disabled', evidence: {} };
    return null;
  }

  /** Layer 3: execution conditions (plus ordering and overlap). Pure reads. */
  execution(run: RunRow, job: JobRow, spec: JobSpec, now: number, mode: 'slot' | 'retry' | 'manual' | 'backfill'): ExecVerdict {
    const ev: Record<string, unknown> = {};
    let first: { name: string; reason: string; waitUntil?: number; skip?: boolean } | null = null;
    const note = (name: string, ok: boolean, reason: string, extra: Record<string, unknown> = {}, waitUntil?: number, skip = false) => {
      ev[name] = { verdict: ok ? 'ready' : 'not_ready', reason, ...extra };
      if (!ok && !first) first = { name, reason, ...(waitUntil !== undefined ? { waitUntil } : {}), skip };
    };
    const settings: JobSettings = this.settings();
    note('killSwitch', !settings.killSwitch.on, settings.killSwitch.on ? `the kill switch is on (by ${settings.killSwitch.by}: ${settings.killSwitch.reason})` : 'the kill switch is off');
    if (mode === 'manual') {
      ev.pause = { verdict: 'ready', reason: job.paused_at !== null ? 'the job is paused, but a run by hand is allowed' : 'the job is not paused' };
    } else {
      // A draining pause lets a run already started finish: its retries are not held back.
      const draining = job.paused_at !== null && job.pause_drain === 1 && mode === 'retry';
      const paused = job.paused_at !== null && !draining;
      note(
        'pause',
        !paused,
        paused ? `the job is paused (${pauseWords(job)})` : draining ? `the job is paused (${pauseWords(job)}), but it lets this run, already started, finish` : 'the job is not paused',
      );
    }
    const mw = mode === 'manual' ? null : maintenanceAt(spec, now);
    note('maintenance', mw === null, mw === null ? 'no maintenance window now' : `inside maintenance window ${mw.label} until ${new Date(mw.until).toISOString()}`, {}, mw?.until);

    if (mode === 'slot') {
      // Ordering: backfills and catch-up runs of older slots go first.
      const before: string[] = [];
      if (this.anyBackfill()) {
        for (const b of this.repo.q.dispatchedBackfillsOfJob.all(job.id)) if (b.run_id !== run.id) before.push(`backfill of ${b.slot}`);
        for (const b of this.repo.q.backfillsOfJob.all(job.id)) if (b.tick_run_id === run.id && this.evaluatingBackfills.has(b.id)) before.push(`backfill of ${b.slot} (being checked)`);
      }
      const open = this.repo.q.openRunsOfJob.all(job.id).filter((r) => r.id !== run.id);
      for (const r of open) if (r.trigger === 'catch_up' && r.slot_at < run.slot_at) before.push(`catch-up run of ${r.slot}`);
      // Slots due at the same instant (a DST shift onto the next hour, weekend slots moved to the
      // next workday) open together: they run one after another in slot order, never overlap-skipped.
      for (const r of open) if (r.slot_at === run.slot_at && r.slot < run.slot) before.push(`${r.slot} (due at the same instant)`);
      note('order', before.length === 0, before.length === 0 ? 'no backfill or catch-up of an older slot is in progress' : `waiting for ${before.join(', ')} to finish first`, { before });
      // Overlap with a previous run still in progress.
      const busy = open.filter((r) => r.trigger !== 'catch_up' && r.slot_at !== run.slot_at && (r.status === 'running' || r.dispatched_at !== null));
      if (busy.length === 0 || spec.overlap === 'allow') {
        note('overlap', true, busy.length === 0 ? 'no other run of this job is in progress' : `overlap 'allow': runs alongside ${busy.map((b) => b.slot).join(', ')}`, { inProgress: busy.map((b) => b.slot) });
      } else if (spec.overlap === 'skip') {
        note('overlap', false, `the run of ${busy[0]!.slot} is still ${busy[0]!.status}; overlap 'skip'`, { inProgress: busy.map((b) => b.slot), policy: 'skip' }, undefined, true);
      } else {
        const queued = open.filter((r) => r.status === 'pending' && r.dispatched_at === null && r.attempt === 0 && r.slot_at < run.slot_at);
        if (queued.length > 0) {
          note('overlap', false, `the run of ${busy[0]!.slot} is still ${busy[0]!.status} and ${queued[0]!.slot} already waits behind it; overlap 'queue_one' keeps one`, { inProgress: busy.map((b) => b.slot), queued: queued.map((q) => q.slot), policy: 'queue_one' }, undefined, true);
        } else {
          note('overlap', false, `queued behind the run of ${busy[0]!.slot} (overlap 'queue_one')`, { inProgress: busy.map((b) => b.slot), policy: 'queue_one', queuedBehind: true });
        }
      }
    }
    if (mode !== 'manual') {
      const max = spec.executionConditions.maxConcurrentPerRole;
      if (max !== undefined) {
        const n = this.repo.q.activeCountRole.get(job.role, job.role)!.n;
        note('quotaRole', n < max, `${n} of ${max} runs of role ${job.role} in flight`, { inFlight: n, limit: max });
      }
      const g = settings.globalConcurrency;
      if (g !== null) {
        const n = this.repo.q.activeCount.get()!.n;
        note('quotaGlobal', n < g, `${n} of ${g} job runs in flight (global quota)`, { inFlight: n, limit: g });
      }
    }
    if (mode !== 'manual' && this.deps.budgets) {
      const b = this.deps.budgets.verdict(job.role, now);
      note('budget', b.ok, b.reason, b.evidence);
    }
    const online = this.deps.hub.connectedInstances(job.role).length;
    note('instance', online > 0, online > 0 ? `${online} instance(s) of role ${job.role} online` : `no online instance of role ${job.role}`, { online });
    const f = first as { name: string; reason: string; waitUntil?: number; skip?: boolean } | null;
    if (!f) return { action: 'dispatch', blocker: null, reason: 'all execution conditions pass', evidence: ev };
    return { action: f.skip ? 'skip_overlap' : 'wait', blocker: f.name, reason: f.reason, ...(f.waitUntil !== undefined ? { waitUntil: f.waitUntil } : {}), evidence: ev };
  }

  private recordExec(run: RunRow, ex: ExecVerdict): void {
    this.check(run, 'execution', 'execution', ex.blocker ? 'not_ready' : 'ready', ex.reason, { blocker: ex.blocker, ...ex.evidence });
  }

  /** True when the run waits only because of overlap 'queue_one' (it ignores its window then). */
  private queuedBehindOverlap(run: RunRow, spec: JobSpec): boolean {
    if (spec.overlap !== 'queue_one' || run.status !== 'pending' || run.attempt > 0) return false;
    const c = this.repo.q.checkGet.get(run.job_id, run.slot, 'execution');
    if (!c || c.verdict !== 'not_ready') return false;
    const ev = JSON.parse(c.evidence) as { blocker?: string; overlap?: { queuedBehind?: boolean } };
    // The run it waited for may just have finished: this run is looked at once more (and then
    // dispatched, or closed if something else blocks it now).
    return ev.blocker === 'overlap' && ev.overlap?.queuedBehind === true;
  }

  /** Records a check verdict; audits it when the outcome changed. */
  private check(run: Pick<RunRow, 'job_id' | 'slot' | 'id' | 'trace_id'>, layer: 'time' | 'precondition' | 'execution', name: string, verdict: 'ready' | 'not_ready' | 'error', reason: string, evidence: unknown): void {
    // The first verdict of a check is audited only when it blocks: an on-time run is already told by
    // its claim and dispatch rows. Every later change of verdict is audited.
    const change = this.repo.recordCheck(run.job_id, run.slot, layer, name, verdict, reason, evidence);
    if (change === 'changed' || (change === 'new' && verdict !== 'ready')) {
      this.ctx.audit.append({
        type: 'check.verdict',
        actor: ACTOR,
        subject: `run:${run.id}`,
        detail: { jobId: run.job_id, slot: run.slot, layer, name, verdict, reason },
        traceId: run.trace_id,
      });
    }
  }

  // ---- window close and missed slots -------------------------------------------------------

  /** The slot can no longer start: the last blocker decides what it becomes. */
  private closeWindow(run: RunRow, job: JobRow, spec: JobSpec, now: number): void {
    const checks = this.repo.checks(run.job_id, run.slot);
    const pre = checks.filter((c) => c.layer === 'precondition' && c.verdict !== 'ready');
    const exec = checks.find((c) => c.name === 'execution');
    const blocker = pre.length > 0 ? 'preconditions' : exec && exec.verdict !== 'ready' ? ((exec.evidence as { blocker?: string }).blocker ?? 'execution') : 'unknown';
    const close = new Date(run.window_closes_at ?? now).toISOString();
    let outcome: MissedOutcome;
    if (blocker === 'pause' || blocker === 'killSwitch' || blocker === 'enabled') {
      const disposition = blocker === 'pause' ? 'skipped_paused' : blocker === 'killSwitch' ? 'skipped_kill_switch' : 'skipped_disabled';
      outcome = { status: 'skipped', disposition: disposition as MissedOutcome['disposition'], backfill: false, alert: false, reason: `${exec?.reason ?? blocker} until the window closed at ${close}` };
    } else {
      const why =
        blocker === 'preconditions'
          ? `not ready when the window closed at ${close}: ${pre.map((c) => `${c.name}: ${c.reason}`).join('; ')}`
          : `${exec?.reason ?? 'not dispatched'} when the window closed at ${close}`;
      const notReady = blocker === 'preconditions' || blocker === 'maintenance' || blocker === 'quotaRole' || blocker === 'quotaGlobal' || blocker === 'budget';
      outcome = missedOutcome(spec.missedWindow, why, notReady);
      if (notReady && outcome.disposition === 'missed') {
        const disposition = blocker === 'preconditions' ? 'skipped_not_ready' : blocker === 'maintenance' ? 'skipped_maintenance' : blocker === 'budget' ? 'skipped_budget' : 'skipped_quota';
        outcome = { ...outcome, status: 'skipped', disposition } as MissedOutcome;
      }
    }
    this.applyMissed(run, spec, outcome, now);
  }

  private applyMissed(run: RunRow, spec: JobSpec, o: MissedOutcome | { status: 'skipped' | 'failed'; disposition: string; backfill: boolean; alert: boolean; reason: string }, now: number): RunRow {
    const fields: RunPatch = { disposition: o.disposition as RunRow['disposition'], last_error: o.reason, finished_at: now, next_attempt_at: null };
    const next = o.status === 'failed'
      ? this.repo.transition(run, 'fail', 'failed', fields, ACTOR, { reason: o.reason, policy: spec.missedWindow })
      : this.repo.transition(run, 'skip', 'skipped', fields, ACTOR, { reason: o.reason, policy: spec.missedWindow });
    if (o.backfill) this.enqueueBackfill(next, o.disposition === 'missed' ? 'missed' : 'not_ready', 'queued', ACTOR, o.reason);
    if (o.alert) this.alert(next, o.disposition === 'skipped_not_ready' ? 'not_ready' : 'missed', o.reason);
    this.nudge(run.job_id, run.id);
    return next;
  }

  private alert(run: RunRow, kind: 'missed' | 'not_ready' | 'failed' | 'held' | 'needs_human', message: string): void {
    this.ctx.audit.append({ type: 'run.alert', actor: ACTOR, subject: `run:${run.id}`, detail: { jobId: run.job_id, job: run.job_name, slot: run.slot, kind, message }, traceId: run.trace_id });
    this.ctx.store.emit({ type: 'run.alert', run: toRun(run), kind, message });
  }

  /** Pending runs of the job waiting on ordering/overlap are looked at again now. */
  private nudge(jobId: string, except?: string): void {
    const now = this.ctx.clock.now();
    let any = false;
    for (const r of this.repo.q.openRunsOfJob.all(jobId)) {
      if (r.id === except || r.dispatched_at !== null || r.next_attempt_at === null || r.next_attempt_at <= now) continue;
      if (r.status !== 'pending' || r.attempt > 0) continue;
      this.repo.patchRun(r.id, { next_attempt_at: now });
      any = true;
    }
    if (any) this.soon();
  }

  // ---- dispatch ----------------------------------------------------------------------------

  /**
   * Marks the attempt dispatched (in the caller's transaction) and queues the push for after the
   * commit. `first`: first attempt of a slot; `retry`: attempt + 1; `redispatch`: same attempt again.
   */
  dispatch(run: RunRow, job: JobRow, now: number, kind: 'first' | 'retry' | 'redispatch', actor = ACTOR): RunRow {
    const spec = specOf(job);
    const attempt = kind === 'redispatch' ? Math.max(1, run.attempt) : run.attempt + 1;
    let covers = JSON.parse(run.covers) as string[];
    // Only fold_into_next leaves folded slots behind (a job switched away from it keeps old ones
    // uncovered: they stay folded).
    if (kind === 'first' && spec.missedWindow === 'fold_into_next') {
      const folded = this.repo.q.uncoveredFolded.all(job.id, run.slot_at);
      for (const f of folded) {
        this.repo.update(f, { covered_by: run.id }, 'run.covered', actor, { by: run.id, bySlot: run.slot });
      }
      covers = [...covers, ...folded.map((f) => f.slot)];
    }
    const deadline = now + spec.runTimeoutS * 1000;
    const next = this.repo.update(
      run,
      {
        attempt,
        dispatched_at: now,
        triggered_at: run.triggered_at ?? now,
        deadline,
        next_attempt_at: deadline,
        instance_id: null,
        disposition: 'dispatched',
        covers: JSON.stringify(covers),
        version: job.version,
      },
      'run.dispatch',
      actor,
      { attempt, role: job.role, deadline: new Date(deadline).toISOString(), ...(covers.length ? { covers } : {}), kind },
    );
    const trigger = this.buildTrigger(job, spec, run, attempt, deadline, {
      completedSteps: attempt === 1 && kind === 'first' ? [] : this.repo.completedSteps(run.id),
      trigger: run.trigger,
      covers,
      previousError: attempt > 1 ? run.last_error : null,
    });
    const role = job.role;
    this.outbox.push(() => this.push(`run:${run.id}`, role, trigger, (o) => this.onRunPushOutcome(run.id, attempt, o)));
    return next;
  }

  /** The `job_trigger` body (PROTOCOL fields, then additions) for one attempt of a run. */
  private buildTrigger(
    job: JobRow,
    spec: JobSpec,
    run: RunRow,
    attempt: number,
    deadline: number,
    extra: { completedSteps: string[]; trigger: string; covers: string[]; previousError: string | null; backfillId?: number; approval?: RunApproval },
  ): JobTrigger & Record<string, unknown> {
    return {
      runId: run.id,
      jobId: job.id,
      job: job.name,
      slot: run.slot,
      attempt,
      payload: spec.payload,
      idempotencyKey: run.idempotency_key,
      deadline: new Date(deadline).toISOString(),
      completedSteps: extra.completedSteps,
      version: job.version,
      traceId: run.trace_id,
      // Additions.
      slotAt: new Date(run.slot_at).toISOString(),
      trigger: extra.trigger,
      ...(extra.backfillId !== undefined ? { backfillId: extra.backfillId } : {}),
      ...(extra.covers.length ? { covers: extra.covers } : {}),
      ...(extra.previousError ? { previousError: extra.previousError } : {}),
      ...(extra.approval ? { approval: extra.approval } : {}),
    };
  }

  private push(key: string, role: string, trigger: JobTrigger, onOutcome: (o: TriggerOutcome) => void): void {
    if (this.closed) return;
    this.pushing.add(key);
    // Not tracked by `settled()`: an outcome waits for an agent (or the ack timeout on the clock).
    void this.deps.hub.pushJobTrigger(role, trigger).then(
      (o) => {
        this.pushing.delete(key);
        if (!this.closed) onOutcome(o);
      },
      (e: unknown) => {
        this.pushing.delete(key);
        this.deps.logger.error('jobs: pushJobTrigger failed', { key, error: String(e) });
      },
    );
  }

  private onRunPushOutcome(runId: string, attempt: number, o: TriggerOutcome): void {
    if (o.status === 'acknowledged' || o.reason === 'hub_closed') return;
    try {
      this.write(() => {
        const run = this.repo.q.runById.get(runId);
        if (!run || run.dispatched_at === null || run.attempt !== attempt || run.instance_id !== null) return;
        if (run.status !== 'pending' && run.status !== 'running') return;
        const why = o.reason === 'no_instance' ? `no online instance of role ${this.repo.maybeJobRow(run.job_id)?.role ?? '?'}` : `offered to ${o.offeredTo.join(', ')}; none acknowledged`;
        this.attemptFailed(run, 'undeliverable', `trigger undeliverable: ${why}`, ACTOR);
      });
    } catch (e) {
      this.deps.logger.error('jobs: undeliverable handling failed', { run: runId, error: String(e) });
    }
    this.arm();
  }

  // ---- failures, retries, holds ------------------------------------------------------------

  /** A retryable failure of the current attempt (including lost and undeliverable ones). */
  attemptFailed(run: RunRow, errorClass: RunErrorClass, message: string, actor: string): RunRow {
    const job = this.repo.maybeJobRow(run.job_id);
    const spec = job ? specOf(job) : undefined;
    const now = this.ctx.clock.now();
    if (spec && run.retry_count < run.max_retry) {
      const n = run.retry_count + 1;
      const delayS = retryDelayS(spec.retry, n);
      const at = now + delayS * 1000;
      if (run.trigger === 'manual' || run.window_closes_at === null || at < run.window_closes_at) {
        const next = this.repo.update(
          run,
          { retry_count: n, next_attempt_at: at, dispatched_at: null, deadline: null, instance_id: null, last_error: message, error_class: errorClass, disposition: 'retry_scheduled' },
          'run.retry',
          actor,
          { retry: n, maxRetry: run.max_retry, errorClass, error: message, at: new Date(at).toISOString(), delayS, attempt: run.attempt },
        );
        this.nudge(run.job_id, run.id);
        return next;
      }
      return this.finalFail(run, spec, errorClass, `${message}; retry ${n} would be due at ${new Date(at).toISOString()}, after the window closes`, now, actor);
    }
    return this.finalFail(run, spec, errorClass, `${message}; ${run.max_retry} retr${run.max_retry === 1 ? 'y' : 'ies'} used`, now, actor);
  }

  /** No more retries: failed, and the missed-window policy says what follows. */
  private finalFail(run: RunRow, spec: JobSpec | undefined, errorClass: RunErrorClass, message: string, now: number, actor: string): RunRow {
    const policy = spec?.missedWindow ?? 'skip_and_alert';
    const disposition = policy === 'fold_into_next' ? 'folded' : 'failed';
    const next = this.repo.transition(
      run,
      'fail',
      'failed',
      { disposition, last_error: message, error_class: errorClass, finished_at: now, next_attempt_at: null, dispatched_at: null, deadline: null },
      actor,
      { errorClass, error: message, policy },
    );
    if (policy === 'run_now') this.enqueueBackfill(next, 'failed', 'queued', actor, message);
    this.alert(next, 'failed', message);
    this.nudge(run.job_id, run.id);
    return next;
  }

  /** fatal / needs_human: failed and held for review; never retried automatically. */
  private hold(run: RunRow, errorClass: 'fatal' | 'needs_human' | 'budget', message: string, actor: string): RunRow {
    const now = this.ctx.clock.now();
    const next = this.repo.transition(
      run,
      'fail',
      'failed',
      { disposition: 'held', held: 1, last_error: message, error_class: errorClass, finished_at: now, next_attempt_at: null, dispatched_at: null, deadline: null },
      actor,
      { errorClass, error: message },
    );
    this.enqueueBackfill(next, errorClass, 'held', ACTOR, message);
    this.alert(next, errorClass === 'needs_human' ? 'needs_human' : 'held', message);
    if (errorClass === 'needs_human') {
      this.ctx.audit.append({ type: 'run.needs_human', actor, subject: `run:${run.id}`, detail: { jobId: run.job_id, job: run.job_name, slot: run.slot, error: message }, traceId: run.trace_id });
      this.ctx.store.emit({ type: 'run.needs_human', run: toRun(next), message });
    }
    this.nudge(run.job_id, run.id);
    return next;
  }

  /**
   * A run (or the backfill re-running it) passed its spend cap: the attempt is taken away at once
   * (`run_cancelled`, reason `budget`, after the hold is recorded) and the run is held for the
   * operator (never retried by itself). False when nothing of it is in flight.
   */
  holdForBudget(runId: string, message: string): boolean {
    let taken: string | null = null;
    this.write(() => {
      const run = this.repo.q.runById.get(runId);
      if (!run) return;
      const b = this.repo.q.dispatchedBackfillOfRun.get(run.id);
      if (b) {
        if (b.instance_id === null) return;
        taken = b.instance_id;
        this.backfillAttemptFailed(b, 'budget', message);
        return;
      }
      if (run.status !== 'running' || run.dispatched_at === null || run.instance_id === null) return;
      taken = run.instance_id;
      this.hold(run, 'budget', message, ACTOR);
    });
    if (taken !== null) this.deps.hub.cancelRun(runId, taken, 'budget');
    return taken !== null;
  }

  /** An instance of `role` said hello: runs that wait only for an instance are looked at now. */
  private instanceArrived(role: string): void {
    if (this.closed || !this.started) return;
    const now = this.ctx.clock.now();
    const waiting = this.ctx.db
      .prepare<[string, number], { id: string; job_id: string; slot: string }>(
        `SELECT r.id, r.job_id, r.slot FROM runs r JOIN jobs j ON j.id = r.job_id
         WHERE j.role = ? AND r.status IN ('pending','running') AND r.next_attempt_at > ? AND r.instance_id IS NULL`,
      )
      .all(role, now);
    let any = false;
    this.write(() => {
      for (const w of waiting) {
        const c = this.repo.q.checkGet.get(w.job_id, w.slot, 'execution');
        if (!c || c.verdict !== 'not_ready' || (JSON.parse(c.evidence) as { blocker?: string }).blocker !== 'instance') continue;
        this.repo.patchRun(w.id, { next_attempt_at: now });
        any = true;
      }
    });
    if (any) this.soon();
  }

  /** The instance is gone: its attempts in flight are lost (retryable). */
  instanceGone(instanceId: string, why: string): void {
    if (this.closed || !this.started) return;
    try {
      this.write(() => {
        for (const r of this.repo.q.runsOfInstance.all(instanceId)) this.attemptFailed(r, 'lost', why, ACTOR);
        for (const b of this.repo.q.allDispatchedBackfills.all()) if (b.instance_id === instanceId) this.backfillAttemptFailed(b, 'lost', why);
      });
    } catch (e) {
      this.deps.logger.error('jobs: instance loss handling failed', { instanceId, error: String(e) });
    }
    this.arm();
  }

  // ---- backfills ---------------------------------------------------------------------------

  enqueueBackfill(run: RunRow, reason: string, status: 'queued' | 'held', actor: string, note: string | null): BackfillRow {
    const open = this.repo.q.openBackfillOfRun.get(run.id);
    if (open) return open;
    const now = this.ctx.clock.now();
    const id = Number(this.repo.q.insertBackfill.run(run.job_id, run.slot, run.slot_at, run.id, reason, status, actor, note, now, now).lastInsertRowid);
    if (this.passCache) this.passCache.backfills = true;
    const row = this.repo.backfill(id);
    this.auditBackfill(row, 'backfill.enqueue', actor, { reason, status, note });
    return row;
  }

  auditBackfill(b: BackfillRow, type: string, actor: string, detail: Record<string, unknown> = {}): void {
    const job = this.repo.maybeJobRow(b.job_id);
    const run = this.repo.q.runById.get(b.run_id);
    this.ctx.audit.append({ type, actor, subject: `backfill:${b.id}`, detail: { jobId: b.job_id, slot: b.slot, runId: b.run_id, status: b.status, ...detail }, traceId: run?.trace_id ?? null });
    this.ctx.store.emit({ type: 'backfill.changed', backfill: toBackfill(b, job?.name ?? b.job_id), action: type });
  }

  /** At a tick (a new slot of the job opening): up to the cap of queued backfills, oldest first. */
  private selectBackfills(job: JobRow, spec: JobSpec, tickRun: RunRow, now: number): void {
    if (spec.backfillCapPerTick <= 0 || job.paused_at !== null || !this.anyBackfill() || this.settings().killSwitch.on) return;
    for (const b of this.repo.q.queuedBackfills.all(job.id, spec.backfillCapPerTick)) {
      const row = this.repo.patchBackfill(b.id, { tick_run_id: tickRun.id });
      this.evaluateBackfill(row, job, spec, now, false);
    }
  }

  /** Preconditions of the backfill's own slot, then layer 3; dispatches it when ready. */
  private evaluateBackfill(b: BackfillRow, job: JobRow, spec: JobSpec, now: number, byHand: boolean, actor = ACTOR): void {
    const run = this.repo.run(b.run_id);
    const finish = (results: CheckOutcome[], at: number) => {
      for (const r of results) this.check(run, 'precondition', r.name, r.verdict, r.reason, { kind: r.kind, ...r.evidence, forBackfill: b.id });
      const blocking = results.filter((r) => r.verdict !== 'ready');
      if (blocking.length > 0) {
        this.auditBackfill(b, 'backfill.not_ready', actor, { reasons: blocking.map((r) => `${r.name}: ${r.reason}`) });
        return;
      }
      const ex = this.execution(run, job, spec, at, byHand ? 'manual' : 'backfill');
      if (ex.blocker) {
        this.auditBackfill(b, 'backfill.not_ready', actor, { reasons: [ex.reason] });
        return;
      }
      this.dispatchBackfill(this.repo.backfill(b.id), job, at, actor);
    };
    if (byHand) {
      finish([], now);
      return;
    }
    const results = this.runPreconditions(run, job, spec, b.slot, b.slot_at);
    if (!(results instanceof Promise)) {
      finish(results, now);
      return;
    }
    this.evaluatingBackfills.add(b.id);
    void this.track(
      results.then(
        (res) => {
          this.evaluatingBackfills.delete(b.id);
          if (this.closed) return;
          this.write(() => {
            const cur = this.repo.backfill(b.id);
            const j = this.repo.maybeJobRow(b.job_id);
            if (cur.status !== 'queued' || !j) return;
            finish(res, this.ctx.clock.now());
            this.nudge(b.job_id);
          });
          this.arm();
        },
        () => this.evaluatingBackfills.delete(b.id),
      ),
    );
  }

  dispatchBackfill(b: BackfillRow, job: JobRow, now: number, actor: string): BackfillRow {
    const spec = specOf(job);
    const run = this.repo.run(b.run_id);
    const attempt = run.attempt + 1;
    this.repo.patchRun(run.id, { attempt });
    const deadline = now + spec.runTimeoutS * 1000;
    const row = this.repo.patchBackfill(b.id, {
      status: 'dispatched',
      attempts: b.attempts + 1,
      dispatched_at: now,
      deadline,
      instance_id: null,
      started_at: null,
      version: job.version,
    });
    this.auditBackfill(row, 'backfill.dispatch', actor, { attempt, backfillAttempt: row.attempts, deadline: new Date(deadline).toISOString() });
    const covers = JSON.parse(run.covers) as string[];
    const trigger = this.buildTrigger(job, spec, run, attempt, deadline, {
      completedSteps: this.repo.completedSteps(run.id),
      trigger: 'backfill',
      covers,
      previousError: run.last_error,
      backfillId: b.id,
      ...(b.approval ? { approval: JSON.parse(b.approval) as RunApproval } : {}),
    });
    const role = job.role;
    const dispatches = row.attempts;
    this.outbox.push(() => this.push(`bf:${b.id}`, role, trigger, (o) => this.onBackfillPushOutcome(b.id, dispatches, o)));
    return row;
  }

  private onBackfillPushOutcome(id: number, attempts: number, o: TriggerOutcome): void {
    if (o.status === 'acknowledged' || o.reason === 'hub_closed') return;
    try {
      this.write(() => {
        const b = this.repo.backfill(id);
        if (b.status !== 'dispatched' || b.attempts !== attempts || b.instance_id !== null) return;
        this.backfillAttemptFailed(b, 'undeliverable', `trigger undeliverable (${o.reason})`);
      });
    } catch (e) {
      this.deps.logger.error('jobs: backfill undeliverable handling failed', { id, error: String(e) });
    }
    this.arm();
  }

  backfillAttemptFailed(b: BackfillRow, errorClass: RunErrorClass, message: string): BackfillRow {
    const job = this.repo.maybeJobRow(b.job_id);
    const max = job ? specOf(job).retry.maxAttempts : 1;
    const now = this.ctx.clock.now();
    let row: BackfillRow;
    if ((errorClass === 'retryable' || errorClass === 'lost' || errorClass === 'undeliverable') && b.attempts < max) {
      row = this.repo.patchBackfill(b.id, { status: 'queued', tick_run_id: null, instance_id: null, deadline: null, last_error: message, error_class: errorClass });
      if (this.passCache) this.passCache.backfills = true;
      this.auditBackfill(row, 'backfill.requeue', ACTOR, { errorClass, error: message, attempts: b.attempts, max });
    } else {
      row = this.repo.patchBackfill(b.id, { status: 'failed', finished_at: now, deadline: null, last_error: message, error_class: errorClass });
      this.auditBackfill(row, 'backfill.fail', ACTOR, { errorClass, error: message, attempts: b.attempts });
      const run = this.repo.run(b.run_id);
      this.alert(run, errorClass === 'needs_human' ? 'needs_human' : 'failed', `backfill of ${b.slot} failed: ${message}`);
      if (errorClass === 'needs_human') {
        this.ctx.audit.append({ type: 'run.needs_human', actor: ACTOR, subject: `run:${run.id}`, detail: { jobId: run.job_id, slot: run.slot, error: message, backfillId: b.id }, traceId: run.trace_id });
        this.ctx.store.emit({ type: 'run.needs_human', run: toRun(run), message });
      }
    }
    this.nudge(b.job_id);
    return row;
  }

  /** Marks folded slots covered by `run` as backfilled (after `run` succeeded). */
  private coversDone(run: RunRow, actor: string): void {
    for (const f of this.repo.q.coveredBy.all(run.id)) {
      if (f.disposition === 'backfilled') continue;
      this.repo.update(f, { disposition: 'backfilled' }, 'run.backfilled', actor, { by: run.id, bySlot: run.slot, previous: f.disposition });
    }
  }

  // ---- RunSink (called inside the hub's group commit) --------------------------------------

  runStarted(instanceId: string, req: AgentRequestOf<'run_started'>): object {
    return this.ctx.store.write(() => {
      const run = this.repo.run(req.runId);
      if (run.status === 'success' || run.status === 'failed' || run.status === 'skipped') {
        const b = this.repo.q.dispatchedBackfillOfRun.get(run.id);
        if (!b) throw new GafferError('not_holder', `run ${run.id} is ${run.status} and no backfill of it is dispatched`);
        if (b.instance_id !== null && b.instance_id !== instanceId) throw new GafferError('not_holder', `backfill of run ${run.id} was started by another instance`);
        const row = this.repo.patchBackfill(b.id, { instance_id: instanceId, started_at: this.ctx.clock.now() });
        this.auditBackfill(row, 'backfill.start', instanceId, { instanceId, attempt: run.attempt });
        return {};
      }
      if (run.dispatched_at === null) throw new GafferError('not_holder', `no trigger of run ${run.id} is out (it is waiting for its next attempt)`);
      if (run.instance_id !== null && run.instance_id !== instanceId) throw new GafferError('not_holder', `run ${run.id} was started by another instance`);
      if (run.instance_id === instanceId) return {}; // a repeated run_started
      const now = this.ctx.clock.now();
      if (run.status === 'pending') {
        this.repo.transition(run, 'start', 'running', { instance_id: instanceId, started_at: run.started_at ?? now, disposition: 'running' }, instanceId, { instanceId, attempt: run.attempt });
      } else {
        this.repo.update(run, { instance_id: instanceId, disposition: 'running' }, 'run.attempt_start', instanceId, { instanceId, attempt: run.attempt });
      }
      return {};
    });
  }

  runStep(instanceId: string, req: AgentRequestOf<'run_step'>): object {
    return this.ctx.store.write(() => {
      const run = this.repo.run(req.runId);
      const b = this.repo.q.dispatchedBackfillOfRun.get(run.id);
      const holder = b ? b.instance_id : run.status === 'running' && run.dispatched_at !== null ? run.instance_id : null;
      if (holder !== instanceId) throw new GafferError('not_holder', `instance ${instanceId} does not hold run ${run.id}`);
      const res = this.repo.q.addStep.run(run.id, req.step, req.ref ?? null, run.attempt, instanceId, this.ctx.clock.now());
      if (res.changes > 0) {
        this.ctx.audit.append({ type: 'run.step', actor: instanceId, subject: `run:${run.id}`, detail: { jobId: run.job_id, slot: run.slot, step: req.step, ref: req.ref ?? null, attempt: run.attempt }, traceId: run.trace_id });
      }
      return {};
    });
  }

  runResult(instanceId: string, req: AgentRequestOf<'run_result'>): object {
    const out = this.ctx.store.write(() => {
      const run = this.repo.run(req.runId);
      const b = this.repo.q.dispatchedBackfillOfRun.get(run.id);
      if (b) return this.backfillResult(run, b, instanceId, req);
      if (run.status === 'success' || run.status === 'failed' || run.status === 'skipped') {
        // Only a result that took effect can be repeated. A run that failed with `lost` (deadline,
        // instance gone) ended without one: its holder's attempt was taken away (PROTOCOL §4).
        const byResult = run.status === 'success' || (run.status === 'failed' && (ERROR_CLASSES as readonly string[]).includes(run.error_class ?? ''));
        if (run.instance_id === instanceId && !byResult) {
          throw new GafferError('not_holder', `attempt ${run.attempt} of run ${run.id} was taken away (${run.error_class ?? run.status}); this result is not recorded`);
        }
        const same =
          run.instance_id === instanceId &&
          ((req.outcome === 'success' && run.status === 'success') || (req.outcome === 'failed' && run.status === 'failed' && run.error_class === (req.errorClass ?? 'retryable')));
        if (same) return { run: toRun(run), replayed: true };
        throw new GafferError('invalid_transition', `run ${run.id} is already ${run.status}`);
      }
      if (run.status !== 'running' || run.dispatched_at === null || run.instance_id !== instanceId) {
        throw new GafferError('not_holder', `instance ${instanceId} does not hold run ${run.id} (attempt ${run.attempt})`);
      }
      const now = this.ctx.clock.now();
      const output = req.output === undefined ? null : JSON.stringify(req.output);
      let next: RunRow;
      if (req.outcome === 'success') {
        next = this.repo.transition(
          run,
          'succeed',
          'success',
          { disposition: 'ran', finished_at: now, output, next_attempt_at: null, dispatched_at: null, deadline: null, last_error: run.last_error },
          instanceId,
          { attempt: run.attempt, retryCount: run.retry_count },
        );
        this.coversDone(next, instanceId);
        this.nudge(run.job_id, run.id);
      } else {
        const cls = req.errorClass ?? 'retryable';
        const msg = req.error ?? `the agent reported ${cls} failure`;
        if (output !== null) this.repo.patchRun(run.id, { output });
        const fresh = this.repo.run(run.id);
        next = cls === 'retryable' ? this.attemptFailed(fresh, 'retryable', msg, instanceId) : this.hold(fresh, cls, msg, instanceId);
      }
      return { run: toRun(next) };
    });
    this.soon();
    return out;
  }

  private backfillResult(run: RunRow, b: BackfillRow, instanceId: string, req: AgentRequestOf<'run_result'>): object {
    if (b.instance_id !== instanceId) throw new GafferError('not_holder', `instance ${instanceId} does not hold the backfill of run ${run.id}`);
    const now = this.ctx.clock.now();
    if (req.outcome === 'success') {
      const row = this.repo.patchBackfill(b.id, { status: 'done', finished_at: now, deadline: null });
      this.auditBackfill(row, 'backfill.done', instanceId, { attempt: run.attempt });
      const next = this.repo.update(
        run,
        { disposition: 'backfilled', ...(req.output !== undefined ? { output: JSON.stringify(req.output) } : {}) },
        'run.backfilled',
        instanceId,
        { backfillId: b.id, previous: run.disposition, attempt: run.attempt },
      );
      this.coversDone(next, instanceId);
      this.nudge(run.job_id);
      return { run: toRun(next), backfill: toBackfill(row, run.job_name) };
    }
    const cls = req.errorClass ?? 'retryable';
    const row = this.backfillAttemptFailed(b, cls, req.error ?? `the agent reported ${cls} failure`);
    return { run: toRun(this.repo.run(run.id)), backfill: toBackfill(row, run.job_name) };
  }
}

/** The maintenance window the instant falls in (job zone), if any. */
export function maintenanceAt(spec: JobSpec, now: number): { label: string; until: number } | null {
  const mws = spec.executionConditions.maintenanceWindows;
  if (!mws || mws.length === 0) return null;
  const zone = spec.schedule.timezone ?? 'UTC';
  const { minutes, weekday, date } = localClock(now, zone);
  for (const mw of mws) {
    if (mw.days && !mw.days.includes(weekday)) continue;
    const [sh, sm] = mw.start.split(':').map(Number) as [number, number];
    const [eh, em] = mw.end.split(':').map(Number) as [number, number];
    const s = sh * 60 + sm;
    const e = eh * 60 + em;
    if (minutes >= s && minutes < e) return { label: `${mw.start}–${mw.end}${mw.days ? ` (days ${mw.days.join(',')})` : ''}`, until: localInstant(zone, date, mw.end) };
  }
  return null;
}

/** Who paused the job, when, why and until when, in words (the runner's and the explainer's reasons). */
export function pauseWords(job: Pick<JobRow, 'paused_at' | 'paused_by' | 'paused_reason' | 'paused_until' | 'pause_scope' | 'role'>): string {
  const at = job.paused_at === null ? '?' : new Date(job.paused_at).toISOString();
  const scope = job.pause_scope === 'role' ? `with its role ${job.role}, ` : '';
  const until = job.paused_until === null ? '' : `; until ${new Date(job.paused_until).toISOString()}`;
  return `${scope}by ${job.paused_by} at ${at}: ${job.paused_reason}${until}`;
}
