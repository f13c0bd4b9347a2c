/**
 * The job editor's form ↔ the job spec of the wire (common/job-schema.ts), and its client-side
 * validation with the SAME zod schema and contradiction checks the server uses.
 *
 * 1. The form holds strings (what the operator typed); `formToSpec` turns it into a spec and
 *    reports what cannot even become a spec (a number that is not one, JSON that does not parse)
 *    as issues at those fields.
 * 2. Settings left at their defaults are left out of the spec (it reads as the operator wrote it,
 *    and `formFromSpec(formToSpec(f))` round-trips). Validation does not depend on it: the checks
 *    see the normalised spec, so the editor, `jobs.validate` and the save agree on every issue.
 * 3. Issue fields are the wire's dotted paths (`window.end`, `preconditions.1.url`); the editor
 *    shows each issue at the input with that path.
 */
import {
  JOB_DEFAULTS,
  jobContradictions,
  jobSpecInput,
  normalizeJobSpec,
  zodIssues,
  type JobIssue,
  type JobSpec,
  type JobSpecInput,
  type MissedWindowPolicy,
  type OverlapPolicy,
  type PreconditionInput,
  type PreconditionKind,
} from '../../../src-main/common/job-schema';
import type { VerifySpec } from '../../../src-main/common/verify';
import { capFromDraft } from '../../lib/cap-draft';
import { dedupeIssues } from '../../lib/field-issues';
import { stableJson } from '../../lib/format';

export interface PreconditionForm {
  kind: PreconditionKind;
  label: string;
  // file
  path: string;
  check: 'exists' | 'modified_after';
  after: '' | 'slot' | 'date' | 'yesterday';
  // http
  url: string;
  expectStatus: string;
  jsonField: string;
  /** JSON text. */
  equals: string;
  // http, command, agent
  timeoutS: string;
  // command: one argument per line
  argv: string;
  cwd: string;
  // signal
  name: string;
  key: string;
  // agent
  agentCheck: string;
  role: string;
}

export interface MaintenanceForm {
  start: string;
  end: string;
  /** ISO weekdays; empty = every day. */
  days: number[];
}

export interface JobForm {
  name: string;
  role: string;
  description: string;
  scheduleKind: 'cron' | 'interval';
  cron: string;
  timezone: string;
  everyS: string;
  windowOn: boolean;
  windowStart: string;
  windowEnd: string;
  recheckEveryS: string;
  calendar: string;
  calendarPolicy: '' | 'skip' | 'next_workday';
  preconditions: PreconditionForm[];
  maxConcurrentPerRole: string;
  maintenanceWindows: MaintenanceForm[];
  retryMaxAttempts: string;
  retryFirstDelayS: string;
  retryBackoff: 'fixed' | 'exponential';
  missedWindow: MissedWindowPolicy;
  toleranceS: string;
  overlap: OverlapPolicy;
  /** JSON text; empty = null. */
  payload: string;
  dstGapPolicy: 'shift_forward' | 'skip';
  backfillCapPerTick: string;
  runTimeoutS: string;
  /** The spend cap of one run (PROTOCOL §8, the job's `budget`): dollars and tokens as typed; empty = none. */
  budgetUsd: string;
  budgetTokens: string;
  enabled: boolean;
  /**
   * "Done when…" (PROTOCOL §13): as saved, or as the editor's section declares it (checked with the
   * rest of the spec, so a half-typed check is an issue at its field). Carried through unchanged,
   * so saving the job keeps its checks; a job without them has none here.
   */
  verify?: VerifySpec | Record<string, unknown>;
}

export function emptyPrecondition(kind: PreconditionKind = 'signal'): PreconditionForm {
  return { kind, label: '', path: '', check: 'exists', after: '', url: '', expectStatus: '', jsonField: '', equals: '', timeoutS: '', argv: '', cwd: '', name: '', key: '', agentCheck: '', role: '' };
}

