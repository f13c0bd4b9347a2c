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
 */
import { z } from 'zod';
import { GafferError } from '../../common/errors';
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
  operatorReason,
  requestBackfillInput,
  totalRetryDelayS,
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
  type LedgerResult,
  type PreviewResult,
  type Run,
  type RunStep,
} from '../../common/job-schema';
import type { Page } from '../../common/model';
import { actorName, reason as reasonSchema } from '../../common/schemas';
import { parseOrThrow } from '../../common/validate';
import type { CoreContext } from '../context';
import { newId } from '../context';
import type { Hub } from '../hub/hub';
import { explain, ledger, preview, simulateDowntime, type InsightDeps } from './insight';
import { JobPlan } from './plan';
import { JobRepo, slotRunBase, specOf, toBackfill, toJob, toRun, type BackfillRow, type JobRow, type RunRow } from './repo';
import type { Approvals } from './approvals';
import type { Pauses } from './pauses';
import type { JobRunner } from './runner';
import { parseIcsCalendar, validateCalendar, type Calendar } from './schedule';
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

export class JobService {
  private readonly insight: InsightDeps;

  constructor(
    private readonly ctx: CoreContext,
    readonly repo: JobRepo,
    readonly runner: JobRunner,
    private readonly hub: Hub,
    signals: InsightDeps['signals'],
    /** Decisions on held runs (approvals.ts). */
    readonly approvals: Approvals,
    /** Job and role pauses, until a time, draining (pauses.ts). */
    readonly pauses: Pauses,
  ) {
    this.insight = { db: ctx.db, repo, signals, onlineCount: (role) => hub.connectedInstances(role).length };
  }

  start(): void {
    this.runner.start();
    this.pauses.start();
  }

  stop(): void {
    this.pauses.stop();
    this.runner.stop();
  }

  private get now(): number {
    return this.ctx.clock.now();
  }

  private write<T>(fn: () => T): T {
    const v = this.ctx.store.write(fn);
    // Pushes queued by the runner leave after the commit; then the timer follows the change.
    this.runner.tick();
    return v;
  }

  private calendarOf = (id: string): Calendar | undefined => this.repo.scheduleCalendar(id);

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
      if (this.repo.q.jobByName.get(spec.name)) throw new GafferError('conflict', `a job named ${spec.name} already exists`);
      const now = this.now;
      const id = newId('job');
      const plan = new JobPlan(spec, spec.calendar ? this.calendarOf(spec.calendar) : undefined);
      const next = plan.firstAtOrAfter(now + 1)?.at ?? null;
      this.repo.q.insertJob.run({
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
      this.repo.q.insertVersion.run(id, 1, JSON.stringify(spec), now, actor, reason ?? null);
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
      if (spec.name !== cur.name && this.repo.q.jobByName.get(spec.name)) throw new GafferError('conflict', `a job named ${spec.name} already exists`);
      const version = cur.version + 1;
      const now = this.now;
      const plan = new JobPlan(spec, spec.calendar ? this.calendarOf(spec.calendar) : undefined);
      const enabledNow = spec.enabled && cur.enabled === 0;
      const cursor = enabledNow ? now + 1 : cur.cursor;
      this.repo.patchJob(cur.id, {
        name: spec.name,
        role: spec.role,
        spec: JSON.stringify(spec),
        version,
        enabled: spec.enabled ? 1 : 0,
        cursor,
        next_check_at: plan.firstAtOrAfter(cursor)?.at ?? null,
        updated_at: now,
        updated_by: actor,
      });
      this.repo.q.insertVersion.run(cur.id, version, JSON.stringify(spec), now, actor, reason ?? null);
      const changed = Object.keys(patch).filter((k) => JSON.stringify((before as unknown as Record<string, unknown>)[k]) !== JSON.stringify((spec as unknown as Record<string, unknown>)[k]));
      if (!spec.enabled && cur.enabled === 1) this.skipPending(cur.id, 'skipped_disabled', 'the job was disabled', actor);
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
    const where: string[] = [];
    const params: Array<string | number> = [];
    if (f.role !== undefined) {
      where.push('role = ?');
      params.push(f.role);
    }
    if (f.enabled !== undefined) {
      where.push('enabled = ?');
      params.push(f.enabled ? 1 : 0);
    }
    if (f.paused !== undefined) where.push(f.paused ? 'paused_at IS NOT NULL' : 'paused_at IS NULL');
    if (f.after !== undefined) {
      where.push('name > ?');
      params.push(f.after);
    }
    const rows = this.ctx.db
      .prepare<unknown[], JobRow>(`SELECT * FROM jobs ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY name LIMIT ?`)
      .all(...params, limit + 1);
    const items = rows.slice(0, limit).map((r) => this.summary(r));
    return { items, next: rows.length > limit ? items[items.length - 1]!.name : null };
  }

  private summary(r: JobRow): JobSummary {
    const job = toJob(r);
    let nextSlot: JobSummary['nextSlot'] = null;
    try {
      const spec = specOf(r);
      const n = new JobPlan(spec, spec.calendar ? this.calendarOf(spec.calendar) : undefined).after(this.now);
      if (n) nextSlot = { slot: n.slot, at: new Date(n.at).toISOString() };
    } catch {
      nextSlot = null;
    }
    const last = this.repo.q.lastRun.get(r.id);
    return {
      ...job,
      nextSlot,
      lastRun: last ? { id: last.id, slot: last.slot, status: last.status, disposition: last.disposition, finishedAt: last.finished_at === null ? null : new Date(last.finished_at).toISOString() } : null,
      openBackfills: this.repo.q.openBackfillCount.get(r.id)!.n,
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
      const spec = specOf(row);
      spec.enabled = enabled;
      const now = this.now;
      if (enabled) {
        // Slots while disabled are not caught up: the job starts again from now.
        const plan = new JobPlan(spec, spec.calendar ? this.calendarOf(spec.calendar) : undefined);
        this.repo.patchJob(row.id, { enabled: 1, spec: JSON.stringify(spec), cursor: now + 1, next_check_at: plan.firstAtOrAfter(now + 1)?.at ?? null, updated_at: now, updated_by: actor });
      } else {
        this.repo.patchJob(row.id, { enabled: 0, spec: JSON.stringify(spec), updated_at: now, updated_by: actor });
        this.skipPending(row.id, 'skipped_disabled', `the job was disabled by ${actor}: ${reason}`, actor);
      }
      return this.jobEvent(this.repo.jobRow(row.id), enabled ? 'enable' : 'disable', actor, { reason });
    });
  }

