/**
 * Jobs on the wire (PROTOCOL §2 "Job object") and the pure checks the console's job editor can run
 * without a round trip. Field names of v1 are fixed; everything marked "addition" is ours.
 *
 * Two levels of validation:
 * 1. `jobSpecInput` (zod): shapes and ranges. Fails → `bad_request` with `{issues: [{field, message}]}`,
 *    the messages put in the field's words by `zodIssues`.
 * 2. `jobContradictions(spec)`: settings that are each valid but contradict each other (a policy
 *    that needs a tolerance without one, folding with overlapping runs, retries that can never land
 *    inside the window, …). The core adds the schedule checks (cron, zone, window vs cron, calendar)
 *    and refuses a save when any issue has severity `error`. Severity depends on the normalised
 *    spec only, never on which keys the input happened to spell out.
 */
import { verifySpec, type VerifySpec } from './verify';
import { z } from 'zod';
import { canonicalZoneOrAsTyped } from './time-zone';
import { BACKOFF_LABELS, CALENDAR_POLICY_LABELS, calendarPolicyWithoutCalendar, DST_GAP_LABELS, jobFieldLabel, MISSED_WINDOW_LABELS, OVERLAP_LABELS, quoted } from './job-labels';
import { actorName, jsonValue, perAttemptBudget, reason, roleName, signalName } from './schemas';

// ---- Small shapes ----------------------------------------------------------------------------

/** `HH:MM` (00:00–23:59), or `24:00` where an end of day is meant. */
export const hhmm = z.string().regex(/^(?:[01]\d|2[0-3]):[0-5]\d$|^24:00$/, 'a time of day is HH:MM (00:00–23:59, or 24:00 for an end)');
export const jobName = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/, 'a job name is 1–100 letters, digits, "_", "-" or "." (it is part of every idempotency key)');
export const calendarId = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/, 'a calendar id is 1–100 letters, digits, "_", "-" or "."');
const civilDate = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'a date is YYYY-MM-DD');
/** A zone name; a real zone is stored under its canonical spelling (`europe/berlin` → `Europe/Berlin`), anything else as typed for the schedule checks to explain. */
const zoneName = z.string().min(1).max(100).transform(canonicalZoneOrAsTyped);

/**
 * `{cron, timezone}` or `{everyS, timezone?}`. Kept loose on purpose: the schedule library's
 * `validateSchedule` explains a bad cron, zone or interval in plain words with the exact field.
 */
export const scheduleInput = z.strictObject({
  cron: z.string().max(200).optional(),
  timezone: zoneName.optional(),
  everyS: z.number().optional(),
});

export const windowInput = z.strictObject({
  start: z.string().max(5),
  end: z.string().max(5),
  recheckEveryS: z.number(),
});

const checkLabel = z.string().trim().min(1).max(100).optional();
const timeoutS = z.number().positive().max(600);

/** Placeholders in paths, URLs, argv and signal keys: `{slot}`, `{date}`, `{yesterday}`, `{date-N}`, `{date+N}`, `{month}`. */
export const PLACEHOLDER_HELP = '{slot}, {date}, {yesterday}, {tomorrow}, {date-N}, {date+N}, {month}';

export const preconditionInput = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('file'),
    label: checkLabel,
    /** Path; may contain placeholders, e.g. `/data/orders-{yesterday}.csv`. */
    path: z.string().min(1).max(1000),
    /** `exists` (default) or `modified_after`. */
    check: z.enum(['exists', 'modified_after']).optional(),
    /** For `modified_after`: local midnight of the slot's date (`date`, default), of the day before (`yesterday`), or the slot's due instant (`slot`). */
    after: z.enum(['slot', 'date', 'yesterday']).optional(),
  }),
  z.strictObject({
    kind: z.literal('http'),
    label: checkLabel,
    /** GET this URL (placeholders allowed). */
    url: z.string().min(1).max(2000),
    /** Expected status (default 200). */
    expectStatus: z.number().int().min(100).max(599).optional(),
    /** Dotted path into a JSON body, e.g. `partitions.0.ready`. */
    jsonField: z.string().min(1).max(200).optional(),
    /** The value `jsonField` must equal (JSON). Without it the field must be truthy. */
    equals: jsonValue.optional(),
    timeoutS: timeoutS.optional(),
  }),
  z.strictObject({
    kind: z.literal('command'),
    label: checkLabel,
    /** Program and arguments, no shell (placeholders allowed in each element). Ready ⇔ exit code 0. */
    argv: z.array(z.string().min(1).max(2000)).min(1).max(50),
    cwd: z.string().min(1).max(1000).optional(),
    timeoutS: timeoutS.optional(),
  }),
  z.strictObject({
    kind: z.literal('signal'),
    /** Signal name (PROTOCOL example: `{ "kind": "signal", "name": "data-ready" }`). */
    name: signalName,
    label: checkLabel,
    /** Business key the signal must be set for; default `{date}` (the slot's business date). */
    key: z.string().min(1).max(200).optional(),
  }),
  z.strictObject({
    kind: z.literal('agent'),
    label: checkLabel,
    /** Precheck name the agent runs (`precheck` push `check`). */
    check: z.string().min(1).max(200),
    /** Role asked (default: the job's role). */
    role: roleName.optional(),
    timeoutS: timeoutS.optional(),
  }),
]);
export type PreconditionInput = z.infer<typeof preconditionInput>;
export type PreconditionKind = PreconditionInput['kind'];

export const retryInput = z.strictObject({
  /** Total attempts including the first (default 3). */
  maxAttempts: z.number().int().min(1).max(20).optional(),
  /** Delay before the first retry, seconds (default 300). */
  firstDelayS: z.number().int().min(0).max(7 * 86400).optional(),
  /** `fixed` (default) or `exponential` (doubles each retry). */
  backoff: z.enum(['fixed', 'exponential']).optional(),
});

