/**
 * The jobs engine's public face: what the job service (and so the API, the console and the tests)
 * may ask of it. Everything else in engine/ is internal to the engine. Its files stand on floors,
 * each importing only the floors below (docs/architecture.md, "The jobs engine"):
 *
 *   index · runner, by-hand, decisions · slots · evaluate, backfills · dispatch, run-sink · offers ·
 *   checks, facts, outcomes · verdicts, backfill-queue · maintenance, context
 *
 * Invariants:
 * 1. The operations marked "inside `write`" run in the caller's `write` transaction: pushes they
 *    decide leave after its commit, and the runner follows the change (its timer, what is now due).
 */
import { GafferError } from '../../../common/errors';
import { awaitsDecision } from '../run-settlement';
import type { JobSettings, RunApproval } from '../../../common/job-schema';
import type { BackfillRow, JobRow, RunRow } from '../rows';
import type { JobSettingsStore } from '../settings';
import { closeBackfill, requestBackfill, runBackfillNow } from './backfills';
import { cancelRun, jobDisabled, killSwitchOn, runNow, wakeWaiting, type RunNowResult } from './by-hand';
import { approveHeld, holdForBudget, rejectHeld } from './decisions';
import { EngineContext, type EngineDeps } from './context';
import { EngineRunSink } from './run-sink';
import { backfillVerified, isVerifyingBackfill, verified } from './outcomes';
import { runPhase } from '../run-phase';
import { specOf } from '../rows';
import type { VerifyOnFail, VerifySpec } from '../../../common/verify';
import { JobRunner } from './runner';

export type { BudgetGate, EngineDeps, EngineHub } from './context';
export type { RunNowResult } from './by-hand';
export { maintenanceAt } from './maintenance';
export { instanceWords } from './verdicts';

export class JobEngine {
  private readonly e: EngineContext;
  private readonly runner: JobRunner;
  private readonly sink: EngineRunSink;
  private readonly settingsStore: JobSettingsStore;

  constructor(deps: EngineDeps) {
    this.e = new EngineContext(deps);
    this.sink = new EngineRunSink(this.e);
    this.runner = new JobRunner(this.e, this.sink);
    this.settingsStore = deps.settings;
  }

  // ---- lifecycle ----

  start(): void {
    this.runner.start();
  }

  stop(): void {
    this.runner.stop();
  }

  get isStarted(): boolean {
    return this.runner.isStarted;
  }

  /** The instant the runner's timer is armed for (tests, console "next trigger"). */
  get nextWakeAt(): number | undefined {
    return this.runner.nextWakeAt;
  }

  /** Resolves once no asynchronous check or pending push continuation is in flight. */
  settled(): Promise<void> {
    return this.runner.settled();
  }

  /** The safety sweep, by hand (tests). */
  sweep(): void {
    this.runner.sweep();
  }

  /**
   * One transaction of jobs work: pushes it decided leave after its commit (and are dropped if it
   * fails); then the runner follows the change (its timer, anything now due).
   */
  write<T>(fn: () => T): T {
    const v = this.e.write(fn);
    this.runner.wake();
    return v;
  }

  // ---- runs (inside `write`) ----

  /** "Run now" for `job` (the slot the current instant falls in, or `slot`). */
  runNow(job: JobRow, input: { slot?: string; reason: string; actor: string; checkPreconditions: boolean }): RunNowResult {
    return runNow(this.e, job, input.slot, input.reason, input.actor, input.checkPreconditions);
  }

  /** The job was disabled: its slots waiting for an attempt are skipped, its attempts out taken away (runs by hand go on). */
  jobDisabled(jobId: string, why: string, actor: string): void {
    jobDisabled(this.e, jobId, why, actor);
  }

  /** The operator ends a run: its attempt out (or its dispatched backfill's) is taken away (`run_cancelled`: operator). */
  cancelRun(runId: string, reason: string, actor: string): RunRow {
    return cancelRun(this.e, this.e.repo.run(runId), reason, actor);
  }

  /** The job was resumed: its waiting runs are looked at again now. */
  jobResumed(jobId: string): void {
    wakeWaiting(this.e, this.e.repo.openRunsOfJob(jobId));
  }

  /** The instance that may act for the run now (its acknowledged attempt), with the run's attempt, job and role. */
  runHolder(runId: string): { instanceId: string | null; attempt: number; jobId: string; role: string } {
    return this.sink.runHolder(runId);
  }

  // ---- decisions on held runs (inside `write`) ----

  /** A held run is dispatched again (as its backfill), its trigger carrying `approval`. */
  approveRun(runId: string, approval: RunApproval): RunRow {
    return approveHeld(this.e, runId, approval);
  }

  /** The caps of a run's attempts from now on (an approval may raise them). */
  setRunBudget(runId: string, budget: unknown): void {
    this.e.repo.setRunBudget(runId, budget);
  }

  /** A held run stays failed, disposition `rejected`. */
  rejectRun(runId: string, note: string, actor: string): RunRow {
    return rejectHeld(this.e, runId, note, actor);
  }