  private skipPending(jobId: string, disposition: 'skipped_disabled', why: string, actor: string): void {
    for (const r of this.repo.q.openRunsOfJob.all(jobId)) {
      if (r.status !== 'pending' || r.dispatched_at !== null || r.trigger === 'manual') continue;
      this.repo.transition(r, 'skip', 'skipped', { disposition, last_error: why, finished_at: this.now, next_attempt_at: null }, actor, { reason: why });
    }
  }

  /**
   * "Run now": claims the slot the current instant falls in (or `slot`) and dispatches it at once,
   * overriding the schedule, the pause and (unless `checkPreconditions`) the preconditions. If the
   * slot already has a run, that run is reported (a waiting one is dispatched now) — still one run
   * per slot. Refused while the kill switch is on or the job is disabled.
   */
  triggerNow(id: string, input: unknown): { run: Run; created: boolean; dispatched: boolean; message: string } {
    const { reason, actor, slot: wanted, checkPreconditions } = parseOrThrow(triggerNowInput, input, 'trigger');
    const result = this.ctx.store.write(() => {
      const job = this.repo.jobRow(id);
      const spec = specOf(job);
      const settings = this.repo.settings();
      if (settings.killSwitch.on) throw new GafferError('conflict', `the kill switch is on (by ${settings.killSwitch.by}: ${settings.killSwitch.reason}); nothing is dispatched`);
      if (job.enabled !== 1) throw new GafferError('conflict', `job ${job.name} is disabled; enable it first`);
      const plan = new JobPlan(spec, spec.calendar ? this.calendarOf(spec.calendar) : undefined);
      const now = this.now;
      let occ;
      if (wanted !== undefined) {
        try {
          occ = plan.find(wanted);
        } catch (e) {
          throw new GafferError('bad_request', (e as Error).message);
        }
        if (!occ) throw new GafferError('bad_request', `${wanted} is not a slot of job ${job.name}`);
      } else {
        occ = plan.slots(now - 400 * 86_400_000, now + 1).pop() ?? plan.after(now);
        if (!occ) throw new GafferError('conflict', `job ${job.name} has no slot to run`);
      }
      this.ctx.audit.append({ type: 'job.trigger', actor, subject: `job:${job.id}`, detail: { name: job.name, slot: occ.slot, reason, checkPreconditions: !!checkPreconditions } });
      const existing = this.repo.q.runBySlot.get(job.id, occ.slot);
      if (existing) {
        if (existing.status === 'pending' && existing.dispatched_at === null && existing.attempt === 0) {
          const run = this.repo.update(existing, { trigger: 'manual' }, 'run.trigger_now', actor, { reason });
          if (checkPreconditions) {
            this.repo.patchRun(run.id, { next_attempt_at: now });
            return { run: this.repo.run(run.id), created: false, dispatched: false, message: `slot ${occ.slot} was waiting; it is checked now and runs once its preconditions pass` };
          }
          return this.dispatchByHand(run, job, reason, actor, now, false);
        }
        return { run: existing, created: false, dispatched: false, message: `slot ${occ.slot} already has run ${existing.id} (${existing.status}, ${existing.disposition}); one run per slot — use the backfill queue to run it again` };
      }
      const w = plan.windowOf(occ);
      // A manual run keeps its retries: its window stays open long enough for all of them.
      const retrySpan = totalRetryDelayS(spec.retry) * 1000;
      const run = this.repo.claim(
        {
          ...slotRunBase(job, occ, spec.retry.maxAttempts),
          trigger: 'manual',
          nextAttemptAt: checkPreconditions ? now : null,
          opensAt: Math.min(now, w.opensAt),
          windowClosesAt: Math.max(w.latestStart, now + retrySpan + 1000),
        },
        actor,
        { reason, local: occ.local },
      );
      if (checkPreconditions) return { run, created: true, dispatched: false, message: `slot ${occ.slot} claimed by hand; it runs once its preconditions pass` };
      return this.dispatchByHand(run, job, reason, actor, now, true);
    });
    this.runner.tick();
    return { ...result, run: toRun(this.repo.run(result.run.id)) };
  }

