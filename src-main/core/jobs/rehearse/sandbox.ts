/**
 * The throw-away world one scenario runs in: an in-memory database (all migrations), its own event
 * bus, store, audit log, instance registry and signals, a stepping clock, the scripted hub and the
 * scripted preconditions — and the REAL jobs module (`createJobs`: service, engine, runner) on top.
 * A "Gaffer process" is one `createJobs` + `start()`; a restart stops it and builds a new one on
 * the same database, so recovery after a restart is the engine's own.
 *
 * Invariants:
 * 1. Nothing here touches the live database, the network or a process: the database is
 *    `:memory:`, the hub is scripted (scripted-hub.ts), preconditions are scripted
 *    (scripted-checks.ts), and the gap detector is never started (the rehearsal's time is stepped,
 *    it does not jump).
 * 2. What happened is what the engine wrote: the timeline is read from this database's audit log
 *    (as it is appended), plus the scenario's own remarks (downtime, the agent vanishing).
 * 3. Time moves only in `runUntil`, one due instant at a time; after each step the engine's
 *    asynchronous work (its `soon` passes, check continuations, offer outcomes) settles before time
 *    moves on.
 */
import type { SchedulerConfig } from '../../../common/config';
import type { BusinessCalendar, JobSpecInput } from '../../../common/job-schema';
import type { Logger } from '../../../common/logger';
import type { RehearsalEventKind } from '../../../common/rehearsal';
import { AuditLog } from '../../audit/audit-store';
import type { CoreContext } from '../../context';
import { openDatabase, type Db } from '../../db/open';
import { Store } from '../../db/store';
import { EventBus } from '../../events';
import { InstanceRegistry } from '../../instances';
import { Signals } from '../../signals';
import { ClaimLocks, prepareTaskRepo } from '../../tasks';
import { Late } from '../../wiring';
import { GapDetector } from '../../time/gap-detector';
import { createJobs, type JobService } from '..';
import { scriptedPreconditions, type Evaluation, type Readiness } from './scripted-checks';
import { ScriptedHub, type AgentScript, type Annotate } from './scripted-hub';
import { SteppingClock } from './stepping-clock';
import { normaliseError } from '../../../common/error-signature';
import type { RunLoopBreaker } from '../engine/context';

export const REHEARSAL_ACTOR = 'rehearsal';

/** Steps one scenario may take before it is cut short (a policy that never settles). */
const MAX_STEPS = 40_000;

/** One line of what happened: an audit row of the throw-away database, or a remark of the scenario. */
export type FeedItem =
  | { source: 'audit'; at: number; type: string; subject: string; detail: Record<string, unknown> }
  | { source: 'note'; at: number; kind: RehearsalEventKind; detail: string; slot?: string; attempt?: number };

export interface SandboxOptions {
  /** The job as the operator wrote it (already validated against the live calendars). */
  spec: JobSpecInput;
  /** The job's calendar, copied from the live database. */
  calendar?: BusinessCalendar;
  config: SchedulerConfig;
  /** Where the world's clock starts. */
  start: number;
  readiness: Readiness;
  script: AgentScript;
  stepMs: number;
  ackMs: number;
  /** The loop breaker's count (the live setting; PROTOCOL §14). */
  sameErrorTimes: number;
  /** What Gaffer's own checks find (PROTOCOL §13), scripted; absent: a job's checks are not run and `done` is taken as said. */
  checksPass?: (slot: string, attempt: number) => boolean;
}

export class Sandbox {
  readonly clock: SteppingClock;
  readonly feed: FeedItem[] = [];
  readonly evaluations: Evaluation[] = [];
  readonly hub: ScriptedHub;
  /** Problems the engine logged (a rehearsal says so rather than hiding them). */
  readonly engineErrors: string[] = [];
  jobId = '';
  /** True when the scenario hit MAX_STEPS. */
  cutShort = false;
  private readonly db: Db;
  private readonly ctx: CoreContext;
  private readonly instances: InstanceRegistry;
  private readonly signals: Signals;
  private readonly logger: Logger;
  private jobs: JobService | undefined;
  /** The last Gaffer process's service (reads after the rehearsal, also when it ended down). */
  private lastJobs: JobService | undefined;
  private starts = 0;
  private scripted = 0;

