/**
 * `core.jobs`: the jobs API every other layer uses (HTTP routes, console IPC, tests).
 *
 * Invariants:
 * 1. Every input is validated with zod before anything is written; bad input is `bad_request` and
 *    changes nothing. A job with contradictory settings is refused with `{issues: [{field, message}]}`.
 * 2. Every operator action takes an actor (and a reason where it changes what runs) and is audited in
 *    the same transaction as the change, with a typed event after the commit.
 * 3. An edit bumps the job's version (and stores it in `job_versions`); runs record the version
 *    they ran with.
 * 4. "Run now" keeps one run per slot: it claims the slot if free, else reports the existing run.
 * 5. A facade: runs, backfills and the job settings change only through the engine's public
 *    operations (engine/index.ts); job definitions and calendars are stored through their repos.
 */
import type { VerifyOnFail } from '../../common/verify';
import { z } from 'zod';
import { GafferError } from '../../common/errors';
import { isoTime, isoTimeOrNull } from '../../common/iso-time';
import {
  applyJobPatch,
  backfillActionInput,
  calendarInput,
  calendarReplaceInput,
  concurrencyInput,
  icsImportInput,
  jobPatchInput,
  killSwitchInput,
  listBackfillsInput,
  listJobsInput,
  listRunsInput,
  loopBreakerSettingInput,
  operatorReason,
  requestBackfillInput,
  retryRunInput,
  triggerNowInput,
  type Backfill,
  type BusinessCalendar,
  type CheckRecord,
  type DowntimeSimulation,
  type Explanation,
  type Job,
  type JobIssue,
  type JobSettings,
  type JobSpec,
  type JobSummary,
  type LedgerBucketsResult,
  type LedgerResult,
  type PreviewResult,
  type Run,
  type RunStep,
  type TriggerChoices,
} from '../../common/job-schema';
import type { Page } from '../../common/model';
import { actorName, reason as reasonSchema } from '../../common/schemas';
import { parseOrThrow } from '../../common/validate';
import type { CoreContext } from '../context';
import { newId } from '../ids';
import type { BackfillRepo } from './backfill-repo';
import type { CalendarRepo } from './calendar-repo';
import type { JobEngine } from './engine';
import { ledgerBuckets } from './ledger-buckets';
import { triggerChoices } from './trigger-choices';
import type { JobPlan } from './plan';
import { explain, ledger, preview, simulateDowntime, type InsightDeps } from './insight';
import type { JobRepo } from './repo';
import { specOf, toBackfill, toJob, toRun, type JobRow } from './rows';
import type { Approvals } from './approvals';
import type { Pauses } from './pauses';
import { addedDays, calendarDiff, checkCalendar, mergeImported } from './calendar-edits';
import { parseIcsCalendar, type Calendar } from './schedule';
import { assertValid, validateJobInput } from './validate-job';

export interface ActorOpts {
  actor: string;
  reason?: string;
}

const actorOpts = z.strictObject({ actor: actorName, reason: reasonSchema.optional() });
const instantInput = z.union([z.iso.datetime({ offset: true }), z.number().int().min(0).max(8.64e15)]);
const countInput = z.number().int().min(1).max(1000);

function toMs(v: string | number): number {
  return typeof v === 'number' ? v : Date.parse(v);
}

function encode(v: unknown): string {
  return Buffer.from(JSON.stringify(v)).toString('base64url');
}

function decode<T>(cursor: string, what: string): T {
  try {
    return JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as T;
  } catch {
    throw new GafferError('bad_request', `invalid ${what} cursor "after"`);
  }
}

/** What the job service is built from (createJobs assembles it). */
export interface JobServiceDeps {
  ctx: CoreContext;
  repo: JobRepo;
  backfillRows: BackfillRepo;
  calendars: CalendarRepo;
  engine: JobEngine;
  insight: InsightDeps;
  /** Decisions on held runs (approvals.ts). */
  approvals: Approvals;
  /** Job and role pauses, until a time, draining (pauses.ts). */
  pauses: Pauses;
}

export class JobService {
  private readonly ctx: CoreContext;
  private readonly repo: JobRepo;
  private readonly backfillRows: BackfillRepo;
  private readonly calendars: CalendarRepo;
  private readonly engine: JobEngine;
  private readonly insight: InsightDeps;
  readonly approvals: Approvals;
  readonly pauses: Pauses;

