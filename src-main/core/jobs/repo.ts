/**
 * Storage of jobs, their versions, runs, run steps and checks. Every statement is private behind a
 * named method; every write runs inside the caller's `store.write` (nothing here opens its own).
 * Backfills, calendars and the job settings row have their own stores (backfill-repo.ts,
 * calendar-repo.ts, settings.ts).
 *
 * Invariants:
 * 1. One run per (job, slot): `runs_job_slot` is UNIQUE; `claimRun` and `claimFreeRun` (which
 *    writes nothing when the key has a row already, wherever it is due) are the only INSERTs.
 * 2. A run's phase (run-phase.ts: its status, dispatched_at, instance_id and attempt, written
 *    together) changes only through `movePhase`: one edge of run-phase-transitions.ts (and of
 *    run-transitions.ts when the status changes), audited as `run.<cause>` with the phases and
 *    announced. `updateRun` is an audited change of other fields; `patchRun` writes bookkeeping
 *    fields only (never the phase columns, disposition or waiting_on). Their types refuse the
 *    phase columns.
 * 3. A check keeps its last verdict per (job, slot, name); `recordCheck` says whether the verdict
 *    changed, so callers audit only decisions that change the outcome.
 * 4. `planOf` is the one way from a job to its time plan (its calendar resolved by version).
 * 5. The run rows this repository wrote last are kept (`written`): every write of a run goes through
 *    it, so such a row is what the database holds until the store's epoch moves (a rollback, another
 *    writer) or a statement here writes runs in bulk (gaps, a run's budget), which forgets them all.
 *    A run read again, and a phase move of the row its caller holds, then need not build the wide
 *    row from the database (most of a trigger's cost: claim, dispatch, start, result).
 * 6. A run's events carry its wire copy (`toRun`: a dozen ISO dates and its JSON columns parsed),
 *    built only when a listener is there for the event (`store.wants`): a claim and a start are
 *    heard only by the console's stream, and a burst without an open console builds none of them.
 * 7. A read a trigger makes of its job's runs (and the sweep's of the open runs) reaches only the
 *    rows it wants through an index made for them (`INDEXED BY`): never the job's history. Without
 *    statistics (no ANALYZE) SQLite picks `runs_job_at` for a job's open runs or ranges, to save
 *    sorting a handful of rows, and then reads every run the job ever had to test its status: a
 *    cost per trigger that grew with the job's age.
 */
import { GafferError } from '../../common/errors';
import { isoTime } from '../../common/iso-time';
import type { CheckLayer, CheckRecord, CheckVerdict, JobSpec, Run, RunDisposition, RunSettlement, RunStatus, RunStep } from '../../common/job-schema';
import type { CoreContext } from '../context';
import { SqlWhere } from '../sql-where';
import { onOldTimeline, type ClockGap } from '../time/gap-detector';
import type { CalendarRepo } from './calendar-repo';
import { JobPlan } from './plan';
import { RowPatcher } from '../db/row-patcher';
import { specOf, toCheck, toRun, type CheckRow, type JobRow, type NewRun, type PhaseChange, type RunChange, type RunPatch, type RunRow } from './rows';
import type { WaitingOn } from './run-phase';
import { AWAITS_DECISION_SQL, FAILED_FOR_GOOD_SQL } from './run-settlement';
import { assertPhaseEdge, isAuditedOnRun, statusEdgeOf, type PhaseCause } from './run-phase-transitions';
import { runPhase, type RunPhase } from './run-phase';
import { assertRunEdge, FINAL_RUN_STATUSES } from './run-transitions';

/**
 * Run rows kept as written (invariant 5), at most; past it the memo starts afresh. Only open runs
 * are kept (a finished run's row, with its output, is not wanted fast again): a burst's attempts in
 * flight, from their dispatch to their result.
 */
const WRITTEN_KEPT = 2048;

/** Invariant 5's memo, one per database: every repository over it writes through the same one. */
interface Written {
  rows: Map<string, RunRow>;
  epoch: number;
}
const writtenOf = new WeakMap<object, Written>();

/** The claim's one INSERT (invariant 1); the columns it leaves out take the schema's defaults. */
const INSERT_RUN = `INSERT INTO runs (id, job_id, job_name, slot, slot_at, status, disposition, trigger, max_retry, next_attempt_at, opens_at,
    window_closes_at, version, trace_id, idempotency_key, range_slots, range_last_slot, range_last_at, created_at, updated_at)
  VALUES (@id, @jobId, @jobName, @slot, @slotAt, 'pending', @disposition, @trigger, @maxRetry, @nextAttemptAt, @opensAt,
    @windowClosesAt, @version, @traceId, @idempotencyKey, @rangeSlots, @rangeLastSlot, @rangeLastAt, @now, @now)`;
/** The claim of a key that may be taken already (invariant 1): the UNIQUE key answers, not a read before it. */
const INSERT_FREE_RUN = `${INSERT_RUN} ON CONFLICT (job_id, slot) DO NOTHING`;
const INSERTED_RUN_COLUMNS = new Set(INSERT_RUN.slice(INSERT_RUN.indexOf('(') + 1, INSERT_RUN.indexOf(')')).split(',').map((c) => c.trim()));

/**
 * The defaults of the runs columns a claim leaves out, read from the schema itself (so a migration
 * that adds or changes one is followed); undefined when one is not a plain literal (the claim then
 * reads its row back).
 */
