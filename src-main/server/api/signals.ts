/** `/signals…`: readiness flags for a business key. */
import { z } from 'zod';
import { GafferError } from '../../common/errors';
import { jsonValue, reason, signalKey, signalName } from '../../common/schemas';
import type { Core } from '../../core/create-core';
import { defineRoute } from './define-route';
import { emptyQuery, limitParam, ok, reasonBody, reasonFromQueryOrBody, reasonQuery, type Route } from './router';

const setBody = z.strictObject({ name: signalName, key: signalKey, value: jsonValue.optional(), reason: reason.optional() });
const listQuery = z.strictObject({
  name: signalName.optional(),
  key: signalKey.optional(),
  limit: limitParam.optional(),
  after: z.string().min(1).max(1000).optional(),
});

const signalParams = { name: signalName, key: signalKey };

export function signalRoutes(core: Core): Route[] {
  return [
    defineRoute({
      method: 'POST',
      path: '/signals',
      summary: 'Set a readiness signal (e.g. `data-ready` for `2026-11-30`) that job preconditions wait for.',
      body: setBody,
      responses: { 200: '`{signal, created: false}`: updated', 201: '`{signal, created: true}`' },
      handle({ body }, c) {
        const { signal, created } = core.signals.set({ ...body, actor: c.actor });
        return ok({ signal, created }, created ? 201 : 200);
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/signals',
      summary: 'List signals (filter by name or key).',
      query: listQuery,
      responses: { 200: '`{items, next}`' },
      handle: ({ query }) => ok(core.signals.list(query)),
    }),
    defineRoute({
      method: 'GET',
      path: '/signals/:name/:key',
      summary: 'One signal.',
      params: signalParams,
      query: emptyQuery,
      responses: { 200: '`{signal}`' },
      handle({ params: { name, key } }) {
        const signal = core.signals.get(name, key);
        if (!signal) throw new GafferError('not_found', `signal ${name} is not set for ${key}`);
        return ok({ signal });
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/signals/:name/:key',
      summary: 'Clear a signal; the reason comes from `?reason=` or the body.',
      params: signalParams,
      query: reasonQuery,
      unparsedBody: reasonBody,
      responses: { 200: '`{signal}`' },
      async handle({ params: { name, key }, query }, c) {
        const why = await reasonFromQueryOrBody(query, reasonBody, c);
        return ok({ signal: core.signals.clear({ name, key, reason: why, actor: c.actor }) });
      },
    }),
  ];
}