  constructor(deps: JobServiceDeps) {
    this.ctx = deps.ctx;
    this.repo = deps.repo;
    this.backfillRows = deps.backfillRows;
    this.calendars = deps.calendars;
    this.engine = deps.engine;
    this.insight = deps.insight;
    this.approvals = deps.approvals;
    this.pauses = deps.pauses;
  }

  start(): void {
    this.engine.start();
    this.pauses.start();
  }

  stop(): void {
    this.pauses.stop();
    this.engine.stop();
  }

  /** A run past its spend cap: its attempt is taken away at once and the run held (core/budgets). */
  holdForBudget(runId: string, message: string): boolean {
    return this.engine.holdForBudget(runId, message);
  }

  /** A verifying run attempt's declaration and output (core/verify), or undefined. */
  verifyingRun(runId: string) {
    return this.engine.verifyingRun(runId);
  }

  /**
   * Settles a verifying run attempt (core/verify) in one jobs write: `record` keeps the evidence
   * and says the verdict; the attempt moves by it if it is still verifying (true then).
   */
  verified(runId: string, attempt: number, record: () => { passed: boolean; onFail: VerifyOnFail; error: string; before?: boolean }): boolean {
    return this.engine.write(() => {
      const v = record();
      return this.engine.verified(runId, attempt, v.passed, v.onFail, v.error, v.before ?? false);
    });
  }

  /** A job spec's plan (slots and windows) with its calendar applied (the dead-man's switch reads it). */
  planOfSpec(spec: JobSpec): JobPlan {
    return this.repo.planOfSpec(spec);
  }

  /** Resolves once no asynchronous check or push continuation of the runner is in flight (tests). */
  settled(): Promise<void> {
    return this.engine.settled();
  }

  /** The instant the runner's timer is armed for (tests). */
  get nextWakeAt(): number | undefined {
    return this.engine.nextWakeAt;
  }

  private get now(): number {
    return this.ctx.clock.now();
  }

  /** One transaction; pushes decided in it leave after the commit, then the runner follows the change. */
  private write<T>(fn: () => T): T {
    return this.engine.write(fn);
  }

  private calendarOf = (id: string): Calendar | undefined => this.calendars.scheduleCalendar(id);

  private jobEvent(row: JobRow, action: string, actor: string, detail: Record<string, unknown> = {}): Job {
    const job = toJob(row);
    this.ctx.audit.append({ type: `job.${action}`, actor, subject: `job:${row.id}`, detail: { name: row.name, version: row.version, ...detail } });
    this.ctx.store.emit({ type: 'job.changed', job, action, actor });
    return job;
  }

  // ---- jobs --------------------------------------------------------------------------------

  /** Validates a spec without saving it (the editor's live validation). */
  validate(input: unknown): { ok: boolean; issues: JobIssue[]; spec: JobSpec | null } {
    return validateJobInput(input, this.calendarOf, this.now);
  }

  create(input: unknown, opts: ActorOpts): { job: Job; warnings: JobIssue[] } {
    const { actor, reason } = parseOrThrow(actorOpts, opts, 'options');
    const v = validateJobInput(input, this.calendarOf, this.now);
    const spec = assertValid(v);
    return this.write(() => {
      if (this.repo.jobByName(spec.name)) throw new GafferError('conflict', `a job named ${spec.name} already exists`);
      const now = this.now;
      const id = newId('job');
      const next = this.repo.planOfSpec(spec).firstAtOrAfter(now + 1)?.at ?? null;
      this.repo.insertJob({
        id,
        name: spec.name,
        role: spec.role,
        spec: JSON.stringify(spec),
        version: 1,
        enabled: spec.enabled ? 1 : 0,
        cursor: now + 1,
        next_check_at: next,
        created_at: now,
        created_by: actor,
        updated_at: now,
        updated_by: actor,
      });
      this.repo.insertVersion(id, 1, spec, actor, reason ?? null);
      const job = this.jobEvent(this.repo.jobRow(id), 'create', actor, { spec, ...(reason ? { reason } : {}) });
      this.pauses.followRole(id, actor);
      return { job, warnings: v.issues.filter((i) => i.severity === 'warning') };
    });
  }

