/**
 * The jobs tables' rows as SQLite returns them, and their mapping to the wire objects of
 * common/job-schema.ts. Pure: nothing here reads or writes the database.
 */
import { isoTime, isoTimeOrNull } from '../../common/iso-time';
import type {
  Backfill,
  BackfillStatus,
  BusinessCalendar,
  CheckLayer,
  CheckRecord,
  CheckVerdict,
  Job,
  JobSpec,
  Run,
  RunApproval,
  RunDisposition,
  RunErrorClass,
  RunStatus,
  RunTrigger,
} from '../../common/job-schema';
import { newId, newTraceId } from '../ids';
import type { WaitingOn } from './run-phase';

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
  /** What the run's next attempt (or offer) waits for: the first blocker in layer order; null once out or finished. */
  waiting_on: WaitingOn | null;
  /** 1 for a run by hand that skips its preconditions (the operator did not ask for them). */
  overrides_preconditions: number;
  /**
   * The offer of the attempt out (the run's own or its backfill's), until an instance acknowledges
   * it: the instance it is offered to (null: waiting for one to say hello), when, and when its
   * `run_started` is due; `offered` lists (JSON) every instance this attempt was offered to.
   */
  offer_to: string | null;
  offered_at: number | null;
  ack_due_at: number | null;
  offered: string;
  /**
   * A row standing for a run of consecutive slots decided at once (the older slots of a long gap):
   * how many, and the last of them (this row's own slot is the first). NULL for an ordinary run.
   */
  range_slots: number | null;
  range_last_slot: string | null;
  range_last_at: number | null;
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

export interface CheckRow {
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

export interface CalendarRow {
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
        : { at: isoTime(r.paused_at), by: r.paused_by ?? '', reason: r.paused_reason ?? '', until: isoTimeOrNull(r.paused_until), drain: r.pause_drain === 1, role: r.pause_scope === 'role' },
    createdAt: isoTime(r.created_at),
    updatedAt: isoTime(r.updated_at),
    createdBy: r.created_by,
    updatedBy: r.updated_by,
    nextCheckAt: isoTimeOrNull(r.next_check_at),
  };
}

/**
 * Specs parsed once per (text, enabled): a trigger reads its job's spec in four or five places.
 * Frozen, so a caller that wants a changed spec makes a copy (a shared one cannot drift).
 */
const parsedSpecs = new Map<string, { on?: JobSpec; off?: JobSpec }>();
const PARSED_SPECS_KEPT = 5000;

export function specOf(r: JobRow): JobSpec {
  // Keyed by the row's own text (its hash is computed once per string), not by a string built per
  // call: building and hashing a fresh key of the whole spec was most of this function's time.
  let entry = parsedSpecs.get(r.spec);
  if (entry === undefined) {
    if (parsedSpecs.size >= PARSED_SPECS_KEPT) parsedSpecs.clear();
    parsedSpecs.set(r.spec, (entry = {}));
  }
  const enabled = r.enabled === 1;
  const known = enabled ? entry.on : entry.off;
  if (known !== undefined) return known;
  const spec = deepFreeze({ ...(JSON.parse(r.spec) as JobSpec), enabled });
  if (enabled) entry.on = spec;
  else entry.off = spec;
  return spec;
}

function deepFreeze<T>(v: T): T {
  if (v !== null && typeof v === 'object' && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const x of Object.values(v)) deepFreeze(x);
  }
  return v;
}

export function toRun(r: RunRow): Run {
  return {
    id: r.id,
    jobId: r.job_id,
    job: r.job_name,
    slot: r.slot,
    slotAt: isoTime(r.slot_at),
    status: r.status,
    disposition: r.disposition,
    trigger: r.trigger,
    attempt: r.attempt,
    retryCount: r.retry_count,
    maxRetry: r.max_retry,
    nextAttemptAt: isoTimeOrNull(r.next_attempt_at),
    windowClosesAt: isoTimeOrNull(r.window_closes_at),
    deadline: isoTimeOrNull(r.deadline),
    instanceId: r.instance_id,
    version: r.version,
    traceId: r.trace_id,
    idempotencyKey: r.idempotency_key,
    covers: JSON.parse(r.covers) as string[],
    coveredBy: r.covered_by,
    ...(r.range_slots !== null ? { range: { slots: r.range_slots, lastSlot: r.range_last_slot ?? r.slot, lastAt: isoTime(r.range_last_at ?? r.slot_at) } } : {}),
    lastError: r.last_error,
    errorClass: r.error_class,
    held: r.held === 1,
    output: r.output === null ? null : JSON.parse(r.output),
    createdAt: isoTime(r.created_at),
    triggeredAt: isoTimeOrNull(r.triggered_at),
    startedAt: isoTimeOrNull(r.started_at),
    finishedAt: isoTimeOrNull(r.finished_at),
    updatedAt: isoTime(r.updated_at),
  };
}

export function toBackfill(r: BackfillRow, jobName: string): Backfill {
  return {
    id: r.id,
    jobId: r.job_id,
    job: jobName,
    slot: r.slot,
    slotAt: isoTime(r.slot_at),
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
    createdAt: isoTime(r.created_at),
    updatedAt: isoTime(r.updated_at),
    dispatchedAt: isoTimeOrNull(r.dispatched_at),
    finishedAt: isoTimeOrNull(r.finished_at),
    approval: r.approval ? (JSON.parse(r.approval) as RunApproval) : null,
  };
}

export function toCheck(r: CheckRow): CheckRecord {
  return {
    jobId: r.job_id,
    slot: r.slot,
    layer: r.layer,
    name: r.name,
    verdict: r.verdict,
    reason: r.reason,
    evidence: JSON.parse(r.evidence),
    at: isoTime(r.at),
    firstAt: isoTime(r.first_at),
    count: r.count,
    changedAt: isoTime(r.changed_at),
  };
}

export function toCalendar(r: CalendarRow): BusinessCalendar {
  return {
    id: r.id,
    name: r.name,
    timezone: r.timezone,
    workdays: JSON.parse(r.workdays) as number[],
    holidays: JSON.parse(r.holidays) as string[],
    extraWorkdays: JSON.parse(r.extra_workdays) as string[],
    version: r.version,
    updatedAt: isoTime(r.updated_at),
    updatedBy: r.updated_by,
  };
}

/** The columns a run's phase is decoded from (run-phase.ts), written only by `JobRepo.movePhase`. */
type PhaseColumn = 'status' | 'dispatched_at' | 'instance_id' | 'attempt';
/** Bookkeeping fields of a run: everything but its identity, its phase, its disposition and what it waits for. */
export type RunPatch = Partial<Omit<RunRow, 'id' | 'job_id' | 'slot' | 'created_at' | 'disposition' | 'waiting_on' | PhaseColumn>>;
/**
 * A run change that may also say where the run stands (written by the engine's outcomes only), but
 * never its phase: `verifying` is a phase (run-phase.ts), so no disposition leads into it here.
 */
export type RunChange = RunPatch & { disposition?: Exclude<RunDisposition, 'verifying'>; waiting_on?: WaitingOn | null };
/** What a phase change writes besides the status its cause sets (`JobRepo.movePhase`). */
export type PhaseChange = RunPatch & Partial<Pick<RunRow, 'disposition' | 'waiting_on' | 'dispatched_at' | 'instance_id' | 'attempt'>>;

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
  /** A row for a run of slots decided at once (see RunRow.range_slots). */
  range?: { slots: number; lastSlot: string; lastAt: number };
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
