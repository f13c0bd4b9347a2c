/**
 * Storage of jobs, runs, steps, checks, backfills, calendars and job settings: prepared statements
 * and row ↔ object mapping. Every write here must run inside `store.write` (the caller's
 * transaction); nothing here opens its own.
 *
 * Invariants:
 * 1. One run per (job, slot): `runs_job_slot` is UNIQUE; `insertRun` is the only INSERT.
 * 2. Run status changes only through `transition` (one edge of run-transitions.ts, audited, with a
 *    `run.changed` event). Every other run change goes through `patchRun` and is audited by the caller.
 * 3. A check keeps its last verdict per (job, slot, name); `recordCheck` says whether the verdict
 *    changed, so callers audit only decisions that change the outcome.
 */
import { GafferError } from '../../common/errors';
import type {
  Backfill,
  BackfillStatus,
  BusinessCalendar,
  CheckLayer,
  CheckRecord,
  CheckVerdict,
  Job,
  JobSettings,
  JobSpec,
  Run,
  RunDisposition,
  RunErrorClass,
  RunStatus,
  RunStep,
  RunTrigger,
} from '../../common/job-schema';
import { newId, newTraceId, type CoreContext } from '../context';
import { assertRunEdge, type RunCause } from './run-transitions';
import type { Calendar } from './schedule';

const iso = (ms: number | null | undefined): string | null => (ms === null || ms === undefined ? null : new Date(ms).toISOString());
const isoReq = (ms: number): string => new Date(ms).toISOString();

export interface JobRow {
  id: string;
  name: string;
  role: string;
  spec: string;
  version: number;
  enabled: number;
  paused_at: number | null;
  paused_by: string | null;
  paused_reason: string | null;
  /** When the pause ends by itself (auto-resume), or null. */
  paused_until: number | null;
  /** 1: the pause lets the runs already started finish (their retries included). */
  pause_drain: number;
  /** 'role' when the job is paused because its whole role is; null for its own pause. */
  pause_scope: string | null;
  cursor: number;
  next_check_at: number | null;
  created_at: number;
  created_by: string;
  updated_at: number;
  updated_by: string;
}

export interface RunRow {
  id: string;
  job_id: string;
  job_name: string;
  slot: string;
  slot_at: number;
  status: RunStatus;
  disposition: RunDisposition;
  trigger: RunTrigger;
  attempt: number;
  retry_count: number;
  max_retry: number;
  next_attempt_at: number | null;
  opens_at: number;
  window_closes_at: number | null;
  deadline: number | null;
  instance_id: string | null;
  dispatched_at: number | null;
  version: number;
  trace_id: string;
  idempotency_key: string;
  covers: string;
  covered_by: string | null;
  last_error: string | null;
  error_class: RunErrorClass | null;
  held: number;
  output: string | null;
  created_at: number;
  triggered_at: number | null;
  started_at: number | null;
  finished_at: number | null;
  updated_at: number;
}

export interface BackfillRow {
  id: number;
  job_id: string;
  slot: string;
  slot_at: number;
  run_id: string;
  reason: string;
  status: BackfillStatus;
  attempts: number;
  instance_id: string | null;
  started_at: number | null;
  deadline: number | null;
  tick_run_id: string | null;
  last_error: string | null;
  error_class: RunErrorClass | null;
  version: number | null;
  note: string | null;
  actor: string;
  created_at: number;
  updated_at: number;
  dispatched_at: number | null;
  finished_at: number | null;
  /** The operator's approval this backfill runs with (JSON `RunApproval`), if it re-runs a held run. */
  approval: string | null;
}

interface CheckRow {
  job_id: string;
  slot: string;
  name: string;
  layer: CheckLayer;
  verdict: CheckVerdict;
  reason: string;
  evidence: string;
  at: number;
  first_at: number;
  count: number;
  changed_at: number;
}

interface CalendarRow {
  id: string;
  name: string;
  timezone: string;
  workdays: string;
  holidays: string;
  extra_workdays: string;
  version: number;
  created_at: number;
  updated_at: number;
  updated_by: string;
}

export function toJob(r: JobRow): Job {
  const spec = JSON.parse(r.spec) as JobSpec;
  return {
    id: r.id,
    ...spec,
    enabled: r.enabled === 1,
    version: r.version,
    paused:
      r.paused_at === null
        ? null
        : { at: isoReq(r.paused_at), by: r.paused_by ?? '', reason: r.paused_reason ?? '', until: iso(r.paused_until), drain: r.pause_drain === 1, role: r.pause_scope === 'role' },
    createdAt: isoReq(r.created_at),
    updatedAt: isoReq(r.updated_at),
    createdBy: r.created_by,
    updatedBy: r.updated_by,
    nextCheckAt: iso(r.next_check_at),
  };
}