  /** Dispatches a claimed run by hand now, or — with no instance of the role online — as soon as one says hello. */
  private dispatchByHand(run: RunRow, job: JobRow, reason: string, actor: string, now: number, created: boolean): { run: RunRow; created: boolean; dispatched: boolean; message: string } {
    this.repo.recordCheck(run.job_id, run.slot, 'execution', 'manual', 'ready', `run by hand by ${actor}: ${reason} (schedule, pause and preconditions overridden)`, { override: true, reason, actor });
    if (this.hub.connectedInstances(job.role).length === 0) {
      const why = `no online instance of role ${job.role}`;
      this.repo.recordCheck(run.job_id, run.slot, 'execution', 'execution', 'not_ready', why, { blocker: 'instance', instance: { verdict: 'not_ready', reason: why, online: 0 } });
      const r = this.repo.patchRun(run.id, { next_attempt_at: now + 60_000, disposition: 'waiting' });
      return { run: r, created, dispatched: false, message: `slot ${run.slot} claimed by hand; ${why}: it is dispatched as soon as one says hello` };
    }
    this.repo.recordCheck(run.job_id, run.slot, 'execution', 'execution', 'ready', `run by hand by ${actor}: ${reason}`, { blocker: null, manual: { verdict: 'ready', reason, actor } });
    const d = this.runner.dispatch(run, job, now, 'first', actor);
    return { run: d, created, dispatched: true, message: `slot ${run.slot} ${created ? 'claimed and ' : ''}dispatched by hand` };
  }

  // ---- runs --------------------------------------------------------------------------------

  /** Runs, newest slot first; filter by job (id or name), status, disposition. */
  listRuns(input: unknown = {}): Page<Run> {
    const f = parseOrThrow(listRunsInput, input, 'run filter');
    const limit = f.limit ?? 100;
    const where: string[] = [];
    const params: Array<string | number> = [];
    if (f.job !== undefined) {
      where.push('job_id = ?');
      params.push(this.repo.jobRow(f.job).id);
    }
    if (f.status !== undefined) {
      where.push('status = ?');
      params.push(f.status);
    }
    if (f.disposition !== undefined) {
      where.push('disposition = ?');
      params.push(f.disposition);
    }
    if (f.after !== undefined) {
      const [at, rid] = decode<[number, string]>(f.after, 'run');
      if (typeof at !== 'number' || typeof rid !== 'string') throw new GafferError('bad_request', 'invalid run cursor "after"');
      where.push('(slot_at < ? OR (slot_at = ? AND id < ?))');
      params.push(at, at, rid);
    }
    const rows = this.ctx.db
      .prepare<unknown[], RunRow>(`SELECT * FROM runs ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY slot_at DESC, id DESC LIMIT ?`)
      .all(...params, limit + 1);
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return { items: page.map(toRun), next: rows.length > limit && last ? encode([last.slot_at, last.id]) : null };
  }

