/**
 * `/inbox…`, `/notifications…`, the decisions on held runs (`/runs/{id}/approve|reject`), the
 * daily spend caps (`/job-settings/budgets`) and the role pauses (`/roles/{role}/pause|resume`,
 * `GET /role-pauses`) (PROTOCOL §8 plus additions).
 * Queries, path parameters and bodies are validated here with the schemas each route documents;
 * the core validates again and audits every operator action with actor `operator:http`. Webhook
 * URLs come back masked.
 */
import { z } from 'zod';
import { budgetsInput, DELIVERY_STATUSES, INBOX_KINDS, INBOX_STATES, inboxAckInput, inboxAckManyInput, inboxSnoozeInput, notificationsInput, notificationsTestInput, webhookId } from '../../common/attention';
import { perAttemptBudget, reason, roleName } from '../../common/schemas';
import { pauseUntil } from '../../common/job-schema';
import type { Core } from '../../core/create-core';
import { defineRoute } from './define-route';
import { emptyQuery, idParam, intParam, ok, optionalReasonBody, type Route } from './router';

const listQuery = z.strictObject({
  state: z.enum([...INBOX_STATES, 'all']).optional(),
  kind: z.enum(INBOX_KINDS).optional(),
  subject: z.string().min(1).max(300).optional(),
  limit: intParam(1, 500).optional(),
  after: z.string().min(1).max(200).optional(),
});
const deliveriesQuery = z.strictObject({ status: z.enum(DELIVERY_STATUSES).optional(), webhookId: webhookId.optional(), limit: intParam(1, 500).optional(), after: idParam.optional() });
const decisionBody = z.strictObject({ note: reason });
/** PROTOCOL §14: approving may set the run's spend cap from its next attempt on. */
const approvalBody = decisionBody.extend({ budget: perAttemptBudget.optional() });
const runIdParam = z.string().min(1).max(100);
const notificationsBody = notificationsInput.extend({ reason: reason.optional() });
const rolePauseBody = z.strictObject({ reason, until: pauseUntil });
const noBody = z.strictObject({});
const budgetsBody = budgetsInput.extend({ reason: reason.optional() });
const itemParams = { id: idParam };
const roleParams = { role: roleName };

