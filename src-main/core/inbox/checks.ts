/**
 * Inbox items no single event announces, found by looking: a role's queue stuck with no instance
 * online, and the dead-man's switch (a job whose slot did not start by the end of its window, for
 * any reason — a trigger nobody acknowledged, a slot folded away, Gaffer not running or a stuck
 * scheduler). Also wakes snoozed items at their time.
 *
 * Invariants:
 * 1. Checks run every `sweepIntervalS` on the core's `wakeups` clock (a gap is applied before
 *    they decide), the first one a sweep after start: by then the runner has decided what it found
 *    on starting (its first pass runs inside `start`).
 * 2. The dead-man's switch is independent of the runner's policies: it reads the job's plan and
 *    the run rows. A slot counts once its latest start has passed; a run that never started is an
 *    occurrence unless it was skipped on purpose (calendar, DST, overlap, pause, kill switch,
 *    disabled) — a slot folded into the next run or backfilled later still did not start in its
 *    window, and that is what the switch is for. A slot the runner has not decided is
 *    an occurrence only when it is still undecided a full sweep of monotonic time later (after a
 *    sleep the runner gets its chance first).
 * 3. Slot occurrences share one key space, `slot:<job>:<slot>`, with the runner's missed and
 *    skipped alerts: a slot already reported as missed is never reported again as dead.
 * 4. `inbox_watch.checked_to` remembers how far each job was looked at, so a restart neither
 *    re-checks old slots nor skips new ones.
 * 5. A range row (the older slots of a long gap decided alike, jobs/slot-walk.ts) is looked at
 *    once, as its first slot; the look goes on after its last: a day slept through by an
 *    every-second job costs one look, not 86 400.
 */
import type { TimerHandle } from '../../common/clock';
import { recoveryBoundS } from '../../common/config';
import type { JobSpec } from '../../common/job-schema';
import type { Logger } from '../../common/logger';
import type { CoreContext } from '../context';
import type { Disposable } from '../events';
import { InstantTimer } from '../time/instant-timer';
import type { JobPlan } from '../jobs';
import type { Inbox } from './inbox';
import { prepareCheckStatements, type JobFacts } from './store';

/** Dispositions of a slot that did not start on purpose. */
const ON_PURPOSE = new Set(['skipped_calendar', 'skipped_dst', 'skipped_overlap', 'skipped_paused', 'skipped_kill_switch', 'skipped_disabled']);
/** How far back the dead-man's switch looks for a job it never looked at (a new job starts at its creation). */
const FIRST_LOOK_BACK_MS = 8 * 86_400_000;
/** Slots looked at per job per check (a long outage is worked off over several checks). */
const SLOTS_PER_CHECK = 500;

export interface InboxChecksDeps {
  ctx: CoreContext;
  inbox: Inbox;
  logger: Logger;
  /** A job spec's plan with its calendar applied (the jobs module). */
  planOf(spec: JobSpec): JobPlan;
  /** More looks at every sweep (spend caps reached, runs past their cap), each guarded. */
  sweeps?: Array<{ name: string; run(): void }>;
}

export class InboxChecks {
  private sweep: TimerHandle | undefined;
  private readonly wake: InstantTimer;
  private running = false;
  private listeners: Disposable[] = [];
  /** Undecided slots (`job|slot`) → monotonic instant first seen undecided (invariant 2). */
  private readonly undecided = new Map<string, number>();
  private readonly q;

  constructor(private readonly deps: InboxChecksDeps) {
    this.wake = new InstantTimer(deps.ctx.clock, () => {
      this.guard('snooze', () => this.deps.inbox.wakeDue());
      this.armWake();
    });
    this.q = prepareCheckStatements(deps.ctx.db);
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.listeners.push(this.deps.ctx.events.on('clock.jumped', () => this.armWake()));
    this.armSweep();
    this.armWake();
  }

  stop(): void {
    this.running = false;
    this.sweep?.cancel();
    this.sweep = undefined;
    this.wake.cancel();
    for (const l of this.listeners.splice(0)) l.dispose();
  }

  private get sweepMs(): number {
    return this.deps.ctx.config.sweepIntervalS * 1000;
  }

  private armSweep(): void {
    if (!this.running) return;
    this.sweep = this.deps.ctx.clock.setTimeout(() => {
      this.sweep = undefined;
      this.runAll();
      this.armSweep();
    }, this.sweepMs);
  }

  /** Re-arms the snooze timer on the earliest wake-up (after a snooze, a wake, a clock jump). */
  armWake(): void {
    if (this.running) this.wake.set(this.deps.inbox.nextWake());
  }

  /** Every check once (the sweep; tests call it directly). */
  runAll(): void {
    this.guard('snooze', () => this.deps.inbox.wakeDue());
    this.guard('stuck queues', () => this.stuckQueues());
    this.guard('dead-man', () => this.deadMan());
    for (const s of this.deps.sweeps ?? []) this.guard(s.name, () => s.run());
    this.armWake();
  }