  getRun(id: string): { run: Run; steps: RunStep[]; checks: CheckRecord[]; backfills: Backfill[] } {
    const r = this.repo.run(parseOrThrow(z.string().min(1).max(100), id, 'run id'));
    return {
      run: toRun(r),
      steps: this.repo.steps(r.id),
      checks: this.repo.checks(r.job_id, r.slot),
      backfills: this.repo.q.backfillsOfRun.all(r.id).map((b) => toBackfill(b, r.job_name)),
    };
  }

  // ---- backfills ---------------------------------------------------------------------------

  listBackfills(input: unknown = {}): Page<Backfill> {
    const f = parseOrThrow(listBackfillsInput, input, 'backfill filter');
    const limit = f.limit ?? 100;
    const where: string[] = [];
    const params: Array<string | number> = [];
    if (f.job !== undefined) {
      where.push('b.job_id = ?');
      params.push(this.repo.jobRow(f.job).id);
    }
    if (f.status !== undefined) {
      where.push('b.status = ?');
      params.push(f.status);
    }
    if (f.after !== undefined) {
      where.push('b.id > ?');
      params.push(f.after);
    }
    const rows = this.ctx.db
      .prepare<unknown[], BackfillRow & { job_name: string }>(
        `SELECT b.*, j.name AS job_name FROM backfills b JOIN jobs j ON j.id = b.job_id ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY b.id LIMIT ?`,
      )
      .all(...params, limit + 1);
    const page = rows.slice(0, limit);
    return { items: page.map((r) => toBackfill(r, r.job_name)), next: rows.length > limit ? String(page[page.length - 1]!.id) : null };
  }

  /** Puts a finished slot (failed, missed, skipped) in the backfill queue by hand. */
  requestBackfill(jobId: string, input: unknown): Backfill {
    const { slot, reason, actor } = parseOrThrow(requestBackfillInput, input, 'backfill request');
    return this.write(() => {
      const job = this.repo.jobRow(jobId);
      const run = this.repo.q.runBySlot.get(job.id, slot);
      if (!run) throw new GafferError('not_found', `slot ${slot} of job ${job.name} has no run to backfill`);
      if (run.status === 'pending' || run.status === 'running') throw new GafferError('invalid_transition', `run ${run.id} is still ${run.status}`);
      if (run.status === 'success') throw new GafferError('invalid_transition', `run ${run.id} succeeded; there is nothing to backfill`);
      if (this.repo.q.openBackfillOfRun.get(run.id)) throw new GafferError('conflict', `slot ${slot} is already in the backfill queue`);
      return toBackfill(this.runner.enqueueBackfill(run, 'operator', 'queued', actor, reason), job.name);
    });
  }

  /** Operator actions on the queue: run now, cancel, mark done (each with a reason). */
  backfillAction(id: number, input: unknown): Backfill {
    const { action, reason, actor } = parseOrThrow(backfillActionInput, input, 'backfill action');
    parseOrThrow(z.number().int().positive(), id, 'backfill id');
    return this.write(() => {
      const b = this.repo.backfill(id);
      const job = this.repo.jobRow(b.job_id);
      const now = this.now;
      switch (action) {
        case 'run_now': {
          if (b.status === 'dispatched' || b.status === 'done' || b.status === 'cancelled') {
            throw new GafferError('invalid_transition', `backfill ${id} is ${b.status}`);
          }
          const s = this.repo.settings();
          if (s.killSwitch.on) throw new GafferError('conflict', 'the kill switch is on; nothing is dispatched');
          const row = this.repo.patchBackfill(id, { note: reason });
          this.runner.auditBackfill(row, 'backfill.run_now', actor, { reason, from: b.status });
          return toBackfill(this.runner.dispatchBackfill(this.repo.patchBackfill(id, { status: 'queued' }), job, now, actor), job.name);
        }
        case 'cancel':
        case 'mark_done': {
          if (b.status === 'done' || b.status === 'cancelled') throw new GafferError('invalid_transition', `backfill ${id} is already ${b.status}`);
          if (b.status === 'dispatched') throw new GafferError('invalid_transition', `backfill ${id} is in flight; wait for its result`);
          const status = action === 'cancel' ? 'cancelled' : 'done';
          const row = this.repo.patchBackfill(id, { status, note: reason, finished_at: now });
          this.runner.auditBackfill(row, `backfill.${action}`, actor, { reason, from: b.status });
          if (action === 'mark_done') {
            const run = this.repo.run(b.run_id);
            this.repo.update(run, { disposition: 'backfilled' }, 'run.backfilled', actor, { reason, previous: run.disposition, byHand: true });
          }
          return toBackfill(row, job.name);
        }
      }
    });
  }