export const maintenanceWindowInput = z.strictObject({
  start: hhmm,
  end: hhmm,
  /** ISO weekdays 1 (Monday) … 7 (Sunday); every day when absent. */
  days: z.array(z.number().int().min(1).max(7)).min(1).max(7).optional(),
});

export const executionConditionsInput = z.strictObject({
  /** Most runs of jobs of this job's role running at once (across all jobs of the role). */
  maxConcurrentPerRole: z.number().int().min(1).max(10_000).optional(),
  /** Local times (job zone) when nothing of this job is dispatched. */
  maintenanceWindows: z.array(maintenanceWindowInput).max(20).optional(),
});

/** PROTOCOL §8 job field: a run passing either cap is cancelled (`run_cancelled`, reason `budget`) and held. */
export const budgetInput = perAttemptBudget;

/** The loop breaker's count (0 turns it off); its default (PROTOCOL §14). */
export const DEFAULT_SAME_ERROR_TIMES = 3;
export const sameErrorTimes = z.number().int().min(0).max(1000);
/** PROTOCOL §14 job field: the job's own loop breaker count (else the setting's). */
export const loopBreakerInput = z.strictObject({ sameErrorTimes });
/** How a run (or backfill) held by the loop breaker says why: its error's first words. */
export const LOOP_BREAKER_PREFIX = 'loop breaker:';
/** The job's ceiling of attempts a day (its zone's calendar day): every attempt counts, retries and backfills too. */
export const maxAttemptsPerDayInput = z.number().int().min(1).max(100_000);

export const MISSED_WINDOW_POLICIES = ['run_now', 'fold_into_next', 'skip_and_alert'] as const;
export type MissedWindowPolicy = (typeof MISSED_WINDOW_POLICIES)[number];
export const OVERLAP_POLICIES = ['skip', 'queue_one', 'allow'] as const;
export type OverlapPolicy = (typeof OVERLAP_POLICIES)[number];

const jobSpecShape = {
  name: jobName,
  role: roleName,
  description: z.string().max(2000).optional(),
  schedule: scheduleInput,
  window: windowInput.optional(),
  calendar: calendarId.optional(),
  calendarPolicy: z.enum(['skip', 'next_workday']).optional(),
  preconditions: z.array(preconditionInput).max(20).optional(),
  retry: retryInput.optional(),
  missedWindow: z.enum(MISSED_WINDOW_POLICIES).optional(),
  /** For `run_now`: how long after the window closed a missed slot may still start, seconds. */
  toleranceS: z.number().int().min(0).max(366 * 86400).optional(),
  overlap: z.enum(OVERLAP_POLICIES).optional(),
  payload: jsonValue.optional(),
  enabled: z.boolean().optional(),
  // Additions.
  executionConditions: executionConditionsInput.optional(),
  dstGapPolicy: z.enum(['shift_forward', 'skip']).optional(),
  /** Backfills dispatched automatically per tick (a new slot of the job opening), default 3. 0 = only by hand. */
  backfillCapPerTick: z.number().int().min(0).max(100).optional(),
  /** Deadline of one attempt, seconds after dispatch (default 3600). Past it the attempt counts as lost. */
  runTimeoutS: z.number().int().min(1).max(7 * 86400).optional(),
  /** Spend caps of one run (PROTOCOL §8). */
  budget: budgetInput.optional(),
  /** "Done when…" (PROTOCOL §13): checks Gaffer runs itself before a run is `success`. */
  verify: verifySpec.optional(),
  /** PROTOCOL §14: this job's own loop breaker count. */
  loopBreaker: loopBreakerInput.optional(),
  /** At most this many attempts a day (retries and backfills count; runs by hand do not). */
  maxAttemptsPerDay: maxAttemptsPerDayInput.optional(),
};

/** A job as the operator writes it (POST /jobs, the editor form). */
export const jobSpecInput = z.strictObject(jobSpecShape);
export type JobSpecInput = z.infer<typeof jobSpecInput>;

/** PATCH /jobs/{id}: any subset; `null` removes an optional setting. */
export const jobPatchInput = z.strictObject({
  name: jobName.optional(),
  role: roleName.optional(),
  description: z.string().max(2000).nullable().optional(),
  schedule: scheduleInput.optional(),
  window: windowInput.nullable().optional(),
  calendar: calendarId.nullable().optional(),
  calendarPolicy: z.enum(['skip', 'next_workday']).nullable().optional(),
  preconditions: z.array(preconditionInput).max(20).optional(),
  retry: retryInput.optional(),
  missedWindow: z.enum(MISSED_WINDOW_POLICIES).optional(),
  toleranceS: z.number().int().min(0).max(366 * 86400).nullable().optional(),
  overlap: z.enum(OVERLAP_POLICIES).optional(),
  payload: jsonValue.optional(),
  enabled: z.boolean().optional(),
  /** Merged into the stored conditions; `maxConcurrentPerRole: null` removes the role quota. */
  executionConditions: executionConditionsInput.extend({ maxConcurrentPerRole: z.number().int().min(1).max(10_000).nullable().optional() }).optional(),
  dstGapPolicy: z.enum(['shift_forward', 'skip']).optional(),
  backfillCapPerTick: z.number().int().min(0).max(100).optional(),
  runTimeoutS: z.number().int().min(1).max(7 * 86400).optional(),
  /** `null` removes the caps. */
  budget: budgetInput.nullable().optional(),
  loopBreaker: loopBreakerInput.nullable().optional(),
  maxAttemptsPerDay: maxAttemptsPerDayInput.nullable().optional(),
  /** Replaces the "done when" checks; `null` removes them (runs then succeed on the agent's word). */
  verify: verifySpec.nullable().optional(),
});
export type JobPatchInput = z.infer<typeof jobPatchInput>;

// ---- Normalised spec (defaults filled) ---------------------------------------------------------

export interface JobSchedule {
  cron?: string;
  timezone?: string;
  everyS?: number;
}

