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

const CONTROL_SUMMARIES: Record<ManagedAction, string> = {
  start: 'Start the managed agent (Gaffer then keeps it running, also across its own restarts), or one stopped instance.',
  stop: 'Stop the managed agent or one instance: it takes no new work, finishes or hands back what it has, and is not restarted.',
  restart: 'Restart the managed agent or one instance, rolling: a new process starts; once it is up the old one is drained.',
};

export function managedAgentRoutes(core: Core): Route[] {
  const managed = core.managed;
  const control = (action: ManagedAction) =>
    defineRoute({
      method: 'POST',
      path: `/managed-agents/:id/${action}`,
      summary: CONTROL_SUMMARIES[action],
      params,
      query: emptyQuery,
      body: managedControlInput,
      responses: { 200: '`{managedAgent}`' },
      handle: ({ params: { id }, body }, c) => ok({ managedAgent: managed.control(id, action, { actor: c.actor, ...body }) }),
    });
  return [
    defineRoute({
      method: 'POST',
      path: '/managed-agents',
      summary: 'Define a managed agent: Gaffer mints its token, starts its processes and keeps them running.',
      description: '`mode: per_task` (default) runs each instance as `gaffer agent` around `command`; `long_running` runs `command` as an agent itself, with GAFFER_URL and GAFFER_TOKEN in its environment.',
      query: emptyQuery,
      body: managedAgentInput,
      responses: { 201: '`{managedAgent}`' },
      handle({ body }, c) {
        const managedAgent = managed.create(body, { actor: c.actor });
        return ok({ managedAgent }, 201, { location: `/api/v1/managed-agents/${managedAgent.id}` });
      },
    }),
    arrayListRoute('/managed-agents', 'The managed agents, each with its processes (pid, status, uptime, restarts, last exit, instance).', () => managed.list()),
    defineRoute({
      method: 'GET',
      path: '/managed-agents/:id',
      summary: 'One managed agent, with the recent output of each process.',
      params,
      query: emptyQuery,
      responses: { 200: '`{managedAgent}`' },
      handle: ({ params: { id } }) => ok({ managedAgent: managed.get(id) }),
    }),
    defineRoute({
      method: 'PATCH',
      path: '/managed-agents/:id',
      summary: 'Change a managed agent without restarting Gaffer: a new command etc. rolls (new process up, old one drained); `instances` adds or drains processes.',
      params,
      query: emptyQuery,
      body: managedAgentPatch,
      responses: { 200: '`{managedAgent}`' },
      handle: ({ params: { id }, body }, c) => ok({ managedAgent: managed.update(id, body, { actor: c.actor }) }),
    }),
    defineRoute({
      method: 'DELETE',
      path: '/managed-agents/:id',
      summary: 'Delete a managed agent: its processes stop (their work is handed back), its token is revoked. The reason comes from `?reason=` or the body.',
      params,
      query: reasonQuery,
      unparsedBody: optionalReasonBody,
      responses: { 200: '`{managedAgent}`' },
      async handle({ params: { id }, query }, c) {
        const why = await reasonFromQueryOrBody(query, optionalReasonBody, c);
        return ok({ managedAgent: managed.remove(id, { actor: c.actor, ...(why ? { reason: why } : {}) }) });
      },
    }),
    ...MANAGED_ACTIONS.map(control),
  ];
}
