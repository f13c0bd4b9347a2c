/**
 * Spend while it happens (PROTOCOL §14): the price table (`/job-settings/prices`) and the
 * forecasts (`/jobs/{id}/forecast`, `/usage/forecast`). Bodies and queries are validated here
 * with the schemas each route documents; the core validates again and audits every change.
 */
import { pricesFields, MODELS_OR_RESET, oneOfModelsOrReset } from '../../common/prices';
import { reason } from '../../common/schemas';
import type { Core } from '../../core/create-core';
import { defineRoute } from './define-route';
import { emptyQuery, ok, type Route } from './router';

const pricesBody = pricesFields.extend({ reason: reason.optional() }).refine(oneOfModelsOrReset, { message: MODELS_OR_RESET });

export function spendRoutes(core: Core): Route[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/job-settings/prices',
      summary: 'The price table Gaffer prices tokens with: `{models: {"<model id or prefix*>": {inputPerMTok, outputPerMTok, cacheReadPerMTok?, cacheWritePerMTok?}}, updatedAt, source, defaultsTakenOn}`.',
      query: emptyQuery,
      responses: { 200: '`{prices}`' },
      handle: () => ok({ prices: core.prices.view() }),
    }),
    defineRoute({
      method: 'PUT',
      path: '/job-settings/prices',
      summary: 'Replace the price table (`models`: the whole table), or go back to the shipped one (`reset: true`).',
      query: emptyQuery,
      body: pricesBody,
      responses: { 200: '`{prices}`' },
      handle: ({ body }, c) => ok({ prices: core.prices.put({ ...body, actor: c.actor }) }),
    }),
  ];
}
