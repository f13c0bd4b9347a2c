/** Central jobs (SPEC §5–§7): jobs, their runs, the backfill queue, business calendars and job settings. */
import { z } from 'zod';
import {
  BACKFILL_ACTIONS,
  calendarId,
  calendarInput,
  calendarReplaceInput,
  icsImportInput,
  jobPatchInput,
  jobSpecInput,
  listBackfillsInput,
  listJobsInput,
  listRunsInput,
  sameErrorTimes,
  type Backfill,
  type BusinessCalendar,
  type CheckRecord,
  type DowntimeSimulation,
  type Explanation,
  type Job,
  type JobIssue,
  type JobSettings,
  type JobSummary,
  type LedgerBucketsResult,
  type LedgerResult,
  type PreviewResult,
  type Run,
  type RunStep,
  type TriggerChoices,
} from '../job-schema';
import type { Page } from '../model';
import type { Verification } from '../verify';
import { rehearseInput, type RehearsalResult } from '../rehearsal';
import { perAttemptBudget, reason } from '../schemas';
import { op } from './define';
import {
  backfill,
  businessCalendar,
  checkRecord,
  downtimeSimulation,
  explanation,
  job,
  jobIssue,
  jobSettings,
  jobSummary,
  ledgerBucketsResult,
  ledgerResult,
  page,
  previewResult,
  rehearsalResult,
  run,
  runStep,
  runWithUsage,
  verification,
  triggerChoices,
} from './shapes';
import { empty } from './tasks';

const BOTH = ['console', 'operator'] as const;
const CONSOLE = ['console'] as const;
const OPERATOR = ['operator'] as const;
/** A job by id or name. */
const jobRef = z.string().min(1).max(200);
const runRef = z.string().min(1).max(100);
const instant = z.iso.datetime({ offset: true });
/**
 * An unsaved job spec as the editor holds it (`jobs.validate`, `jobs.preview`): any object, since
 * the point is to get its issues back field by field; the core validates it with `jobSpecInput`.
 */
const jobDraft = z.record(z.string(), z.unknown());

/** `jobs.trigger`: what "run now" did (one run per slot: an existing run is reported, not doubled). */
export interface TriggerResult {
  run: Run;
  created: boolean;
  dispatched: boolean;
  message: string;
}
export interface RunDetail {
  /** With its latest `verification` (PROTOCOL §13) where its checks ran. */
  run: Run & { verification?: Verification };
  steps: RunStep[];
  checks: CheckRecord[];
  backfills: Backfill[];
}
export interface IcsImportResult {
  calendar: BusinessCalendar;
  warnings: string[];
  added: { holidays: number; extraWorkdays: number };
}

const triggerResult = z.object({ run, created: z.boolean(), dispatched: z.boolean(), message: z.string() });
const runDetail = z.object({ run: run.extend({ verification: verification.optional() }), steps: z.array(runStep), checks: z.array(checkRecord), backfills: z.array(backfill) });
const icsImportResult = z.object({ calendar: businessCalendar, warnings: z.array(z.string()), added: z.object({ holidays: z.number(), extraWorkdays: z.number() }) });
const validation = z.object({ ok: z.boolean(), issues: z.array(jobIssue) });
const jobSaved = z.object({ job, warnings: z.array(jobIssue) });
const jobReply = z.object({ job });
const runReply = z.object({ run });
const backfillReply = z.object({ backfill });
const calendarReply = z.object({ calendar: businessCalendar });
const settingsReply = z.object({ settings: jobSettings });
const PREVIEW = { 200: '`{items: [{slot, at, …}], issues, timezone, truncated, next}`' };

