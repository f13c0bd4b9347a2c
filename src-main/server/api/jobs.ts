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
  RUN_DISPOSITIONS,
  RUN_STATUSES,
} from '../../common/job-schema';
import { runSubject } from '../../common/logs';
import { rehearseInput } from '../../common/rehearsal';
import { reason, roleName } from '../../common/schemas';
import type { Core } from '../../core/create-core';
import { withUsage } from './logs';
import { afterParam, emptyQuery, intParam, limitParam, ok, parseBody, parseParam, parseQuery, type ApiContext, type Route } from './router';

const idParam = z.string().min(1).max(200);
const boolParam = z.enum(['true', 'false']).transform((v) => v === 'true');
/** An instant in a URL: ISO-8601 with offset, or epoch milliseconds. */
const instantParam = z.union([z.iso.datetime({ offset: true }), z.string().regex(/^\d{1,16}$/).transform(Number)]);

const reasonBody = z.strictObject({ reason });
const optionalReasonBody = z.strictObject({ reason: reason.optional() });
/** A pause: with a reason; optionally until a time (it resumes by itself), or letting the runs already started finish (`drain`). */
const pauseBody = z.strictObject({ reason, until: z.iso.datetime({ offset: true }).nullable().optional(), drain: z.boolean().optional() });

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
  const noQuery = (c: ApiContext) => parseQuery(emptyQuery, c);

  return [
    // ---- jobs ----
    {
      method: 'POST',
      path: '/jobs',
      doc: {
        summary: 'Create a job (schedule, window, calendar, preconditions, retry and overlap policies). Warnings name settings that are legal but probably not meant.',
        query: emptyQuery,
        body: jobBody,
        responses: { 201: '`{job, warnings}`' },
      },
      async handler(c) {
        noQuery(c);
        const { rest, reason: why } = await bodyWithReason(c);
        const { job, warnings } = jobs.create(rest, opts(c, why));
        return ok({ job, warnings }, 201, { location: `/api/v1/jobs/${job.id}` });
      },
    },
    {
      method: 'GET',
      path: '/jobs',
      doc: { summary: 'List jobs with their next trigger and last run.', query: listJobsQuery, responses: { 200: '`{items: [job], next}`' } },
      handler(c) {
        const q = parseQuery(listJobsQuery, c);
        return ok(jobs.list(q));
      },
    },
    {
      method: 'POST',
      path: '/jobs/validate',
      doc: { summary: 'Validate a job spec without saving it: every issue, with its field path and severity.', query: emptyQuery, body: jobSpecInput, responses: { 200: '`{ok, issues}`' } },
      async handler(c) {
        noQuery(c);
        const v = jobs.validate(await c.body());
        return ok({ ok: v.ok, issues: v.issues });
      },
    },
    {
      method: 'POST',
      path: '/jobs/preview',
      doc: { summary: 'The next slots of an unsaved job spec, with calendar and DST applied.', query: previewQuery, body: jobSpecInput, responses: { 200: '`{items: [{slot, at, …}], issues, timezone, truncated, next}`' } },
      async handler(c) {
        const q = parseQuery(previewQuery, c);
        return ok(jobs.preview(await c.body(), q.count ?? 10, q.after));
      },
    },
    {
      method: 'POST',
      path: '/jobs/rehearse',
      doc: {
        summary:
          'Rehearse a job spec (saved or not) before trusting it: its window, calendar, retry, missed-window and overlap policies walked through five scenarios (normal, data_delay, downstream_timeout, process_restart, cross_day_backfill) on the real engine in a throw-away world. Touches nothing live, sends nothing to agents, runs no check for real.',
        query: emptyQuery,
        body: rehearseInput,
        responses: { 200: '`{job, timezone, from, elapsedMs, scenarios: [{name, title, story, outcome, verdict, endsWell, surprise, events: [{at, kind, detail, slot?, attempt?, surprise?}], ledger: [{slot, disposition, attempts, status, backfill}]}]}`' },
      },
      async handler(c) {
        noQuery(c);
        return ok(await core.rehearsal.rehearse(await c.body()));
      },
    },
    {
      method: 'GET',
      path: '/jobs/:id',
      doc: { summary: 'One job.', params: idParams, query: emptyQuery, responses: { 200: '`{job}`' } },
      handler(c) {
        noQuery(c);
        return ok({ job: jobs.get(parseParam(idParam, c, 'id')) });
      },
    },
    {
      method: 'PATCH',
      path: '/jobs/:id',
      doc: { summary: 'Change a job (only the fields given; `null` removes an optional one). Its version goes up.', params: idParams, query: emptyQuery, body: jobPatchBody, responses: { 200: '`{job, warnings}`' } },
      async handler(c) {
        noQuery(c);
        const id = parseParam(idParam, c, 'id');
        const { rest, reason: why } = await bodyWithReason(c);
        return ok(jobs.update(id, rest, opts(c, why)));
      },
    },
    {
      method: 'POST',
      path: '/jobs/:id/trigger',
      doc: {
        summary: 'Run a job now (still one run per slot: an existing run of the slot is returned, not doubled).',
        params: idParams,
        query: emptyQuery,
        body: triggerBody,
        responses: { 200: 'the existing run of the slot', 201: 'a new run' },
      },
      async handler(c) {
        noQuery(c);
        const id = parseParam(idParam, c, 'id');
        const body = await parseBody(triggerBody, c);
        const r = jobs.triggerNow(id, { ...body, actor: c.actor });
        return ok(r, r.created ? 201 : 200);
      },
    },
    {
      method: 'POST',
      path: '/jobs/:id/pause',
      doc: {
        summary: 'Pause a job: no new runs until it is resumed, or until `until` (it resumes by itself); `drain` lets the runs already started finish, retries included (audited with the reason).',
        params: idParams,
        query: emptyQuery,
        body: pauseBody,
        responses: { 200: '`{job}`' },
      },
      async handler(c) {
        noQuery(c);
        const id = parseParam(idParam, c, 'id');
        const body = await parseBody(pauseBody, c);
        return ok({ job: jobs.pause(id, { ...body, actor: c.actor }) });
      },
    },
    {
      method: 'POST',
      path: '/jobs/:id/resume',
      doc: { summary: 'Resume a paused job.', params: idParams, query: emptyQuery, body: optionalReasonBody, responses: { 200: '`{job}`' } },
      async handler(c) {
        noQuery(c);
        const id = parseParam(idParam, c, 'id');
        const { reason: why } = await parseBody(optionalReasonBody, c);
        return ok({ job: jobs.resume(id, { ...(why ? { reason: why } : {}), actor: c.actor }) });
      },
    },
    ...(['enable', 'disable'] as const).map(
      (what): Route => ({
        method: 'POST',
        path: `/jobs/:id/${what}`,
        doc: {
          summary: what === 'enable' ? 'Enable a job (audited with the reason).' : 'Disable a job: it is not scheduled at all until enabled (audited with the reason).',
          params: idParams,
          query: emptyQuery,
          body: reasonBody,
          responses: { 200: '`{job}`' },
        },
        async handler(c) {
          noQuery(c);
          const id = parseParam(idParam, c, 'id');
          const { reason: why } = await parseBody(reasonBody, c);
          return ok({ job: jobs.setEnabled(id, what === 'enable', { reason: why, actor: c.actor }) });
        },
      }),
    ),
    {
      method: 'GET',
      path: '/jobs/:id/explain',
      doc: {
        summary: "Why a job did or didn't run at an instant (default now): each layer's verdict — time, preconditions, execution conditions — and the slot's run.",
        params: idParams,
        query: explainQuery,
        responses: { 200: '`{explanation}`' },
      },
      handler(c) {
        const id = parseParam(idParam, c, 'id');
        const q = parseQuery(explainQuery, c);
        return ok({ explanation: jobs.explain(id, q.at ?? core.clock.now()) });
      },
    },
    {
      method: 'GET',
      path: '/jobs/:id/preview',
      doc: { summary: 'The next slots of a job, with calendar and DST applied.', params: idParams, query: previewQuery, responses: { 200: '`{items: [{slot, at, …}], issues, timezone, truncated, next}`' } },
      handler(c) {
        const id = parseParam(idParam, c, 'id');
        const q = parseQuery(previewQuery, c);
        return ok(jobs.preview(id, q.count ?? 10, q.after));
      },
    },
    {
      method: 'GET',
      path: '/jobs/:id/ledger',
      doc: { summary: "The job's slot ledger over a time range: each expected slot and what became of it.", params: idParams, query: ledgerQuery, responses: { 200: 'the ledger' } },
      handler(c) {
        const id = parseParam(idParam, c, 'id');
        const q = parseQuery(ledgerQuery, c);
        return ok(jobs.ledger(id, q));
      },
    },
    {
      method: 'GET',
      path: '/jobs/:id/simulate',
      doc: { summary: 'What the job would do after Gaffer were down from `from` to `to` (missed-window policy applied).', params: idParams, query: simulateQuery, responses: { 200: '`{simulation}`' } },
      handler(c) {
        const id = parseParam(idParam, c, 'id');
        const q = parseQuery(simulateQuery, c);
        return ok({ simulation: jobs.simulateDowntime(id, q.from, q.to) });
      },
    },
    {
      method: 'POST',
      path: '/jobs/:id/backfills',
      doc: { summary: 'Queue a backfill of one slot of a job.', params: idParams, query: emptyQuery, body: backfillBody, responses: { 201: '`{backfill}`' } },
      async handler(c) {
        noQuery(c);
        const id = parseParam(idParam, c, 'id');
        const body = await parseBody(backfillBody, c);
        return ok({ backfill: jobs.requestBackfill(id, { ...body, actor: c.actor }) }, 201);
      },
    },

    // ---- runs (the slot ledger across jobs) ----
    {
      method: 'GET',
      path: '/runs',
      doc: { summary: 'Runs across jobs (the slot ledger), newest first; filter by job, status, disposition, and the slot time (`from` inclusive, `to` exclusive).', query: listRunsQuery, responses: { 200: '`{items: [run], next}`' } },
      handler(c) {
        const q = parseQuery(listRunsQuery, c);
        const page = jobs.listRuns(q);
        return ok({ ...page, items: page.items.map((r) => withUsage(core, runSubject(r.id), r)) });
      },
    },
    {
      method: 'GET',
      path: '/runs/:id',
      doc: { summary: 'One run with its steps and checks.', params: idParams, query: emptyQuery, responses: { 200: '`{run, …}`' } },
      handler(c) {
        noQuery(c);
        const detail = jobs.getRun(parseParam(idParam, c, 'id'));
        return ok({ ...detail, run: withUsage(core, runSubject(detail.run.id), detail.run) });
      },
    },
    {
      method: 'POST',
      path: '/runs/:id/cancel',
      doc: {
        summary: 'End a run (audited with the reason): an attempt in flight is taken away and its agent gets `run_cancelled` (operator).',
        params: idParams,
        query: emptyQuery,
        body: reasonBody,
        responses: { 200: '`{run}`' },
      },
      async handler(c) {
        noQuery(c);
        const id = parseParam(idParam, c, 'id');
        const { reason: why } = await parseBody(reasonBody, c);
        return ok({ run: jobs.cancelRun(id, { reason: why, actor: c.actor }) });
      },
    },

    // ---- backfill queue ----
    {
      method: 'GET',
      path: '/backfills',
      doc: { summary: 'The backfill queue.', query: listBackfillsQuery, responses: { 200: '`{items: [backfill], next}`' } },
      handler(c) {
        const q = parseQuery(listBackfillsQuery, c);
        return ok(jobs.listBackfills(q));
      },
    },
    ...(
      [
        ['run', 'run_now'],
        ['cancel', 'cancel'],
        ['mark-done', 'mark_done'],
      ] as const
    ).map(
      ([segment, action]): Route => ({
        method: 'POST',
        path: `/backfills/:id/${segment}`,
        doc: {
          summary: `Backfill action \`${action}\` (audited with the reason).`,
          params: backfillParams,
          query: emptyQuery,
          body: reasonBody,
          responses: { 200: '`{backfill}`' },
        },
        async handler(c) {
          noQuery(c);
          const id = parseParam(backfillParams.id, c, 'id');
          const { reason: why } = await parseBody(reasonBody, c);
          return ok({ backfill: jobs.backfillAction(id, { action, reason: why, actor: c.actor }) });
        },
      }),
    ),

    // ---- calendars ----
    {
      method: 'POST',
      path: '/calendars',
      doc: { summary: 'Create a business calendar (timezone, workdays, holidays, extra workdays).', query: emptyQuery, body: calendarBody, responses: { 201: '`{calendar}`' } },
      async handler(c) {
        noQuery(c);
        const { rest, reason: why } = await bodyWithReason(c);
        const calendar = jobs.createCalendar(rest, opts(c, why));
        return ok({ calendar }, 201, { location: `/api/v1/calendars/${encodeURIComponent(calendar.id)}` });
      },
    },
    {
      method: 'GET',
      path: '/calendars',
      doc: { summary: 'List business calendars.', query: emptyQuery, responses: { 200: '`{items: [calendar], next: null}`' } },
      handler(c) {
        noQuery(c);
        return ok({ items: jobs.listCalendars(), next: null });
      },
    },
    {
      method: 'GET',
      path: '/calendars/:id',
      doc: { summary: 'One business calendar.', params: idParams, query: emptyQuery, responses: { 200: '`{calendar}`' } },
      handler(c) {
        noQuery(c);
        return ok({ calendar: jobs.getCalendar(parseParam(idParam, c, 'id')) });
      },
    },
    {
      method: 'PUT',
      path: '/calendars/:id',
      doc: { summary: 'Replace a business calendar.', params: idParams, query: emptyQuery, body: calendarReplaceBody, responses: { 200: '`{calendar}`' } },
      async handler(c) {
        noQuery(c);
        const id = parseParam(idParam, c, 'id');
        const { rest, reason: why } = await bodyWithReason(c);
        const { id: bodyId, ...calendar } = rest;
        if (bodyId !== undefined && bodyId !== id) throw new GafferError('bad_request', `the body's id "${String(bodyId)}" differs from the path's "${id}"`);
        return ok({ calendar: jobs.updateCalendar(id, calendar, opts(c, why)) });
      },
    },
    {
      method: 'POST',
      path: '/calendars/:id/import',
      doc: { summary: "Import holidays from an iCalendar (.ics) text into a calendar (merge or replace).", params: idParams, query: emptyQuery, body: icsImportBody, responses: { 200: '`{calendar, warnings, added}`' } },
      async handler(c) {
        noQuery(c);
        const id = parseParam(idParam, c, 'id');
        const { rest, reason: why } = await bodyWithReason(c);
        return ok(jobs.importIcs(id, rest, opts(c, why)));
      },
    },

    // ---- settings: kill switch and global quota ----
    {
      method: 'GET',
      path: '/job-settings',
      doc: { summary: 'Job settings: the kill switch and the global concurrency limit.', query: emptyQuery, responses: { 200: '`{settings}`' } },
      handler(c) {
        noQuery(c);
        return ok({ settings: jobs.settings() });
      },
    },
    {
      method: 'PUT',
      path: '/job-settings/kill-switch',
      doc: { summary: 'Turn the kill switch on (no job is dispatched) or off (audited with the reason).', query: emptyQuery, body: killSwitchBody, responses: { 200: '`{settings}`' } },
      async handler(c) {
        noQuery(c);
        const body = await parseBody(killSwitchBody, c);
        return ok({ settings: jobs.setKillSwitch({ ...body, actor: c.actor }) });
      },
    },
    {
      method: 'PUT',
      path: '/job-settings/concurrency',
      doc: { summary: 'Set (or with `null` remove) the global limit of runs at once (audited with the reason).', query: emptyQuery, body: concurrencyBody, responses: { 200: '`{settings}`' } },
      async handler(c) {
        noQuery(c);
        const body = await parseBody(concurrencyBody, c);
        return ok({ settings: jobs.setGlobalConcurrency({ ...body, actor: c.actor }) });
      },
    },
  ];
}