  // ---- calendars ---------------------------------------------------------------------------

  listCalendars(): BusinessCalendar[] {
    return this.repo.calendars();
  }

  getCalendar(id: string): BusinessCalendar {
    const c = this.repo.calendar(id);
    if (!c) throw new GafferError('not_found', `unknown calendar ${id}`);
    return c;
  }

  private checkCalendar(c: Calendar): void {
    const issues = validateCalendar(c, '').filter((i) => i.severity === 'error');
    if (issues.length) throw new GafferError('bad_request', `invalid calendar at "${issues[0]!.field}": ${issues[0]!.message}`, { issues });
  }

  createCalendar(input: unknown, opts: ActorOpts): BusinessCalendar {
    const c = parseOrThrow(calendarInput, input, 'calendar');
    const { actor, reason } = parseOrThrow(actorOpts, opts, 'options');
    this.checkCalendar(c);
    return this.write(() => {
      if (this.repo.calendar(c.id)) throw new GafferError('conflict', `calendar ${c.id} already exists; use PUT /calendars/${c.id}`);
      this.repo.q.insertCalendar.run(this.calendarParams(c, actor));
      return this.calendarChanged(c.id, 'create', actor, { reason: reason ?? null, holidays: c.holidays.length, extraWorkdays: c.extraWorkdays.length });
    });
  }