export const jobOps = {
  'jobs.list': op<Page<JobSummary>>()({
    summary: 'List jobs with their next trigger and last run.',
    input: listJobsInput,
    result: page(jobSummary),
    callers: BOTH,
    reason: 'none',
    rest: [{ method: 'GET', path: '/jobs', status: { 200: '`{items: [job], next}`' } }],
  }),
  'jobs.get': op<Job>()({
    summary: 'One job.',
    input: z.strictObject({ id: jobRef }),
    result: job,
    callers: BOTH,
    reason: 'none',
    rest: [{ method: 'GET', path: '/jobs/:id', status: { 200: '`{job}`' }, response: jobReply }],
  }),
  /** Shape, contradictions and schedule checks of an unsaved spec, field by field (nothing saved). */
  'jobs.validate': op<{ ok: boolean; issues: JobIssue[] }>()({
    summary: 'Validate a job spec without saving it: every issue, with its field path and severity.',
    input: z.strictObject({ spec: jobDraft }),
    result: validation,
    callers: BOTH,
    reason: 'none',
    rest: [{ method: 'POST', path: '/jobs/validate', status: { 200: '`{ok, issues}`' } }],
  }),
  /** The next slots of a saved job (`id`) or of an unsaved spec (`spec`), calendar- and DST-aware. */
  'jobs.preview': op<PreviewResult>()({
    summary: 'The next slots of a job, with calendar and DST applied.',
    input: z
      .strictObject({ id: jobRef.optional(), spec: jobDraft.optional(), count: z.number().int().min(1).max(200).optional(), after: instant.optional() })
      .refine((a) => (a.id === undefined) !== (a.spec === undefined), { message: 'give either id (a saved job) or spec (an unsaved one)' }),
    result: previewResult,
    callers: BOTH,
    reason: 'none',
    rest: [
      { method: 'POST', path: '/jobs/preview', summary: 'The next slots of an unsaved job spec, with calendar and DST applied.', status: PREVIEW },
      { method: 'GET', path: '/jobs/:id/preview', status: PREVIEW },
    ],
  }),
  'jobs.create': op<{ job: Job; warnings: JobIssue[] }>()({
    summary: 'Create a job (schedule, window, calendar, preconditions, retry and overlap policies). Warnings name settings that are legal but probably not meant.',
    input: z.strictObject({ spec: jobSpecInput, reason: reason.optional() }),
    result: jobSaved,
    callers: BOTH,
    reason: 'optional',
    rest: [{ method: 'POST', path: '/jobs', status: { 201: '`{job, warnings}`' } }],
  }),
  /**
   * Replaces the job's spec as the editor shows it (its `enabled` flag is changed only by
   * `jobs.setEnabled`). `expectedVersion` refuses the save when someone edited the job meanwhile.
   */
  'jobs.update': op<{ job: Job; warnings: JobIssue[] }>()({
    summary: 'Replace a job’s spec as the editor shows it (refused when `expectedVersion` is not the job’s version).',
    input: z.strictObject({ id: jobRef, spec: jobSpecInput, reason, expectedVersion: z.number().int().positive().optional() }),
    result: jobSaved,
    callers: CONSOLE,
    reason: 'required',
  }),
  'jobs.patch': op<{ job: Job; warnings: JobIssue[] }>()({
    summary: 'Change a job (only the fields given; `null` removes an optional one). Its version goes up.',
    input: jobPatchInput.extend({ id: jobRef, reason: reason.optional() }),
    result: jobSaved,
    callers: OPERATOR,
    reason: 'optional',
    rest: [{ method: 'PATCH', path: '/jobs/:id', status: { 200: '`{job, warnings}`' } }],
  }),
  'jobs.trigger': op<TriggerResult>()({
    summary: 'Run a job now (still one run per slot: an existing run of the slot is returned, not doubled).',
    input: z.strictObject({ id: jobRef, reason, slot: z.string().min(1).max(40).optional(), checkPreconditions: z.boolean().optional() }),
    result: triggerResult,
    callers: BOTH,
    reason: 'required',
    rest: [{ method: 'POST', path: '/jobs/:id/trigger', status: { 200: 'the existing run of the slot', 201: 'a new run' } }],
  }),
  /** Which slot "run now" would run (the current one, the previous, the next) and what it would do to each; nothing changes. */
  'jobs.triggerChoices': op<TriggerChoices>()({
    summary: 'Which slot “run now” would run (the current one, the previous, the next) and what it would do to each; nothing changes.',
    input: z.strictObject({ id: jobRef }),
    result: triggerChoices,
    callers: CONSOLE,
    reason: 'none',
  }),
  /** Optionally until a time (it resumes by itself; at most MAX_PAUSE_DAYS ahead), or letting the runs already started finish (`drain`). */
  'jobs.pause': op<Job>()({
    summary: 'Pause a job: no new runs until it is resumed, or until `until` (it resumes by itself); `drain` lets the runs already started finish, retries included (audited with the reason).',
    input: z.strictObject({ id: jobRef, reason, until: instant.nullable().optional(), drain: z.boolean().optional() }),
    result: job,
    callers: BOTH,
    reason: 'required',
    rest: [{ method: 'POST', path: '/jobs/:id/pause', status: { 200: '`{job}`' }, response: jobReply }],
  }),
  /** The reason is optional on every surface (the HTTP API and the core never demanded one). */
  'jobs.resume': op<Job>()({
    summary: 'Resume a paused job.',
    input: z.strictObject({ id: jobRef, reason: reason.optional() }),
    result: job,
    callers: BOTH,
    reason: 'optional',
    rest: [{ method: 'POST', path: '/jobs/:id/resume', status: { 200: '`{job}`' }, response: jobReply }],
  }),
  'jobs.setEnabled': op<Job>()({
    summary: 'Enable or disable a job: a disabled job is not scheduled at all until enabled (audited with the reason).',
    input: z.strictObject({ id: jobRef, enabled: z.boolean(), reason }),
    result: job,
    callers: BOTH,
    reason: 'required',
    rest: [
      { method: 'POST', path: '/jobs/:id/enable', summary: 'Enable a job (audited with the reason).', status: { 200: '`{job}`' }, response: jobReply },
      { method: 'POST', path: '/jobs/:id/disable', summary: 'Disable a job: it is not scheduled at all until enabled (audited with the reason).', status: { 200: '`{job}`' }, response: jobReply },
    ],
  }),
  /** "Why didn't it run?" / "will it run?" for an instant (default now). */
  'jobs.explain': op<Explanation>()({
    summary: "Why a job did or didn't run at an instant (default now): each layer's verdict — time, preconditions, execution conditions — and the slot's run.",
    input: z.strictObject({ id: jobRef, at: instant.optional() }),
    result: explanation,
    callers: BOTH,
    reason: 'none',
    rest: [{ method: 'GET', path: '/jobs/:id/explain', status: { 200: '`{explanation}`' }, response: z.object({ explanation }) }],
  }),
  /** Every expected slot in [from, to) with its disposition (default: the last 8 days to tomorrow). */
  'jobs.ledger': op<LedgerResult>()({
    summary: "The job's slot ledger over a time range: each expected slot and what became of it.",
    input: z.strictObject({ id: jobRef, from: instant.optional(), to: instant.optional(), limit: z.number().int().min(1).max(5000).optional() }),
    result: ledgerResult,
    callers: BOTH,
    reason: 'none',
    rest: [{ method: 'GET', path: '/jobs/:id/ledger', status: { 200: 'the ledger' } }],
  }),
  /** The ledger counted by local day or hour of the job's zone (the heat map; a frequent job's ledger), paged with `next`. */
  'jobs.ledgerBuckets': op<LedgerBucketsResult>()({
    summary: 'The ledger counted by local day or hour of the job’s zone, paged with `next`.',
    input: z.strictObject({ id: jobRef, from: instant.optional(), to: instant.optional(), by: z.enum(['day', 'hour']).optional() }),
    result: ledgerBucketsResult,
    callers: CONSOLE,
    reason: 'none',
  }),
  'jobs.simulateDowntime': op<DowntimeSimulation>()({
    summary: 'What the job would do after Gaffer were down from `from` to `to` (missed-window policy applied).',
    input: z.strictObject({ id: jobRef, from: instant, to: instant }),
    result: downtimeSimulation,
    callers: BOTH,
    reason: 'none',
    rest: [{ method: 'GET', path: '/jobs/:id/simulate', status: { 200: '`{simulation}`' }, response: z.object({ simulation: downtimeSimulation }) }],
  }),
  /** The job's five-scenario rehearsal on the real engine in a throw-away world (PROTOCOL §11); nothing live is touched. */
  'jobs.rehearse': op<RehearsalResult>()({
    summary:
      'Rehearse a job spec (saved or not) before trusting it: its window, calendar, retry, missed-window and overlap policies walked through five scenarios (normal, data_delay, downstream_timeout, process_restart, cross_day_backfill) on the real engine in a throw-away world. Touches nothing live, sends nothing to agents, runs no check for real.',
    input: rehearseInput,
    result: rehearsalResult,
    callers: BOTH,
    reason: 'none',
    rest: [
      {
        method: 'POST',
        path: '/jobs/rehearse',
        status: {
          200: '`{job, timezone, from, elapsedMs, scenarios: [{name, title, story, outcome, verdict, endsWell, surprise, events: [{at, kind, detail, slot?, attempt?, surprise?}], ledger: [{slot, disposition, attempts, status, backfill}]}]}`',
        },
      },
    ],
  }),
  'runs.list': op<Page<Run>>()({
    summary:
      'Runs across jobs (the slot ledger), newest first; filter by job, status, disposition, `settled` (`failed`: ended failed for good — never backfilled, not being run again, not awaiting a decision; `awaiting_decision`: held for review, waiting for approve / reject), and the slot time (`from` inclusive, `to` exclusive).',
    input: listRunsInput,
    result: page(run),
    callers: BOTH,
    reason: 'none',
    rest: [{ method: 'GET', path: '/runs', status: { 200: '`{items: [run], next}`' }, response: page(runWithUsage) }],
  }),
  'runs.get': op<RunDetail>()({
    summary: 'One run with its steps and checks; the run carries its latest `verification` (PROTOCOL §13) where its checks ran.',
    input: z.strictObject({ id: runRef }),
    result: runDetail,
    callers: BOTH,
    reason: 'none',
    rest: [{ method: 'GET', path: '/runs/:id', status: { 200: '`{run, steps, checks, backfills}`' }, response: runDetail.extend({ run: runWithUsage.extend({ verification: verification.optional() }) }) }],
  }),
  'runs.cancel': op<Run>()({
    summary: 'End a run (audited with the reason): an attempt in flight is taken away and its agent gets `run_cancelled` (operator).',
    input: z.strictObject({ id: runRef, reason }),
    result: run,
    callers: OPERATOR,
    reason: 'required',
    rest: [{ method: 'POST', path: '/runs/:id/cancel', status: { 200: '`{run}`' }, response: runReply }],
  }),
  /** A held run is dispatched again; its trigger carries the approval (with the note). */
  'runs.approve': op<Run>()({
    summary: 'Approve a held run: it is dispatched again and its job_trigger carries `approval: {decision, note, by, at}`; with `budget`, the run’s spend cap from its next attempt on.',
    input: z.strictObject({ id: runRef, note: reason, budget: perAttemptBudget.optional() }),
    result: run,
    callers: BOTH,
    reason: 'required',
    reasonField: 'note',
    rest: [{ method: 'POST', path: '/runs/:id/approve', status: { 200: '`{run}`' }, response: runReply }],
  }),
  /** A held run stays failed, disposition `rejected`. */
  'runs.reject': op<Run>()({
    summary: 'Reject a held run: it stays failed, with disposition `rejected`.',
    input: z.strictObject({ id: runRef, note: reason }),
    result: run,
    callers: BOTH,
    reason: 'required',
    reasonField: 'note',
    rest: [{ method: 'POST', path: '/runs/:id/reject', status: { 200: '`{run}`' }, response: runReply }],
  }),
  /** A failed run's slot runs again now, as a new attempt of the same run. */
  'runs.retry': op<{ run: Run; backfill: Backfill }>()({
    summary: 'Retry a failed run now: its slot runs again at once as a new attempt of the same run (same slot, idempotency key and completed steps); audited with the reason.',
    input: z.strictObject({ id: runRef, reason: reason.optional() }),
    result: z.object({ run, backfill }),
    callers: BOTH,
    reason: 'optional',
    rest: [{ method: 'POST', path: '/runs/:id/retry', status: { 200: '`{run, backfill}`' } }],
  }),
  'backfills.list': op<Page<Backfill>>()({
    summary: 'The backfill queue.',
    input: listBackfillsInput,
    result: page(backfill),
    callers: BOTH,
    reason: 'none',
    rest: [{ method: 'GET', path: '/backfills', status: { 200: '`{items: [backfill], next}`' } }],
  }),
  'backfills.action': op<Backfill>()({
    summary: 'Act on a queued backfill: run it now, cancel it, or mark it done (audited with the reason).',
    input: z.strictObject({ id: z.number().int().positive(), action: z.enum(BACKFILL_ACTIONS), reason }),
    result: backfill,
    callers: BOTH,
    reason: 'required',
    rest: (
      [
        ['run', 'run_now'],
        ['cancel', 'cancel'],
        ['mark-done', 'mark_done'],
      ] as const
    ).map(([segment, action]) => ({
      method: 'POST' as const,
      path: `/backfills/:id/${segment}`,
      summary: `Backfill action \`${action}\` (audited with the reason).`,
      status: { 200: '`{backfill}`' },
      response: backfillReply,
    })),
  }),
  /** Puts a finished slot (failed, missed, skipped) in the backfill queue by hand. */
  'backfills.request': op<Backfill>()({
    summary: 'Queue a backfill of one slot of a job.',
    input: z.strictObject({ jobId: jobRef, slot: z.string().min(1).max(40), reason }),
    result: backfill,
    callers: BOTH,
    reason: 'required',
    rest: [{ method: 'POST', path: '/jobs/:id/backfills', status: { 201: '`{backfill}`' }, response: backfillReply }],
  }),
  'calendars.list': op<BusinessCalendar[]>()({
    summary: 'List business calendars.',
    input: empty,
    result: z.array(businessCalendar),
    callers: BOTH,
    reason: 'none',
    rest: [{ method: 'GET', path: '/calendars', status: { 200: '`{items: [calendar], next: null}`' }, response: z.object({ items: z.array(businessCalendar), next: z.null() }) }],
  }),
  'calendars.get': op<BusinessCalendar>()({
    summary: 'One business calendar.',
    input: z.strictObject({ id: calendarId }),
    result: businessCalendar,
    callers: BOTH,
    reason: 'none',
    rest: [{ method: 'GET', path: '/calendars/:id', status: { 200: '`{calendar}`' }, response: calendarReply }],
  }),
  /** Field checks of an unsaved calendar (zone, weekdays, dates, a date both holiday and make-up day). */
  'calendars.validate': op<{ ok: boolean; issues: JobIssue[] }>()({
    summary: 'Field checks of an unsaved calendar (zone, weekdays, dates, a date both holiday and make-up day).',
    input: z.strictObject({ calendar: z.record(z.string(), z.unknown()) }),
    result: validation,
    callers: CONSOLE,
    reason: 'none',
  }),
  'calendars.create': op<BusinessCalendar>()({
    summary: 'Create a business calendar (timezone, workdays, holidays, extra workdays).',
    input: z.strictObject({ calendar: calendarInput, reason: reason.optional() }),
    result: businessCalendar,
    callers: BOTH,
    reason: 'optional',
    rest: [{ method: 'POST', path: '/calendars', status: { 201: '`{calendar}`' }, response: calendarReply }],
  }),
  /** The reason is optional on every surface (the HTTP API and the core never demanded one). */
  'calendars.update': op<BusinessCalendar>()({
    summary: 'Replace a business calendar.',
    input: z.strictObject({ id: calendarId, calendar: calendarReplaceInput, reason: reason.optional() }),
    result: businessCalendar,
    callers: BOTH,
    reason: 'optional',
    rest: [{ method: 'PUT', path: '/calendars/:id', status: { 200: '`{calendar}`' }, response: calendarReply }],
  }),
  /** Imports holidays and make-up workdays from the text of an .ics file into a saved calendar. */
  'calendars.importIcs': op<IcsImportResult>()({
    summary: 'Import holidays from an iCalendar (.ics) text into a calendar (merge or replace).',
    input: icsImportInput.extend({ id: calendarId, reason: reason.optional() }),
    result: icsImportResult,
    callers: BOTH,
    reason: 'optional',
    rest: [{ method: 'POST', path: '/calendars/:id/import', status: { 200: '`{calendar, warnings, added}`' } }],
  }),
  'jobSettings.get': op<JobSettings>()({
    summary: 'Job settings: the kill switch and the global concurrency limit.',
    input: empty,
    result: jobSettings,
    callers: OPERATOR,
    reason: 'none',
    rest: [{ method: 'GET', path: '/job-settings', status: { 200: '`{settings}`' }, response: settingsReply }],
  }),
  'jobSettings.setKillSwitch': op<JobSettings>()({
    summary: 'Turn the kill switch on (no job is dispatched) or off (audited with the reason).',
    input: z.strictObject({ on: z.boolean(), reason }),
    result: jobSettings,
    callers: OPERATOR,
    reason: 'required',
    rest: [{ method: 'PUT', path: '/job-settings/kill-switch', status: { 200: '`{settings}`' }, response: settingsReply }],
  }),
  'jobSettings.setConcurrency': op<JobSettings>()({
    summary: 'Set (or with `null` remove) the global limit of runs at once (audited with the reason).',
    input: z.strictObject({ limit: z.number().int().min(1).max(100_000).nullable(), reason }),
    result: jobSettings,
    callers: OPERATOR,
    reason: 'required',
    rest: [{ method: 'PUT', path: '/job-settings/concurrency', status: { 200: '`{settings}`' }, response: settingsReply }],
  }),
  'jobSettings.setLoopBreaker': op<JobSettings>()({
    summary: 'Set how many attempts in a row with the same error stop the retries of a task or job run (0: never; audited with the reason).',
    input: z.strictObject({ sameErrorTimes, reason }),
    result: jobSettings,
    callers: OPERATOR,
    reason: 'required',
    rest: [{ method: 'PUT', path: '/job-settings/loop-breaker', status: { 200: '`{settings}`' }, response: settingsReply }],
  }),
} as const;