  update(id: string, patchInput: unknown, opts: ActorOpts): { job: Job; warnings: JobIssue[] } {
    const { actor, reason } = parseOrThrow(actorOpts, opts, 'options');
    const patch = parseOrThrow(jobPatchInput, patchInput, 'job patch');
    const row = this.repo.jobRow(id);
    const before = specOf(row);
    const v = validateJobInput(applyJobPatch(before, patch), this.calendarOf, this.now);
    const spec = assertValid(v);
    return this.write(() => {
      const cur = this.repo.jobRow(row.id);
      if (spec.name !== cur.name && this.repo.jobByName(spec.name)) throw new GafferError('conflict', `a job named ${spec.name} already exists`);
      const version = cur.version + 1;
      const now = this.now;
      const enabledNow = spec.enabled && cur.enabled === 0;
      const cursor = enabledNow ? now + 1 : cur.cursor;
      this.repo.patchJob(cur.id, {
        name: spec.name,
        role: spec.role,
        spec: JSON.stringify(spec),
        version,
        enabled: spec.enabled ? 1 : 0,
        cursor,
        next_check_at: this.repo.planOfSpec(spec).firstAtOrAfter(cursor)?.at ?? null,
        updated_at: now,
        updated_by: actor,
      });
      this.repo.insertVersion(cur.id, version, spec, actor, reason ?? null);
      const changed = Object.keys(patch).filter((k) => JSON.stringify((before as unknown as Record<string, unknown>)[k]) !== JSON.stringify((spec as unknown as Record<string, unknown>)[k]));
      if (!spec.enabled && cur.enabled === 1) this.engine.jobDisabled(cur.id, 'the job was disabled', actor);
      const job = this.jobEvent(this.repo.jobRow(cur.id), 'update', actor, { from: cur.version, to: version, changed, ...(reason ? { reason } : {}) });
      if (spec.role !== cur.role) this.pauses.followRole(cur.id, actor);
      return { job, warnings: v.issues.filter((i) => i.severity === 'warning') };
    });
  }

  get(id: string): Job {
    return toJob(this.repo.jobRow(id));
  }

  /** Jobs ordered by name; `next` is the last name. */
  list(input: unknown = {}): Page<JobSummary> {
    const f = parseOrThrow(listJobsInput, input, 'job filter');
    const limit = f.limit ?? 100;
    const rows = this.repo.listJobs(f, limit);
    const items = rows.slice(0, limit).map((r) => this.summary(r));
    return { items, next: rows.length > limit ? items[items.length - 1]!.name : null };
  }

  private summary(r: JobRow): JobSummary {
    const job = toJob(r);
    let nextSlot: JobSummary['nextSlot'] = null;
    try {
      const n = this.repo.planOf(r).after(this.now);
      if (n) nextSlot = { slot: n.slot, at: isoTime(n.at) };
    } catch {
      nextSlot = null;
    }
    const last = this.repo.lastFinishedRun(r.id);
    return {
      ...job,
      nextSlot,
      lastRun: last ? { id: last.id, slot: last.slot, status: last.status, disposition: last.disposition, finishedAt: isoTimeOrNull(last.finished_at) } : null,
      openBackfills: this.backfillRows.openCountOfJob(r.id),
    };
  }

  /** Pauses the job (optionally until a time, or letting started runs finish): pauses.ts. */
  pause(id: string, input: unknown): Job {
    return this.pauses.pauseJob(id, input);
  }

  resume(id: string, input: unknown): Job {
    return this.pauses.resumeJob(id, input);
  }