  constructor(private readonly opts: SandboxOptions) {
    this.clock = new SteppingClock(opts.start);
    const clock = this.clock;
    const errors = this.engineErrors;
    const logger: Logger = {
      info: () => {},
      warn: () => {},
      error: (msg, fields) => void errors.push(fields ? `${msg} ${JSON.stringify(fields)}` : msg),
    };
    this.logger = logger;
    this.db = openDatabase(':memory:');
    const events = new EventBus((e) => errors.push(`event listener failed: ${String(e)}`));
    const store = new Store(this.db, events, () => {}, false, () => clock.now());
    const audit = new AuditLog(this.db, store, clock);
    const gaps = new GapDetector({ clock, store, audit, config: opts.config, logger });
    this.ctx = { db: this.db, store, audit, clock: gaps.wakeups, config: opts.config, events, gaps };
    // The same modules as createCore's, with what a rehearsal contributes said outright: no role
    // pause or spend cap closes a claim (the scripted agents take job runs, never tasks).
    const noClaimGate = Late.of('a claim gate', 'the task board', () => false, 'the rehearsal');
    this.instances = new InstanceRegistry(this.ctx, new ClaimLocks(this.ctx, prepareTaskRepo(this.db), noClaimGate, () => null /* no loop breaker: nothing reports here */));
    this.signals = new Signals(this.ctx);
    events.on('audit.appended', ({ event }) => {
      this.feed.push({ source: 'audit', at: Date.parse(event.at), type: event.type, subject: event.subject, detail: (event.detail ?? {}) as Record<string, unknown> });
    });
    // Done means verified (PROTOCOL §13), scripted: an attempt moved to verifying is settled one
    // step later by what the scenario says the checks find, through the engine's real path.
    if (opts.checksPass) {
      const pass = opts.checksPass;
      events.on('run.updated', ({ run }) => {
        if (run.disposition !== 'verifying') return;
        this.at(this.clock.now() + opts.stepMs, () => this.settleChecks(run.id, run.slot, run.attempt, pass(run.slot, run.attempt)));
      });
    }
    this.hub = new ScriptedHub({
      clock,
      instances: this.instances,
      events,
      config: opts.config,
      script: opts.script,
      note: this.note,
      stepMs: opts.stepMs,
      ackMs: opts.ackMs,
      restartGaffer: (forMs) => this.restart(forMs),
    });
  }

  /** The same error again and again holds the run, as live (core/budgets/loop-breaker.ts), its streaks kept in memory. */
  private readonly streaks = new Map<string, { signature: string; count: number }>();
  private readonly breaker: RunLoopBreaker = {
    runFailed: (run, error, times = this.opts.sameErrorTimes) => {
      const signature = normaliseError(error);
      const before = this.streaks.get(run.id);
      const count = before && before.signature === signature ? before.count + 1 : 1;
      this.streaks.set(run.id, { signature, count });
      return times > 0 && count >= times ? count : 0;
    },
    runSucceeded: (runId) => void this.streaks.delete(runId),
  };

  /** The scripted checks of a verifying attempt ended: the engine moves the run as `onFail` says. */
  private settleChecks(runId: string, slot: string, attempt: number, passed: boolean): void {
    const jobs = this.jobs;
    if (!jobs) return; // Gaffer is down: its next start leaves the attempt verifying (as a real stop does)
    const names = (this.opts.spec.verify?.checks ?? []).map((c) => c.name);
    const onFail = this.opts.spec.verify?.onFail ?? 'retry';
    const error = passed ? '' : `verification failed: ${names[0] ?? 'check'}: the work is not there (scripted)`;
    this.note('check', passed ? `Gaffer checks the work itself: ${names.join(', ')} pass` : `Gaffer checks the work itself: the agent said done, but “${names[0] ?? 'check'}” fails (onFail: ${onFail})`, { slot, attempt });
    jobs.verified(runId, attempt, () => ({ passed, onFail, error }));
  }