export function emptyJobForm(timezone = 'UTC'): JobForm {
  return {
    name: '',
    role: '',
    description: '',
    scheduleKind: 'cron',
    cron: '0 9 * * *',
    timezone,
    everyS: '3600',
    windowOn: false,
    windowStart: '09:00',
    windowEnd: '10:00',
    recheckEveryS: '300',
    calendar: '',
    calendarPolicy: '',
    preconditions: [],
    maxConcurrentPerRole: '',
    maintenanceWindows: [],
    retryMaxAttempts: String(JOB_DEFAULTS.retry.maxAttempts),
    retryFirstDelayS: String(JOB_DEFAULTS.retry.firstDelayS),
    retryBackoff: JOB_DEFAULTS.retry.backoff,
    missedWindow: JOB_DEFAULTS.missedWindow,
    toleranceS: '',
    overlap: JOB_DEFAULTS.overlap,
    payload: '',
    dstGapPolicy: JOB_DEFAULTS.dstGapPolicy,
    backfillCapPerTick: String(JOB_DEFAULTS.backfillCapPerTick),
    runTimeoutS: String(JOB_DEFAULTS.runTimeoutS),
    budgetUsd: '',
    budgetTokens: '',
    enabled: true,
  };
}

const str = (v: number | undefined) => (v === undefined ? '' : String(v));

function preconditionToForm(p: PreconditionInput): PreconditionForm {
  const f = emptyPrecondition(p.kind);
  f.label = p.label ?? '';
  switch (p.kind) {
    case 'file':
      return { ...f, path: p.path, check: p.check ?? 'exists', after: p.after ?? '' };
    case 'http':
      return { ...f, url: p.url, expectStatus: str(p.expectStatus), jsonField: p.jsonField ?? '', equals: p.equals === undefined ? '' : JSON.stringify(p.equals), timeoutS: str(p.timeoutS) };
    case 'command':
      return { ...f, argv: p.argv.join('\n'), cwd: p.cwd ?? '', timeoutS: str(p.timeoutS) };
    case 'signal':
      return { ...f, name: p.name, key: p.key ?? '' };
    case 'agent':
      return { ...f, agentCheck: p.check, role: p.role ?? '', timeoutS: str(p.timeoutS) };
  }
}

/** The editor's form for a stored (or unsaved) spec. */
export function formFromSpec(spec: JobSpecInput | JobSpec): JobForm {
  const f = emptyJobForm(spec.schedule.timezone ?? 'UTC');
  const interval = typeof spec.schedule.everyS === 'number';
  return {
    ...f,
    name: spec.name,
    role: spec.role,
    description: spec.description ?? '',
    scheduleKind: interval ? 'interval' : 'cron',
    cron: interval ? f.cron : (spec.schedule.cron ?? ''),
    timezone: spec.schedule.timezone ?? (interval ? '' : 'UTC'),
    everyS: interval ? String(spec.schedule.everyS) : f.everyS,
    windowOn: spec.window !== undefined,
    windowStart: spec.window?.start ?? f.windowStart,
    windowEnd: spec.window?.end ?? f.windowEnd,
    recheckEveryS: spec.window ? String(spec.window.recheckEveryS) : f.recheckEveryS,
    calendar: spec.calendar ?? '',
    calendarPolicy: spec.calendarPolicy ?? '',
    preconditions: (spec.preconditions ?? []).map(preconditionToForm),
    maxConcurrentPerRole: str(spec.executionConditions?.maxConcurrentPerRole),
    maintenanceWindows: (spec.executionConditions?.maintenanceWindows ?? []).map((m) => ({ start: m.start, end: m.end, days: m.days ? [...m.days] : [] })),
    retryMaxAttempts: String(spec.retry?.maxAttempts ?? JOB_DEFAULTS.retry.maxAttempts),
    retryFirstDelayS: String(spec.retry?.firstDelayS ?? JOB_DEFAULTS.retry.firstDelayS),
    retryBackoff: spec.retry?.backoff ?? JOB_DEFAULTS.retry.backoff,
    missedWindow: spec.missedWindow ?? JOB_DEFAULTS.missedWindow,
    toleranceS: str(spec.toleranceS),
    overlap: spec.overlap ?? JOB_DEFAULTS.overlap,
    payload: spec.payload === undefined || spec.payload === null ? '' : JSON.stringify(spec.payload, null, 2),
    dstGapPolicy: spec.dstGapPolicy ?? JOB_DEFAULTS.dstGapPolicy,
    backfillCapPerTick: String(spec.backfillCapPerTick ?? JOB_DEFAULTS.backfillCapPerTick),
    runTimeoutS: String(spec.runTimeoutS ?? JOB_DEFAULTS.runTimeoutS),
    budgetUsd: str(spec.budget?.maxCostUsdPerRun),
    budgetTokens: str(spec.budget?.maxTokensPerRun),
    enabled: spec.enabled ?? true,
    ...(spec.verify ? { verify: spec.verify } : {}),
  };
}

