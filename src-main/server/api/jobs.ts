/**
 * `/jobs…`, `/runs…`, `/backfills…`, `/calendars…`, `/job-settings…` (PROTOCOL §2 plus additions).
 * Every handler validates its query and body with zod before calling `core.jobs`, which validates
 * again and audits every operator action with actor `operator:http`.
 */
import { z } from 'zod';
import { GafferError } from '../../common/errors';
import {
  BACKFILL_STATUSES,
  calendarInput,
  calendarReplaceInput,
  icsImportInput,
  jobPatchInput,
  jobSpecInput,
  pauseUntil,
  RUN_DISPOSITIONS,
  RUN_SETTLEMENTS,
  RUN_STATUSES,
} from '../../common/job-schema';
import { runSubject } from '../../common/logs';
import { rehearseInput } from '../../common/rehearsal';
import { reason, roleName } from '../../common/schemas';
import type { Core } from '../../core/create-core';
import { withUsage } from './logs';
import { defineRoute } from './define-route';
import { afterParam, emptyQuery, intParam, limitParam, ok, optionalReasonBody, reasonBody, type ApiContext, type Route } from './router';

const idParam = z.string().min(1).max(200);
const boolParam = z.enum(['true', 'false']).transform((v) => v === 'true');
/** An instant in a URL: ISO-8601 with offset, or epoch milliseconds. */
const instantParam = z.union([z.iso.datetime({ offset: true }), z.string().regex(/^\d{1,16}$/).transform(Number)]);

/** A pause: with a reason; optionally until a time (it resumes by itself), or letting the runs already started finish (`drain`). */
const pauseBody = z.strictObject({ reason, until: pauseUntil, drain: z.boolean().optional() });

// Query and body schemas, named so each route's doc (the OpenAPI document) names what it parses.
const idParams = { id: idParam };
const listJobsQuery = z.strictObject({
  role: roleName.optional(),
  enabled: boolParam.optional(),
  paused: boolParam.optional(),
  limit: limitParam.optional(),
  after: z.string().min(1).max(200).optional(),
});
const previewQuery = z.strictObject({ count: intParam(1, 1000).optional(), after: instantParam.optional() });
const explainQuery = z.strictObject({ at: instantParam.optional() });
const ledgerQuery = z.strictObject({ from: instantParam.optional(), to: instantParam.optional(), limit: intParam(1, 5000).optional() });
const simulateQuery = z.strictObject({ from: instantParam, to: instantParam });
const triggerBody = z.strictObject({ reason, slot: z.string().min(1).max(40).optional(), checkPreconditions: z.boolean().optional() });
const backfillBody = z.strictObject({ slot: z.string().min(1).max(40), reason });
const listRunsQuery = z.strictObject({
  job: idParam.optional(),
  status: z.enum(RUN_STATUSES).optional(),
  disposition: z.enum(RUN_DISPOSITIONS).optional(),
  settled: z.enum(RUN_SETTLEMENTS).optional(),
  from: instantParam.optional(),
  to: instantParam.optional(),
  limit: limitParam.optional(),
  after: z.string().min(1).max(200).optional(),
});
const listBackfillsQuery = z.strictObject({ job: idParam.optional(), status: z.enum(BACKFILL_STATUSES).optional(), limit: limitParam.optional(), after: afterParam.optional() });
const backfillParams = { id: intParam(1) };
const killSwitchBody = z.strictObject({ on: z.boolean(), reason });
const concurrencyBody = z.strictObject({ limit: z.number().int().min(1).max(100_000).nullable(), reason });
/** Bodies the core validates itself (`bodyWithReason` splits the optional reason off first): documented as the core's schemas. */
const withReason = <S extends z.ZodObject>(schema: S) => schema.extend({ reason: reason.optional() });
const jobBody = withReason(jobSpecInput);
const jobPatchBody = withReason(jobPatchInput);
const calendarBody = withReason(calendarInput);
const calendarReplaceBody = withReason(calendarReplaceInput.extend({ id: calendarInput.shape.id.optional() }));
const icsImportBody = withReason(icsImportInput);

/** Splits an optional `reason` off a body whose other fields are validated by the core. */
async function bodyWithReason(c: ApiContext): Promise<{ rest: Record<string, unknown>; reason?: string }> {
  const body = await c.body();
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new GafferError('bad_request', 'request body must be a JSON object');
  const { reason: why, ...rest } = body as Record<string, unknown>;
  if (why === undefined) return { rest };
  const r = reason.safeParse(why);
  if (!r.success) throw new GafferError('bad_request', `invalid body at "reason": ${r.error.issues[0]?.message ?? 'invalid'}`);
  return { rest, reason: r.data };
}

