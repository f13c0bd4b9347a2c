/**
 * `/inbox…`, `/notifications…`, the decisions on held runs (`/runs/{id}/approve|reject`), the
 * daily spend caps (`/job-settings/budgets`) and the role pauses (`/roles/{role}/pause|resume`,
 * `GET /role-pauses`) (PROTOCOL §8 plus additions).
 * Queries, path parameters and bodies are validated here with the schemas each route documents;
 * the core validates again and audits every operator action with actor `operator:http`. Webhook
 * URLs come back masked.
 */
import { z } from 'zod';
import { budgetsInput, DELIVERY_STATUSES, INBOX_KINDS, inboxAckInput, inboxAckManyInput, inboxSnoozeInput, notificationsInput, notificationsTestInput, webhookId } from '../../common/attention';
import { reason, roleName } from '../../common/schemas';
import type { Core } from '../../core/create-core';
import { emptyQuery, idParam, intParam, ok, parseBody, parseParam, parseQuery, type ApiContext, type Route } from './router';

const listQuery = z.strictObject({
  state: z.enum(['open', 'snoozed', 'acked', 'all']).optional(),
  kind: z.enum(INBOX_KINDS).optional(),
  subject: z.string().min(1).max(300).optional(),
  limit: intParam(1, 500).optional(),
  after: z.string().min(1).max(200).optional(),
});
const deliveriesQuery = z.strictObject({ status: z.enum(DELIVERY_STATUSES).optional(), webhookId: webhookId.optional(), limit: intParam(1, 500).optional(), after: idParam.optional() });
const decisionBody = z.strictObject({ note: reason });
const runIdParam = z.string().min(1).max(100);
const notificationsBody = notificationsInput.extend({ reason: reason.optional() });
const rolePauseBody = z.strictObject({ reason, until: z.iso.datetime({ offset: true }).nullable().optional() });
const roleResumeBody = z.strictObject({ reason: reason.optional() });
const noBody = z.strictObject({});
const budgetsBody = budgetsInput.extend({ reason: reason.optional() });
const itemParams = { id: idParam };
const roleParams = { role: roleName };