export function specOf(r: JobRow): JobSpec {
  const spec = JSON.parse(r.spec) as JobSpec;
  spec.enabled = r.enabled === 1;
  return spec;
}

export function toRun(r: RunRow): Run {
  return {
    id: r.id,
    jobId: r.job_id,
    job: r.job_name,
    slot: r.slot,
    slotAt: isoReq(r.slot_at),
    status: r.status,
    disposition: r.disposition,
    trigger: r.trigger,
    attempt: r.attempt,
    retryCount: r.retry_count,
    maxRetry: r.max_retry,
    nextAttemptAt: iso(r.next_attempt_at),
    windowClosesAt: iso(r.window_closes_at),
    deadline: iso(r.deadline),
    instanceId: r.instance_id,
    version: r.version,
    traceId: r.trace_id,
    idempotencyKey: r.idempotency_key,
    covers: JSON.parse(r.covers) as string[],
    coveredBy: r.covered_by,
    lastError: r.last_error,
    errorClass: r.error_class,
    held: r.held === 1,
    output: r.output === null ? null : JSON.parse(r.output),
    createdAt: isoReq(r.created_at),
    triggeredAt: iso(r.triggered_at),
    startedAt: iso(r.started_at),
    finishedAt: iso(r.finished_at),
    updatedAt: isoReq(r.updated_at),
  };
}

export function toBackfill(r: BackfillRow, jobName: string): Backfill {
  return {
    id: r.id,
    jobId: r.job_id,
    job: jobName,
    slot: r.slot,
    slotAt: isoReq(r.slot_at),
    runId: r.run_id,
    reason: r.reason,
    status: r.status,
    attempts: r.attempts,
    instanceId: r.instance_id,
    lastError: r.last_error,
    errorClass: r.error_class,
    version: r.version,
    note: r.note,
    actor: r.actor,
    createdAt: isoReq(r.created_at),
    updatedAt: isoReq(r.updated_at),
    dispatchedAt: iso(r.dispatched_at),
    finishedAt: iso(r.finished_at),
  };
}

function toCheck(r: CheckRow): CheckRecord {
  return {
    jobId: r.job_id,
    slot: r.slot,
    layer: r.layer,
    name: r.name,
    verdict: r.verdict,
    reason: r.reason,
    evidence: JSON.parse(r.evidence),
    at: isoReq(r.at),
    firstAt: isoReq(r.first_at),
    count: r.count,
    changedAt: isoReq(r.changed_at),
  };
}

function toCalendar(r: CalendarRow): BusinessCalendar {
  return {
    id: r.id,
    name: r.name,
    timezone: r.timezone,
    workdays: JSON.parse(r.workdays) as number[],
    holidays: JSON.parse(r.holidays) as string[],
    extraWorkdays: JSON.parse(r.extra_workdays) as string[],
    version: r.version,
    updatedAt: isoReq(r.updated_at),
    updatedBy: r.updated_by,
  };
}

export type RunPatch = Partial<Omit<RunRow, 'id' | 'job_id' | 'slot' | 'status' | 'created_at'>>;
export type BackfillPatch = Partial<Omit<BackfillRow, 'id' | 'job_id' | 'slot' | 'run_id' | 'created_at'>>;

export interface NewRun {
  id: string;
  jobId: string;
  jobName: string;
  slot: string;
  slotAt: number;
  disposition: RunDisposition;
  trigger: RunTrigger;
  maxRetry: number;
  nextAttemptAt: number | null;
  opensAt: number;
  windowClosesAt: number | null;
  version: number;
  traceId: string;
  idempotencyKey: string;
}

/**
 * What every new run of a slot starts with, however it was claimed (schedule, catch-up, by hand).
 * The idempotency key is the slot's: the same for every attempt, and for nothing else.
 */