  setEnabled(id: string, enabled: boolean, input: unknown): Job {
    const { reason, actor } = parseOrThrow(operatorReason, input, 'enable/disable');
    return this.write(() => {
      const row = this.repo.jobRow(id);
      if ((row.enabled === 1) === enabled) return toJob(row);
      const spec = { ...specOf(row), enabled };
      const now = this.now;
      if (enabled) {
        // Slots while disabled are not caught up: the job starts again from now.
        const next = this.repo.planOf(row, spec).firstAtOrAfter(now + 1)?.at ?? null;
        this.repo.patchJob(row.id, { enabled: 1, spec: JSON.stringify(spec), cursor: now + 1, next_check_at: next, updated_at: now, updated_by: actor });
      } else {
        this.repo.patchJob(row.id, { enabled: 0, spec: JSON.stringify(spec), updated_at: now, updated_by: actor });
        this.engine.jobDisabled(row.id, `the job was disabled by ${actor}: ${reason}`, actor);
      }
      return this.jobEvent(this.repo.jobRow(row.id), enabled ? 'enable' : 'disable', actor, { reason });
    });
  }

  /**
   * "Run now": claims the slot the current instant falls in (or `slot`) and dispatches it at once,
   * overriding the schedule, the pause and (unless `checkPreconditions`) the preconditions. If the
   * slot already has a run, that run is reported (a waiting one is dispatched now) — still one run
   * per slot. Refused while the kill switch is on or the job is disabled.
   */
  triggerNow(id: string, input: unknown): { run: Run; created: boolean; dispatched: boolean; message: string } {
    const { reason, actor, slot, checkPreconditions } = parseOrThrow(triggerNowInput, input, 'trigger');
    const result = this.write(() => this.engine.runNow(this.repo.jobRow(id), { slot, reason, actor, checkPreconditions: !!checkPreconditions }));
    return { ...result, run: toRun(this.repo.run(result.run.id)) };
  }

  /** The slots "run now" can run (the current one first) and what it would do to each; nothing is changed. */
  triggerChoices(id: string): TriggerChoices {
    const job = this.repo.jobRow(id);
    const spec = specOf(job);
    const plan = this.repo.planOf(job, spec);
    const now = this.now;
    const ks = this.engine.settings().killSwitch;
    const refused = ks.on ? `the kill switch is on (by ${ks.by}: ${ks.reason})` : job.enabled !== 1 ? `job ${job.name} is disabled` : null;
    return {
      jobId: job.id,
      job: job.name,
      now: isoTime(now),
      zone: plan.zone,
      choices: triggerChoices(plan, now, (slot) => this.repo.runBySlot(job.id, slot)),
      refused,
      preconditions: spec.preconditions.length,
    };
  }

  // ---- runs --------------------------------------------------------------------------------

  /** Runs, newest slot first; filter by job (id or name), status, disposition, settlement (failed for good, awaiting a decision), slot time [from, to). */
  listRuns(input: unknown = {}): Page<Run> {
    const f = parseOrThrow(listRunsInput, input, 'run filter');
    const limit = f.limit ?? 100;
    let before: [number, string] | undefined;
    if (f.after !== undefined) {
      const [at, rid] = decode<[number, string]>(f.after, 'run');
      if (typeof at !== 'number' || typeof rid !== 'string') throw new GafferError('bad_request', 'invalid run cursor "after"');
      before = [at, rid];
    }
    const rows = this.repo.listRuns(
      {
        jobId: f.job === undefined ? undefined : this.repo.jobRow(f.job).id,
        status: f.status,
        disposition: f.disposition,
        settled: f.settled,
        ...(f.from !== undefined ? { from: toMs(f.from) } : {}),
        ...(f.to !== undefined ? { to: toMs(f.to) } : {}),
        before,
      },
      limit,
    );
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return { items: page.map(toRun), next: rows.length > limit && last ? encode([last.slot_at, last.id]) : null };
  }

  /**
   * The operator ends a run: an open run fails (never retried by itself); an attempt out — the
   * run's own, or its dispatched backfill's — is taken away, its agent told at once (`run_cancelled`,
   * reason `operator`). A finished run with nothing in flight is `invalid_transition`.
   */
  cancelRun(id: string, input: unknown): Run {
    const { reason, actor } = parseOrThrow(operatorReason, input, 'cancel');
    const runId = parseOrThrow(z.string().min(1).max(100), id, 'run id');
    return toRun(this.write(() => this.engine.cancelRun(runId, reason, actor)));
  }