export function attentionRoutes(core: Core): Route[] {
  const inbox = core.inbox;
  const { notifications, webhooks } = core.attention;
  const noQuery = (c: ApiContext) => parseQuery(emptyQuery, c);
  return [
    ...(['approve', 'reject'] as const).map(
      (decision): Route => ({
        method: 'POST',
        path: `/runs/:id/${decision}`,
        doc: {
          summary:
            decision === 'approve'
              ? 'Approve a held run: it is dispatched again and its job_trigger carries `approval: {decision, note, by, at}`.'
              : 'Reject a held run: it stays failed, with disposition `rejected`.',
          params: { id: runIdParam },
          query: emptyQuery,
          body: decisionBody,
          responses: { 200: '`{run}`' },
        },
        async handler(c) {
          noQuery(c);
          const id = parseParam(runIdParam, c, 'id');
          const { note } = await parseBody(decisionBody, c);
          const approvals = core.jobs.approvals;
          return ok({ run: decision === 'approve' ? approvals.approve(id, { note, actor: c.actor }) : approvals.reject(id, { note, actor: c.actor }) });
        },
      }),
    ),
    {
      method: 'GET',
      path: '/job-settings/budgets',
      doc: { summary: 'Daily spend caps with today’s spend against each, the day, its zone and when the caps reset (midnight there).', query: emptyQuery, responses: { 200: '`{budgets}`' } },
      handler(c) {
        noQuery(c);
        return ok({ budgets: core.budgets.view() });
      },
    },
    {
      method: 'PUT',
      path: '/job-settings/budgets',
      doc: {
        summary: 'Set daily spend caps: `globalDailyUsd`, `perRoleDailyUsd: {role: usd}` (merged; `null` removes a cap), `timezone` of the day.',
        query: emptyQuery,
        body: budgetsBody,
        responses: { 200: '`{budgets}`' },
      },
      async handler(c) {
        noQuery(c);
        const body = await parseBody(budgetsBody, c);
        return ok({ budgets: core.budgets.put({ ...body, actor: c.actor }) });
      },
    },
    {
      method: 'GET',
      path: '/role-pauses',
      doc: { summary: 'The roles paused now (who, when, why, until when).', query: emptyQuery, responses: { 200: '`{items: [{role, at, by, reason, until}], next: null}`' } },
      handler(c) {
        noQuery(c);
        return ok({ items: core.jobs.pauses.rolePauses(), next: null });
      },
    },
    {
      method: 'POST',
      path: '/roles/:role/pause',
      doc: {
        summary: 'Pause a whole role: its jobs start nothing new and `claim` hands out none of its tasks, until resumed or until `until`.',
        params: roleParams,
        query: emptyQuery,
        body: rolePauseBody,
        responses: { 200: '`{pause}`' },
      },
      async handler(c) {
        noQuery(c);
        const role = parseParam(roleName, c, 'role');
        const body = await parseBody(rolePauseBody, c);
        return ok({ pause: core.jobs.pauses.pauseRole(role, { ...body, actor: c.actor }) });
      },
    },
    {
      method: 'POST',
      path: '/roles/:role/resume',
      doc: { summary: 'Resume a paused role (jobs with a pause of their own stay paused).', params: roleParams, query: emptyQuery, body: roleResumeBody, responses: { 200: '`{pause}` (the pause that ended)' } },
      async handler(c) {
        noQuery(c);
        const role = parseParam(roleName, c, 'role');
        const body = await parseBody(roleResumeBody, c);
        return ok({ pause: core.jobs.pauses.resumeRole(role, { ...body, actor: c.actor }) });
      },
    },
    {
      method: 'GET',
      path: '/inbox',
      doc: { summary: 'Inbox items, latest occurrence first (`state` defaults to open).', query: listQuery, responses: { 200: '`{items: [{id, kind, severity, subject, title, detail, at, state, …}], next}`' } },
      handler(c) {
        return ok(inbox.list(parseQuery(listQuery, c)));
      },
    },
    {
      method: 'GET',
      path: '/inbox/counts',
      doc: { summary: 'Open and snoozed items, open critical ones, open ones by kind.', query: emptyQuery, responses: { 200: '`{counts}`' } },
      handler(c) {
        noQuery(c);
        return ok({ counts: inbox.counts() });
      },
    },
    {
      method: 'POST',
      path: '/inbox/ack',
      doc: { summary: 'Acknowledge several items; ones acknowledged meanwhile are listed in `skipped`.', query: emptyQuery, body: inboxAckManyInput, responses: { 200: '`{acked, skipped}`' } },
      async handler(c) {
        noQuery(c);
        const body = await parseBody(inboxAckManyInput, c);
        return ok(inbox.ackMany({ ...body, actor: c.actor }));
      },
    },
    {
      method: 'GET',
      path: '/inbox/:id',
      doc: { summary: 'One inbox item, with its evidence.', params: itemParams, query: emptyQuery, responses: { 200: '`{item}`' } },
      handler(c) {
        noQuery(c);
        return ok({ item: inbox.get(parseParam(idParam, c, 'id')) });
      },
    },
    {
      method: 'POST',
      path: '/inbox/:id/ack',
      doc: { summary: 'Acknowledge an item, with an optional note.', params: itemParams, query: emptyQuery, body: inboxAckInput, responses: { 200: '`{item}`' } },
      async handler(c) {
        noQuery(c);
        const id = parseParam(idParam, c, 'id');
        const body = await parseBody(inboxAckInput, c);
        return ok({ item: inbox.ack(id, { ...body, actor: c.actor }) });
      },
    },
    {
      method: 'POST',
      path: '/inbox/:id/snooze',
      doc: { summary: 'Hide an item until a time; it opens again then.', params: itemParams, query: emptyQuery, body: inboxSnoozeInput, responses: { 200: '`{item}`' } },
      async handler(c) {
        noQuery(c);
        const id = parseParam(idParam, c, 'id');
        const body = await parseBody(inboxSnoozeInput, c);
        return ok({ item: inbox.snooze(id, { ...body, actor: c.actor }) });
      },
    },
    {
      method: 'GET',
      path: '/notifications',
      doc: { summary: 'Webhooks (URLs masked) and desktop notification settings.', query: emptyQuery, responses: { 200: '`{webhooks, desktop}`' } },
      handler(c) {
        noQuery(c);
        return ok(notifications.view());
      },
    },
    {
      method: 'PUT',
      path: '/notifications',
      doc: {
        summary: 'Replace webhooks and desktop settings; a webhook kept by `id` without `url` keeps its stored URL.',
        query: emptyQuery,
        body: notificationsBody,
        responses: { 200: '`{webhooks, desktop}` (URLs masked)' },
      },
      async handler(c) {
        noQuery(c);
        const body = await parseBody(notificationsBody, c);
        return ok(notifications.put({ ...body, actor: c.actor }));
      },
    },
    {
      method: 'POST',
      path: '/notifications/test',
      doc: { summary: 'Send a test notice now to one webhook (or to each) and report what came back.', query: emptyQuery, body: notificationsTestInput, responses: { 200: '`{results: [{webhookId, url, ok, status, error, ms}]}`' } },
      async handler(c) {
        noQuery(c);
        const body = await parseBody(notificationsTestInput, c);
        return ok({ results: await webhooks.test({ ...body, actor: c.actor }) });
      },
    },
    {
      method: 'GET',
      path: '/notifications/deliveries',
      doc: { summary: 'Webhook deliveries, newest first: pending (with the next attempt), delivered, or dead (gave up).', query: deliveriesQuery, responses: { 200: '`{items, next}`' } },
      handler(c) {
        return ok(webhooks.list(parseQuery(deliveriesQuery, c)));
      },
    },
    {
      method: 'POST',
      path: '/notifications/deliveries/:id/retry',
      doc: { summary: 'Send a dead delivery again, with a fresh set of retries.', params: itemParams, query: emptyQuery, body: noBody, responses: { 200: '`{delivery}`' } },
      async handler(c) {
        noQuery(c);
        const id = parseParam(idParam, c, 'id');
        await parseBody(noBody, c);
        return ok({ delivery: webhooks.retry(id, { actor: c.actor }) });
      },
    },
  ];
}
