/**
 * `/jobs…`, `/runs…`, `/backfills…`, `/calendars…`, `/job-settings…` (PROTOCOL §2 plus additions).
 * Every handler validates its query and body with zod before calling `core.jobs`, which validates
 * again and audits every operator action with actor `operator:http`.
 */
import { z } from 'zod';
import { GafferError } from '../../common/errors';
import { BACKFILL_STATUSES, RUN_DISPOSITIONS, RUN_STATUSES } from '../../common/job-schema';
import { runSubject } from '../../common/logs';
import { reason, roleName } from '../../common/schemas';
import type { Core } from '../../core/create-core';
import { withUsage } from './logs';
import { afterParam, intParam, limitParam, ok, parseBody, parseParam, parseQuery, type ApiContext, type Route } from './router';

const idParam = z.string().min(1).max(200);
const boolParam = z.enum(['true', 'false']).transform((v) => v === 'true');
/** An instant in a URL: ISO-8601 with offset, or epoch milliseconds. */
const instantParam = z.union([z.iso.datetime({ offset: true }), z.string().regex(/^\d{1,16}$/).transform(Number)]);

const reasonBody = z.strictObject({ reason });
const optionalReasonBody = z.strictObject({ reason: reason.optional() });

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
  const noQuery = (c: ApiContext) => parseQuery(z.strictObject({}), c);

  return [
    // ---- jobs ----
    {
      method: 'POST',
      path: '/jobs',
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
      handler(c) {
        const q = parseQuery(
          z.strictObject({ role: roleName.optional(), enabled: boolParam.optional(), paused: boolParam.optional(), limit: limitParam.optional(), after: z.string().min(1).max(200).optional() }),
          c,
        );
        return ok(jobs.list(q));
      },
    },
    {
      method: 'POST',
      path: '/jobs/validate',
      async handler(c) {
        noQuery(c);
        const v = jobs.validate(await c.body());
        return ok({ ok: v.ok, issues: v.issues });
      },
    },
    {
      method: 'POST',
      path: '/jobs/preview',
      async handler(c) {
        const q = parseQuery(z.strictObject({ count: intParam(1, 1000).optional(), after: instantParam.optional() }), c);
        return ok(jobs.preview(await c.body(), q.count ?? 10, q.after));
      },
    },
    {
      method: 'GET',
      path: '/jobs/:id',
      handler(c) {
        noQuery(c);
        return ok({ job: jobs.get(parseParam(idParam, c, 'id')) });
      },
    },
    {
      method: 'PATCH',
      path: '/jobs/:id',
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
      async handler(c) {
        noQuery(c);
        const id = parseParam(idParam, c, 'id');
        const body = await parseBody(z.strictObject({ reason, slot: z.string().min(1).max(40).optional(), checkPreconditions: z.boolean().optional() }), c);
        const r = jobs.triggerNow(id, { ...body, actor: c.actor });
        return ok(r, r.created ? 201 : 200);
      },
    },
    {
      method: 'POST',
      path: '/jobs/:id/pause',
      async handler(c) {
        noQuery(c);
        const id = parseParam(idParam, c, 'id');
        const { reason: why } = await parseBody(reasonBody, c);
        return ok({ job: jobs.pause(id, { reason: why, actor: c.actor }) });
      },
    },
    {
      method: 'POST',
      path: '/jobs/:id/resume',
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
      handler(c) {
        const id = parseParam(idParam, c, 'id');
        const q = parseQuery(z.strictObject({ at: instantParam.optional() }), c);
        return ok({ explanation: jobs.explain(id, q.at ?? core.clock.now()) });
      },
    },
    {
      method: 'GET',
      path: '/jobs/:id/preview',
      handler(c) {
        const id = parseParam(idParam, c, 'id');
        const q = parseQuery(z.strictObject({ count: intParam(1, 1000).optional(), after: instantParam.optional() }), c);
        return ok(jobs.preview(id, q.count ?? 10, q.after));
      },
    },
    {
      method: 'GET',
      path: '/jobs/:id/ledger',
      handler(c) {
        const id = parseParam(idParam, c, 'id');
        const q = parseQuery(z.strictObject({ from: instantParam.optional(), to: instantParam.optional(), limit: intParam(1, 5000).optional() }), c);
        return ok(jobs.ledger(id, q));
      },
    },
    {
      method: 'GET',
      path: '/jobs/:id/simulate',
      handler(c) {
        const id = parseParam(idParam, c, 'id');
        const q = parseQuery(z.strictObject({ from: instantParam, to: instantParam }), c);
        return ok({ simulation: jobs.simulateDowntime(id, q.from, q.to) });
      },
    },
    {
      method: 'POST',
      path: '/jobs/:id/backfills',
      async handler(c) {
        noQuery(c);
        const id = parseParam(idParam, c, 'id');
        const body = await parseBody(z.strictObject({ slot: z.string().min(1).max(40), reason }), c);
        return ok({ backfill: jobs.requestBackfill(id, { ...body, actor: c.actor }) }, 201);
      },
    },

    // ---- runs (the slot ledger across jobs) ----
    {
      method: 'GET',
      path: '/runs',
      handler(c) {
        const q = parseQuery(
          z.strictObject({
            job: idParam.optional(),
            status: z.enum(RUN_STATUSES).optional(),
            disposition: z.enum(RUN_DISPOSITIONS).optional(),
            limit: limitParam.optional(),
            after: z.string().min(1).max(200).optional(),
          }),
          c,
        );
        const page = jobs.listRuns(q);
        return ok({ ...page, items: page.items.map((r) => withUsage(core, runSubject(r.id), r)) });
      },
    },
    {
      method: 'GET',
      path: '/runs/:id',
      handler(c) {
        noQuery(c);
        const detail = jobs.getRun(parseParam(idParam, c, 'id'));
        return ok({ ...detail, run: withUsage(core, runSubject(detail.run.id), detail.run) });
      },
    },

    // ---- backfill queue ----
    {
      method: 'GET',
      path: '/backfills',
      handler(c) {
        const q = parseQuery(z.strictObject({ job: idParam.optional(), status: z.enum(BACKFILL_STATUSES).optional(), limit: limitParam.optional(), after: afterParam.optional() }), c);
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
        async handler(c) {
          noQuery(c);
          const id = parseParam(intParam(1), c, 'id');
          const { reason: why } = await parseBody(reasonBody, c);
          return ok({ backfill: jobs.backfillAction(id, { action, reason: why, actor: c.actor }) });
        },
      }),
    ),

    // ---- calendars ----
    {
      method: 'POST',
      path: '/calendars',
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
      handler(c) {
        noQuery(c);
        return ok({ items: jobs.listCalendars(), next: null });
      },
    },
    {
      method: 'GET',
      path: '/calendars/:id',
      handler(c) {
        noQuery(c);
        return ok({ calendar: jobs.getCalendar(parseParam(idParam, c, 'id')) });
      },
    },
    {
      method: 'PUT',
      path: '/calendars/:id',
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
      handler(c) {
        noQuery(c);
        return ok({ settings: jobs.settings() });
      },
    },
    {
      method: 'PUT',
      path: '/job-settings/kill-switch',
      async handler(c) {
        noQuery(c);
        const body = await parseBody(z.strictObject({ on: z.boolean(), reason }), c);
        return ok({ settings: jobs.setKillSwitch({ ...body, actor: c.actor }) });
      },
    },
    {
      method: 'PUT',
      path: '/job-settings/concurrency',
      async handler(c) {
        noQuery(c);
        const body = await parseBody(z.strictObject({ limit: z.number().int().min(1).max(100_000).nullable(), reason }), c);
        return ok({ settings: jobs.setGlobalConcurrency({ ...body, actor: c.actor }) });
      },
    },
  ];
}