export function slotRunBase(
  job: Pick<JobRow, 'id' | 'name' | 'version'>,
  slot: { slot: string; at: number },
  maxAttempts: number,
): Pick<NewRun, 'id' | 'jobId' | 'jobName' | 'slot' | 'slotAt' | 'disposition' | 'maxRetry' | 'version' | 'traceId' | 'idempotencyKey'> {
  return {
    id: newId('run'),
    jobId: job.id,
    jobName: job.name,
    slot: slot.slot,
    slotAt: slot.at,
    disposition: 'waiting',
    maxRetry: maxAttempts - 1,
    version: job.version,
    traceId: newTraceId(),
    idempotencyKey: `${job.name}:${slot.slot}`,
  };
}

const SETTINGS_KEY = 'jobs.settings';

export class JobRepo {
  readonly q;
  private readonly patchCache = new Map<string, ReturnType<CoreContext['db']['prepare']>>();
  /** Calendar objects by id+version: the schedule library memoises per object. */
  private readonly calendarCache = new Map<string, Calendar>();

  constructor(private readonly ctx: CoreContext) {
    const db = ctx.db;
    this.q = {
      jobById: db.prepare<[string], JobRow>('SELECT * FROM jobs WHERE id = ?'),
      jobByName: db.prepare<[string], JobRow>('SELECT * FROM jobs WHERE name = ?'),
      insertJob: db.prepare(
        `INSERT INTO jobs (id, name, role, spec, version, enabled, cursor, next_check_at, created_at, created_by, updated_at, updated_by)
         VALUES (@id, @name, @role, @spec, @version, @enabled, @cursor, @next_check_at, @created_at, @created_by, @updated_at, @updated_by)`,
      ),
      insertVersion: db.prepare('INSERT INTO job_versions (job_id, version, spec, at, actor, reason) VALUES (?, ?, ?, ?, ?, ?)'),
      versionOf: db.prepare<[string, number], { spec: string; at: number; actor: string; reason: string | null }>(
        'SELECT spec, at, actor, reason FROM job_versions WHERE job_id = ? AND version = ?',
      ),
      dueJobs: db.prepare<[number, number], JobRow>(
        'SELECT * FROM jobs WHERE enabled = 1 AND next_check_at IS NOT NULL AND next_check_at <= ? ORDER BY next_check_at LIMIT ?',
      ),
      nextJobDue: db.prepare<[], { t: number | null }>('SELECT min(next_check_at) AS t FROM jobs WHERE enabled = 1'),
      allJobs: db.prepare<[], JobRow>('SELECT * FROM jobs ORDER BY name'),
      jobsByCalendar: db.prepare<[string], JobRow>(`SELECT * FROM jobs WHERE json_extract(spec, '$.calendar') = ?`),
      insertRun: db.prepare(
        `INSERT INTO runs (id, job_id, job_name, slot, slot_at, status, disposition, trigger, max_retry, next_attempt_at, opens_at,
           window_closes_at, version, trace_id, idempotency_key, created_at, updated_at)
         VALUES (@id, @jobId, @jobName, @slot, @slotAt, 'pending', @disposition, @trigger, @maxRetry, @nextAttemptAt, @opensAt,
           @windowClosesAt, @version, @traceId, @idempotencyKey, @now, @now)`,
      ),
      runById: db.prepare<[string], RunRow>('SELECT * FROM runs WHERE id = ?'),
      runBySlot: db.prepare<[string, string], RunRow>('SELECT * FROM runs WHERE job_id = ? AND slot = ?'),
      setRunStatus: db.prepare('UPDATE runs SET status = ?, updated_at = ? WHERE id = ? AND status = ?'),
      dueRuns: db.prepare<[number, number], RunRow>(
        'SELECT * FROM runs WHERE next_attempt_at IS NOT NULL AND next_attempt_at <= ? ORDER BY next_attempt_at, slot_at LIMIT ?',
      ),
      nextRunDue: db.prepare<[], { t: number | null }>('SELECT min(next_attempt_at) AS t FROM runs WHERE next_attempt_at IS NOT NULL'),
      openRunsOfJob: db.prepare<[string], RunRow>(`SELECT * FROM runs WHERE job_id = ? AND status IN ('pending','running') ORDER BY slot_at, slot`),
      allOpenRuns: db.prepare<[], RunRow>(`SELECT * FROM runs WHERE status IN ('pending','running') ORDER BY slot_at`),
      runsInRange: db.prepare<[string, number, number], RunRow>('SELECT * FROM runs WHERE job_id = ? AND slot_at >= ? AND slot_at < ? ORDER BY slot_at, slot'),
      lastRun: db.prepare<[string], RunRow>(`SELECT * FROM runs WHERE job_id = ? AND status NOT IN ('pending','running') ORDER BY slot_at DESC, slot DESC LIMIT 1`),
      uncoveredFolded: db.prepare<[string, number], RunRow>(
        `SELECT * FROM runs WHERE job_id = ? AND disposition = 'folded' AND covered_by IS NULL AND slot_at < ? ORDER BY slot_at, slot LIMIT 1000`,
      ),
      coveredBy: db.prepare<[string], RunRow>('SELECT * FROM runs WHERE covered_by = ? ORDER BY slot_at, slot'),
      /** Runs in flight: a trigger out (pending+dispatched) or running with a holder. */
      activeCount: db.prepare<[], { n: number }>(
        `SELECT (SELECT count(*) FROM runs WHERE status IN ('pending','running') AND dispatched_at IS NOT NULL)
              + (SELECT count(*) FROM backfills WHERE status = 'dispatched') AS n`,
      ),
      activeCountRole: db.prepare<[string, string], { n: number }>(
        `SELECT (SELECT count(*) FROM runs r JOIN jobs j ON j.id = r.job_id
                  WHERE r.status IN ('pending','running') AND r.dispatched_at IS NOT NULL AND j.role = ?)
              + (SELECT count(*) FROM backfills b JOIN jobs j ON j.id = b.job_id WHERE b.status = 'dispatched' AND j.role = ?) AS n`,
      ),
      runsOfInstance: db.prepare<[string], RunRow>(`SELECT * FROM runs WHERE status = 'running' AND instance_id = ? AND dispatched_at IS NOT NULL`),
      addStep: db.prepare('INSERT INTO run_steps (run_id, step, ref, attempt, instance_id, at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (run_id, step) DO NOTHING'),
      stepsOf: db.prepare<[string], { step: string; ref: string | null; attempt: number; instance_id: string; at: number }>(
        'SELECT step, ref, attempt, instance_id, at FROM run_steps WHERE run_id = ? ORDER BY id',
      ),
      checkGet: db.prepare<[string, string, string], CheckRow>('SELECT * FROM checks WHERE job_id = ? AND slot = ? AND name = ?'),
      checkUpsert: db.prepare(
        `INSERT INTO checks (job_id, slot, name, layer, verdict, reason, evidence, at, first_at, count, changed_at)
         VALUES (@job_id, @slot, @name, @layer, @verdict, @reason, @evidence, @at, @first_at, @count, @changed_at)
         ON CONFLICT (job_id, slot, name) DO UPDATE SET layer = excluded.layer, verdict = excluded.verdict, reason = excluded.reason,
           evidence = excluded.evidence, at = excluded.at, count = excluded.count, changed_at = excluded.changed_at`,
      ),
      checksOf: db.prepare<[string, string], CheckRow>('SELECT * FROM checks WHERE job_id = ? AND slot = ? ORDER BY layer, name'),
      insertBackfill: db.prepare(
        `INSERT INTO backfills (job_id, slot, slot_at, run_id, reason, status, actor, note, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      backfillById: db.prepare<[number], BackfillRow>('SELECT * FROM backfills WHERE id = ?'),
      openBackfillOfRun: db.prepare<[string], BackfillRow>(`SELECT * FROM backfills WHERE run_id = ? AND status IN ('queued','held','dispatched')`),
      dispatchedBackfillOfRun: db.prepare<[string], BackfillRow>(`SELECT * FROM backfills WHERE run_id = ? AND status = 'dispatched'`),
      backfillsOfRun: db.prepare<[string], BackfillRow>('SELECT * FROM backfills WHERE run_id = ? ORDER BY id'),
      queuedBackfills: db.prepare<[string, number], BackfillRow>(
        `SELECT * FROM backfills WHERE job_id = ? AND status = 'queued' ORDER BY slot_at, id LIMIT ?`,
      ),
      backfillsOfJob: db.prepare<[string], BackfillRow>(`SELECT * FROM backfills WHERE job_id = ? AND status IN ('queued','held','dispatched') ORDER BY slot_at, id`),
      dispatchedBackfillsOfJob: db.prepare<[string], BackfillRow>(`SELECT * FROM backfills WHERE job_id = ? AND status = 'dispatched'`),
      allDispatchedBackfills: db.prepare<[], BackfillRow>(`SELECT * FROM backfills WHERE status = 'dispatched'`),
      nextBackfillDeadline: db.prepare<[], { t: number | null }>(`SELECT min(deadline) AS t FROM backfills WHERE status = 'dispatched'`),
      openBackfillCount: db.prepare<[string], { n: number }>(`SELECT count(*) AS n FROM backfills WHERE job_id = ? AND status IN ('queued','held','dispatched')`),
      calendarById: db.prepare<[string], CalendarRow>('SELECT * FROM calendars WHERE id = ?'),
      allCalendars: db.prepare<[], CalendarRow>('SELECT * FROM calendars ORDER BY id'),
      insertCalendar: db.prepare(
        `INSERT INTO calendars (id, name, timezone, workdays, holidays, extra_workdays, version, created_at, updated_at, updated_by)
         VALUES (@id, @name, @timezone, @workdays, @holidays, @extra_workdays, 1, @now, @now, @actor)`,
      ),
      updateCalendar: db.prepare(
        `UPDATE calendars SET name = @name, timezone = @timezone, workdays = @workdays, holidays = @holidays,
           extra_workdays = @extra_workdays, version = version + 1, updated_at = @now, updated_by = @actor WHERE id = @id`,
      ),
      getSetting: db.prepare<[string], { value: string }>('SELECT value FROM settings WHERE key = ?'),
      putSetting: db.prepare('INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value'),
    };
  }

  private get now(): number {
    return this.ctx.clock.now();
  }

  // ---- jobs ----

  jobRow(idOrName: string): JobRow {
    const r = this.q.jobById.get(idOrName) ?? this.q.jobByName.get(idOrName);
    if (!r) throw new GafferError('not_found', `unknown job ${idOrName}`);
    return r;
  }

  maybeJobRow(id: string): JobRow | undefined {
    return this.q.jobById.get(id);
  }

  patchJob(id: string, fields: Partial<Omit<JobRow, 'id'>>): void {
    this.patch('jobs', 'id', id, fields);
  }

  // ---- runs ----

  insertRun(r: NewRun): RunRow {
    this.q.insertRun.run({ ...r, now: this.now });
    return this.q.runById.get(r.id)!;
  }

  run(id: string): RunRow {
    const r = this.q.runById.get(id);
    if (!r) throw new GafferError('not_found', `unknown run ${id}`);
    return r;
  }

  patchRun(id: string, fields: RunPatch): RunRow {
    this.patch('runs', 'id', id, { ...fields, updated_at: this.now });
    return this.q.runById.get(id)!;
  }

  /**
   * Applies one edge of the run state machine: checks it, writes the status and `fields`, audits
   * `run.<cause>` and emits `run.changed` (+ `run.finished` on a final status).
   */
  transition(run: RunRow, cause: RunCause, to: RunStatus, fields: RunPatch, actor: string, detail: Record<string, unknown> = {}): RunRow {
    assertRunEdge(cause, run.status, to);
    const now = this.now;
    const res = this.q.setRunStatus.run(to, now, run.id, run.status);
    if (res.changes !== 1) throw new GafferError('conflict', `run ${run.id} changed underneath (expected ${run.status})`);
    const next = this.patchRun(run.id, fields);
    const wire = toRun(next);
    this.ctx.audit.append({
      type: `run.${cause}`,
      actor,
      subject: `run:${run.id}`,
      detail: { jobId: run.job_id, job: run.job_name, slot: run.slot, from: run.status, to, disposition: next.disposition, ...detail },
      traceId: run.trace_id,
    });
    this.ctx.store.emit({ type: 'run.changed', run: wire, from: run.status, to, cause });
    if (to === 'success' || to === 'failed' || to === 'skipped') this.ctx.store.emit({ type: 'run.finished', run: wire });
    return next;
  }

  /** The claim: inserts the pending run row and audits it (edge none → pending). */
  claim(r: NewRun, actor: string, detail: Record<string, unknown> = {}): RunRow {
    assertRunEdge('claim', null, 'pending');
    const row = this.insertRun(r);
    const wire = toRun(row);
    this.ctx.audit.append({
      type: 'run.claim',
      actor,
      subject: `run:${row.id}`,
      detail: { jobId: row.job_id, job: row.job_name, slot: row.slot, slotAt: wire.slotAt, from: null, to: 'pending', trigger: row.trigger, version: row.version, ...detail },
      traceId: row.trace_id,
    });
    this.ctx.store.emit({ type: 'run.changed', run: wire, from: null, to: 'pending', cause: 'claim' });
    return row;
  }

  /** A non-status change, audited as `type` with an event. */
  update(run: RunRow, fields: RunPatch, type: string, actor: string, detail: Record<string, unknown> = {}): RunRow {
    const next = this.patchRun(run.id, fields);
    this.ctx.audit.append({
      type,
      actor,
      subject: `run:${run.id}`,
      detail: { jobId: run.job_id, job: run.job_name, slot: run.slot, status: next.status, disposition: next.disposition, ...detail },
      traceId: run.trace_id,
    });
    this.ctx.store.emit({ type: 'run.updated', run: toRun(next), what: type });
    return next;
  }

  steps(runId: string): RunStep[] {
    return this.q.stepsOf.all(runId).map((s) => ({ step: s.step, ref: s.ref, attempt: s.attempt, instanceId: s.instance_id, at: isoReq(s.at) }));
  }

  completedSteps(runId: string): string[] {
    return this.q.stepsOf.all(runId).map((s) => s.step);
  }

  // ---- checks ----

  /** Upserts the last verdict of a check: `new` (first for the slot), `changed` or `same`. */
  recordCheck(jobId: string, slot: string, layer: CheckLayer, name: string, verdict: CheckVerdict, reason: string, evidence: unknown): 'new' | 'changed' | 'same' {
    const now = this.now;
    const prev = this.q.checkGet.get(jobId, slot, name);
    const changed = !prev || prev.verdict !== verdict;
    this.q.checkUpsert.run({
      job_id: jobId,
      slot,
      name,
      layer,
      verdict,
      reason,
      evidence: JSON.stringify(evidence ?? null),
      at: now,
      first_at: prev?.first_at ?? now,
      count: (prev?.count ?? 0) + 1,
      changed_at: changed ? now : prev!.changed_at,
    });
    return !prev ? 'new' : changed ? 'changed' : 'same';
  }

  checks(jobId: string, slot: string): CheckRecord[] {
    return this.q.checksOf.all(jobId, slot).map(toCheck);
  }

  // ---- backfills ----

  backfill(id: number): BackfillRow {
    const r = this.q.backfillById.get(id);
    if (!r) throw new GafferError('not_found', `unknown backfill ${id}`);
    return r;
  }

  patchBackfill(id: number, fields: BackfillPatch): BackfillRow {
    this.patch('backfills', 'id', id, { ...fields, updated_at: this.now });
    return this.q.backfillById.get(id)!;
  }

  // ---- calendars ----

  calendar(id: string): BusinessCalendar | undefined {
    const r = this.q.calendarById.get(id);
    return r && toCalendar(r);
  }

  calendars(): BusinessCalendar[] {
    return this.q.allCalendars.all().map(toCalendar);
  }

  /** The calendar as the schedule library wants it (one object per version, so its memo holds). */
  scheduleCalendar(id: string): Calendar | undefined {
    const c = this.calendar(id);
    if (!c) return undefined;
    const key = `${c.id}@${c.version}`;
    let cal = this.calendarCache.get(key);
    if (!cal) {
      cal = { id: c.id, name: c.name, timezone: c.timezone, workdays: c.workdays, holidays: c.holidays, extraWorkdays: c.extraWorkdays };
      if (this.calendarCache.size > 200) this.calendarCache.clear();
      this.calendarCache.set(key, cal);
    }
    return cal;
  }

  // ---- settings ----

  settings(): JobSettings {
    const row = this.q.getSetting.get(SETTINGS_KEY);
    const stored = row ? (JSON.parse(row.value) as Partial<JobSettings>) : {};
    return {
      killSwitch: stored.killSwitch ?? { on: false, reason: null, by: null, at: null },
      globalConcurrency: stored.globalConcurrency ?? null,
    };
  }

  putSettings(s: JobSettings): void {
    this.q.putSetting.run(SETTINGS_KEY, JSON.stringify(s));
  }

  // ---- helpers ----

  private patch(table: string, keyCol: string, key: string | number, fields: Record<string, unknown>): void {
    const cols = Object.keys(fields).filter((k) => fields[k] !== undefined);
    if (cols.length === 0) return;
    const sig = `${table}:${cols.join(',')}`;
    let stmt = this.patchCache.get(sig);
    if (!stmt) {
      stmt = this.ctx.db.prepare(`UPDATE ${table} SET ${cols.map((c) => `${c} = @${c}`).join(', ')} WHERE ${keyCol} = @__key`);
      this.patchCache.set(sig, stmt);
    }
    const params: Record<string, unknown> = { __key: key };
    for (const c of cols) params[c] = fields[c];
    stmt.run(params);
  }
}
