/** `/signals…`: readiness flags for a business key. */
import { z } from 'zod';
import { GafferError } from '../../common/errors';
import { OPS } from '../../common/ops';
import { signalKey, signalName } from '../../common/schemas';
import type { Core } from '../../core/create-core';
import { defineRoute } from './define-route';
import { emptyQuery, limitParam, ok, reasonBody, reasonFromQueryOrBody, reasonQuery, type Route } from './router';

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
      op: 'signals.set',
      // The catalogue entry's input: one schema for the console and this body.
      body: OPS['signals.set'].input,
      handle({ body }, c) {
        const { signal, created } = core.signals.set({ ...body, actor: c.actor });
        return ok({ signal, created }, created ? 201 : 200);
      },
    }),
    defineRoute({
      op: 'signals.list',
      query: listQuery,
      handle: ({ query }) => ok(core.signals.list(query)),
    }),
    defineRoute({
      op: 'signals.get',
      params: signalParams,
      query: emptyQuery,
      handle({ params: { name, key } }) {
        const signal = core.signals.get(name, key);
        if (!signal) throw new GafferError('not_found', `signal ${name} is not set for ${key}`);
        return ok({ signal });
      },
    }),
    defineRoute({
      op: 'signals.clear',
      params: signalParams,
      query: reasonQuery,
      unparsedBody: reasonBody,
      async handle({ params: { name, key }, query }, c) {
        const why = await reasonFromQueryOrBody(query, reasonBody, c);
        return ok({ signal: core.signals.clear({ name, key, reason: why, actor: c.actor }) });
      },
    }),
  ];
}