  /** "Retry now": a failed run's slot runs again at once, as a new attempt of the same run (engine `retryRun`). */
  retryRun(id: string, input: unknown): { run: Run; backfill: Backfill } {
    const { reason: why, actor } = parseOrThrow(retryRunInput, input, 'retry');
    const runId = parseOrThrow(z.string().min(1).max(100), id, 'run id');
    return this.write(() => {
      const { backfill, job } = this.engine.retryRun(runId, why ?? 'retried by hand', actor);
      return { run: toRun(this.repo.run(runId)), backfill: toBackfill(backfill, job.name) };
    });
  }

  getRun(id: string): { run: Run; steps: RunStep[]; checks: CheckRecord[]; backfills: Backfill[] } {
    const r = this.repo.run(parseOrThrow(z.string().min(1).max(100), id, 'run id'));
    return {
      run: toRun(r),
      steps: this.repo.steps(r.id),
      checks: this.repo.checks(r.job_id, r.slot),
      backfills: this.backfillRows.ofRun(r.id).map((b) => toBackfill(b, r.job_name)),
    };
  }

  // ---- backfills ---------------------------------------------------------------------------

  listBackfills(input: unknown = {}): Page<Backfill> {
    const f = parseOrThrow(listBackfillsInput, input, 'backfill filter');
    const limit = f.limit ?? 100;
    const rows = this.backfillRows.list({ jobId: f.job === undefined ? undefined : this.repo.jobRow(f.job).id, status: f.status, after: f.after }, limit);
    const page = rows.slice(0, limit);
    return { items: page.map((r) => toBackfill(r, r.job_name)), next: rows.length > limit ? String(page[page.length - 1]!.id) : null };
  }

  /** Puts a finished slot (failed, missed, skipped) in the backfill queue by hand. */
  requestBackfill(jobId: string, input: unknown): Backfill {
    const { slot, reason, actor } = parseOrThrow(requestBackfillInput, input, 'backfill request');
    return this.write(() => {
      const job = this.repo.jobRow(jobId);
      return toBackfill(this.engine.requestBackfill(job, slot, reason, actor), job.name);
    });
  }

  /** Operator actions on the queue: run now, cancel, mark done (each with a reason). */
  backfillAction(id: number, input: unknown): Backfill {
    const { action, reason, actor } = parseOrThrow(backfillActionInput, input, 'backfill action');
    parseOrThrow(z.number().int().positive(), id, 'backfill id');
    return this.write(() => {
      const { backfill, job } = this.engine.backfillAction(id, action, reason, actor);
      return toBackfill(backfill, job.name);
    });
  }

  // ---- calendars ---------------------------------------------------------------------------

  listCalendars(): BusinessCalendar[] {
    return this.calendars.all();
  }

  getCalendar(id: string): BusinessCalendar {
    const c = this.calendars.get(id);
    if (!c) throw new GafferError('not_found', `unknown calendar ${id}`);
    return c;
  }

  createCalendar(input: unknown, opts: ActorOpts): BusinessCalendar {
    const c = parseOrThrow(calendarInput, input, 'calendar');
    const { actor, reason } = parseOrThrow(actorOpts, opts, 'options');
    checkCalendar(c);
    return this.write(() => {
      if (this.calendars.get(c.id)) throw new GafferError('conflict', `calendar ${c.id} already exists; use PUT /calendars/${c.id}`);
      this.calendars.insert(c, actor, this.now);
      return this.calendarChanged(c.id, 'create', actor, { reason: reason ?? null, holidays: c.holidays.length, extraWorkdays: c.extraWorkdays.length });
    });
  }

  updateCalendar(id: string, input: unknown, opts: ActorOpts): BusinessCalendar {
    const body = parseOrThrow(calendarReplaceInput, input, 'calendar');
    const { actor, reason } = parseOrThrow(actorOpts, opts, 'options');
    const c = { id, ...body };
    checkCalendar(c);
    return this.write(() => {
      const before = this.calendars.get(id);
      if (!before) throw new GafferError('not_found', `unknown calendar ${id}`);
      this.calendars.replace(c, actor, this.now);
      return this.calendarChanged(id, 'update', actor, { reason: reason ?? null, ...calendarDiff(before, c) });
    });
  }

