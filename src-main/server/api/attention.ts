/**
 * `/inbox…`, `/notifications…`, the decisions on held runs (`/runs/{id}/approve|reject`), the
 * daily spend caps (`/job-settings/budgets`) and the role pauses (`/roles/{role}/pause|resume`,
 * `GET /role-pauses`) (PROTOCOL §8 plus additions).
 * Queries, path parameters and bodies are validated here with the schemas each route documents;
 * the core validates again and audits every operator action with actor `operator:http`. Webhook
 * URLs come back masked.
 */
import { z } from 'zod';
import { DELIVERY_STATUSES, INBOX_KINDS, INBOX_STATES, inboxAckInput, inboxSnoozeInput, webhookId } from '../../common/attention';
import { OPS } from '../../common/ops';
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
const rolePauseBody = z.strictObject({ reason, until: pauseUntil });
const noBody = z.strictObject({});
const itemParams = { id: idParam };
const roleParams = { role: roleName };

export function attentionRoutes(core: Core): Route[] {
  const inbox = core.inbox;
  const { notifications, webhooks } = core.attention;
  return [
    ...(['approve', 'reject'] as const).map((decision) =>
      defineRoute({
        op: decision === 'approve' ? 'runs.approve' : 'runs.reject',
        params: { id: runIdParam },
        query: emptyQuery,
        body: decision === 'approve' ? approvalBody : decisionBody,
        handle({ params: { id }, body }, c) {
          const approvals = core.jobs.approvals;
          return ok({ run: decision === 'approve' ? approvals.approve(id, { ...body, actor: c.actor }) : approvals.reject(id, { note: body.note, actor: c.actor }) });
        },
      }),
    ),
    defineRoute({
      op: 'budgets.get',
      query: emptyQuery,
      handle: () => ok({ budgets: core.budgets.view() }),
    }),
    defineRoute({
      op: 'budgets.put',
      query: emptyQuery,
      body: OPS['budgets.put'].input,
      handle: ({ body }, c) => ok({ budgets: core.budgets.put({ ...body, actor: c.actor }) }),
    }),
    defineRoute({
      op: 'roles.pauses',
      query: emptyQuery,
      handle: () => ok({ items: core.jobs.pauses.rolePauses(), next: null }),
    }),
    defineRoute({
      op: 'roles.pause',
      params: roleParams,
      query: emptyQuery,
      body: rolePauseBody,
      handle: ({ params: { role }, body }, c) => ok({ pause: core.jobs.pauses.pauseRole(role, { ...body, actor: c.actor }) }),
    }),
    defineRoute({
      op: 'roles.resume',
      params: roleParams,
      query: emptyQuery,
      body: optionalReasonBody,
      handle: ({ params: { role }, body }, c) => ok({ pause: core.jobs.pauses.resumeRole(role, { ...body, actor: c.actor }) }),
    }),
    defineRoute({
      op: 'inbox.list',
      query: listQuery,
      handle: ({ query }) => ok(inbox.list(query)),
    }),
    defineRoute({
      op: 'inbox.counts',
      query: emptyQuery,
      handle: () => ok({ counts: inbox.counts() }),
    }),
    defineRoute({
      op: 'inbox.ackMany',
      query: emptyQuery,
      body: OPS['inbox.ackMany'].input,
      handle: ({ body }, c) => ok(inbox.ackMany({ ...body, actor: c.actor })),
    }),
    defineRoute({
      op: 'inbox.get',
      params: itemParams,
      query: emptyQuery,
      handle: ({ params: { id } }) => ok({ item: inbox.get(id) }),
    }),
    defineRoute({
      op: 'inbox.ack',
      params: itemParams,
      query: emptyQuery,
      body: inboxAckInput,
      handle: ({ params: { id }, body }, c) => ok({ item: inbox.ack(id, { ...body, actor: c.actor }) }),
    }),
    defineRoute({
      op: 'inbox.snooze',
      params: itemParams,
      query: emptyQuery,
      body: inboxSnoozeInput,
      handle: ({ params: { id }, body }, c) => ok({ item: inbox.snooze(id, { ...body, actor: c.actor }) }),
    }),
    defineRoute({
      op: 'notifications.get',
      query: emptyQuery,
      handle: () => ok(notifications.view()),
    }),
    defineRoute({
      op: 'notifications.put',
      query: emptyQuery,
      body: OPS['notifications.put'].input,
      handle: ({ body }, c) => ok(notifications.put({ ...body, actor: c.actor })),
    }),
    defineRoute({
      op: 'notifications.test',
      query: emptyQuery,
      body: OPS['notifications.test'].input,
      handle: async ({ body }, c) => ok({ results: await webhooks.test({ ...body, actor: c.actor }) }),
    }),
    defineRoute({
      op: 'notifications.rotateSecret',
      params: { id: webhookId },
      query: emptyQuery,
      body: optionalReasonBody,
      handle: ({ params: { id }, body }, c) => ok(notifications.rotate(id, { actor: c.actor, ...(body.reason !== undefined ? { reason: body.reason } : {}) })),
    }),
    defineRoute({
      op: 'notifications.deliveries',
      query: deliveriesQuery,
      handle: ({ query }) => ok(webhooks.list(query)),
    }),
    defineRoute({
      op: 'notifications.retryDelivery',
      params: itemParams,
      query: emptyQuery,
      body: noBody,
      handle: ({ params: { id } }, c) => ok({ delivery: webhooks.retry(id, { actor: c.actor }) }),
    }),
  ];
}
