/** `/signals…`: readiness flags for a business key. */
import { z } from 'zod';
import { GafferError } from '../../common/errors';
import { jsonValue, reason, signalKey, signalName } from '../../common/schemas';
import type { Core } from '../../core/create-core';
import { limitParam, ok, parseBody, parseParam, parseQuery, type Route } from './router';

const setBody = z.strictObject({ name: signalName, key: signalKey, value: jsonValue.optional() });
const listQuery = z.strictObject({
  name: signalName.optional(),
  key: signalKey.optional(),
  limit: limitParam.optional(),
  after: z.string().min(1).max(1000).optional(),
});

export function signalRoutes(core: Core): Route[] {
  return [
    {
      method: 'POST',
      path: '/signals',
      async handler(c) {
        const body = await parseBody(setBody, c);
        const { signal, created } = core.signals.set({ ...body, actor: c.actor });
        return ok({ signal, created }, created ? 201 : 200);
      },
    },
    {
      method: 'GET',
      path: '/signals',
      handler(c) {
        return ok(core.signals.list(parseQuery(listQuery, c)));
      },
    },
    {
      method: 'GET',
      path: '/signals/:name/:key',
      handler(c) {
        parseQuery(z.strictObject({}), c);
        const name = parseParam(signalName, c, 'name');
        const key = parseParam(signalKey, c, 'key');
        const signal = core.signals.get(name, key);
        if (!signal) throw new GafferError('not_found', `signal ${name} is not set for ${key}`);
        return ok({ signal });
      },
    },
    {
      method: 'DELETE',
      path: '/signals/:name/:key',
      async handler(c) {
        const name = parseParam(signalName, c, 'name');
        const key = parseParam(signalKey, c, 'key');
        const q = parseQuery(z.strictObject({ reason: reason.optional() }), c);
        const why = q.reason ?? (await parseBody(z.strictObject({ reason }), c)).reason;
        return ok({ signal: core.signals.clear({ name, key, reason: why, actor: c.actor }) });
      },
    },
  ];
}