export function attentionRoutes(core: Core): Route[] {
  const inbox = core.inbox;
  const { notifications, webhooks } = core.attention;
  return [
    ...(['approve', 'reject'] as const).map((decision) =>
      defineRoute({
        method: 'POST',
        path: `/runs/:id/${decision}`,
        summary:
          decision === 'approve'
            ? 'Approve a held run: it is dispatched again and its job_trigger carries `approval: {decision, note, by, at}`.'
            : 'Reject a held run: it stays failed, with disposition `rejected`.',
        params: { id: runIdParam },
        query: emptyQuery,
        body: decision === 'approve' ? approvalBody : decisionBody,
        responses: { 200: '`{run}`' },
        handle({ params: { id }, body }, c) {
          const approvals = core.jobs.approvals;
          return ok({ run: decision === 'approve' ? approvals.approve(id, { ...body, actor: c.actor }) : approvals.reject(id, { note: body.note, actor: c.actor }) });
        },
      }),
    ),
    defineRoute({
      method: 'GET',
      path: '/job-settings/budgets',
      summary: 'Daily spend caps with today’s spend against each, the day, its zone and when the caps reset (midnight there).',
      query: emptyQuery,
      responses: { 200: '`{budgets}`' },
      handle: () => ok({ budgets: core.budgets.view() }),
    }),
    defineRoute({
      method: 'PUT',
      path: '/job-settings/budgets',
      summary: 'Set daily spend caps: `globalDailyUsd`, `perRoleDailyUsd: {role: usd}` (merged; `null` removes a cap), `timezone` of the day.',
      query: emptyQuery,
      body: budgetsBody,
      responses: { 200: '`{budgets}`' },
      handle: ({ body }, c) => ok({ budgets: core.budgets.put({ ...body, actor: c.actor }) }),
    }),
    defineRoute({
      method: 'GET',
      path: '/role-pauses',
      summary: 'The roles paused now (who, when, why, until when).',
      query: emptyQuery,
      responses: { 200: '`{items: [{role, at, by, reason, until}], next: null}`' },
      handle: () => ok({ items: core.jobs.pauses.rolePauses(), next: null }),
    }),
    defineRoute({
      method: 'POST',
      path: '/roles/:role/pause',
      summary: 'Pause a whole role: its jobs start nothing new and `claim` hands out none of its tasks, until resumed or until `until`.',
      params: roleParams,
      query: emptyQuery,
      body: rolePauseBody,
      responses: { 200: '`{pause}`' },
      handle: ({ params: { role }, body }, c) => ok({ pause: core.jobs.pauses.pauseRole(role, { ...body, actor: c.actor }) }),
    }),
    defineRoute({
      method: 'POST',
      path: '/roles/:role/resume',
      summary: 'Resume a paused role (jobs with a pause of their own stay paused).',
      params: roleParams,
      query: emptyQuery,
      body: optionalReasonBody,
      responses: { 200: '`{pause}` (the pause that ended)' },
      handle: ({ params: { role }, body }, c) => ok({ pause: core.jobs.pauses.resumeRole(role, { ...body, actor: c.actor }) }),
    }),
    defineRoute({
      method: 'GET',
      path: '/inbox',
      summary: 'Inbox items, latest occurrence first (`state` defaults to open).',
      query: listQuery,
      responses: { 200: '`{items: [{id, kind, severity, subject, title, detail, at, state, …}], next}`' },
      handle: ({ query }) => ok(inbox.list(query)),
    }),
    defineRoute({
      method: 'GET',
      path: '/inbox/counts',
      summary: 'Open and snoozed items, open critical ones, open ones by kind.',
      query: emptyQuery,
      responses: { 200: '`{counts}`' },
      handle: () => ok({ counts: inbox.counts() }),
    }),
    defineRoute({
      method: 'POST',
      path: '/inbox/ack',
      summary: 'Acknowledge several items; ones acknowledged meanwhile are listed in `skipped`.',
      query: emptyQuery,
      body: inboxAckManyInput,
      responses: { 200: '`{acked, skipped}`' },
      handle: ({ body }, c) => ok(inbox.ackMany({ ...body, actor: c.actor })),
    }),
    defineRoute({
      method: 'GET',
      path: '/inbox/:id',
      summary: 'One inbox item, with its evidence.',
      params: itemParams,
      query: emptyQuery,
      responses: { 200: '`{item}`' },
      handle: ({ params: { id } }) => ok({ item: inbox.get(id) }),
    }),
    defineRoute({
      method: 'POST',
      path: '/inbox/:id/ack',
      summary: 'Acknowledge an item, with an optional note.',
      params: itemParams,
      query: emptyQuery,
      body: inboxAckInput,
      responses: { 200: '`{item}`' },
      handle: ({ params: { id }, body }, c) => ok({ item: inbox.ack(id, { ...body, actor: c.actor }) }),
    }),
    defineRoute({
      method: 'POST',
      path: '/inbox/:id/snooze',
      summary: 'Hide an item until a time; it opens again then.',
      params: itemParams,
      query: emptyQuery,
      body: inboxSnoozeInput,
      responses: { 200: '`{item}`' },
      handle: ({ params: { id }, body }, c) => ok({ item: inbox.snooze(id, { ...body, actor: c.actor }) }),
    }),
    defineRoute({
      method: 'GET',
      path: '/notifications',
      summary: 'Webhooks (URLs masked) and desktop notification settings.',
      query: emptyQuery,
      responses: { 200: '`{webhooks, desktop, consoleUrl, consoleUrlSet}` (URLs and secrets masked)' },
      handle: () => ok(notifications.view()),
    }),
    defineRoute({
      method: 'PUT',
      path: '/notifications',
      summary:
        'Replace webhooks, desktop settings and the console link; a webhook kept by `id` without `url` keeps its stored URL. A new webhook gets a signing secret, shown whole in this reply only; without `events` it sends every critical and warning kind.',
      query: emptyQuery,
      body: notificationsBody,
      responses: { 200: '`{webhooks, desktop, consoleUrl, consoleUrlSet}` (URLs masked; new webhooks with their whole `secret`)' },
      handle: ({ body }, c) => ok(notifications.put({ ...body, actor: c.actor })),
    }),
    defineRoute({
      method: 'POST',
      path: '/notifications/test',
      summary: 'Send a test notice now to one webhook (or to each) and report what came back.',
      query: emptyQuery,
      body: notificationsTestInput,
      responses: { 200: '`{results: [{webhookId, url, ok, status, error, ms}]}`' },
      handle: async ({ body }, c) => ok({ results: await webhooks.test({ ...body, actor: c.actor }) }),
    }),
    defineRoute({
      method: 'POST',
      path: '/notifications/webhooks/:id/rotate',
      summary: 'Make a new signing secret for one webhook; the reply shows it this once (deliveries from now on are signed with it).',
      params: { id: webhookId },
      query: emptyQuery,
      body: optionalReasonBody,
      responses: { 200: '`{webhookId, secret}`' },
      handle: ({ params: { id }, body }, c) => ok(notifications.rotate(id, { actor: c.actor, ...(body.reason !== undefined ? { reason: body.reason } : {}) })),
    }),
    defineRoute({
      method: 'GET',
      path: '/notifications/deliveries',
      summary: 'Webhook deliveries, newest first: pending (with the next attempt), delivered, or dead (gave up).',
      query: deliveriesQuery,
      responses: { 200: '`{items, next}`' },
      handle: ({ query }) => ok(webhooks.list(query)),
    }),
    defineRoute({
      method: 'POST',
      path: '/notifications/deliveries/:id/retry',
      summary: 'Send a dead delivery again, with a fresh set of retries.',
      params: itemParams,
      query: emptyQuery,
      body: noBody,
      responses: { 200: '`{delivery}`' },
      handle: ({ params: { id } }, c) => ok({ delivery: webhooks.retry(id, { actor: c.actor }) }),
    }),
  ];
}