export interface FormToSpec {
  /** The spec as it goes on the wire (may still be invalid: validate it). */
  spec: Record<string, unknown>;
  /** Values that could not be read (not a number, not JSON), at their fields. */
  issues: JobIssue[];
}

/** Turns the form into a wire spec; what cannot be read is reported at its field. */
export function formToSpec(f: JobForm): FormToSpec {
  const issues: JobIssue[] = [];
  const bad = (field: string, message: string) => issues.push({ field, message, severity: 'error' });
  const num = (field: string, text: string, opts: { int?: boolean } = {}): number | undefined => {
    const t = text.trim();
    if (t === '') return undefined;
    const n = Number(t);
    if (!Number.isFinite(n) || (opts.int && !Number.isInteger(n))) {
      bad(field, `“${t}” is not ${opts.int ? 'a whole number' : 'a number'}`);
      return undefined;
    }
    return n;
  };
  const json = (field: string, text: string): { ok: boolean; value?: unknown } => {
    const t = text.trim();
    if (t === '') return { ok: true };
    try {
      return { ok: true, value: JSON.parse(t) as unknown };
    } catch (e) {
      bad(field, `not valid JSON: ${(e as Error).message}`);
      return { ok: false };
    }
  };

  const spec: Record<string, unknown> = { name: f.name.trim(), role: f.role.trim() };
  if (f.description.trim()) spec.description = f.description.trim();
  if (f.scheduleKind === 'cron') {
    spec.schedule = { cron: f.cron.trim(), ...(f.timezone.trim() ? { timezone: f.timezone.trim() } : {}) };
  } else {
    const everyS = num('schedule.everyS', f.everyS);
    if (everyS === undefined && !issues.some((i) => i.field === 'schedule.everyS')) bad('schedule.everyS', 'an interval needs a number of seconds');
    spec.schedule = { ...(everyS !== undefined ? { everyS } : {}), ...(f.timezone.trim() ? { timezone: f.timezone.trim() } : {}) };
  }
  if (f.windowOn) {
    const recheck = num('window.recheckEveryS', f.recheckEveryS);
    if (recheck === undefined && !issues.some((i) => i.field === 'window.recheckEveryS')) bad('window.recheckEveryS', 'how often to re-check inside the window, in seconds');
    spec.window = { start: f.windowStart.trim(), end: f.windowEnd.trim(), recheckEveryS: recheck ?? 0 };
  }
  if (f.calendar) spec.calendar = f.calendar;
  if (f.calendarPolicy) spec.calendarPolicy = f.calendarPolicy;

  const pre: Array<Record<string, unknown>> = [];
  f.preconditions.forEach((p, i) => {
    const at = (k: string) => `preconditions.${i}.${k}`;
    const o: Record<string, unknown> = { kind: p.kind };
    if (p.label.trim()) o.label = p.label.trim();
    switch (p.kind) {
      case 'file':
        o.path = p.path.trim();
        if (p.check !== 'exists') o.check = p.check;
        if (p.after) o.after = p.after;
        break;
      case 'http': {
        o.url = p.url.trim();
        const st = num(at('expectStatus'), p.expectStatus, { int: true });
        if (st !== undefined) o.expectStatus = st;
        if (p.jsonField.trim()) o.jsonField = p.jsonField.trim();
        const eq = json(at('equals'), p.equals);
        if (eq.value !== undefined) o.equals = eq.value;
        const t = num(at('timeoutS'), p.timeoutS);
        if (t !== undefined) o.timeoutS = t;
        break;
      }
      case 'command': {
        o.argv = p.argv.split('\n').map((a) => a.trim()).filter(Boolean);
        if (p.cwd.trim()) o.cwd = p.cwd.trim();
        const t = num(at('timeoutS'), p.timeoutS);
        if (t !== undefined) o.timeoutS = t;
        break;
      }
      case 'signal':
        o.name = p.name.trim();
        if (p.key.trim()) o.key = p.key.trim();
        break;
      case 'agent': {
        o.check = p.agentCheck.trim();
        if (p.role.trim()) o.role = p.role.trim();
        const t = num(at('timeoutS'), p.timeoutS);
        if (t !== undefined) o.timeoutS = t;
        break;
      }
    }
    pre.push(o);
  });
  if (pre.length) spec.preconditions = pre;

  const ec: Record<string, unknown> = {};
  const quota = num('executionConditions.maxConcurrentPerRole', f.maxConcurrentPerRole, { int: true });
  if (quota !== undefined) ec.maxConcurrentPerRole = quota;
  if (f.maintenanceWindows.length) {
    ec.maintenanceWindows = f.maintenanceWindows.map((m) => ({ start: m.start.trim(), end: m.end.trim(), ...(m.days.length ? { days: [...m.days].sort((a, b) => a - b) } : {}) }));
  }
  if (Object.keys(ec).length) spec.executionConditions = ec;

  const maxAttempts = num('retry.maxAttempts', f.retryMaxAttempts, { int: true }) ?? JOB_DEFAULTS.retry.maxAttempts;
  const firstDelayS = num('retry.firstDelayS', f.retryFirstDelayS, { int: true }) ?? JOB_DEFAULTS.retry.firstDelayS;
  const d = JOB_DEFAULTS.retry;
  if (maxAttempts !== d.maxAttempts || firstDelayS !== d.firstDelayS || f.retryBackoff !== d.backoff) {
    spec.retry = { maxAttempts, firstDelayS, backoff: f.retryBackoff };
  }
  if (f.missedWindow !== JOB_DEFAULTS.missedWindow) spec.missedWindow = f.missedWindow;
  const tol = num('toleranceS', f.toleranceS, { int: true });
  if (tol !== undefined) spec.toleranceS = tol;
  if (f.overlap !== JOB_DEFAULTS.overlap) spec.overlap = f.overlap;
  const payload = json('payload', f.payload);
  if (payload.value !== undefined) spec.payload = payload.value;
  if (f.dstGapPolicy !== JOB_DEFAULTS.dstGapPolicy) spec.dstGapPolicy = f.dstGapPolicy;
  const cap = num('backfillCapPerTick', f.backfillCapPerTick, { int: true });
  if (cap !== undefined && cap !== JOB_DEFAULTS.backfillCapPerTick) spec.backfillCapPerTick = cap;
  const rt = num('runTimeoutS', f.runTimeoutS, { int: true });
  if (rt !== undefined && rt !== JOB_DEFAULTS.runTimeoutS) spec.runTimeoutS = rt;
  // The same reading as the approve and unblock dialogs' cap fields ("$0.50", "200,000"); empty: no cap.
  const runCap = capFromDraft({ usd: f.budgetUsd, tokens: f.budgetTokens });
  if ('problem' in runCap) bad('budget', runCap.problem);
  else if (runCap.budget) spec.budget = runCap.budget;
  if (!f.enabled) spec.enabled = false;
  if (f.verify !== undefined) spec.verify = f.verify;
  return { spec, issues };
}

export interface ClientValidation {
  spec: Record<string, unknown>;
  /** The spec when it passes the shared zod schema (then it can be saved or previewed). */
  valid: JobSpecInput | null;
  normalized: JobSpec | null;
  issues: JobIssue[];
}

/**
 * Everything the editor can check without a round trip: readable values, the shared zod schema
 * (shapes and ranges) and the shared contradiction checks. The server adds the schedule checks
 * (cron, zone, window vs cron, calendar) through `jobs.validate`.
 */
export function validateForm(f: JobForm): ClientValidation {
  const { spec, issues } = formToSpec(f);
  const parsed = jobSpecInput.safeParse(spec);
  if (!parsed.success) return { spec, valid: null, normalized: null, issues: dedupeIssues([...issues, ...zodIssues(parsed.error, '', spec)]) };
  const normalized = normalizeJobSpec(parsed.data);
  return { spec, valid: issues.length ? null : parsed.data, normalized, issues: dedupeIssues([...issues, ...jobContradictions(normalized)]) };
}

/** Same JSON, key order aside (to tell whether the form changed). */
export function sameSpec(a: unknown, b: unknown): boolean {
  return stableJson(a) === stableJson(b);
}

