/**
 * `/managed-agents…` (PROTOCOL §7): define the agent processes Gaffer runs, and start, stop or
 * restart them (all of them, or one `instance`). Operator only, like every /api/v1 route; the core
 * validates bodies and audits each change with actor `operator:http` and the reason given.
 */
import { z } from 'zod';
import { MANAGED_ACTIONS, managedControlInput } from '../../common/managed-agents';
import { reason } from '../../common/schemas';
import type { Core } from '../../core/create-core';
import { limitParam, ok, pageArray, parseBody, parseParam, parseQuery, type ApiContext, type Route } from './router';

const ref = z.string().min(1).max(200);
const pageQuery = z.strictObject({ limit: limitParam.optional(), after: z.string().min(1).max(100).optional() });

export function managedAgentRoutes(core: Core): Route[] {
  const managed = core.managed;
  const noQuery = (c: ApiContext) => parseQuery(z.strictObject({}), c);
  const control = (action: (typeof MANAGED_ACTIONS)[number]): Route => ({
    method: 'POST',
    path: `/managed-agents/:id/${action}`,
    async handler(c) {
      noQuery(c);
      const id = parseParam(ref, c, 'id');
      const body = await parseBody(managedControlInput, c);
      return ok({ managedAgent: managed.control(id, action, { actor: c.actor, ...body }) });
    },
  });
  return [
    {
      method: 'POST',
      path: '/managed-agents',
      async handler(c) {
        noQuery(c);
        const body = await c.body();
        const managedAgent = managed.create(body, { actor: c.actor });
        return ok({ managedAgent }, 201, { location: `/api/v1/managed-agents/${managedAgent.id}` });
      },
    },
    {
      method: 'GET',
      path: '/managed-agents',
      handler(c) {
        const q = parseQuery(pageQuery, c);
        return ok(pageArray(managed.list(), q.limit, q.after));
      },
    },
    {
      method: 'GET',
      path: '/managed-agents/:id',
      handler(c) {
        noQuery(c);
        return ok({ managedAgent: managed.get(parseParam(ref, c, 'id')) });
      },
    },
    {
      method: 'PATCH',
      path: '/managed-agents/:id',
      async handler(c) {
        noQuery(c);
        const id = parseParam(ref, c, 'id');
        return ok({ managedAgent: managed.update(id, await c.body(), { actor: c.actor }) });
      },
    },
    {
      // The reason comes from `?reason=` or the body.
      method: 'DELETE',
      path: '/managed-agents/:id',
      async handler(c) {
        const id = parseParam(ref, c, 'id');
        const q = parseQuery(z.strictObject({ reason: reason.optional() }), c);
        const why = q.reason ?? (await parseBody(z.strictObject({ reason: reason.optional() }), c)).reason;
        return ok({ managedAgent: managed.remove(id, { actor: c.actor, ...(why ? { reason: why } : {}) }) });
      },
    },
    ...MANAGED_ACTIONS.map(control),
  ];
}
