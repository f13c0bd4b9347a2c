/**
 * The jobs part of the console's method table: `jobs.*`, `runs.*`, `backfills.*`, `calendars.*`,
 * each a thin call into `core.jobs` (the jobs module validates again and audits every action).
 *
 * 1. Arguments were parsed with the catalogue entry's `input` (common/ops) by the caller (methods.ts) before these run;
 *    saves reuse the shared zod job schema, so the editor and this boundary agree on shapes.
 * 2. Every state change passes the console's actor (`operator:desktop` / `operator:browser`) and
 *    the operator's reason; the jobs module writes both into the audit row of the change.
 * 3. `jobs.update` is "replace the spec the editor shows": it is turned into the module's PATCH
 *    (absent optional settings become `null`, i.e. removed) and refused before anything changes
 *    when the job moved on meanwhile (`expectedVersion`) or when the patch cannot express it.
 */
import type { ConsoleInput, ConsoleMethod, ConsoleResult } from '../../common/console-api';
import { GafferError } from '../../common/errors';
import { JOB_DEFAULTS, type JobPatchInput, type JobSpecInput } from '../../common/job-schema';
import type { Core } from '../../core/create-core';
import { validateCalendar, type Calendar } from '../../core/jobs/schedule';

export const JOB_METHOD_PREFIXES = ['jobs.', 'runs.', 'backfills.', 'calendars.'] as const;

export type JobsMethod = Extract<ConsoleMethod, `jobs.${string}` | `runs.${string}` | `backfills.${string}` | `calendars.${string}`>;

/** True for the methods this file serves. */
export function isJobsMethod(m: string): m is JobsMethod {
  return JOB_METHOD_PREFIXES.some((p) => m.startsWith(p));
}

type Args<M extends ConsoleMethod> = ConsoleInput<M>;
export type JobsHandlers = { [M in JobsMethod]: (args: Args<M>) => ConsoleResult<M> | Promise<ConsoleResult<M>> };

/** Optional settings a PATCH removes with `null` (jobPatchInput). */
// `budget`: a cap taken out in the editor is removed (left out of a patch, the stored one would stay).
const NULLABLE: ReadonlyArray<keyof JobSpecInput> = ['description', 'window', 'calendar', 'calendarPolicy', 'toleranceS', 'budget'];

/**
 * The PATCH that turns the stored spec into `next` (the editor's whole spec). `enabled` is left
 * out: enabling and disabling are their own audited actions with a reason.
 */
export function replacementPatch(current: Record<string, unknown>, next: JobSpecInput): JobPatchInput {
  const { enabled: _enabled, ...rest } = next;
  // A setting left out of the new spec means its default (as on create), not "keep the old one".
  const patch: Record<string, unknown> = {
    preconditions: [],
    missedWindow: JOB_DEFAULTS.missedWindow,
    overlap: JOB_DEFAULTS.overlap,
    payload: null,
    dstGapPolicy: JOB_DEFAULTS.dstGapPolicy,
    backfillCapPerTick: JOB_DEFAULTS.backfillCapPerTick,
    runTimeoutS: JOB_DEFAULTS.runTimeoutS,
    ...rest,
  };
  for (const k of NULLABLE) if (next[k] === undefined && current[k] !== undefined) patch[k] = null;
  // The module merges executionConditions and retry into the stored ones: send every field.
  patch.retry = { ...JOB_DEFAULTS.retry, ...(next.retry ?? {}) };
  const ec = next.executionConditions ?? {};
  patch.executionConditions = { ...ec, maxConcurrentPerRole: ec.maxConcurrentPerRole ?? null, maintenanceWindows: ec.maintenanceWindows ?? [] };
  return patch as JobPatchInput;
}