  /** A remark of the scenario, in the timeline at the current instant. */
  readonly note: Annotate & ((kind: RehearsalEventKind, detail: string, about?: { slot?: string; attempt?: number }) => void) = (kind, detail, about = {}) => {
    this.feed.push({ source: 'note', at: this.clock.now(), kind, detail, ...about });
  };

  /** The jobs service of the Gaffer process running now, or of the last one (for reading the rows). */
  get service(): JobService {
    const s = this.jobs ?? this.lastJobs;
    if (!s) throw new Error('Gaffer never started in this rehearsal');
    return s;
  }

  get isUp(): boolean {
    return this.jobs !== undefined;
  }

  /** Starts a Gaffer process on the database; the first start saves the calendar and the job. */
  startGaffer(): void {
    const first = this.starts++ === 0;
    if (!first) {
      this.note('gaffer', 'Gaffer starts again on the same database');
      // What createCore's start does: sockets of the previous process are gone.
      this.instances.disconnectAll('Gaffer restarted');
    }
    const jobs = createJobs({
      ctx: this.ctx,
      hub: this.hub,
      signals: this.signals,
      instances: this.instances,
      logger: this.logger,
      // No spend caps in a rehearsal, and no inbox for a decision to close.
      budgets: null,
      decisions: { decided: () => {} },
      preconditions: scriptedPreconditions(() => this.clock.now(), this.opts.readiness, (e) => this.evaluations.push(e)),
      // The loop breaker as the live engine has it (no inbox here: the hold is what a rehearsal shows).
      breaker: this.breaker,
      // Only where the scenario scripts what the checks find (and the job declares some).
      ...(this.opts.checksPass && this.opts.spec.verify ? { verify: { open: () => {}, checkedBefore: () => true } } : {}),
    });
    if (first) {
      const c = this.opts.calendar;
      if (c) jobs.createCalendar({ id: c.id, name: c.name, timezone: c.timezone, workdays: c.workdays, holidays: c.holidays, extraWorkdays: c.extraWorkdays }, { actor: REHEARSAL_ACTOR });
      this.jobId = jobs.create({ ...this.opts.spec, enabled: true }, { actor: REHEARSAL_ACTOR }).job.id;
    }
    this.jobs = jobs;
    this.lastJobs = jobs;
    jobs.start();
    this.hub.gafferStarted(first);
  }

  /** Gaffer's process stops (its sockets close with it). */
  stopGaffer(): void {
    if (!this.jobs) return;
    this.note('gaffer', 'Gaffer stops');
    this.jobs.stop();
    this.jobs = undefined;
    this.hub.gafferStopped();
  }

  /** Stops Gaffer now and starts it again `forMs` later. */
  restart(forMs: number): void {
    this.stopGaffer();
    this.at(this.clock.now() + forMs, () => this.startGaffer());
  }

  /** Does `fn` at the wall instant `at` (a scripted moment of the scenario). */
  at(at: number, fn: () => void): void {
    this.scripted++;
    this.clock.setTimeout(() => {
      this.scripted--;
      fn();
    }, at - this.clock.now());
  }

  /** Scripted moments still ahead (downtime, restarts). */
  get scriptedAhead(): number {
    return this.scripted;
  }

  /** Lets time pass up to `until`, one due instant at a time, or until `done()` says the story is told. */
  async runUntil(until: number, done: () => boolean = () => false): Promise<void> {
    await this.settle();
    for (let steps = 0; ; steps++) {
      if (steps >= MAX_STEPS) {
        this.cutShort = true;
        return;
      }
      const now = this.clock.now();
      if (now >= until || done()) return;
      const due = this.clock.nextDueAt();
      this.clock.advanceTo(due === undefined ? until : Math.max(now, Math.min(due, until)));
      await this.settle();
    }
  }

  /** Waits for the engine's asynchronous work at this instant (real event-loop turns, no time). */
  private async settle(): Promise<void> {
    for (let i = 0; i < 3; i++) {
      await this.jobs?.settled();
      await new Promise((r) => setImmediate(r));
    }
  }

  close(): void {
    this.jobs?.stop();
    this.jobs = undefined;
    this.db.close();
  }
}
