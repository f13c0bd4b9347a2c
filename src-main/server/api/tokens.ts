/** `/tokens…`: agent tokens (the secret is returned once, at creation) and `/instances`. */
import { z } from 'zod';
import { OPS } from '../../common/ops';
import type { Core } from '../../core/create-core';
import { arrayListRoute, defineRoute } from './define-route';
import { ok, reasonBody, reasonFromQueryOrBody, reasonQuery, type ApiContext, type Route } from './router';

const tokenId = z.string().min(1).max(100);
const tokenParams = { id: tokenId };

export function tokenRoutes(core: Core): Route[] {
  const revoke = (id: string, why: string, c: ApiContext) => ok({ token: core.tokens.revoke({ id, reason: why, actor: c.actor }) });
  return [
    defineRoute({
      op: 'tokens.create',
      body: OPS['tokens.create'].input,
      handle({ body: { name, role } }, c) {
        const { id, token, info } = core.tokens.create({ name, role: role ?? null, actor: c.actor });
        return ok({ ...info, id, token }, 201);
      },
    }),
    arrayListRoute('tokens.list', () => core.tokens.list()),
    defineRoute({
      op: 'tokens.revoke',
      path: '/tokens/:id/revoke',
      params: tokenParams,
      body: reasonBody,
      handle: ({ params: { id }, body: { reason: why } }, c) => revoke(id, why, c),
    }),
    defineRoute({
      op: 'tokens.revoke',
      path: '/tokens/:id',
      params: tokenParams,
      query: reasonQuery,
      unparsedBody: reasonBody,
      handle: async ({ params: { id }, query }, c) => revoke(id, await reasonFromQueryOrBody(query, reasonBody, c), c),
    }),
    arrayListRoute('instances.list', () => core.instances.list()),
  ];
}