export interface JobSpec {
  name: string;
  role: string;
  description?: string;
  schedule: JobSchedule;
  window?: { start: string; end: string; recheckEveryS: number };
  calendar?: string;
  calendarPolicy?: 'skip' | 'next_workday';
  preconditions: PreconditionInput[];
  retry: { maxAttempts: number; firstDelayS: number; backoff: 'fixed' | 'exponential' };
  missedWindow: MissedWindowPolicy;
  toleranceS?: number;
  overlap: OverlapPolicy;
  payload: unknown;
  enabled: boolean;
  executionConditions: { maxConcurrentPerRole?: number; maintenanceWindows?: Array<{ start: string; end: string; days?: number[] }> };
  dstGapPolicy: 'shift_forward' | 'skip';
  backfillCapPerTick: number;
  runTimeoutS: number;
  budget?: { maxCostUsdPerRun?: number; maxTokensPerRun?: number };
  verify?: VerifySpec;
  loopBreaker?: { sameErrorTimes: number };
  maxAttemptsPerDay?: number;
}

export const JOB_DEFAULTS = {
  retry: { maxAttempts: 3, firstDelayS: 300, backoff: 'fixed' as const },
  missedWindow: 'skip_and_alert' as const,
  overlap: 'skip' as const,
  dstGapPolicy: 'shift_forward' as const,
  backfillCapPerTick: 3,
  runTimeoutS: 3600,
  /** Re-check period for a job without an execution window (capped at its period). */
  recheckEveryS: 300,
};

/** Fills defaults; the result is what is stored and what the runner reads. */
export function normalizeJobSpec(input: JobSpecInput): JobSpec {
  const spec: JobSpec = {
    name: input.name,
    role: input.role,
    schedule: { ...input.schedule },
    preconditions: input.preconditions ?? [],
    retry: {
      maxAttempts: input.retry?.maxAttempts ?? JOB_DEFAULTS.retry.maxAttempts,
      firstDelayS: input.retry?.firstDelayS ?? JOB_DEFAULTS.retry.firstDelayS,
      backoff: input.retry?.backoff ?? JOB_DEFAULTS.retry.backoff,
    },
    missedWindow: input.missedWindow ?? JOB_DEFAULTS.missedWindow,
    overlap: input.overlap ?? JOB_DEFAULTS.overlap,
    payload: input.payload ?? null,
    enabled: input.enabled ?? true,
    executionConditions: { ...(input.executionConditions ?? {}) },
    dstGapPolicy: input.dstGapPolicy ?? JOB_DEFAULTS.dstGapPolicy,
    backfillCapPerTick: input.backfillCapPerTick ?? JOB_DEFAULTS.backfillCapPerTick,
    runTimeoutS: input.runTimeoutS ?? JOB_DEFAULTS.runTimeoutS,
  };
  if (input.description !== undefined) spec.description = input.description;
  if (input.window !== undefined) spec.window = { ...input.window };
  if (input.calendar !== undefined) spec.calendar = input.calendar;
  if (input.calendarPolicy !== undefined) spec.calendarPolicy = input.calendarPolicy;
  if (input.toleranceS !== undefined) spec.toleranceS = input.toleranceS;
  if (input.budget !== undefined && Object.keys(input.budget).length > 0) spec.budget = { ...input.budget };
  if (input.verify !== undefined) spec.verify = input.verify;
  if (input.loopBreaker !== undefined) spec.loopBreaker = { ...input.loopBreaker };
  if (input.maxAttemptsPerDay !== undefined) spec.maxAttemptsPerDay = input.maxAttemptsPerDay;
  return spec;
}

/** Applies a PATCH to a stored spec (as input, so it is validated again as a whole). */
export function applyJobPatch(spec: JobSpec, patch: JobPatchInput): JobSpecInput {
  const out: Record<string, unknown> = { ...spec };
  for (const [k, v] of Object.entries(patch)) {
    if (v === undefined) continue;
    if (v === null) delete out[k];
    else if (k === 'retry' || k === 'executionConditions') {
      // Merged field by field; a null inside removes that field (e.g. the role quota).
      const merged: Record<string, unknown> = { ...(out[k] as object), ...(v as object) };
      for (const [f, fv] of Object.entries(merged)) if (fv === null) delete merged[f];
      out[k] = merged;
    }
    else out[k] = v;
  }
  return out as JobSpecInput;
}

// ---- Pure contradiction checks ---------------------------------------------------------------

export interface JobIssue {
  /** Dotted path of the setting, e.g. `toleranceS`, `window.end`, `preconditions.1.jsonField`. */
  field: string;
  message: string;
  severity: 'error' | 'warning';
}

function minutesOf(t: string): number | null {
  const m = /^(\d{2}):(\d{2})$/.exec(t);
  if (!m) return null;
  const v = Number(m[1]) * 60 + Number(m[2]);
  return v > 24 * 60 ? null : v;
}

/** Delay before retry number `n` (1-based). */
export function retryDelayS(retry: JobSpec['retry'], n: number): number {
  return retry.backoff === 'exponential' ? retry.firstDelayS * 2 ** (n - 1) : retry.firstDelayS;
}

/** Sum of the delays before every retry (`maxAttempts - 1` of them), seconds. */
export function totalRetryDelayS(retry: JobSpec['retry']): number {
  let total = 0;
  for (let n = 1; n < retry.maxAttempts; n++) total += retryDelayS(retry, n);
  return total;
}

/** True when the retry policy is the default one (nobody chose it). */
export function isDefaultRetry(retry: JobSpec['retry']): boolean {
  const d = JOB_DEFAULTS.retry;
  return retry.maxAttempts === d.maxAttempts && retry.firstDelayS === d.firstDelayS && retry.backoff === d.backoff;
}

/**
 * Retries that cannot all land inside `spanS` (the window, or the time between two slots) under
 * “Skip and alert”, where a retry after the window closes is skipped. Severity follows the VALUE:
 * an error for a retry policy somebody chose, a warning for the default one, so a stored job (its
 * defaults filled in) validates exactly as the input it was created from.
 */
