/** `/tokens…`: agent tokens (the secret is returned once, at creation) and `/instances`. */
import { z } from 'zod';
import { reason, roleName } from '../../common/schemas';
import type { Core } from '../../core/create-core';
import { limitParam, ok, pageArray, parseBody, parseParam, parseQuery, type ApiContext, type Route } from './router';

const createBody = z.strictObject({
  name: z.string().trim().min(1, 'a name is required').max(200),
  role: roleName.nullable().optional(),
});
const pageQuery = z.strictObject({ limit: limitParam.optional(), after: z.string().min(1).max(100).optional() });
const tokenId = z.string().min(1).max(100);
const reasonBody = z.strictObject({ reason });

export function tokenRoutes(core: Core): Route[] {
  const revoke = async (c: ApiContext, why: string) =>
    ok({ token: core.tokens.revoke({ id: parseParam(tokenId, c, 'id'), reason: why, actor: c.actor }) });
  return [
    {
      method: 'POST',
      path: '/tokens',
      async handler(c) {
        const { name, role } = await parseBody(createBody, c);
        const { id, token, info } = core.tokens.create({ name, role: role ?? null, actor: c.actor });
        return ok({ ...info, id, token }, 201);
      },
    },
    {
      method: 'GET',
      path: '/tokens',
      handler(c) {
        const q = parseQuery(pageQuery, c);
        return ok(pageArray(core.tokens.list(), q.limit, q.after));
      },
    },
    {
      method: 'POST',
      path: '/tokens/:id/revoke',
      async handler(c) {
        parseParam(tokenId, c, 'id');
        return revoke(c, (await parseBody(reasonBody, c)).reason);
      },
    },
    {
      // DELETE takes the reason from the body or from `?reason=`.
      method: 'DELETE',
      path: '/tokens/:id',
      async handler(c) {
        parseParam(tokenId, c, 'id');
        const q = parseQuery(z.strictObject({ reason: reason.optional() }), c);
        const why = q.reason ?? (await parseBody(reasonBody, c)).reason;
        return revoke(c, why);
      },
    },
    {
      method: 'GET',
      path: '/instances',
      handler(c) {
        const q = parseQuery(pageQuery, c);
        return ok(pageArray(core.instances.list(), q.limit, q.after));
      },
    },
  ];
}
