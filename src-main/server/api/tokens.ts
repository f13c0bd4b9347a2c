/** `/tokens…`: agent tokens (the secret is returned once, at creation) and `/instances`. */
import { z } from 'zod';
import { roleName } from '../../common/schemas';
import type { Core } from '../../core/create-core';
import { arrayListRoute, defineRoute } from './define-route';
import { ok, reasonBody, reasonFromQueryOrBody, reasonQuery, type ApiContext, type Route } from './router';

const createBody = z.strictObject({
  name: z.string().trim().min(1, 'a name is required').max(200),
  role: roleName.nullable().optional(),
});
const tokenId = z.string().min(1).max(100);
const tokenParams = { id: tokenId };

export function tokenRoutes(core: Core): Route[] {
  const revoke = (id: string, why: string, c: ApiContext) => ok({ token: core.tokens.revoke({ id, reason: why, actor: c.actor }) });
  return [
    defineRoute({
      method: 'POST',
      path: '/tokens',
      summary: 'Create an agent token, optionally bound to a role. The secret (`token`) is in this reply only.',
      body: createBody,
      responses: { 201: '`{id, token, name, role, …}`' },
      handle({ body: { name, role } }, c) {
        const { id, token, info } = core.tokens.create({ name, role: role ?? null, actor: c.actor });
        return ok({ ...info, id, token }, 201);
      },
    }),
    arrayListRoute('/tokens', 'List agent tokens (never their secrets).', () => core.tokens.list()),
    defineRoute({
      method: 'POST',
      path: '/tokens/:id/revoke',
      summary: 'Revoke an agent token: its sessions are closed (4403) and it can no longer connect.',
      params: tokenParams,
      body: reasonBody,
      responses: { 200: '`{token}`' },
      handle: ({ params: { id }, body: { reason: why } }, c) => revoke(id, why, c),
    }),
    defineRoute({
      method: 'DELETE',
      path: '/tokens/:id',
      summary: 'Revoke an agent token; the reason comes from `?reason=` or the body.',
      params: tokenParams,
      query: reasonQuery,
      unparsedBody: reasonBody,
      responses: { 200: '`{token}`' },
      handle: async ({ params: { id }, query }, c) => revoke(id, await reasonFromQueryOrBody(query, reasonBody, c), c),
    }),
    arrayListRoute('/instances', 'Agent instances (connected processes) with their status and held locks.', () => core.instances.list()),
  ];
}