export function jobRoutes(core: Core): Route[] {
  const jobs = core.jobs;
  const opts = (c: ApiContext, why?: string) => ({ actor: c.actor, ...(why ? { reason: why } : {}) });

  return [
    // ---- jobs ----
    defineRoute({
      method: 'POST',
      path: '/jobs',
      summary: 'Create a job (schedule, window, calendar, preconditions, retry and overlap policies). Warnings name settings that are legal but probably not meant.',
      query: emptyQuery,
      unparsedBody: jobBody,
      responses: { 201: '`{job, warnings}`' },
      async handle(_, c) {
        const { rest, reason: why } = await bodyWithReason(c);
        const { job, warnings } = jobs.create(rest, opts(c, why));
        return ok({ job, warnings }, 201, { location: `/api/v1/jobs/${job.id}` });
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/jobs',
      summary: 'List jobs with their next trigger and last run.',
      query: listJobsQuery,
      responses: { 200: '`{items: [job], next}`' },
      handle: ({ query }) => ok(jobs.list(query)),
    }),
    defineRoute({
      method: 'POST',
      path: '/jobs/validate',
      summary: 'Validate a job spec without saving it: every issue, with its field path and severity.',
      query: emptyQuery,
      unparsedBody: jobSpecInput,
      responses: { 200: '`{ok, issues}`' },
      async handle(_, c) {
        const v = jobs.validate(await c.body());
        return ok({ ok: v.ok, issues: v.issues });
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/jobs/preview',
      summary: 'The next slots of an unsaved job spec, with calendar and DST applied.',
      query: previewQuery,
      unparsedBody: jobSpecInput,
      responses: { 200: '`{items: [{slot, at, …}], issues, timezone, truncated, next}`' },
      handle: async ({ query }, c) => ok(jobs.preview(await c.body(), query.count ?? 10, query.after)),
    }),
    defineRoute({
      method: 'POST',
      path: '/jobs/rehearse',
      summary:
        'Rehearse a job spec (saved or not) before trusting it: its window, calendar, retry, missed-window and overlap policies walked through five scenarios (normal, data_delay, downstream_timeout, process_restart, cross_day_backfill) on the real engine in a throw-away world. Touches nothing live, sends nothing to agents, runs no check for real.',
      query: emptyQuery,
      unparsedBody: rehearseInput,
      responses: { 200: '`{job, timezone, from, elapsedMs, scenarios: [{name, title, story, outcome, verdict, endsWell, surprise, events: [{at, kind, detail, slot?, attempt?, surprise?}], ledger: [{slot, disposition, attempts, status, backfill}]}]}`' },
      handle: async (_, c) => ok(await core.rehearsal.rehearse(await c.body())),
    }),
    defineRoute({
      method: 'GET',
      path: '/jobs/:id',
      summary: 'One job.',
      params: idParams,
      query: emptyQuery,
      responses: { 200: '`{job}`' },
      handle: ({ params: { id } }) => ok({ job: jobs.get(id) }),
    }),
    defineRoute({
      method: 'PATCH',
      path: '/jobs/:id',
      summary: 'Change a job (only the fields given; `null` removes an optional one). Its version goes up.',
      params: idParams,
      query: emptyQuery,
      unparsedBody: jobPatchBody,
      responses: { 200: '`{job, warnings}`' },
      async handle({ params: { id } }, c) {
        const { rest, reason: why } = await bodyWithReason(c);
        return ok(jobs.update(id, rest, opts(c, why)));
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/jobs/:id/trigger',
      summary: 'Run a job now (still one run per slot: an existing run of the slot is returned, not doubled).',
      params: idParams,
      query: emptyQuery,
      body: triggerBody,
      responses: { 200: 'the existing run of the slot', 201: 'a new run' },
      handle({ params: { id }, body }, c) {
        const r = jobs.triggerNow(id, { ...body, actor: c.actor });
        return ok(r, r.created ? 201 : 200);
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/jobs/:id/pause',
      summary: 'Pause a job: no new runs until it is resumed, or until `until` (it resumes by itself); `drain` lets the runs already started finish, retries included (audited with the reason).',
      params: idParams,
      query: emptyQuery,
      body: pauseBody,
      responses: { 200: '`{job}`' },
      handle: ({ params: { id }, body }, c) => ok({ job: jobs.pause(id, { ...body, actor: c.actor }) }),
    }),
    defineRoute({
      method: 'POST',
      path: '/jobs/:id/resume',
      summary: 'Resume a paused job.',
      params: idParams,
      query: emptyQuery,
      body: optionalReasonBody,
      responses: { 200: '`{job}`' },
      handle: ({ params: { id }, body: { reason: why } }, c) => ok({ job: jobs.resume(id, opts(c, why)) }),
    }),
    ...(['enable', 'disable'] as const).map((what) =>
      defineRoute({
        method: 'POST',
        path: `/jobs/:id/${what}`,
        summary: what === 'enable' ? 'Enable a job (audited with the reason).' : 'Disable a job: it is not scheduled at all until enabled (audited with the reason).',
        params: idParams,
        query: emptyQuery,
        body: reasonBody,
        responses: { 200: '`{job}`' },
        handle: ({ params: { id }, body: { reason: why } }, c) => ok({ job: jobs.setEnabled(id, what === 'enable', { reason: why, actor: c.actor }) }),
      }),
    ),
    defineRoute({
      method: 'GET',
      path: '/jobs/:id/explain',
      summary: "Why a job did or didn't run at an instant (default now): each layer's verdict — time, preconditions, execution conditions — and the slot's run.",
      params: idParams,
      query: explainQuery,
      responses: { 200: '`{explanation}`' },
      handle: ({ params: { id }, query }) => ok({ explanation: jobs.explain(id, query.at ?? core.clock.now()) }),
    }),
    defineRoute({
      method: 'GET',
      path: '/jobs/:id/preview',
      summary: 'The next slots of a job, with calendar and DST applied.',
      params: idParams,
      query: previewQuery,
      responses: { 200: '`{items: [{slot, at, …}], issues, timezone, truncated, next}`' },
      handle: ({ params: { id }, query }) => ok(jobs.preview(id, query.count ?? 10, query.after)),
    }),
    defineRoute({
      method: 'GET',
      path: '/jobs/:id/ledger',
      summary: "The job's slot ledger over a time range: each expected slot and what became of it.",
      params: idParams,
      query: ledgerQuery,
      responses: { 200: 'the ledger' },
      handle: ({ params: { id }, query }) => ok(jobs.ledger(id, query)),
    }),
    defineRoute({
      method: 'GET',
      path: '/jobs/:id/simulate',
      summary: 'What the job would do after Gaffer were down from `from` to `to` (missed-window policy applied).',
      params: idParams,
      query: simulateQuery,
      responses: { 200: '`{simulation}`' },
      handle: ({ params: { id }, query }) => ok({ simulation: jobs.simulateDowntime(id, query.from, query.to) }),
    }),
    defineRoute({
      method: 'POST',
      path: '/jobs/:id/backfills',
      summary: 'Queue a backfill of one slot of a job.',
      params: idParams,
      query: emptyQuery,
      body: backfillBody,
      responses: { 201: '`{backfill}`' },
      handle: ({ params: { id }, body }, c) => ok({ backfill: jobs.requestBackfill(id, { ...body, actor: c.actor }) }, 201),
    }),

    // ---- runs (the slot ledger across jobs) ----
    defineRoute({
      method: 'GET',
      path: '/runs',
      summary:
        'Runs across jobs (the slot ledger), newest first; filter by job, status, disposition, `settled` (`failed`: ended failed for good — never backfilled, not being run again, not awaiting a decision; `awaiting_decision`: held for review, waiting for approve / reject), and the slot time (`from` inclusive, `to` exclusive).',
      query: listRunsQuery,
      responses: { 200: '`{items: [run], next}`' },
      handle({ query }) {
        const page = jobs.listRuns(query);
        return ok({ ...page, items: page.items.map((r) => withUsage(core, runSubject(r.id), r)) });
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/runs/:id',
      summary: 'One run with its steps and checks.',
      params: idParams,
      query: emptyQuery,
      responses: { 200: '`{run, …}`' },
      handle({ params: { id } }) {
        const detail = jobs.getRun(id);
        const verification = core.verify.latest(runSubject(detail.run.id));
        return ok({ ...detail, run: { ...withUsage(core, runSubject(detail.run.id), detail.run), ...(verification ? { verification } : {}) } });
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/runs/:id/cancel',
      summary: 'End a run (audited with the reason): an attempt in flight is taken away and its agent gets `run_cancelled` (operator).',
      params: idParams,
      query: emptyQuery,
      body: reasonBody,
      responses: { 200: '`{run}`' },
      handle: ({ params: { id }, body: { reason: why } }, c) => ok({ run: jobs.cancelRun(id, { reason: why, actor: c.actor }) }),
    }),

    defineRoute({
      method: 'POST',
      path: '/runs/:id/retry',
      summary: 'Retry a failed run now: its slot runs again at once as a new attempt of the same run (same slot, idempotency key and completed steps); audited with the reason.',
      params: idParams,
      query: emptyQuery,
      body: optionalReasonBody,
      responses: { 200: '`{run, backfill}`' },
      handle: ({ params: { id }, body }, c) => ok(jobs.retryRun(id, { ...(body.reason !== undefined ? { reason: body.reason } : {}), actor: c.actor })),
    }),

    // ---- backfill queue ----
    defineRoute({
      method: 'GET',
      path: '/backfills',
      summary: 'The backfill queue.',
      query: listBackfillsQuery,
      responses: { 200: '`{items: [backfill], next}`' },
      handle: ({ query }) => ok(jobs.listBackfills(query)),
    }),
    ...(
      [
        ['run', 'run_now'],
        ['cancel', 'cancel'],
        ['mark-done', 'mark_done'],
      ] as const
    ).map(([segment, action]) =>
      defineRoute({
        method: 'POST',
        path: `/backfills/:id/${segment}`,
        summary: `Backfill action \`${action}\` (audited with the reason).`,
        params: backfillParams,
        query: emptyQuery,
        body: reasonBody,
        responses: { 200: '`{backfill}`' },
        handle: ({ params: { id }, body: { reason: why } }, c) => ok({ backfill: jobs.backfillAction(id, { action, reason: why, actor: c.actor }) }),
      }),
    ),

    // ---- calendars ----
    defineRoute({
      method: 'POST',
      path: '/calendars',
      summary: 'Create a business calendar (timezone, workdays, holidays, extra workdays).',
      query: emptyQuery,
      unparsedBody: calendarBody,
      responses: { 201: '`{calendar}`' },
      async handle(_, c) {
        const { rest, reason: why } = await bodyWithReason(c);
        const calendar = jobs.createCalendar(rest, opts(c, why));
        return ok({ calendar }, 201, { location: `/api/v1/calendars/${encodeURIComponent(calendar.id)}` });
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/calendars',
      summary: 'List business calendars.',
      query: emptyQuery,
      responses: { 200: '`{items: [calendar], next: null}`' },
      handle: () => ok({ items: jobs.listCalendars(), next: null }),
    }),
    defineRoute({
      method: 'GET',
      path: '/calendars/:id',
      summary: 'One business calendar.',
      params: idParams,
      query: emptyQuery,
      responses: { 200: '`{calendar}`' },
      handle: ({ params: { id } }) => ok({ calendar: jobs.getCalendar(id) }),
    }),
    defineRoute({
      method: 'PUT',
      path: '/calendars/:id',
      summary: 'Replace a business calendar.',
      params: idParams,
      query: emptyQuery,
      unparsedBody: calendarReplaceBody,
      responses: { 200: '`{calendar}`' },
      async handle({ params: { id } }, c) {
        const { rest, reason: why } = await bodyWithReason(c);
        const { id: bodyId, ...calendar } = rest;
        if (bodyId !== undefined && bodyId !== id) throw new GafferError('bad_request', `the body's id "${String(bodyId)}" differs from the path's "${id}"`);
        return ok({ calendar: jobs.updateCalendar(id, calendar, opts(c, why)) });
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/calendars/:id/import',
      summary: 'Import holidays from an iCalendar (.ics) text into a calendar (merge or replace).',
      params: idParams,
      query: emptyQuery,
      unparsedBody: icsImportBody,
      responses: { 200: '`{calendar, warnings, added}`' },
      async handle({ params: { id } }, c) {
        const { rest, reason: why } = await bodyWithReason(c);
        return ok(jobs.importIcs(id, rest, opts(c, why)));
      },
    }),

    // ---- settings: kill switch and global quota ----
    defineRoute({
      method: 'GET',
      path: '/job-settings',
      summary: 'Job settings: the kill switch and the global concurrency limit.',
      query: emptyQuery,
      responses: { 200: '`{settings}`' },
      handle: () => ok({ settings: jobs.settings() }),
    }),
    defineRoute({
      method: 'PUT',
      path: '/job-settings/kill-switch',
      summary: 'Turn the kill switch on (no job is dispatched) or off (audited with the reason).',
      query: emptyQuery,
      body: killSwitchBody,
      responses: { 200: '`{settings}`' },
      handle: ({ body }, c) => ok({ settings: jobs.setKillSwitch({ ...body, actor: c.actor }) }),
    }),
    defineRoute({
      method: 'PUT',
      path: '/job-settings/concurrency',
      summary: 'Set (or with `null` remove) the global limit of runs at once (audited with the reason).',
      query: emptyQuery,
      body: concurrencyBody,
      responses: { 200: '`{settings}`' },
      handle: ({ body }, c) => ok({ settings: jobs.setGlobalConcurrency({ ...body, actor: c.actor }) }),
    }),
  ];
}
