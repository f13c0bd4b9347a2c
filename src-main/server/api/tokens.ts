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
const reasonQuery = z.strictObject({ reason: reason.optional() });
const tokenParams = { id: tokenId };

export function tokenRoutes(core: Core): Route[] {
  const revoke = async (c: ApiContext, why: string) =>
    ok({ token: core.tokens.revoke({ id: parseParam(tokenId, c, 'id'), reason: why, actor: c.actor }) });
  return [
    {
      method: 'POST',
      path: '/tokens',
      doc: {
        summary: 'Create an agent token, optionally bound to a role. The secret (`token`) is in this reply only.',
        body: createBody,
        responses: { 201: '`{id, token, name, role, …}`' },
      },
      async handler(c) {
        const { name, role } = await parseBody(createBody, c);
        const { id, token, info } = core.tokens.create({ name, role: role ?? null, actor: c.actor });
        return ok({ ...info, id, token }, 201);
      },
    },
    {
      method: 'GET',
      path: '/tokens',
      doc: { summary: 'List agent tokens (never their secrets).', query: pageQuery, responses: { 200: '`{items, next}`' } },
      handler(c) {
        const q = parseQuery(pageQuery, c);
        return ok(pageArray(core.tokens.list(), q.limit, q.after));
      },
    },
    {
      method: 'POST',
      path: '/tokens/:id/revoke',
      doc: { summary: 'Revoke an agent token: its sessions are closed (4403) and it can no longer connect.', params: tokenParams, body: reasonBody, responses: { 200: '`{token}`' } },
      async handler(c) {
        parseParam(tokenId, c, 'id');
        return revoke(c, (await parseBody(reasonBody, c)).reason);
      },
    },
    {
      // DELETE takes the reason from the body or from `?reason=`.
      method: 'DELETE',
      path: '/tokens/:id',
      doc: { summary: 'Revoke an agent token; the reason comes from `?reason=` or the body.', params: tokenParams, query: reasonQuery, body: reasonBody, responses: { 200: '`{token}`' } },
      async handler(c) {
        parseParam(tokenId, c, 'id');
        const q = parseQuery(reasonQuery, c);
        const why = q.reason ?? (await parseBody(reasonBody, c)).reason;
        return revoke(c, why);
      },
    },
    {
      method: 'GET',
      path: '/instances',
      doc: { summary: 'Agent instances (connected processes) with their status and held locks.', query: pageQuery, responses: { 200: '`{items, next}`' } },
      handler(c) {
        const q = parseQuery(pageQuery, c);
        return ok(pageArray(core.instances.list(), q.limit, q.after));
      },
    },
  ];
}