function claimDefaults(db: CoreContext['db']): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = {};
  for (const c of db.prepare<[], { name: string; dflt_value: string | null }>(`SELECT name, dflt_value FROM pragma_table_info('runs')`).all()) {
    if (INSERTED_RUN_COLUMNS.has(c.name)) continue;
    const d = c.dflt_value;
    if (d === null || /^null$/i.test(d)) out[c.name] = null;
    else if (/^-?\d+$/.test(d)) out[c.name] = Number(d);
    else if (/^'(?:[^']|'')*'$/.test(d)) out[c.name] = d.slice(1, -1).replace(/''/g, "'");
    else return undefined;
  }
  return out;
}

/**
 * The row a claim writes, its INSERT's columns still to be set: one object literal, so that copies
 * of it (one per claim) share one fast shape.
 */
function claimedRowTemplate(defaults: Record<string, unknown>): RunRow {
  const row = {
    ...defaults,
    id: '',
    job_id: '',
    job_name: '',
    slot: '',
    slot_at: 0,
    status: 'pending',
    disposition: null,
    trigger: 'schedule',
    max_retry: 0,
    next_attempt_at: null,
    opens_at: 0,
    window_closes_at: null,
    version: 0,
    trace_id: '',
    idempotency_key: null,
    range_slots: null,
    range_last_slot: null,
    range_last_at: null,
    created_at: 0,
    updated_at: 0,
  };
  return row as unknown as RunRow;
}

/** Offers out to one instance counted for its load, at most (see `offersOutTo`). */
export const OFFER_LOAD_CAP = 64;

/** A pending or running run as layer 3 looks at it (order, overlap, same-instant slots). */
export type OpenRunFacts = Pick<RunRow, 'id' | 'trigger' | 'slot' | 'slot_at' | 'status' | 'dispatched_at' | 'instance_id' | 'attempt' | 'disposition'>;

/** A check without its evidence: what the engine may read back (for words, never for a decision). */
export interface CheckReason {
  layer: CheckLayer;
  name: string;
  verdict: CheckVerdict;
  reason: string;
}

/** `row` with the defined fields of `set` written over it: what `UPDATE … SET` leaves (no trigger changes runs). */
function applied(row: RunRow, set: Record<string, unknown>): RunRow {
  const next: Record<string, unknown> = { ...row };
  for (const k in set) if (set[k] !== undefined) next[k] = set[k];
  return next as unknown as RunRow;
}

export class JobRepo {
  private readonly q;
  private readonly jobPatcher: RowPatcher;
  private readonly runPatcher: RowPatcher;
  /** Invariant 5: run rows as last written, valid within the store's epoch `written.epoch`. */
  private readonly written: Written;
  /** A claimed row's every column, the schema's defaults in those its INSERT leaves out (undefined: read it back). */
  private readonly claimedRow: RunRow | undefined;