  private guard(what: string, fn: () => void): void {
    try {
      fn();
    } catch (e) {
      this.deps.logger.error(`inbox: the ${what} check failed; it runs again at the next sweep`, { error: e instanceof Error ? e.message : String(e) });
    }
  }

  // ---- stuck queues ---------------------------------------------------------------------------

  /**
   * A role with claimable tasks and no instance online, for longer than the recovery bound: one
   * occurrence per episode (keyed by when an instance of the role was last seen, or — if none ever
   * was — by its oldest ready task).
   */
  stuckQueues(): void {
    const now = this.deps.ctx.clock.now();
    const boundMs = recoveryBoundS(this.deps.ctx.config) * 1000;
    const ready = this.q.readyByRole.all();
    // A stuck role whose ready tasks are all gone (taken elsewhere, cancelled): its item resolves.
    // (An instance coming online resolves it at once: sources.ts.)
    const waiting = new Set(ready.map((r) => `role:${r.role}`));
    for (const { subject } of this.q.liveStuck.all()) {
      if (!waiting.has(subject)) this.deps.inbox.resolve('stuck_queue', subject, `no task of role ${subject.slice('role:'.length)} waits any more`);
    }
    for (const r of ready) {
      const inst = this.q.roleInstances.get(r.role);
      if ((inst?.online ?? 0) > 0) continue;
      const oldestAt = this.q.taskCreated.get(r.oldest)?.created_at ?? now;
      const lastSeen = inst?.last_seen ?? null;
      const since = Math.max(oldestAt, lastSeen ?? -Infinity);
      if (now - since < boundMs) continue;
      const key = lastSeen !== null ? `stuck:${r.role}:seen:${lastSeen}` : `stuck:${r.role}:task:${r.oldest}`;
      this.deps.inbox.raise({
        key,
        kind: 'stuck_queue',
        subject: `role:${r.role}`,
        about: { role: r.role },
        entry: { ready: r.ready, oldestTaskId: r.oldest, waitedS: Math.round((now - oldestAt) / 1000), lastSeen: lastSeen === null ? null : new Date(lastSeen).toISOString() },
      });
    }
  }

  // ---- dead-man's switch ------------------------------------------------------------------------

  deadMan(): void {
    // One transaction for the whole look (each job a savepoint inside it): a thousand jobs moving
    // their watch on every sweep must not cost a thousand fsyncs on the thread that triggers jobs.
    this.deps.ctx.store.write(() => {
      for (const job of this.q.jobs.all()) this.guard(`dead-man (${job.name})`, () => this.deadManJob(job));
    });
  }

  private deadManJob(job: JobFacts): void {
    const now = this.deps.ctx.clock.now();
    const mono = this.deps.ctx.clock.monotonic();
    const start = this.q.watch.get(job.id)?.checked_to ?? Math.max(job.created_at, now - FIRST_LOOK_BACK_MS);
    // Inside a range row (the older slots of a long gap, jobs/slot-walk.ts): its slots were decided,
    // and reported, with its first one. Going on after it keeps the look O(1) per range, not per slot.
    const inside = this.q.rangeAfterStart.get(job.id, start, start);
    const from = inside ? inside.range_last_at + 1 : start;
    const plan = this.deps.planOf(JSON.parse(job.spec) as JobSpec);
    const { entries } = plan.slotsLimited(from, now + 1, SLOTS_PER_CHECK);
    let checkedTo = from;
    for (let k = 0; k < entries.length; k++) {
      const occ = entries[k]!;
      const run = this.q.runBySlot.get(job.id, occ.slot);
      if (occ.disposition === 'due') {
        const w = plan.windowOf(occ, entries[k + 1]);
        if (w.latestStart > now) break; // it may still start
        const undecided = run ? (run.status === 'pending' || run.status === 'running') && run.started_at === null : occ.at >= job.cursor;
        const key = `${job.id}|${occ.slot}`;
        if (undecided) {
          const seen = this.undecided.get(key);
          if (seen === undefined) this.undecided.set(key, mono);
          if (seen === undefined || mono - seen < this.sweepMs) break; // the runner gets a full sweep first
        }
        this.undecided.delete(key);
        if (undecided || (run && run.started_at === null && !ON_PURPOSE.has(run.disposition))) {
          this.deps.inbox.raise({
            key: `slot:${job.id}:${occ.slot}`,
            kind: 'dead_man',
            subject: `job:${job.id}`,
            about: { jobId: job.id, job: job.name },
            entry: {
              slot: occ.slot,
              runId: run?.id ?? null,
              disposition: run?.disposition ?? null,
              latestStart: new Date(w.latestStart).toISOString(),
              reason: undecided ? 'the scheduler had not decided the slot a sweep after its window closed (Gaffer busy, stopped or stuck)' : (run?.last_error ?? `it ended ${run?.disposition}`),
            },
          });
        }
      }
      checkedTo = occ.at + 1;
      // A range row: the next look starts after its last slot.
      if (run?.range_last_at != null) {
        checkedTo = run.range_last_at + 1;
        break;
      }
    }
    if (checkedTo !== start) this.deps.ctx.store.write(() => this.q.putWatch.run(job.id, checkedTo));
  }
}