  /** Imports holidays and make-up workdays from .ics text into a calendar (merge or replace). */
  importIcs(id: string, input: unknown, opts: ActorOpts): { calendar: BusinessCalendar; warnings: string[]; added: { holidays: number; extraWorkdays: number } } {
    const { ics, mode, timezone } = parseOrThrow(icsImportInput, input, 'ics import');
    const { actor, reason } = parseOrThrow(actorOpts, opts, 'options');
    const before = this.getCalendar(id);
    let data;
    try {
      data = parseIcsCalendar(ics, { timezone: timezone ?? before.timezone });
    } catch (e) {
      throw new GafferError('bad_request', `cannot import the .ics file: ${(e as Error).message}`);
    }
    const c = mergeImported(before, data, mode ?? 'merge');
    checkCalendar(c);
    const calendar = this.write(() => {
      this.calendars.replace(c, actor, this.now);
      return this.calendarChanged(id, 'import_ics', actor, { reason: reason ?? null, mode: mode ?? 'merge', warnings: data.warnings.slice(0, 20), ...calendarDiff(before, c) });
    });
    return { calendar, warnings: data.warnings, added: addedDays(before, c) };
  }

  private calendarChanged(id: string, action: string, actor: string, detail: Record<string, unknown>): BusinessCalendar {
    const calendar = this.calendars.get(id)!;
    this.ctx.audit.append({ type: `calendar.${action}`, actor, subject: `calendar:${id}`, detail: { version: calendar.version, ...detail } });
    this.ctx.store.emit({ type: 'calendar.changed', calendar, action });
    // Every job using it: its next slot is computed again (a new holiday can move it).
    const now = this.now;
    for (const j of this.repo.jobsUsingCalendar(id)) {
      try {
        this.repo.patchJob(j.id, { next_check_at: this.repo.planOf(j).firstAtOrAfter(Math.max(j.cursor, now + 1))?.at ?? null });
      } catch {
        /* the job stays as it was; the runner reports it */
      }
    }
    return calendar;
  }

  // ---- settings ----------------------------------------------------------------------------

  settings(): JobSettings {
    return this.engine.settings();
  }

  /** The global kill switch: while on, nothing is dispatched (audited as `operator.kill_switch`). */
  setKillSwitch(input: unknown): JobSettings {
    const { on, reason, actor } = parseOrThrow(killSwitchInput, input, 'kill switch');
    return this.write(() => this.engine.setKillSwitch(on, reason, actor));
  }

  /** Most job runs in flight at once across all jobs (`null`: no limit). */
  setGlobalConcurrency(input: unknown): JobSettings {
    const { limit, reason, actor } = parseOrThrow(concurrencyInput, input, 'concurrency');
    return this.write(() => this.engine.setGlobalConcurrency(limit, reason, actor));
  }

  /** The loop breaker's count for tasks and job runs (PROTOCOL §14; 0 turns it off). */
  setLoopBreaker(input: unknown): JobSettings {
    const { sameErrorTimes, reason, actor } = parseOrThrow(loopBreakerSettingInput, input, 'loop breaker');
    return this.write(() => this.engine.setLoopBreaker(sameErrorTimes, reason, actor));
  }

  // ---- insight -----------------------------------------------------------------------------

  /** Why did / will the job (not) run at `at`: the slot, and each layer's verdict with evidence. */
  explain(id: string, at: string | number = this.now): Explanation {
    const t = toMs(parseOrThrow(instantInput, at, 'instant "at"'));
    return explain(this.insight, this.repo.jobRow(id), t, this.now);
  }

  /** The ledger of [from, to) counted by local day or hour of the job's zone (default: the last 6 weeks to a week ahead). */
  ledgerBuckets(id: string, input: { from?: string | number; to?: string | number; by?: 'day' | 'hour' } = {}): LedgerBucketsResult {
    const f = parseOrThrow(z.strictObject({ from: instantInput.optional(), to: instantInput.optional(), by: z.enum(['day', 'hour']).optional() }), input, 'ledger range');
    const to = f.to === undefined ? this.now + 7 * 86_400_000 : toMs(f.to);
    const from = f.from === undefined ? to - 49 * 86_400_000 : toMs(f.from);
    if (!(to > from)) throw new GafferError('bad_request', '"to" must be after "from"');
    if (to - from > 400 * 86_400_000) throw new GafferError('bad_request', 'a ledger range is at most 400 days');
    return ledgerBuckets(this.insight, this.repo.jobRow(id), from, to, f.by ?? 'day', this.now);
  }

