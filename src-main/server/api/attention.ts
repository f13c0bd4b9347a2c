/**
 * `/inbox…`, `/notifications…` and the decisions on held runs, `/runs/{id}/approve|reject`
 * (PROTOCOL §8 plus additions). Queries, path parameters and
 * bodies are validated here; the core validates again and audits every operator action with
 * actor `operator:http`. Webhook URLs come back masked.
 */
import { z } from 'zod';
import { DELIVERY_STATUSES, INBOX_KINDS, inboxAckInput, inboxAckManyInput, inboxSnoozeInput, notificationsInput, notificationsTestInput, webhookId } from '../../common/attention';
import { reason } from '../../common/schemas';
import type { Core } from '../../core/create-core';
import { idParam, intParam, ok, parseBody, parseParam, parseQuery, type ApiContext, type Route } from './router';

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

export function attentionRoutes(core: Core): Route[] {
  const inbox = core.inbox;
  const { notifications, webhooks } = core.attention;
  const noQuery = (c: ApiContext) => parseQuery(z.strictObject({}), c);
  return [
    ...(['approve', 'reject'] as const).map(
      (decision): Route => ({
        method: 'POST',
        path: `/runs/:id/${decision}`,
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
      path: '/inbox',
      handler(c) {
        return ok(inbox.list(parseQuery(listQuery, c)));
      },
    },
    {
      method: 'GET',
      path: '/inbox/counts',
      handler(c) {
        noQuery(c);
        return ok({ counts: inbox.counts() });
      },
    },
    {
      method: 'POST',
      path: '/inbox/ack',
      async handler(c) {
        noQuery(c);
        const body = await parseBody(inboxAckManyInput, c);
        return ok(inbox.ackMany({ ...body, actor: c.actor }));
      },
    },
    {
      method: 'GET',
      path: '/inbox/:id',
      handler(c) {
        noQuery(c);
        return ok({ item: inbox.get(parseParam(idParam, c, 'id')) });
      },
    },
    {
      method: 'POST',
      path: '/inbox/:id/ack',
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
      handler(c) {
        noQuery(c);
        return ok(notifications.view());
      },
    },
    {
      method: 'PUT',
      path: '/notifications',
      async handler(c) {
        noQuery(c);
        const body = await parseBody(notificationsInput.extend({ reason: reason.optional() }), c);
        return ok(notifications.put({ ...body, actor: c.actor }));
      },
    },
    {
      method: 'POST',
      path: '/notifications/test',
      async handler(c) {
        noQuery(c);
        const body = await parseBody(notificationsTestInput, c);
        return ok({ results: await webhooks.test({ ...body, actor: c.actor }) });
      },
    },
    {
      method: 'GET',
      path: '/notifications/deliveries',
      handler(c) {
        return ok(webhooks.list(parseQuery(deliveriesQuery, c)));
      },
    },
    {
      method: 'POST',
      path: '/notifications/deliveries/:id/retry',
      async handler(c) {
        noQuery(c);
        const id = parseParam(idParam, c, 'id');
        await parseBody(z.strictObject({}), c);
        return ok({ delivery: webhooks.retry(id, { actor: c.actor }) });
      },
    },
  ];
}
