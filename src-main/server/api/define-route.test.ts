/** `defineRoute`: the declared schemas are the doc and what the handler gets, parsed in a fixed order. */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineRoute } from './define-route';
import { emptyQuery, idParam, ok, type ApiContext, type ApiReply, type Route } from './router';

function context(route: Route, parts: { params?: Record<string, string>; query?: Record<string, string>; body?: unknown }): ApiContext {
  return {
    route,
    params: parts.params ?? {},
    query: parts.query ?? {},
    actor: 'operator:http',
    body: () => Promise.resolve(parts.body ?? {}),
  } as unknown as ApiContext;
}

const body = z.strictObject({ reason: z.string().min(1) });
const route = defineRoute({
  method: 'POST',
  path: '/things/:id/touch',
  summary: 'Touch a thing.',
  params: { id: idParam },
  query: emptyQuery,
  body,
  responses: { 200: '`{thing}`' },
  handle: ({ params, query, body: b }, c) => ok({ id: params.id, query, reason: b.reason, actor: c.actor }),
});

describe('defineRoute', () => {
  it('documents exactly the schemas it parses', () => {
    expect(route.doc).toEqual({ summary: 'Touch a thing.', params: { id: idParam }, query: emptyQuery, body, responses: { 200: '`{thing}`' } });
  });

  it('hands the handler the parsed path parameters, query and body', async () => {
    const reply = (await route.handler(context(route, { params: { id: '7' }, body: { reason: 'why' } }))) as ApiReply;
    expect(reply).toEqual({ status: 200, body: { id: 7, query: {}, reason: 'why', actor: 'operator:http' } });
  });

  it('parses the query first, then the path, then the body: the first invalid one is the error', async () => {
    const bad = { params: { id: 'x' }, query: { nope: '1' }, body: { reason: '' } };
    await expect(route.handler(context(route, bad))).rejects.toMatchObject({ code: 'bad_request', message: expect.stringContaining('query') });
    await expect(route.handler(context(route, { ...bad, query: {} }))).rejects.toMatchObject({ message: expect.stringContaining('path parameter "id"') });
    await expect(route.handler(context(route, { ...bad, query: {}, params: { id: '7' } }))).rejects.toMatchObject({ message: expect.stringContaining('body') });
  });

  it('a route that names no query does not look at it; an unparsed body is documented and left to the handler', async () => {
    const raw = defineRoute({
      method: 'POST',
      path: '/raw',
      summary: 'Takes anything.',
      unparsedBody: body,
      handle: async (input, c) => ok({ input, body: await c.body() }),
    });
    expect(raw.doc?.body).toBe(body);
    expect(raw.doc).not.toHaveProperty('query');
    const reply = (await raw.handler(context(raw, { query: { anything: '1' }, body: { free: true } }))) as ApiReply;
    expect(reply.body).toEqual({ input: { params: {}, query: undefined, body: undefined }, body: { free: true } });
  });
});