  /**
   * A run (or the backfill re-running it) passed its spend cap: the attempt is taken away at once
   * and the run held. Its own transaction; false when nothing of the run was in flight.
   */
  holdForBudget(runId: string, message: string): boolean {
    return holdForBudget(this.e, runId, message);
  }

  /**
   * What a run attempt's checks need (PROTOCOL §13): its declaration and reported output, while
   * the attempt is verifying; undefined otherwise.
   */
  verifyingRun(runId: string): { verify: VerifySpec; output: unknown; attempt: number; traceId: string | null } | undefined {
    const run = this.e.repo.maybeRun(runId);
    if (!run) return undefined;
    const b = runPhase(run) === 'finished' ? this.e.backfillRows.dispatchedOfRun(run.id) : undefined;
    if (runPhase(run) !== 'verifying' && !(b && isVerifyingBackfill(b))) return undefined;
    const job = this.e.repo.maybeJobRow(run.job_id);
    const verify = job ? specOf(job).verify : undefined;
    if (!verify) return undefined;
    return { verify, output: run.output === null ? null : JSON.parse(run.output), attempt: run.attempt, traceId: run.trace_id };
  }

  /**
   * Settles a verifying attempt (inside the verifier's write): success, or `onFail` with `error`
   * (`before`: the "already done?" checks). False when it is no longer verifying.
   */
  verified(runId: string, attempt: number, passed: boolean, onFail: VerifyOnFail, error: string, before = false): boolean {
    const run = this.e.repo.maybeRun(runId);
    if (!run || run.attempt !== attempt) return false;
    const b = runPhase(run) === 'finished' ? this.e.backfillRows.dispatchedOfRun(run.id) : undefined;
    if (b && isVerifyingBackfill(b)) backfillVerified(this.e, run, b, passed, onFail, error);
    else if (runPhase(run) === 'verifying') verified(this.e, run, passed, onFail, error, before);
    else return false;
    this.runner.wake();
    return true;
  }

  // ---- backfills (inside `write`) ----

  requestBackfill(job: JobRow, slot: string, reason: string, actor: string): BackfillRow {
    return requestBackfill(this.e, job, slot, reason, actor);
  }

  /**
   * "Retry now" (PROTOCOL §12): a failed run's slot runs again at once as a new attempt of the same
   * run (same slot, idempotency key and completed steps) — the backfill path, queued and dispatched
   * in one step. A held run is the operator's to approve or reject, not to retry.
   */
  retryRun(runId: string, reason: string, actor: string): { backfill: BackfillRow; job: JobRow } {
    const run = this.e.repo.run(runId);
    if (run.status !== 'failed') throw new GafferError('invalid_transition', `run ${run.id} is ${run.status}; only a failed run is retried`);
    if (run.disposition === 'backfilled') throw new GafferError('invalid_transition', `run ${run.id} was backfilled already; its slot ran`);
    if (run.disposition === 'rejected') throw new GafferError('invalid_transition', `run ${run.id} was rejected: its slot is not to run`);
    if (awaitsDecision(run, this.e.backfillRows.ofRun(run.id).at(-1))) throw new GafferError('invalid_transition', `run ${run.id} waits for your decision: approve or reject it`);
    const job = this.e.repo.jobRow(run.job_id);
    const queued = this.e.backfillRows.openOfRun(run.id) ?? requestBackfill(this.e, job, run.slot, reason, actor);
    return { backfill: runBackfillNow(this.e, queued, job, reason, actor), job };
  }

  backfillAction(id: number, action: 'run_now' | 'cancel' | 'mark_done', reason: string, actor: string): { backfill: BackfillRow; job: JobRow } {
    const b = this.e.backfillRows.get(id);
    const job = this.e.repo.jobRow(b.job_id);
    const backfill = action === 'run_now' ? runBackfillNow(this.e, b, job, reason, actor) : closeBackfill(this.e, b, action, reason, actor);
    return { backfill, job };
  }

  // ---- settings (inside `write`) ----

  settings(): JobSettings {
    return this.e.settings();
  }

  /**
   * The global kill switch: turned on, every attempt out is taken away (`run_cancelled`: kill_switch;
   * retried by its policy later) and nothing is dispatched while it stays on; turned off, waiting
   * runs are looked at at once.
   */
  setKillSwitch(on: boolean, reason: string, actor: string): JobSettings {
    const was = this.settingsStore.read().killSwitch.on;
    const next = this.settingsStore.setKillSwitch(on, reason, actor);
    if (on && !was) killSwitchOn(this.e, reason, actor);
    if (!on) wakeWaiting(this.e, this.e.repo.openRuns());
    return next;
  }

  setGlobalConcurrency(limit: number | null, reason: string, actor: string): JobSettings {
    return this.settingsStore.setGlobalConcurrency(limit, reason, actor);
  }

  setLoopBreaker(sameErrorTimes: number, reason: string, actor: string): JobSettings {
    return this.settingsStore.setLoopBreaker(sameErrorTimes, reason, actor);
  }
}