  constructor(
    private readonly ctx: CoreContext,
    private readonly calendars: CalendarRepo,
  ) {
    const db = ctx.db;
    let written = writtenOf.get(db);
    if (!written) writtenOf.set(db, (written = { rows: new Map(), epoch: -1 }));
    this.written = written;
    const defaults = claimDefaults(db);
    this.claimedRow = defaults && claimedRowTemplate(defaults);
    this.jobPatcher = new RowPatcher(db, 'jobs', 'id');
    this.runPatcher = new RowPatcher(db, 'runs', 'id');
    this.q = {
      jobById: db.prepare<[string], JobRow>('SELECT * FROM jobs WHERE id = ?'),
      setRunBudget: db.prepare<[string, string]>('UPDATE runs SET budget = ? WHERE id = ?'),
      roleOfJob: db.prepare<[string], string>('SELECT role FROM jobs WHERE id = ?').pluck(),
      jobByName: db.prepare<[string], JobRow>('SELECT * FROM jobs WHERE name = ?'),
      insertJob: db.prepare(
        `INSERT INTO jobs (id, name, role, spec, version, enabled, cursor, next_check_at, created_at, created_by, updated_at, updated_by)
         VALUES (@id, @name, @role, @spec, @version, @enabled, @cursor, @next_check_at, @created_at, @created_by, @updated_at, @updated_by)`,
      ),
      insertVersion: db.prepare('INSERT INTO job_versions (job_id, version, spec, at, actor, reason) VALUES (?, ?, ?, ?, ?, ?)'),
      // The per-job ceiling of attempts a day (migration 024's table): one row per job and local day.
      attemptsOnDay: db.prepare<[string, string], number>('SELECT n FROM job_attempt_days WHERE job_id = ? AND day = ?').pluck(),
      countAttempt: db.prepare<[string, string]>('INSERT INTO job_attempt_days (job_id, day, n) VALUES (?, ?, 1) ON CONFLICT (job_id, day) DO UPDATE SET n = n + 1'),
      // Jobs due at the same instant in id order: a chunk's runs and checks (keyed by job id) then share index pages.
      // The rows themselves: the runner works each off as listed (runner.ts invariant 5), not read again one by one.
      dueJobs: db.prepare<[number], JobRow>('SELECT * FROM jobs WHERE enabled = 1 AND next_check_at IS NOT NULL AND next_check_at <= ? ORDER BY next_check_at, id'),
      nextJobDue: db.prepare<[], { t: number | null }>('SELECT min(next_check_at) AS t FROM jobs WHERE enabled = 1'),
      jobsByCalendar: db.prepare<[string], JobRow>(`SELECT * FROM jobs WHERE json_extract(spec, '$.calendar') = ?`),
      enabledByNextCheck: db.prepare<[number], JobRow>('SELECT * FROM jobs WHERE enabled = 1 AND next_check_at IS NOT NULL ORDER BY next_check_at LIMIT ?'),
      insertRun: db.prepare<[Record<string, unknown>], RunRow>(`${INSERT_RUN} RETURNING *`),
      insertRunOnly: db.prepare<[Record<string, unknown>]>(INSERT_RUN),
      insertFreeRun: db.prepare<[Record<string, unknown>], RunRow>(`${INSERT_FREE_RUN} RETURNING *`),
      insertFreeRunOnly: db.prepare<[Record<string, unknown>]>(INSERT_FREE_RUN),
      runById: db.prepare<[string], RunRow>('SELECT * FROM runs WHERE id = ?'),
      runBySlot: db.prepare<[string, string], RunRow>('SELECT * FROM runs WHERE job_id = ? AND slot = ?'),
      dueRunIds: db.prepare<[number], { id: string }>('SELECT id FROM runs WHERE next_attempt_at IS NOT NULL AND next_attempt_at <= ? ORDER BY next_attempt_at, slot_at, slot'),
      nextRunsDue: db.prepare<[number], { id: string; next_attempt_at: number }>('SELECT id, next_attempt_at FROM runs WHERE next_attempt_at IS NOT NULL ORDER BY next_attempt_at LIMIT ?'),
      // Invariant 7: the open runs' partial index, not runs_job_at (which walks the job's whole history for the ORDER BY).
      openRunsOfJob: db.prepare<[string], RunRow>(`SELECT * FROM runs INDEXED BY runs_open WHERE job_id = ? AND status IN ('pending','running') ORDER BY slot_at, slot`),
      openRunFactsOfJob: db.prepare<[string], OpenRunFacts>(
        `SELECT id, trigger, slot, slot_at, status, dispatched_at, instance_id, attempt, disposition FROM runs INDEXED BY runs_open WHERE job_id = ? AND status IN ('pending','running') ORDER BY slot_at, slot`,
      ),
      // The sweep's and the start-up's read (invariant 7): the open runs' index, not every run there is (`runs_at`); ties by id, as runs_at gave them.
      openRuns: db.prepare<[], RunRow>(`SELECT * FROM runs INDEXED BY runs_open WHERE status IN ('pending','running') ORDER BY slot_at, id`),
      runsInRange: db.prepare<[string, number, number, number], RunRow>('SELECT * FROM runs WHERE job_id = ? AND slot_at >= ? AND slot_at < ? ORDER BY slot_at, slot LIMIT ?'),
      runSlotsBetween: db.prepare<[string, number, number], { slot: string; slot_at: number }>('SELECT slot, slot_at FROM runs WHERE job_id = ? AND slot_at >= ? AND slot_at <= ?'),
      // Range rows with a slot in [from, to): few per job (one per run of equal decisions of a gap).
      rangesOverlapping: db.prepare<[string, number, number], RunRow>(
        'SELECT * FROM runs INDEXED BY runs_ranges WHERE job_id = ? AND range_slots IS NOT NULL AND range_last_at >= ? AND slot_at < ? ORDER BY slot_at, slot',
      ),
      lastFinishedRun: db.prepare<[string], RunRow>(`SELECT * FROM runs WHERE job_id = ? AND status NOT IN ('pending','running') ORDER BY slot_at DESC, slot DESC LIMIT 1`),
      latestRunAtOrBefore: db.prepare<[string, number], RunRow>('SELECT * FROM runs WHERE job_id = ? AND slot_at <= ? ORDER BY slot_at DESC, slot DESC LIMIT 1'),
      uncoveredFolded: db.prepare<[string, number], RunRow>(
        `SELECT * FROM runs WHERE job_id = ? AND disposition = 'folded' AND covered_by IS NULL AND slot_at < ? ORDER BY slot_at, slot LIMIT 1000`,
      ),
      coveredBy: db.prepare<[string], RunRow>('SELECT * FROM runs WHERE covered_by = ? ORDER BY slot_at, slot'),
      // In flight (run-phase.ts invariant 2): a trigger out, plus dispatched backfills.
      inFlight: db.prepare<[], { n: number }>(
        `SELECT (SELECT count(*) FROM runs WHERE status IN ('pending','running') AND dispatched_at IS NOT NULL)
              + (SELECT count(*) FROM backfills WHERE status = 'dispatched') AS n`,
      ),
      inFlightOfRole: db.prepare<[string, string], { n: number }>(
        `SELECT (SELECT count(*) FROM runs r JOIN jobs j ON j.id = r.job_id
                  WHERE r.status IN ('pending','running') AND r.dispatched_at IS NOT NULL AND j.role = ?)
              + (SELECT count(*) FROM backfills b JOIN jobs j ON j.id = b.job_id WHERE b.status = 'dispatched' AND j.role = ?) AS n`,
      ),
      startedBy: db.prepare<[string], RunRow>(`SELECT * FROM runs WHERE status = 'running' AND instance_id = ? AND dispatched_at IS NOT NULL`),
      offeredTo: db.prepare<[string], RunRow>('SELECT * FROM runs WHERE offer_to = ?'),
      offersOutTo: db.prepare<[string, number], { n: number }>('SELECT count(*) AS n FROM (SELECT 1 FROM runs WHERE offer_to = ? LIMIT ?)'),
      waitingOnInstance: db.prepare<[string, number], { id: string }>(
        `SELECT r.id FROM runs r JOIN jobs j ON j.id = r.job_id
         WHERE j.role = ? AND r.status IN ('pending','running') AND r.next_attempt_at > ? AND r.instance_id IS NULL AND r.waiting_on = 'instance'`,
      ),
      // Gaps (core/time/gap-detector.ts): only what was set on the old timeline moves.
      shiftDeadlines: db.prepare(
        `UPDATE runs SET deadline = deadline + @gap, next_attempt_at = CASE WHEN next_attempt_at = deadline THEN deadline + @gap ELSE next_attempt_at END
         WHERE status IN ('pending','running') AND dispatched_at IS NOT NULL AND deadline > @from AND ${onOldTimeline('dispatched_at')}`,
      ),
      // An offer's ack is due after time the server lived (the run's own attempt, or its backfill's).
      shiftAcks: db.prepare(
        `UPDATE runs SET ack_due_at = ack_due_at + @gap, next_attempt_at = CASE WHEN next_attempt_at = ack_due_at THEN ack_due_at + @gap ELSE next_attempt_at END
         WHERE offer_to IS NOT NULL AND ack_due_at > @from AND ${onOldTimeline('offered_at')}`,
      ),
      shiftWaits: db.prepare(
        `UPDATE runs SET next_attempt_at = max(@to, next_attempt_at + @gap)
         WHERE status IN ('pending','running') AND dispatched_at IS NULL AND next_attempt_at > @to AND next_attempt_at IS NOT opens_at
           AND ${onOldTimeline('updated_at')}`,
      ),
      rewindSchedules: db.prepare(`UPDATE jobs SET cursor = @cursor, next_check_at = CASE WHEN enabled = 1 THEN @to ELSE next_check_at END WHERE cursor > @cursor`),
      addStep: db.prepare('INSERT INTO run_steps (run_id, step, ref, attempt, instance_id, at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (run_id, step) DO NOTHING'),
      stepsOf: db.prepare<[string], { step: string; ref: string | null; attempt: number; instance_id: string; at: number }>(
        'SELECT step, ref, attempt, instance_id, at FROM run_steps WHERE run_id = ? ORDER BY id',
      ),
      // A check's first verdict, or a changed one, in one statement: the WHERE leaves a row whose
      // verdict stays as it is untouched (nothing returned), and `checkSame` then counts it.
      checkNewOrChanged: db.prepare<[Record<string, unknown>], { count: number }>(
        `INSERT INTO checks (job_id, slot, name, layer, verdict, reason, evidence, at, first_at, count, changed_at)
         VALUES (@job_id, @slot, @name, @layer, @verdict, @reason, @evidence, @at, @at, 1, @at)
         ON CONFLICT (job_id, slot, name) DO UPDATE SET layer = excluded.layer, verdict = excluded.verdict, reason = excluded.reason,
           evidence = excluded.evidence, at = excluded.at, count = checks.count + 1, changed_at = excluded.at
         WHERE checks.verdict IS NOT excluded.verdict
         RETURNING count`,
      ),
      checkSame: db.prepare<[Record<string, unknown>]>(
        `UPDATE checks SET layer = @layer, reason = @reason, evidence = @evidence, at = @at, count = count + 1
         WHERE job_id = @job_id AND slot = @slot AND name = @name`,
      ),
      checksOf: db.prepare<[string, string], CheckRow>('SELECT * FROM checks WHERE job_id = ? AND slot = ? ORDER BY layer, name'),
      checkReasonsOf: db.prepare<[string, string], CheckReason>('SELECT layer, name, verdict, reason FROM checks WHERE job_id = ? AND slot = ? ORDER BY layer, name'),
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

  /** The job's role alone (an acknowledgement's event names it; the row is wide). */
  roleOfJob(id: string): string {
    const role = this.q.roleOfJob.get(id);
    if (role === undefined) throw new GafferError('not_found', `unknown job ${id}`);
    return role;
  }

  jobByName(name: string): JobRow | undefined {
    return this.q.jobByName.get(name);
  }

  insertJob(row: Omit<JobRow, 'paused_at' | 'paused_by' | 'paused_reason' | 'paused_until' | 'pause_drain' | 'pause_scope'>): void {
    this.q.insertJob.run(row);
  }

  /** Stores version `version` of the job's spec (every edit keeps the old ones). */
  insertVersion(jobId: string, version: number, spec: JobSpec, actor: string, reason: string | null): void {
    this.q.insertVersion.run(jobId, version, JSON.stringify(spec), this.now, actor, reason);
  }

  patchJob(id: string, fields: Partial<Omit<JobRow, 'id'>>): void {
    this.jobPatcher.patch(id, fields);
  }

  /** The job's time plan: its spec with its calendar (by the calendar's current version). */
  planOf(job: JobRow, spec: JobSpec = specOf(job)): JobPlan {
    return this.planOfSpec(spec);
  }

  planOfSpec(spec: JobSpec): JobPlan {
    return new JobPlan(spec, spec.calendar ? this.calendars.scheduleCalendar(spec.calendar) : undefined);
  }

  /** Enabled jobs whose next check is due at `now`, soonest first (then by id). */
  dueJobs(now: number): JobRow[] {
    return this.q.dueJobs.all(now);
  }

  nextJobDue(): number | null {
    return this.q.nextJobDue.get()?.t ?? null;
  }

  jobsUsingCalendar(calendarId: string): JobRow[] {
    return this.q.jobsByCalendar.all(calendarId);
  }

  /** Enabled jobs by their next check (the console's "next triggers"). */
  enabledJobsByNextCheck(limit: number): JobRow[] {
    return this.q.enabledByNextCheck.all(limit);
  }

  /** A page of jobs by name; `limit + 1` rows tell whether there is more. */
  listJobs(f: { role?: string; enabled?: boolean; paused?: boolean; after?: string }, limit: number): JobRow[] {
    const where = new SqlWhere();
    if (f.role !== undefined) where.and('role = ?', f.role);
    if (f.enabled !== undefined) where.and('enabled = ?', f.enabled ? 1 : 0);
    if (f.paused !== undefined) where.and(f.paused ? 'paused_at IS NOT NULL' : 'paused_at IS NULL');
    if (f.after !== undefined) where.and('name > ?', f.after);
    return this.ctx.db.prepare<unknown[], JobRow>(`SELECT * FROM jobs ${where.sql} ORDER BY name LIMIT ?`).all(...where.params, limit + 1);
  }

  // ---- runs ----

  run(id: string): RunRow {
    const r = this.writtenRow(id) ?? this.q.runById.get(id);
    if (!r) throw new GafferError('not_found', `unknown run ${id}`);
    return r;
  }

  maybeRun(id: string): RunRow | undefined {
    return this.writtenRow(id) ?? this.q.runById.get(id);
  }

  /** Invariant 5: the row as this repository last wrote it, while that is what the database holds. */
  private writtenRow(id: string): RunRow | undefined {
    const w = this.written;
    return w.epoch === this.ctx.store.epoch ? w.rows.get(id) : undefined;
  }

  private remember(row: RunRow): RunRow {
    const w = this.written;
    const epoch = this.ctx.store.epoch;
    if (w.epoch !== epoch || w.rows.size >= WRITTEN_KEPT) {
      w.rows.clear();
      w.epoch = epoch;
    }
    if (FINAL_RUN_STATUSES.has(row.status)) w.rows.delete(row.id);
    else w.rows.set(row.id, row);
    return row;
  }

  /**
   * A statement wrote runs in bulk, or rows were written around this repository (a test's setup by
   * hand, a repair): no kept row is current any more (invariant 5).
   */
  forgetWritten(): void {
    this.written.rows.clear();
  }

  runBySlot(jobId: string, slot: string): RunRow | undefined {
    return this.q.runBySlot.get(jobId, slot);
  }

  /** The claim: inserts the pending run row and audits it (edge none → pending, phase none → checking). */
  claimRun(r: NewRun, actor: string, detail: Record<string, unknown> = {}): RunRow {
    return this.claim(r, actor, detail, false)!;
  }

  /**
   * The claim of a slot whose key may have a row already (a job moved to another zone has runs of
   * its keys at other instants): when it has, nothing is written and undefined is returned. One
   * statement where a read of the key and the INSERT were two (the runner's claim of a due slot).
   */
  claimFreeRun(r: NewRun, actor: string, detail: Record<string, unknown> = {}): RunRow | undefined {
    return this.claim(r, actor, detail, true);
  }

  private claim(r: NewRun, actor: string, detail: Record<string, unknown>, free: boolean): RunRow | undefined {
    assertRunEdge('claim', null, 'pending');
    assertPhaseEdge('claim', null, 'checking', 'pending');
    const { range, ...fields } = r;
    const params = { ...fields, rangeSlots: range?.slots ?? null, rangeLastSlot: range?.lastSlot ?? null, rangeLastAt: range?.lastAt ?? null, now: this.now };
    const inserted = this.claimedRow ? this.insertedRun(params, this.claimedRow, free) : (free ? this.q.insertFreeRun : this.q.insertRun).get(params);
    if (!inserted) return undefined;
    const row = this.remember(inserted);
    this.ctx.audit.append({
      type: 'run.claim',
      actor,
      subject: `run:${row.id}`,
      detail: { jobId: row.job_id, job: row.job_name, slot: row.slot, slotAt: isoTime(row.slot_at), from: null, to: 'pending', phaseFrom: null, phaseTo: 'checking', trigger: row.trigger, version: row.version, ...detail },
      traceId: row.trace_id,
    });
    // Invariant 6: the wire copy only for a listener (the console's stream; nothing else listens to claims).
    if (this.ctx.store.wants('run.changed')) this.ctx.store.emit({ type: 'run.changed', run: toRun(row), from: null, to: 'pending', cause: 'claim' });
    return row;
  }

  /** The claim's INSERT without reading the row back: the row is its values and the schema's defaults (invariant 5). */
  private insertedRun(p: Omit<NewRun, 'range'> & { rangeSlots: number | null; rangeLastSlot: string | null; rangeLastAt: number | null; now: number }, template: RunRow, free: boolean): RunRow | undefined {
    if ((free ? this.q.insertFreeRunOnly : this.q.insertRunOnly).run(p as unknown as Record<string, unknown>).changes === 0) return undefined;
    // A copy of the template with the INSERT's values set: every claimed row has the template's
    // shape. Spreading the defaults (built key by key from the schema: a slow, dictionary-mode
    // object) into a literal with twenty keys more cost ~5 µs per claim; this copy ~0.1 µs.
    const row = { ...template };
    row.id = p.id;
    row.job_id = p.jobId;
    row.job_name = p.jobName;
    row.slot = p.slot;
    row.slot_at = p.slotAt;
    row.disposition = p.disposition;
    row.trigger = p.trigger;
    row.max_retry = p.maxRetry;
    row.next_attempt_at = p.nextAttemptAt;
    row.opens_at = p.opensAt;
    row.window_closes_at = p.windowClosesAt;
    row.version = p.version;
    row.trace_id = p.traceId;
    row.idempotency_key = p.idempotencyKey;
    row.range_slots = p.rangeSlots;
    row.range_last_slot = p.rangeLastSlot;
    row.range_last_at = p.rangeLastAt;
    row.created_at = p.now;
    row.updated_at = p.now;
    return row;
  }

  /** The run's own spend caps (PROTOCOL §14), read by core/budgets before its job's; a JSON object. */
  setRunBudget(id: string, budget: unknown): void {
    this.forgetWritten();
    this.q.setRunBudget.run(JSON.stringify(budget), id);
  }

  /** Bookkeeping fields (due time, attempt, output, …): never status, disposition or waiting_on. */
  patchRun(id: string, fields: RunPatch): RunRow {
    return this.writeRun(id, fields);
  }

  /**
   * The one writer of a run's phase (invariant 2): `cause` moves the run from the phase its row is
   * in to the phase `fields` put it in. Checks the edge (run-phase-transitions.ts; and the status
   * edge of run-transitions.ts when the cause is one), writes the status and `fields` in one
   * statement while the row still has the status it was read with, audits `run.<cause>` with the
   * phases, and announces it: `run.changed` (+ `run.finished` on a final status) when the status
   * changed, else `run.updated`. A refused change writes nothing (`invalid_transition`).
   */
  movePhase(run: RunRow, cause: PhaseCause, fields: PhaseChange, actor: string, detail: Record<string, unknown> = {}): RunRow {
    const edge = statusEdgeOf(cause);
    const status = edge?.to ?? run.status;
    if (edge) assertRunEdge(edge.cause, run.status, status);
    const from = runPhase(run);
    const to = runPhase({
      status,
      dispatched_at: fields.dispatched_at !== undefined ? fields.dispatched_at : run.dispatched_at,
      instance_id: fields.instance_id !== undefined ? fields.instance_id : run.instance_id,
      attempt: fields.attempt ?? run.attempt,
      disposition: fields.disposition ?? run.disposition,
    });
    assertPhaseEdge(cause, from, to, status);
    const next = this.writePhase(run, { ...fields, status, updated_at: this.now });
    if (!next) throw new GafferError('conflict', `run ${run.id} changed underneath (expected ${run.status})`);
    if (!isAuditedOnRun(cause)) return next;
    const phases: { phaseFrom: RunPhase; phaseTo: RunPhase } = { phaseFrom: from, phaseTo: to };
    const base = { jobId: run.job_id, job: run.job_name, slot: run.slot };
    this.ctx.audit.append({
      type: `run.${cause}`,
      actor,
      subject: `run:${run.id}`,
      // The phases last: a caller's detail cannot say another phase than the one written (the replay reads them).
      detail: edge ? { ...base, from: run.status, to: status, disposition: next.disposition, ...detail, ...phases } : { ...base, status, disposition: next.disposition, ...detail, ...phases },
      traceId: run.trace_id,
    });
    this.announce(next, edge ? { from: run.status, to: status, cause: edge.cause } : { what: `run.${cause}` });
    return next;
  }

  /**
   * Announces `run` as written: `run.changed` (+ `run.finished` on a final status) for a status
   * edge, else `run.updated` — each only when something listens (invariant 6), and the wire copy
   * built once for those that do.
   */
  private announce(run: RunRow, change: { from: RunStatus; to: RunStatus; cause: string } | { what: string }): void {
    const store = this.ctx.store;
    let wire: Run | undefined;
    const wireOf = () => (wire ??= toRun(run));
    if ('what' in change) {
      if (store.wants('run.updated')) store.emit({ type: 'run.updated', run: wireOf(), what: change.what });
      return;
    }
    if (store.wants('run.changed')) store.emit({ type: 'run.changed', run: wireOf(), ...change });
    if (FINAL_RUN_STATUSES.has(change.to) && store.wants('run.finished')) store.emit({ type: 'run.finished', run: wireOf() });
  }

  /** A change of fields other than the phase's, audited as `type` with a `run.updated` event. */
  updateRun(run: RunRow, fields: RunChange, type: string, actor: string, detail: Record<string, unknown> = {}): RunRow {
    const next = this.writeRun(run.id, fields);
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

  /**
   * The run waits for `waitingOn` until `nextAttemptAt` at the latest. Not audited: the checks
   * recorded with the same evaluation say why (and a changed verdict is audited there).
   */
  setWaiting(id: string, nextAttemptAt: number, waitingOn: WaitingOn, disposition?: RunChange['disposition']): RunRow {
    return this.writeRun(id, { next_attempt_at: nextAttemptAt, waiting_on: waitingOn, ...(disposition ? { disposition } : {}) });
  }

  /**
   * The offer of the attempt out (`offer_to`, `offered_at`, `ack_due_at`, `offered`, the due time),
   * written by the engine's offers; the run then waits for nothing (`waiting_on` cleared). Not audited
   * here: the offer's own row (`trigger.offer`) says it.
   */
  setOffer(id: string, fields: RunPatch): RunRow {
    return this.writeRun(id, { ...fields, waiting_on: null });
  }

  private writeRun(id: string, fields: RunChange): RunRow {
    const set: Record<string, unknown> = { ...fields, updated_at: this.now };
    // The row as last written is what the database holds (invariant 5): the row as written is it with `set`.
    const cur = this.writtenRow(id);
    if (cur && this.runPatcher.patch(id, set) === 1) return this.remember(applied(cur, set));
    const next = this.runPatcher.patchReturning<RunRow>(id, set);
    return next ? this.remember(next) : this.run(id);
  }

  /**
   * The phase's one statement, while the row still has the status `run` was read with. When `run`
   * is the row as this repository last wrote it (invariant 5), the row as written is `run` with
   * `set` applied: no row is read back.
   */
  private writePhase(run: RunRow, set: Record<string, unknown>): RunRow | undefined {
    const guard = { column: 'status', value: run.status };
    if (this.writtenRow(run.id) !== run) {
      const next = this.runPatcher.patchReturning<RunRow>(run.id, set, guard);
      return next && this.remember(next);
    }
    if (this.runPatcher.patch(run.id, set, guard) === 0) return undefined;
    return this.remember(applied(run, set));
  }

  /** Runs with a due time at or before `now`, soonest first. */
  dueRunIds(now: number): string[] {
    return this.q.dueRunIds.all(now).map((r) => r.id);
  }

  /** The `limit` soonest due times (the timer skips runs whose checks are in flight). */
  nextRunsDue(limit: number): Array<{ id: string; next_attempt_at: number }> {
    return this.q.nextRunsDue.all(limit);
  }

  /** Pending and running runs of the job, by slot. */
  openRunsOfJob(jobId: string): RunRow[] {
    return this.q.openRunsOfJob.all(jobId);
  }

  /** What layer 3 reads of the job's pending and running runs (by slot): fewer columns than the rows, on every trigger. */
  openRunFactsOfJob(jobId: string): OpenRunFacts[] {
    return this.q.openRunFactsOfJob.all(jobId);
  }

  /** Pending and running runs of every job, by slot instant. */
  openRuns(): RunRow[] {
    return this.q.openRuns.all();
  }

  /** Runs of slots due in [from, to), by slot instant: the first `limit`. */
  runsInRange(jobId: string, from: number, to: number, limit: number): RunRow[] {
    return this.q.runsInRange.all(jobId, from, to, limit);
  }

  /** Slot keys and instants of the job's runs due in [from, to] (the runner's first look at a stretch). */
  runSlotsBetween(jobId: string, from: number, to: number): Array<{ slot: string; slot_at: number }> {
    return this.q.runSlotsBetween.all(jobId, from, to);
  }

  /** Range rows (a run of slots decided at once) with a slot due in [from, to), by slot instant. */
  rangesOverlapping(jobId: string, from: number, to: number): RunRow[] {
    return this.q.rangesOverlapping.all(jobId, from, to);
  }

  /** The range row whose slots span instant `at`, if any. */
  rangeCovering(jobId: string, at: number): RunRow | undefined {
    return this.q.rangesOverlapping.all(jobId, at, at + 1).pop();
  }

  lastFinishedRun(jobId: string): RunRow | undefined {
    return this.q.lastFinishedRun.get(jobId);
  }

  latestRunAtOrBefore(jobId: string, at: number): RunRow | undefined {
    return this.q.latestRunAtOrBefore.get(jobId, at);
  }

  /** Folded runs older than `before` that no run covers yet (oldest first). */
  uncoveredFolded(jobId: string, before: number): RunRow[] {
    return this.q.uncoveredFolded.all(jobId, before);
  }

  coveredBy(runId: string): RunRow[] {
    return this.q.coveredBy.all(runId);
  }

  /** Attempts of the job dispatched on local `day` (YYYY-MM-DD in its zone): the per-day ceiling. */
  attemptsOnDay(jobId: string, day: string): number {
    return this.q.attemptsOnDay.get(jobId, day) ?? 0;
  }

  /** One more attempt of the job dispatched on local `day` (every dispatch, in its write). */
  countAttempt(jobId: string, day: string): void {
    this.q.countAttempt.run(jobId, day);
  }

  /** Attempts in flight (runs and backfills), for the global quota. */
  inFlightCount(): number {
    return this.q.inFlight.get()!.n;
  }

  /** Attempts in flight of jobs of `role`, for the role quota. */
  inFlightCountOfRole(role: string): number {
    return this.q.inFlightOfRole.get(role, role)!.n;
  }

  /** Runs an instance started and still holds. */
  startedBy(instanceId: string): RunRow[] {
    return this.q.startedBy.all(instanceId);
  }

  /** Runs whose attempt (or whose backfill's) is offered to `instanceId` and not acknowledged yet. */
  offeredTo(instanceId: string): RunRow[] {
    return this.q.offeredTo.all(instanceId);
  }

  /**
   * How many offers are out to `instanceId`, counted up to OFFER_LOAD_CAP (part of its load when
   * the next offer is placed). Instances with that many out are equally loaded: the next offer goes
   * round the instances in turn.
   */
  offersOutTo(instanceId: string): number {
    return this.q.offersOutTo.get(instanceId, OFFER_LOAD_CAP)!.n;
  }

  /** Runs of `role` whose next offer waits for an online instance, due after `now`. */
  waitingOnInstance(role: string, now: number): string[] {
    return this.q.waitingOnInstance.all(role, now).map((r) => r.id);
  }

  /** Deadlines of attempts dispatched on the old timeline move by the gap (nobody lived it). */
  shiftDeadlines(gap: ClockGap): number {
    this.forgetWritten();
    return this.q.shiftDeadlines.run({ gap: gap.gapMs, newFrom: gap.newFrom, to: gap.to, from: Math.min(gap.from, gap.to) }).changes;
  }

  /** Acks due of offers placed on the old timeline move by the gap (an agent has 30 s of lived time to answer). */
  shiftAcks(gap: ClockGap): number {
    this.forgetWritten();
    return this.q.shiftAcks.run({ gap: gap.gapMs, newFrom: gap.newFrom, to: gap.to, from: Math.min(gap.from, gap.to) }).changes;
  }

  /** After a backward step: relative waits (retry backoff, re-checks) set on the old timeline move back with the clock. */
  shiftWaits(gap: ClockGap): number {
    this.forgetWritten();
    return this.q.shiftWaits.run({ gap: gap.gapMs, newFrom: gap.newFrom, to: gap.to }).changes;
  }

  /** After a backward step: every job's schedule position comes back to the new "now" (`to`). */
  rewindSchedules(to: number): number {
    return this.q.rewindSchedules.run({ cursor: to + 1, to }).changes;
  }

  /** A page of runs, newest slot first; `limit + 1` rows tell whether there is more. */
  listRuns(f: { jobId?: string; status?: RunStatus; disposition?: RunDisposition; settled?: RunSettlement; from?: number; to?: number; before?: [number, string] }, limit: number): RunRow[] {
    const where = new SqlWhere();
    if (f.jobId !== undefined) where.and('job_id = ?', f.jobId);
    if (f.status !== undefined) where.and('status = ?', f.status);
    if (f.disposition !== undefined) where.and('disposition = ?', f.disposition);
    if (f.settled !== undefined) where.and(f.settled === 'failed' ? FAILED_FOR_GOOD_SQL : AWAITS_DECISION_SQL);
    if (f.from !== undefined) {
      // A range row is listed when any of its slots is in the window (its own slot may be older).
      // The lower bound stays a plain `slot_at >=` (the index), lowered to the oldest such range.
      const range = this.ctx.db
        .prepare<unknown[], { lo: number | null }>(`SELECT min(slot_at) AS lo FROM runs WHERE range_slots IS NOT NULL AND range_last_at >= ?${f.jobId !== undefined ? ' AND job_id = ?' : ''}`)
        .get(f.from, ...(f.jobId !== undefined ? [f.jobId] : []));
      const lo = range?.lo ?? null;
      if (lo !== null && lo < f.from) where.and('slot_at >= ? AND (slot_at >= ? OR range_last_at >= ?)', lo, f.from, f.from);
      else where.and('slot_at >= ?', f.from);
    }
    if (f.to !== undefined) where.and('slot_at < ?', f.to);
    if (f.before !== undefined) where.and('(slot_at < ? OR (slot_at = ? AND id < ?))', f.before[0], f.before[0], f.before[1]);
    return this.ctx.db.prepare<unknown[], RunRow>(`SELECT * FROM runs ${where.sql} ORDER BY slot_at DESC, id DESC LIMIT ?`).all(...where.params, limit + 1);
  }

  // ---- steps ----

  /** Records a completed step (once per run and step name); true when it was new. */
  addStep(runId: string, step: string, ref: string | null, attempt: number, instanceId: string): boolean {
    return this.q.addStep.run(runId, step, ref, attempt, instanceId, this.now).changes > 0;
  }

  steps(runId: string): RunStep[] {
    return this.q.stepsOf.all(runId).map((s) => ({ step: s.step, ref: s.ref, attempt: s.attempt, instanceId: s.instance_id, at: isoTime(s.at) }));
  }

  completedSteps(runId: string): string[] {
    return this.q.stepsOf.all(runId).map((s) => s.step);
  }

  // ---- checks ----

  /**
   * Upserts the last verdict of a check: `new` (first for the slot), `changed` or `same`. A new or
   * changed verdict is one statement (every trigger records two first verdicts); the same verdict
   * again is two.
   */
  recordCheck(jobId: string, slot: string, layer: CheckLayer, name: string, verdict: CheckVerdict, reason: string, evidence: unknown): 'new' | 'changed' | 'same' {
    const row = { job_id: jobId, slot, name, layer, verdict, reason, evidence: JSON.stringify(evidence ?? null), at: this.now };
    const written = this.q.checkNewOrChanged.get(row);
    if (written) return written.count === 1 ? 'new' : 'changed';
    this.q.checkSame.run(row);
    return 'same';
  }

  /** The checks of a slot with their evidence (explain/why and the run detail). */
  checks(jobId: string, slot: string): CheckRecord[] {
    return this.q.checksOf.all(jobId, slot).map(toCheck);
  }

  /** The checks of a slot without their evidence: the engine quotes their reasons, nothing more. */
  checkReasons(jobId: string, slot: string): CheckReason[] {
    return this.q.checkReasonsOf.all(jobId, slot);
  }
}