export function retryReachIssue(spec: JobSpec, spanS: number, what: string): JobIssue | null {
  const retries = spec.retry.maxAttempts - 1;
  if (spec.missedWindow !== 'skip_and_alert' || retries <= 0) return null;
  const total = totalRetryDelayS(spec.retry);
  if (total < spanS) return null;
  const defaults = isDefaultRetry(spec.retry);
  return {
    field: 'retry',
    severity: defaults ? 'warning' : 'error',
    message: `${retries} retr${retries === 1 ? 'y takes' : 'ies take'} ${total} s of delays${defaults ? ' (the default retry settings)' : ''}, longer than ${what}; under ${quoted(MISSED_WINDOW_LABELS.skip_and_alert)} a retry that lands after the window closes is skipped, so the last retries can never run (shorten the delays, lower the attempts, or widen the window)`,
  };
}

/**
 * Settings that contradict each other, in plain words. Pure (no calendar lookups, no clock): the
 * editor can run it on every keystroke. The core adds the schedule library's checks.
 *
 * 1. A function of the normalised spec only: the same job gives the same issues on create, on
 *    every update, in `validate` and in the editor (defaults are values, not choices).
 * 2. Messages name settings and policies with the editor's labels (job-labels.ts).
 */
export function jobContradictions(spec: JobSpec): JobIssue[] {
  const issues: JobIssue[] = [];
  const error = (field: string, message: string) => issues.push({ field, message, severity: 'error' });
  const warning = (field: string, message: string) => issues.push({ field, message, severity: 'warning' });
  const runNow = quoted(MISSED_WINDOW_LABELS.run_now);

  // Missed-window policy and its tolerance.
  if (spec.missedWindow === 'run_now' && spec.toleranceS === undefined) {
    error('toleranceS', `${runNow} needs a tolerance: how long after the window closed a missed slot may still start`);
  }
  if (spec.missedWindow !== 'run_now' && spec.toleranceS !== undefined) {
    error('toleranceS', `a tolerance only applies to ${runNow}, but a missed slot is set to ${quoted(MISSED_WINDOW_LABELS[spec.missedWindow])}; clear the tolerance or choose ${runNow}`);
  }
  const period = spec.schedule.everyS;
  if (spec.toleranceS !== undefined && typeof period === 'number' && period > 0 && spec.toleranceS > period) {
    error('toleranceS', toleranceTooLong(spec.toleranceS, period));
  }
  if (spec.missedWindow === 'fold_into_next' && spec.overlap === 'allow') {
    error(
      'overlap',
      `${quoted(MISSED_WINDOW_LABELS.fold_into_next)} makes the next run cover the missed slots, which assumes runs of this job follow one another; with ${quoted(OVERLAP_LABELS.allow)} two runs may work on the same slots at once (choose ${quoted(OVERLAP_LABELS.skip)} or ${quoted(OVERLAP_LABELS.queue_one)})`,
    );
  }

  // Window length vs retries and maintenance.
  const ws = spec.window ? minutesOf(spec.window.start) : null;
  const we = spec.window ? minutesOf(spec.window.end) : null;
  const windowS = ws !== null && we !== null && we > ws ? (we - ws) * 60 : null;
  const span = windowS ?? (typeof period === 'number' && period > 0 ? period : null);
  if (span !== null) {
    const what = windowS !== null ? `the window ${spec.window!.start}–${spec.window!.end} (${windowS} s)` : `the ${span} s between two slots`;
    const reach = retryReachIssue(spec, span, what);
    if (reach) issues.push(reach);
  }
  if (spec.retry.maxAttempts > 1 && spec.retry.firstDelayS < 10) {
    warning('retry.firstDelayS', `retrying ${spec.retry.firstDelayS} s after a failure hammers a struggling dependency; a first delay of a few minutes is safer`);
  }

  const mws = spec.executionConditions.maintenanceWindows ?? [];
  mws.forEach((mw, i) => {
    const s = minutesOf(mw.start);
    const e = minutesOf(mw.end);
    if (s !== null && e !== null && e <= s) {
      error(`executionConditions.maintenanceWindows.${i}.end`, `maintenance window end ${mw.end} is not after its start ${mw.start}; windows cannot cross midnight (split it in two)`);
    } else if (s !== null && e !== null && ws !== null && we !== null && s <= ws && e >= we && !mw.days) {
      error(
        `executionConditions.maintenanceWindows.${i}`,
        `maintenance window ${mw.start}–${mw.end} covers the whole execution window ${spec.window!.start}–${spec.window!.end} every day, so the job can never be dispatched`,
      );
    }
  });

  // Calendar policy.
  if (spec.calendarPolicy !== undefined && spec.calendar === undefined) {
    error('calendarPolicy', calendarPolicyWithoutCalendar(spec.calendarPolicy));
  }

  // Preconditions.
  spec.preconditions.forEach((p, i) => {
    const f = `preconditions.${i}`;
    switch (p.kind) {
      case 'http':
        if (p.equals !== undefined && p.jsonField === undefined) error(`${f}.jsonField`, '“Equals (JSON)” is set but “JSON field” is not: say which field of the JSON reply must equal it');
        if (!/^https?:\/\//i.test(p.url)) error(`${f}.url`, `'${p.url}' is not an http(s) URL`);
        break;
      case 'file':
        if (p.after !== undefined && (p.check ?? 'exists') === 'exists') {
          error(`${f}.after`, '“After” only applies when the file must have been modified after a time; with “it exists” it would be ignored');
        }
        break;
      case 'command':
        if (/[;&|`$<>]/.test(p.argv[0] ?? '') || (p.argv.length === 1 && /\s/.test(p.argv[0] ?? ''))) {
          error(`${f}.argv`, 'the program and each of its arguments go on a line of their own: they are run without a shell');
        }
        break;
      case 'signal':
      case 'agent':
        break;
    }
  });
  const labels = new Map<string, number>();
  spec.preconditions.forEach((p, i) => {
    const l = preconditionLabel(p, i);
    if (labels.has(l)) error(`preconditions.${i}.label`, `two preconditions are both called '${l}'; give one a distinct label`);
    labels.set(l, i);
  });

  if (spec.missedWindow === 'run_now' && spec.backfillCapPerTick === 0) {
    warning('backfillCapPerTick', 'with 0 backfills per tick, a slot missed beyond the tolerance waits in the backfill queue until an operator runs it');
  }
  return issues;
}

/** A tolerance longer than the time between two slots. */
export function toleranceTooLong(toleranceS: number, periodS: number): string {
  return `the tolerance is ${toleranceS} s but a slot comes every ${periodS} s, so a missed slot could still start after the next one is due; use at most ${periodS} s`;
}

/** The name a precondition's verdicts are recorded under (`checks.name`). */
export function preconditionLabel(p: PreconditionInput, index: number): string {
  if (p.label) return p.label;
  switch (p.kind) {
    case 'signal':
      return `signal:${p.name}`;
    case 'agent':
      return `agent:${p.check}`;
    case 'file':
      return `file#${index + 1}`;
    case 'http':
      return `http#${index + 1}`;
    case 'command':
      return `command#${index + 1}`;
  }
}

/** Policy values in the editor's words, for "must be one of" messages. */
const VALUE_LABELS: Record<string, Record<string, string>> = {
  missedWindow: MISSED_WINDOW_LABELS,
  overlap: OVERLAP_LABELS,
  calendarPolicy: CALENDAR_POLICY_LABELS,
  dstGapPolicy: DST_GAP_LABELS,
  'retry.backoff': BACKOFF_LABELS,
};

const TYPE_WORDS: Record<string, string> = {
  int: 'a whole number',
  number: 'a number',
  string: 'text',
  boolean: 'on or off (true or false)',
  array: 'a list',
  object: 'a group of settings',
};

function valueAt(input: unknown, path: ReadonlyArray<PropertyKey>): unknown {
  let v = input;
  for (const k of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[k];
  }
  return v;
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** One zod issue in field-specific words: "Path cannot be empty", not "Too small: expected string…". */
function schemaMessage(issue: z.core.$ZodIssue, field: string, label: string, input: unknown): string {
  switch (issue.code) {
    case 'invalid_type': {
      if (valueAt(input, issue.path) === undefined) return `${label} is required`;
      return `${label} must be ${TYPE_WORDS[issue.expected] ?? issue.expected}`;
    }
    case 'too_small': {
      const min = Number(issue.minimum);
      if (issue.origin === 'string') return min <= 1 ? `${label} cannot be empty` : `${label} needs at least ${plural(min, 'character', 'characters')}`;
      if (issue.origin === 'array') return `${label} needs at least ${plural(min, 'entry', 'entries')}`;
      return issue.inclusive === false ? `${label} must be more than ${min}` : `${label} must be at least ${min}`;
    }
    case 'too_big': {
      const max = Number(issue.maximum);
      if (issue.origin === 'string') return `${label} is at most ${plural(max, 'character', 'characters')} long`;
      if (issue.origin === 'array') return `${label} takes at most ${plural(max, 'entry', 'entries')}`;
      return issue.inclusive === false ? `${label} must be less than ${max}` : `${label} must be at most ${max}`;
    }
    case 'invalid_value': {
      const words = VALUE_LABELS[field];
      return `${label} must be one of ${issue.values.map((v) => (words?.[String(v)] ? quoted(words[String(v)]!) : `'${String(v)}'`)).join(', ')}`;
    }
    case 'invalid_union':
      return 'discriminator' in issue && issue.discriminator !== undefined && Array.isArray((issue as { options?: unknown[] }).options)
        ? `${label} must be one of ${((issue as { options: unknown[] }).options).map((o) => `'${String(o)}'`).join(', ')}`
        : `${label} does not match any allowed form`;
    case 'unrecognized_keys': {
      const where = issue.path.length ? ` in ${label}` : '';
      return `unknown setting${issue.keys.length === 1 ? '' : 's'} ${issue.keys.map((k) => `'${k}'`).join(', ')}${where}`;
    }
    case 'invalid_format':
      // Our own patterns carry their own words; zod's default names a regex.
      return /^Invalid/.test(issue.message) ? `${label} is not in the expected format` : issue.message;
    case 'custom':
      return /^(must|is|has) /.test(issue.message) ? `${label} ${issue.message}` : issue.message;
    default:
      return `${label}: ${issue.message}`;
  }
}

/**
 * Converts zod issues to `{field, message}` issues whose messages name the field with the editor's
 * label. `input` is what was parsed (tells a missing value from a wrong one, and a precondition's kind).
 */
export function zodIssues(error: z.ZodError, prefix = '', input?: unknown): JobIssue[] {
  const kindAt = (i: number) => {
    const k = valueAt(input, ['preconditions', i, 'kind']);
    return typeof k === 'string' ? k : undefined;
  };
  return error.issues.map((i) => {
    const path = i.path.map(String).join('.');
    return {
      field: [prefix, path].filter(Boolean).join('.') || '(body)',
      message: schemaMessage(i, path, jobFieldLabel(path, kindAt), input),
      severity: 'error' as const,
    };
  });
}

// ---- Calendars -------------------------------------------------------------------------------

export const calendarInput = z.strictObject({
  id: calendarId,
  name: z.string().trim().min(1).max(200),
  /** IANA zone the calendar's dates are meant in (informational; see core/jobs/schedule/calendar.ts). */
  timezone: zoneName,
  /** ISO weekdays that are ordinary workdays: 1 = Monday … 7 = Sunday. */
  workdays: z.array(z.number().int().min(1).max(7)).max(7),
  /** Non-working dates `YYYY-MM-DD`. */
  holidays: z.array(civilDate).max(20_000),
  /** Make-up workdays `YYYY-MM-DD` (for example a Sunday worked in exchange for a holiday). */
  extraWorkdays: z.array(civilDate).max(20_000),
});
/** A calendar's rules, as the schedule library reads them (its `Calendar`). */
export type CalendarInput = z.infer<typeof calendarInput>;

/** PUT /calendars/{id}: the whole calendar except its id. */
export const calendarReplaceInput = calendarInput.omit({ id: true });

export const icsImportInput = z.strictObject({
  /** The .ics text. */
  ics: z.string().min(1).max(5 * 1024 * 1024),
  /** `merge` (default): add the dates to the calendar's lists; `replace`: replace both lists. */
  mode: z.enum(['merge', 'replace']).optional(),
  /** Zone to date timed events in (default: X-WR-TIMEZONE, else the calendar's zone). */
  timezone: zoneName.optional(),
});

/** A stored calendar: its rules and who changed them last. */
export interface BusinessCalendar extends CalendarInput {
  version: number;
  updatedAt: string;
  updatedBy: string;
}

// ---- Runs, backfills, checks ------------------------------------------------------------------

export const RUN_STATUSES = ['pending', 'running', 'success', 'failed', 'skipped'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

/** Why a run ended as it did (or what it is waiting for while open). */
export const RUN_DISPOSITIONS = [
  'waiting', // pending: the slot is open and being checked
  'dispatched', // a trigger is out, not acknowledged yet
  'running',
  'verifying', // the agent reported success; Gaffer checks the work itself (PROTOCOL §13)
  'retry_scheduled',
  'ran', // success
  'already_done', // success: the "already done?" checks passed before a later attempt went out (PROTOCOL §13)
  'skipped_calendar',
  'skipped_dst',
  'skipped_overlap',
  'skipped_not_ready',
  'skipped_paused',
  'skipped_kill_switch',
  'skipped_disabled',
  'skipped_maintenance',
  'skipped_quota',
  'skipped_budget', // a daily spend cap was reached until the window closed
  'missed',
  'folded',
  'failed',
  'held',
  'backfilled',
  'rejected', // failed, held for review, and the operator rejected it
] as const;
export type RunDisposition = (typeof RUN_DISPOSITIONS)[number];

export const RUN_TRIGGERS = ['schedule', 'catch_up', 'manual'] as const;
export type RunTrigger = (typeof RUN_TRIGGERS)[number];

export type RunErrorClass = 'retryable' | 'fatal' | 'needs_human' | 'lost' | 'undeliverable' | 'budget';

/** The operator's decision on a held run, carried by the `job_trigger` that runs it again (PROTOCOL §8). */
export interface RunApproval {
  decision: 'approved';
  note: string;
  by: string;
  at: string;
  /** PROTOCOL §16: the CLI session the held attempt reported (its stored `session` artifact), to resume. */
  session?: string;
}

/** `POST /runs/{id}/approve|reject` `{note}`. */
export const runDecisionInput = z.strictObject({ note: reason, actor: actorName });
/** Approving may set the run's spend cap from its next attempt on (PROTOCOL §14), in place of the job's. */
export const runApprovalInput = runDecisionInput.extend({ budget: perAttemptBudget.optional() });

export interface Run {
  id: string;
  jobId: string;
  /** Job name at claim time. */
  job: string;
  slot: string;
  /** When the slot was due. */
  slotAt: string;
  status: RunStatus;
  disposition: RunDisposition;
  trigger: RunTrigger;
  /** Dispatches so far (1 on the first). Continues counting across retries and backfills. */
  attempt: number;
  retryCount: number;
  maxRetry: number;
  /** When the runner looks at this run next (re-check, retry due, deadline), or null. */
  nextAttemptAt: string | null;
  /** Latest start the slot allows (window close, plus tolerance for run_now). */
  windowClosesAt: string | null;
  /** Deadline of the attempt in flight. */
  deadline: string | null;
  instanceId: string | null;
  /** Job version at claim time. */
  version: number;
  traceId: string;
  idempotencyKey: string;
  /** Older slot keys this run also covers (fold_into_next), oldest first. */
  covers: string[];
  /** Run that covers this folded slot. */
  coveredBy: string | null;
  /**
   * Present when this one row stands for a run of consecutive slots that got the same decision at
   * once (the older slots of a long gap: `docs/jobs.md` §6): `slots` of them, from `slot` (this
   * row's own) to `lastSlot`, due `slotAt` … `lastAt`. Slots inside it have no row of their own.
   */
  range?: RunRange;
  lastError: string | null;
  errorClass: RunErrorClass | null;
  /** Held for review (fatal / needs_human): never retried automatically. */
  held: boolean;
  output: unknown;
  createdAt: string;
  triggeredAt: string | null;
  startedAt: string | null;
  finishedAt: string | null;
  updatedAt: string;
}

export interface RunRange {
  slots: number;
  lastSlot: string;
  lastAt: string;
}

export interface RunStep {
  step: string;
  ref: string | null;
  attempt: number;
  instanceId: string;
  at: string;
}

export const BACKFILL_STATUSES = ['queued', 'held', 'dispatched', 'done', 'failed', 'cancelled'] as const;
export type BackfillStatus = (typeof BACKFILL_STATUSES)[number];

export interface Backfill {
  id: number;
  jobId: string;
  job: string;
  slot: string;
  slotAt: string;
  runId: string;
  /** Why the slot is in the queue (`failed`, `missed`, `not_ready`, `operator`, …). */
  reason: string;
  status: BackfillStatus;
  /** Backfill dispatches so far. */
  attempts: number;
  instanceId: string | null;
  lastError: string | null;
  errorClass: RunErrorClass | null;
  /** Job version the last backfill dispatch ran with. */
  version: number | null;
  note: string | null;
  actor: string;
  createdAt: string;
  updatedAt: string;
  dispatchedAt: string | null;
  finishedAt: string | null;
  /** The operator's approval this backfill re-runs a held run with (`POST /runs/{id}/approve`), else null. */
  approval: RunApproval | null;
}

export type CheckLayer = 'time' | 'precondition' | 'execution';
export type CheckVerdict = 'ready' | 'not_ready' | 'error';

export interface CheckRecord {
  jobId: string;
  slot: string;
  layer: CheckLayer;
  name: string;
  verdict: CheckVerdict;
  reason: string;
  evidence: unknown;
  /** Last evaluation. */
  at: string;
  /** First evaluation for this slot. */
  firstAt: string;
  /** Evaluations for this slot so far. */
  count: number;
  /** When the verdict last changed. */
  changedAt: string;
}

// ---- Jobs -----------------------------------------------------------------------------------

export interface PauseInfo {
  at: string;
  by: string;
  reason: string;
  /** The pause ends by itself then (auto-resume, audited), or null: until resumed by hand. */
  until: string | null;
  /** Runs already started finish (retries included); only new slots wait. */
  drain: boolean;
  /** Paused because the whole role is (resume the role to resume it). */
  role: boolean;
}

/** A whole role paused: its jobs are not dispatched and its tasks are not handed out. */
export interface RolePause {
  role: string;
  at: string;
  by: string;
  reason: string;
  until: string | null;
}

export interface Job extends JobSpec {
  id: string;
  /** Bumped on every edit; stored on each run. */
  version: number;
  paused: PauseInfo | null;
  createdAt: string;
  updatedAt: string;
  createdBy: string;
  updatedBy: string;
  /** When the runner looks at the job's next slot. */
  nextCheckAt: string | null;
}

export interface JobSummary extends Job {
  nextSlot: { slot: string; at: string } | null;
  lastRun: Pick<Run, 'id' | 'slot' | 'status' | 'disposition' | 'finishedAt'> | null;
  openBackfills: number;
}

export interface JobSettings {
  killSwitch: { on: boolean; reason: string | null; by: string | null; at: string | null };
  /** Most job runs in flight at once across all jobs (null: no limit). */
  globalConcurrency: number | null;
  /**
   * The loop breaker (PROTOCOL §14), for tasks and job runs: this many attempts in a row ending
   * with the same error stop the retries (default 3; 0 turns it off). A job may set its own.
   */
  loopBreaker: { sameErrorTimes: number };
}

// ---- Operator inputs ---------------------------------------------------------------------------

export const operatorReason = z.strictObject({ reason, actor: actorName });
/** How far ahead a pause's `until` may be (a year and a day); further is `bad_request`. */
export const MAX_PAUSE_DAYS = 366;
/** A pause's `until` (job or role), as every entry point documents it. */
export const pauseUntil = z
  .iso.datetime({ offset: true })
  .nullable()
  .optional()
  .describe(`When the pause ends by itself (ISO-8601 with an offset): in the future and at most ${MAX_PAUSE_DAYS} days ahead, else bad_request. Null or absent: until resumed.`);
/** Pause a job or a role: with a reason; optionally until a time (auto-resume) and, for a job, finishing running work first. */
export const pauseInput = z.strictObject({
  reason,
  actor: actorName,
  until: pauseUntil,
  drain: z.boolean().optional(),
});
export const optionalReason = z.strictObject({ reason: reason.optional(), actor: actorName });
export const triggerNowInput = z.strictObject({
  reason,
  actor: actorName,
  /** A specific slot key to claim (default: the slot the current instant falls in). */
  slot: z.string().min(1).max(40).optional(),
  /** Evaluate preconditions first instead of overriding them (default false: "run now" overrides). */
  checkPreconditions: z.boolean().optional(),
});
export const killSwitchInput = z.strictObject({ on: z.boolean(), reason, actor: actorName });
export const concurrencyInput = z.strictObject({ limit: z.number().int().min(1).max(100_000).nullable(), reason, actor: actorName });
export const loopBreakerSettingInput = z.strictObject({ sameErrorTimes, reason, actor: actorName });
export const BACKFILL_ACTIONS = ['run_now', 'cancel', 'mark_done'] as const;
export type BackfillAction = (typeof BACKFILL_ACTIONS)[number];
export const backfillActionInput = z.strictObject({ action: z.enum(BACKFILL_ACTIONS), reason, actor: actorName });
export const requestBackfillInput = z.strictObject({ slot: z.string().min(1).max(40), reason, actor: actorName });
/** `POST /runs/{id}/retry`: the reason is optional (audited as "retried by hand"). */
export const retryRunInput = z.strictObject({ reason: reason.optional(), actor: actorName });

export const listJobsInput = z.strictObject({
  role: roleName.optional(),
  enabled: z.boolean().optional(),
  paused: z.boolean().optional(),
  limit: z.number().int().min(1).max(1000).optional(),
  after: z.string().max(200).optional(),
});
/**
 * Where a failed run stands for the operator (core/jobs/run-settlement.ts): `failed` — it ended
 * failed for good (never backfilled, not being run again, not awaiting a decision);
 * `awaiting_decision` — held for review, waiting for the operator's approve / reject.
 */
export const RUN_SETTLEMENTS = ['failed', 'awaiting_decision'] as const;
export type RunSettlement = (typeof RUN_SETTLEMENTS)[number];

export const listRunsInput = z.strictObject({
  job: z.string().min(1).max(200).optional(),
  status: z.enum(RUN_STATUSES).optional(),
  disposition: z.enum(RUN_DISPOSITIONS).optional(),
  settled: z.enum(RUN_SETTLEMENTS).optional(),
  /** Slots due at or after `from` and before `to` (ISO instants or epoch ms). */
  from: z.union([z.iso.datetime({ offset: true }), z.number().int().min(0)]).optional(),
  to: z.union([z.iso.datetime({ offset: true }), z.number().int().min(0)]).optional(),
  limit: z.number().int().min(1).max(1000).optional(),
  after: z.string().max(200).optional(),
});
export const listBackfillsInput = z.strictObject({
  job: z.string().min(1).max(200).optional(),
  status: z.enum(BACKFILL_STATUSES).optional(),
  limit: z.number().int().min(1).max(1000).optional(),
  after: z.number().int().min(0).optional(),
});

// ---- Insight: preview, explain, ledger, downtime simulation -----------------------------------

export interface PreviewItem {
  slot: string;
  /** Due instant (UTC). */
  at: string;
  /** Nominal local time `YYYY-MM-DDTHH:MM` in the job's zone. */
  local: string;
  /** `due`, `calendar_skip` or `dst_skip`. */
  disposition: 'due' | 'calendar_skip' | 'dst_skip';
  dayType?: 'workday' | 'weekend' | 'holiday' | 'extra_workday';
  /** Original date when `next_workday` moved the slot. */
  movedFrom?: string;
  /** Set when the local time did not exist (DST gap) and the slot runs at the end of the gap. */
  shifted?: 'dst_gap';
  /** The slot's window: opens/closes (UTC). */
  opensAt: string;
  closesAt: string;
}

export interface PreviewResult {
  items: PreviewItem[];
  /** Validation issues (for an unsaved spec; empty for a saved job). */
  issues: JobIssue[];
  timezone: string;
  /**
   * True when fewer than `count` due slots are listed because the scan stopped at its limit
   * (4 × count entries, at least count + 50, or ten years ahead): the list was cut short.
   */
  truncated: boolean;
  /** Pass as `after` to continue: the last listed slot's due time (or where the scan stopped); null when no slot follows. */
  next: string | null;
}

export interface LayerItem {
  name: string;
  verdict: CheckVerdict | 'unknown' | 'will_check';
  reason: string;
  evidence?: unknown;
  /** For recorded checks: when, how often. */
  at?: string;
  firstAt?: string;
  count?: number;
  changedAt?: string;
}

export interface LayerVerdict {
  verdict: CheckVerdict | 'unknown' | 'will_check';
  reason: string;
  items: LayerItem[];
}

export interface Explanation {
  jobId: string;
  job: string;
  version: number;
  /** The instant asked about, and the time of the answer. */
  at: string;
  now: string;
  /** `past`: answered from recorded facts; `future`: a forecast. */
  tense: 'past' | 'future';
  /** The slot the instant falls in (latest slot due at or before it) and the next one. */
  slot: (PreviewItem & { window: { opensAt: string; closesAt: string; latestStart: string } }) | null;
  nextSlot: PreviewItem | null;
  /** One line: what happened / will happen, and why. */
  outcome: string;
  summary: string;
  layers: { time: LayerVerdict; preconditions: LayerVerdict; execution: LayerVerdict };
  run: Run | null;
  steps: RunStep[];
  backfills: Backfill[];
  /** Audit events about the run (oldest first, at most 100). */
  trail: Array<{ id: number; at: string; type: string; actor: string; detail: unknown }>;
  jobState: { enabled: boolean; paused: PauseInfo | null; killSwitch: JobSettings['killSwitch'] };
}

export interface LedgerEntry {
  slot: string;
  at: string;
  local: string | null;
  /** What the schedule says about the slot today (`null`: not a slot of the current schedule). */
  expected: 'due' | 'calendar_skip' | 'dst_skip' | null;
  /** The outcome: a run disposition, or `scheduled` / `not_evaluated` / `before_job` without a run. */
  disposition: RunDisposition | 'scheduled' | 'not_evaluated' | 'before_job';
  status: RunStatus | null;
  run: Run | null;
  backfills: Backfill[];
}

/** Slots of one local day (`2026-11-30`) or hour (`2026-11-30T09`) of the job's zone, counted by disposition. */
export interface LedgerBucket {
  key: string;
  /** Due instant of its first slot. */
  first: string;
  slots: number;
  counts: Partial<Record<LedgerEntry['disposition'], number>>;
}

export interface LedgerBucketsResult {
  zone: string;
  by: 'day' | 'hour';
  buckets: LedgerBucket[];
  /** Pass as `from` to go on (the range held more slots than one call reads), or null. */
  next: string | null;
}

/** A slot "run now" can run, and what pressing it would do (the console says so before it runs). */
export interface TriggerChoice {
  /** `current`: the slot the current instant falls in — what "run now" takes when no slot is named. */
  which: 'current' | 'previous' | 'next';
  slot: string;
  at: string;
  local: string;
  disposition: 'due' | 'calendar_skip' | 'dst_skip';
  dayType?: 'workday' | 'weekend' | 'holiday' | 'extra_workday';
  /** `claim`: a new run; `dispatch`: the run waiting for this slot is dispatched now; `exists`: nothing new (one run per slot). */
  effect: 'claim' | 'dispatch' | 'exists';
  run: Pick<Run, 'id' | 'status' | 'disposition'> | null;
}

export interface TriggerChoices {
  jobId: string;
  job: string;
  now: string;
  zone: string;
  choices: TriggerChoice[];
  /** Why nothing can be triggered now (kill switch, disabled job), or null. */
  refused: string | null;
  /** The job has preconditions ("check preconditions" then means something). */
  preconditions: number;
}

export interface LedgerResult {
  items: LedgerEntry[];
  /** Cursor (an ISO instant) to continue after, or null. */
  next: string | null;
  counts: Record<string, number>;
}

export interface DowntimeItem {
  slot: string;
  at: string;
  local: string;
  windowClosesAt: string;
  /** What the slot would get when Gaffer comes back at `to`. */
  decision: 'runs_late' | 'runs_on_time' | 'folded' | 'skipped_alert' | 'backfill_queued' | 'skipped_calendar' | 'skipped_dst' | 'skipped_paused' | 'skipped_kill_switch';
  detail: string;
  /** For folded slots: the slot whose run would cover it. */
  coveredBy?: string;
  /** For queued backfills: the tick at which it would be dispatched (cap per tick, oldest first). */
  backfillAt?: string;
  /** The item stands for a run of slots that get this decision in one row (`Run.range`). */
  range?: RunRange;
}

export interface DowntimeSimulation {
  jobId: string;
  job: string;
  from: string;
  to: string;
  policy: MissedWindowPolicy;
  toleranceS: number | null;
  backfillCapPerTick: number;
  items: DowntimeItem[];
  summary: { slots: number; runLate: number; folded: number; skipped: number; backfills: number; dispatchesAtRestart: number; text: string };
}
