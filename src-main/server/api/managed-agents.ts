/**
 * `/managed-agents…` (PROTOCOL §7): define the agent processes Gaffer runs, and start, stop or
 * restart them (all of them, or one `instance`). Operator only, like every /api/v1 route; the core
 * validates again and audits each change with actor `operator:http` and the reason given.
 */
import { z } from 'zod';
import { MANAGED_ACTIONS, managedAgentInput, managedAgentPatch, managedControlInput, type ManagedAction } from '../../common/managed-agents';
import type { Core } from '../../core/create-core';
import { arrayListRoute, defineRoute } from './define-route';
import { emptyQuery, ok, optionalReasonBody, reasonFromQueryOrBody, reasonQuery, type Route } from './router';

// Named so each route's doc (the OpenAPI document) names the schema it parses.
const ref = z.string().min(1).max(200).describe('the managed agent’s id or name');
const params = { id: ref };


export function managedAgentRoutes(core: Core): Route[] {
  const managed = core.managed;
  const control = (action: ManagedAction) =>
    defineRoute({
      op: 'managedAgents.control',
      path: `/managed-agents/:id/${action}`,
      params,
      query: emptyQuery,
      body: managedControlInput,
      handle: ({ params: { id }, body }, c) => ok({ managedAgent: managed.control(id, action, { actor: c.actor, ...body }) }),
    });
  return [
    defineRoute({
      op: 'managedAgents.create',
      query: emptyQuery,
      body: managedAgentInput,
      handle({ body }, c) {
        const managedAgent = managed.create(body, { actor: c.actor });
        return ok({ managedAgent }, 201, { location: `/api/v1/managed-agents/${managedAgent.id}` });
      },
    }),
    arrayListRoute('managedAgents.list', () => managed.list()),
    defineRoute({
      op: 'managedAgents.get',
      params,
      query: emptyQuery,
      handle: ({ params: { id } }) => ok({ managedAgent: managed.get(id) }),
    }),
    defineRoute({
      op: 'managedAgents.update',
      params,
      query: emptyQuery,
      body: managedAgentPatch,
      handle: ({ params: { id }, body }, c) => ok({ managedAgent: managed.update(id, body, { actor: c.actor }) }),
    }),
    defineRoute({
      op: 'managedAgents.delete',
      params,
      query: reasonQuery,
      unparsedBody: optionalReasonBody,
      async handle({ params: { id }, query }, c) {
        const why = await reasonFromQueryOrBody(query, optionalReasonBody, c);
        return ok({ managedAgent: managed.remove(id, { actor: c.actor, ...(why ? { reason: why } : {}) }) });
      },
    }),
    ...MANAGED_ACTIONS.map(control),
  ];
}
