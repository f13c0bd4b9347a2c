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
  sameErrorTimes,
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
const loopBreakerBody = z.strictObject({ sameErrorTimes, reason });
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
      op: 'jobs.create',
      query: emptyQuery,
      unparsedBody: jobBody,
      async handle(_, c) {
        const { rest, reason: why } = await bodyWithReason(c);
        const { job, warnings } = jobs.create(rest, opts(c, why));
        return ok({ job, warnings }, 201, { location: `/api/v1/jobs/${job.id}` });
      },
    }),
    defineRoute({
      op: 'jobs.list',
      query: listJobsQuery,
      handle: ({ query }) => ok(jobs.list(query)),
    }),
    defineRoute({
      op: 'jobs.validate',
      query: emptyQuery,
      unparsedBody: jobSpecInput,
      async handle(_, c) {
        const v = jobs.validate(await c.body());
        return ok({ ok: v.ok, issues: v.issues });
      },
    }),
    defineRoute({
      op: 'jobs.preview',
      path: '/jobs/preview',
      query: previewQuery,
      unparsedBody: jobSpecInput,
      handle: async ({ query }, c) => ok(jobs.preview(await c.body(), query.count ?? 10, query.after)),
    }),
    defineRoute({
      op: 'jobs.rehearse',
      query: emptyQuery,
      unparsedBody: rehearseInput,
      handle: async (_, c) => ok(await core.rehearsal.rehearse(await c.body())),
    }),
    defineRoute({
      op: 'jobs.get',
      params: idParams,
      query: emptyQuery,
      handle: ({ params: { id } }) => ok({ job: jobs.get(id) }),
    }),
    defineRoute({
      op: 'jobs.patch',
      params: idParams,
      query: emptyQuery,
      unparsedBody: jobPatchBody,
      async handle({ params: { id } }, c) {
        const { rest, reason: why } = await bodyWithReason(c);
        return ok(jobs.update(id, rest, opts(c, why)));
      },
    }),
    defineRoute({
      op: 'jobs.trigger',
      params: idParams,
      query: emptyQuery,
      body: triggerBody,
      handle({ params: { id }, body }, c) {
        const r = jobs.triggerNow(id, { ...body, actor: c.actor });
        return ok(r, r.created ? 201 : 200);
      },
    }),
    defineRoute({
      op: 'jobs.pause',
      params: idParams,
      query: emptyQuery,
      body: pauseBody,
      handle: ({ params: { id }, body }, c) => ok({ job: jobs.pause(id, { ...body, actor: c.actor }) }),
    }),
    defineRoute({
      op: 'jobs.resume',
      params: idParams,
      query: emptyQuery,
      body: optionalReasonBody,
      handle: ({ params: { id }, body: { reason: why } }, c) => ok({ job: jobs.resume(id, opts(c, why)) }),
    }),
    ...(['enable', 'disable'] as const).map((what) =>
      defineRoute({
        op: 'jobs.setEnabled',
        path: `/jobs/:id/${what}`,
        params: idParams,
        query: emptyQuery,
        body: reasonBody,
        handle: ({ params: { id }, body: { reason: why } }, c) => ok({ job: jobs.setEnabled(id, what === 'enable', { reason: why, actor: c.actor }) }),
      }),
    ),
    defineRoute({
      op: 'jobs.explain',
      params: idParams,
      query: explainQuery,
      handle: ({ params: { id }, query }) => ok({ explanation: jobs.explain(id, query.at ?? core.clock.now()) }),
    }),
    defineRoute({
      op: 'jobs.preview',
      path: '/jobs/:id/preview',
      params: idParams,
      query: previewQuery,
      handle: ({ params: { id }, query }) => ok(jobs.preview(id, query.count ?? 10, query.after)),
    }),
    defineRoute({
      op: 'jobs.ledger',
      params: idParams,
      query: ledgerQuery,
      handle: ({ params: { id }, query }) => ok(jobs.ledger(id, query)),
    }),
    defineRoute({
      op: 'jobs.simulateDowntime',
      params: idParams,
      query: simulateQuery,
      handle: ({ params: { id }, query }) => ok({ simulation: jobs.simulateDowntime(id, query.from, query.to) }),
    }),
    defineRoute({
      op: 'backfills.request',
      params: idParams,
      query: emptyQuery,
      body: backfillBody,
      handle: ({ params: { id }, body }, c) => ok({ backfill: jobs.requestBackfill(id, { ...body, actor: c.actor }) }, 201),
    }),

    // ---- runs (the slot ledger across jobs) ----
    defineRoute({
      op: 'runs.list',
      query: listRunsQuery,
      handle({ query }) {
        const page = jobs.listRuns(query);
        return ok({ ...page, items: page.items.map((r) => withUsage(core, runSubject(r.id), r)) });
      },
    }),
    defineRoute({
      op: 'runs.get',
      params: idParams,
      query: emptyQuery,
      handle({ params: { id } }) {
        const detail = jobs.getRun(id);
        const verification = core.verify.latest(runSubject(detail.run.id));
        return ok({ ...detail, run: { ...withUsage(core, runSubject(detail.run.id), detail.run), ...(verification ? { verification } : {}) } });
      },
    }),
    defineRoute({
      op: 'runs.cancel',
      params: idParams,
      query: emptyQuery,
      body: reasonBody,
      handle: ({ params: { id }, body: { reason: why } }, c) => ok({ run: jobs.cancelRun(id, { reason: why, actor: c.actor }) }),
    }),

    defineRoute({
      op: 'runs.retry',
      params: idParams,
      query: emptyQuery,
      body: optionalReasonBody,
      handle: ({ params: { id }, body }, c) => ok(jobs.retryRun(id, { ...(body.reason !== undefined ? { reason: body.reason } : {}), actor: c.actor })),
    }),

    // ---- backfill queue ----
    defineRoute({
      op: 'backfills.list',
      query: listBackfillsQuery,
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
        op: 'backfills.action',
        path: `/backfills/:id/${segment}`,
        params: backfillParams,
        query: emptyQuery,
        body: reasonBody,
        handle: ({ params: { id }, body: { reason: why } }, c) => ok({ backfill: jobs.backfillAction(id, { action, reason: why, actor: c.actor }) }),
      }),
    ),

    // ---- calendars ----
    defineRoute({
      op: 'calendars.create',
      query: emptyQuery,
      unparsedBody: calendarBody,
      async handle(_, c) {
        const { rest, reason: why } = await bodyWithReason(c);
        const calendar = jobs.createCalendar(rest, opts(c, why));
        return ok({ calendar }, 201, { location: `/api/v1/calendars/${encodeURIComponent(calendar.id)}` });
      },
    }),
    defineRoute({
      op: 'calendars.list',
      query: emptyQuery,
      handle: () => ok({ items: jobs.listCalendars(), next: null }),
    }),
    defineRoute({
      op: 'calendars.get',
      params: idParams,
      query: emptyQuery,
      handle: ({ params: { id } }) => ok({ calendar: jobs.getCalendar(id) }),
    }),
    defineRoute({
      op: 'calendars.update',
      params: idParams,
      query: emptyQuery,
      unparsedBody: calendarReplaceBody,
      async handle({ params: { id } }, c) {
        const { rest, reason: why } = await bodyWithReason(c);
        const { id: bodyId, ...calendar } = rest;
        if (bodyId !== undefined && bodyId !== id) throw new GafferError('bad_request', `the body's id "${String(bodyId)}" differs from the path's "${id}"`);
        return ok({ calendar: jobs.updateCalendar(id, calendar, opts(c, why)) });
      },
    }),
    defineRoute({
      op: 'calendars.importIcs',
      params: idParams,
      query: emptyQuery,
      unparsedBody: icsImportBody,
      async handle({ params: { id } }, c) {
        const { rest, reason: why } = await bodyWithReason(c);
        return ok(jobs.importIcs(id, rest, opts(c, why)));
      },
    }),

    // ---- settings: kill switch and global quota ----
    defineRoute({
      op: 'jobSettings.get',
      query: emptyQuery,
      handle: () => ok({ settings: jobs.settings() }),
    }),
    defineRoute({
      op: 'jobSettings.setKillSwitch',
      query: emptyQuery,
      body: killSwitchBody,
      handle: ({ body }, c) => ok({ settings: jobs.setKillSwitch({ ...body, actor: c.actor }) }),
    }),
    defineRoute({
      op: 'jobSettings.setConcurrency',
      query: emptyQuery,
      body: concurrencyBody,
      handle: ({ body }, c) => ok({ settings: jobs.setGlobalConcurrency({ ...body, actor: c.actor }) }),
    }),
    defineRoute({
      op: 'jobSettings.setLoopBreaker',
      query: emptyQuery,
      body: loopBreakerBody,
      handle: ({ body }, c) => ok({ settings: jobs.setLoopBreaker({ ...body, actor: c.actor }) }),
    }),
  ];
}