  updateCalendar(id: string, input: unknown, opts: ActorOpts): BusinessCalendar {
    const body = parseOrThrow(calendarReplaceInput, input, 'calendar');
    const { actor, reason } = parseOrThrow(actorOpts, opts, 'options');
    const c = { id, ...body };
    this.checkCalendar(c);
    return this.write(() => {
      const before = this.repo.calendar(id);
      if (!before) throw new GafferError('not_found', `unknown calendar ${id}`);
      this.repo.q.updateCalendar.run(this.calendarParams(c, actor));
      return this.calendarChanged(id, 'update', actor, { reason: reason ?? null, ...this.calendarDiff(before, c) });
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
    const merge = (mode ?? 'merge') === 'merge';
    const extra = new Set(merge ? [...before.extraWorkdays, ...data.extraWorkdays] : data.extraWorkdays);
    const holidays = new Set([...(merge ? before.holidays : []), ...data.holidays].filter((d) => !extra.has(d)));
    const c = { id, name: before.name, timezone: before.timezone, workdays: before.workdays, holidays: [...holidays].sort(), extraWorkdays: [...extra].sort() };
    this.checkCalendar(c);
    const calendar = this.write(() => {
      this.repo.q.updateCalendar.run(this.calendarParams(c, actor));
      return this.calendarChanged(id, 'import_ics', actor, { reason: reason ?? null, mode: mode ?? 'merge', warnings: data.warnings.slice(0, 20), ...this.calendarDiff(before, c) });
    });
    return {
      calendar,
      warnings: data.warnings,
      added: { holidays: c.holidays.filter((d) => !before.holidays.includes(d)).length, extraWorkdays: c.extraWorkdays.filter((d) => !before.extraWorkdays.includes(d)).length },
    };
  }

  private calendarParams(c: Calendar, actor: string) {
    return {
      id: c.id,
      name: c.name,
      timezone: c.timezone,
      workdays: JSON.stringify([...new Set(c.workdays)].sort()),
      holidays: JSON.stringify([...new Set(c.holidays)].sort()),
      extra_workdays: JSON.stringify([...new Set(c.extraWorkdays)].sort()),
      now: this.now,
      actor,
    };
  }

  private calendarDiff(a: Calendar, b: Calendar): Record<string, unknown> {
    const diff = (x: string[], y: string[]) => ({ added: y.filter((d) => !x.includes(d)).slice(0, 50), removed: x.filter((d) => !y.includes(d)).slice(0, 50) });
    return { holidays: diff(a.holidays, b.holidays), extraWorkdays: diff(a.extraWorkdays, b.extraWorkdays), workdays: { from: a.workdays, to: b.workdays } };
  }

  private calendarChanged(id: string, action: string, actor: string, detail: Record<string, unknown>): BusinessCalendar {
    const calendar = this.repo.calendar(id)!;
    this.ctx.audit.append({ type: `calendar.${action}`, actor, subject: `calendar:${id}`, detail: { version: calendar.version, ...detail } });
    this.ctx.store.emit({ type: 'calendar.changed', calendar, action });
    // Every job using it: its next slot is computed again (a new holiday can move it).
    const now = this.now;
    for (const j of this.repo.q.jobsByCalendar.all(id)) {
      const spec = specOf(j);
      try {
        const plan = new JobPlan(spec, this.calendarOf(id));
        this.repo.patchJob(j.id, { next_check_at: plan.firstAtOrAfter(Math.max(j.cursor, now + 1))?.at ?? null });
      } catch {
        /* the job stays as it was; the runner reports it */
      }
    }
    return calendar;
  }

  // ---- settings ----------------------------------------------------------------------------

  settings(): JobSettings {
    return this.repo.settings();
  }

  /** The global kill switch: while on, nothing is dispatched (audited as `operator.kill_switch`). */
  setKillSwitch(input: unknown): JobSettings {
    const { on, reason, actor } = parseOrThrow(killSwitchInput, input, 'kill switch');
    return this.write(() => {
      const s = this.repo.settings();
      const before = s.killSwitch.on;
      const next: JobSettings = { ...s, killSwitch: { on, reason, by: actor, at: new Date(this.now).toISOString() } };
      this.repo.putSettings(next);
      this.ctx.audit.append({ type: 'operator.kill_switch', actor, subject: 'settings:killSwitch', detail: { reason, from: before, to: on } });
      this.ctx.store.emit({ type: 'jobs.settings', settings: next, actor });
      if (!on) for (const r of this.repo.q.allOpenRuns.all()) if (r.dispatched_at === null && r.next_attempt_at !== null) this.repo.patchRun(r.id, { next_attempt_at: this.now });
      return next;
    });
  }

  /** Most job runs in flight at once across all jobs (`null`: no limit). */
  setGlobalConcurrency(input: unknown): JobSettings {
    const { limit, reason, actor } = parseOrThrow(concurrencyInput, input, 'concurrency');
    return this.write(() => {
      const s = this.repo.settings();
      const next: JobSettings = { ...s, globalConcurrency: limit };
      this.repo.putSettings(next);
      this.ctx.audit.append({ type: 'jobs.settings', actor, subject: 'settings:jobs', detail: { reason, globalConcurrency: { from: s.globalConcurrency, to: limit } } });
      this.ctx.store.emit({ type: 'jobs.settings', settings: next, actor });
      return next;
    });
  }

  // ---- insight -----------------------------------------------------------------------------

  /** Why did / will the job (not) run at `at`: the slot, and each layer's verdict with evidence. */
  explain(id: string, at: string | number = this.now): Explanation {
    const t = toMs(parseOrThrow(instantInput, at, 'instant "at"'));
    return explain(this.insight, this.repo.jobRow(id), t, this.now);
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
    const plan = new JobPlan(spec, spec.calendar ? this.calendarOf(spec.calendar) : undefined);
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

  /** Runs the operator must act on: held or failed backfills, plus queued ones. */
  runsNeedingAttention(): number {
    return this.ctx.db.prepare<[], { n: number }>(`SELECT count(*) AS n FROM backfills WHERE status IN ('held','failed','queued')`).get()!.n;
  }

  /** Upcoming triggers (next slot of every enabled job), soonest first. */
  nextTriggers(now: number = this.now, limit = 10): Array<{ jobId: string; job: string; slot: string; at: string }> {
    const out: Array<{ jobId: string; job: string; slot: string; at: string }> = [];
    const rows = this.ctx.db.prepare<[], JobRow>('SELECT * FROM jobs WHERE enabled = 1 AND next_check_at IS NOT NULL ORDER BY next_check_at LIMIT 200').all();
    for (const r of rows) {
      try {
        const spec = specOf(r);
        const n = new JobPlan(spec, spec.calendar ? this.calendarOf(spec.calendar) : undefined).after(now);
        if (n && n.disposition === 'due') out.push({ jobId: r.id, job: r.name, slot: n.slot, at: new Date(n.at).toISOString() });
      } catch {
        /* skip */
      }
    }
    return out.sort((a, b) => (a.at < b.at ? -1 : 1)).slice(0, limit);
  }

  /** Whether the kill switch is on (the console's JobsConsolePort). */
  killSwitch(): boolean {
    return this.repo.settings().killSwitch.on;
  }
}