  /** The next `count` slots of a saved job (by id/name) or of an unsaved spec (the editor). */
  preview(jobOrSpec: string | unknown, count = 10, after?: string | number): PreviewResult {
    const n = parseOrThrow(countInput, count, 'count');
    const from = after === undefined ? this.now : toMs(parseOrThrow(instantInput, after, 'instant "after"'));
    let spec: JobSpec;
    let issues: JobIssue[] = [];
    if (typeof jobOrSpec === 'string') spec = specOf(this.repo.jobRow(jobOrSpec));
    else {
      const v = validateJobInput(jobOrSpec, this.calendarOf, this.now);
      issues = v.issues;
      const scheduleBroken = !v.spec || v.issues.some((i) => i.severity === 'error' && (i.field.startsWith('schedule') || i.field.startsWith('window') || i.field === 'calendar'));
      if (scheduleBroken || !v.spec) return { items: [], issues, timezone: v.spec?.schedule.timezone ?? 'UTC', truncated: false, next: null };
      spec = v.spec;
    }
    const plan = this.repo.planOfSpec(spec);
    return { ...preview(plan, from, n), issues, timezone: plan.zone };
  }

  /** Every expected slot in [from, to) merged with run rows and backfills. */
  ledger(id: string, input: { from?: string | number; to?: string | number; limit?: number } = {}): LedgerResult {
    const f = parseOrThrow(z.strictObject({ from: instantInput.optional(), to: instantInput.optional(), limit: z.number().int().min(1).max(5000).optional() }), input, 'ledger range');
    const to = f.to === undefined ? this.now + 86_400_000 : toMs(f.to);
    const from = f.from === undefined ? to - 8 * 86_400_000 : toMs(f.from);
    if (!(to > from)) throw new GafferError('bad_request', '"to" must be after "from"');
    if (to - from > 400 * 86_400_000) throw new GafferError('bad_request', 'a ledger range is at most 400 days');
    return ledger(this.insight, this.repo.jobRow(id), from, to, f.limit ?? 1000, this.now);
  }

  /** What each slot would get if Gaffer were off from `from` to `to` (nothing is changed). */
  simulateDowntime(id: string, from: string | number, to: string | number): DowntimeSimulation {
    const a = toMs(parseOrThrow(instantInput, from, '"from"'));
    const b = toMs(parseOrThrow(instantInput, to, '"to"'));
    if (!(b > a)) throw new GafferError('bad_request', '"to" must be after "from"');
    if (b - a > 400 * 86_400_000) throw new GafferError('bad_request', 'a downtime is simulated for at most 400 days');
    return simulateDowntime(this.insight, this.repo.jobRow(id), a, b);
  }

  // ---- for the console dashboard (JobsConsolePort) -------------------------------------------

  /** The instance that may act for the run now (its acknowledged attempt), with the run's attempt, job and role. */
  runHolder(runId: string): { instanceId: string | null; attempt: number; jobId: string; role: string } {
    return this.engine.runHolder(runId);
  }

  /** Runs the operator must act on: held or failed backfills, plus queued ones. */
  runsNeedingAttention(): number {
    return this.backfillRows.needingAttention();
  }

  /** Upcoming triggers (next slot of every enabled job), soonest first. */
  nextTriggers(now: number = this.now, limit = 10): Array<{ jobId: string; job: string; slot: string; at: string }> {
    const out: Array<{ jobId: string; job: string; slot: string; at: string }> = [];
    for (const r of this.repo.enabledJobsByNextCheck(200)) {
      try {
        const n = this.repo.planOf(r).after(now);
        if (n && n.disposition === 'due') out.push({ jobId: r.id, job: r.name, slot: n.slot, at: isoTime(n.at) });
      } catch {
        /* skip */
      }
    }
    return out.sort((a, b) => (a.at < b.at ? -1 : 1)).slice(0, limit);
  }

  /** Whether the kill switch is on (the console's JobsConsolePort). */
  killSwitch(): boolean {
    return this.engine.settings().killSwitch.on;
  }
}