export function createJobsHandlers(core: Core, actor: string): JobsHandlers {
  const jobs = core.jobs;
  const withReason = (reason?: string) => ({ actor, ...(reason ? { reason } : {}) });
  return {
    'jobs.list': (a) => jobs.list(a),
    'jobs.get': (a) => jobs.get(a.id),
    'jobs.validate': (a) => {
      const v = jobs.validate(a.spec);
      return { ok: v.ok, issues: v.issues };
    },
    'jobs.preview': (a) => jobs.preview(a.id ?? a.spec, a.count ?? 10, a.after),
    'jobs.rehearse': (a) => core.rehearsal.rehearse(a),
    'jobs.create': (a) => jobs.create(a.spec, withReason(a.reason)),
    'jobs.update': (a) => {
      const current = jobs.get(a.id);
      if (a.expectedVersion !== undefined && current.version !== a.expectedVersion) {
        throw new GafferError('conflict', `job ${current.name} is at version ${current.version} now (you edited version ${a.expectedVersion}; changed by ${current.updatedBy}); reload it and apply your change again`);
      }
      return jobs.update(current.id, replacementPatch(current as unknown as Record<string, unknown>, a.spec), withReason(a.reason));
    },
    'jobs.trigger': (a) => jobs.triggerNow(a.id, { reason: a.reason, actor, ...(a.slot !== undefined ? { slot: a.slot } : {}), ...(a.checkPreconditions !== undefined ? { checkPreconditions: a.checkPreconditions } : {}) }),
    'jobs.triggerChoices': (a) => jobs.triggerChoices(a.id),
    'jobs.pause': (a) => jobs.pause(a.id, { reason: a.reason, actor, ...(a.until !== undefined ? { until: a.until } : {}), ...(a.drain !== undefined ? { drain: a.drain } : {}) }),
    'jobs.resume': (a) => jobs.resume(a.id, { reason: a.reason, actor }),
    'jobs.setEnabled': (a) => jobs.setEnabled(a.id, a.enabled, { reason: a.reason, actor }),
    'jobs.explain': (a) => (a.at === undefined ? jobs.explain(a.id) : jobs.explain(a.id, a.at)),
    'jobs.ledger': (a) => jobs.ledger(a.id, { ...(a.from !== undefined ? { from: a.from } : {}), ...(a.to !== undefined ? { to: a.to } : {}), ...(a.limit !== undefined ? { limit: a.limit } : {}) }),
    'jobs.ledgerBuckets': (a) => jobs.ledgerBuckets(a.id, { ...(a.from !== undefined ? { from: a.from } : {}), ...(a.to !== undefined ? { to: a.to } : {}), ...(a.by !== undefined ? { by: a.by } : {}) }),
    'jobs.simulateDowntime': (a) => jobs.simulateDowntime(a.id, a.from, a.to),
    'runs.list': (a) => jobs.listRuns(a),
    'runs.get': (a) => {
      // Like tasks.get: the run attempt's latest evidence (PROTOCOL §13), as HTTP gives it.
      const d = jobs.getRun(a.id);
      const verification = core.verify.latest(`run:${d.run.id}`);
      return verification ? { ...d, run: { ...d.run, verification } } : d;
    },
    'runs.approve': (a) => jobs.approvals.approve(a.id, { note: a.note, actor, ...(a.budget ? { budget: a.budget } : {}) }),
    'runs.reject': (a) => jobs.approvals.reject(a.id, { note: a.note, actor }),
    'runs.retry': (a) => jobs.retryRun(a.id, { actor, ...(a.reason !== undefined ? { reason: a.reason } : {}) }),
    'backfills.list': (a) => jobs.listBackfills(a),
    'backfills.action': (a) => jobs.backfillAction(a.id, { action: a.action, reason: a.reason, actor }),
    'backfills.request': (a) => jobs.requestBackfill(a.jobId, { slot: a.slot, reason: a.reason, actor }),
    'calendars.list': () => jobs.listCalendars(),
    'calendars.get': (a) => jobs.getCalendar(a.id),
    'calendars.validate': (a) => {
      const issues = validateCalendar(a.calendar as unknown as Calendar, '').map((i) => ({ field: i.field, message: i.message, severity: i.severity }));
      return { ok: !issues.some((i) => i.severity === 'error'), issues };
    },
    'calendars.create': (a) => jobs.createCalendar(a.calendar, withReason(a.reason)),
    'calendars.update': (a) => jobs.updateCalendar(a.id, a.calendar, withReason(a.reason)),
    'calendars.importIcs': (a) => {
      const { id, reason, ...input } = a;
      return jobs.importIcs(id, input, withReason(reason));
    },
  };
}
