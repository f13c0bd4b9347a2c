/**
 * Spend while it happens (PROTOCOL §14): the price table (`/job-settings/prices`) and the
 * forecasts (`/jobs/{id}/forecast`, `/usage/forecast`). Bodies and queries are validated here
 * with the schemas each route documents; the core validates again and audits every change.
 */
import { z } from 'zod';
import { pricesFields, MODELS_OR_RESET, oneOfModelsOrReset } from '../../common/prices';
import { reason } from '../../common/schemas';
import type { Core } from '../../core/create-core';
import { defineRoute } from './define-route';
import { emptyQuery, ok, type Route } from './router';

const jobIdParam = z.string().min(1).max(200);
const forecastQuery = z.strictObject({ by: z.enum(['role', 'job']).optional() });
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
    defineRoute({
      method: 'GET',
      path: '/jobs/:id/forecast',
      summary: 'What a job will spend: cost per run (p50/p90 over its recent runs) times the runs its schedule and calendar make in the next 24 hours and 30 days.',
      params: { id: jobIdParam },
      query: emptyQuery,
      responses: { 200: '`{perRun: {runs, p50CostUsd, p90CostUsd}, next24h: {runs, costUsd}, next30d: {runs, costUsd}, extrapolated}`' },
      handle: ({ params: { id } }) => ok(core.forecasts.job(id)),
    }),
    defineRoute({
      method: 'GET',
      path: '/usage/forecast',
      summary: 'Every enabled job’s forecast summed per role (default) or per job.',
      query: forecastQuery,
      responses: { 200: '`{items: [{key, next24h: {runs, costUsd}, next30d: {runs, costUsd}}]}`' },
      handle: ({ query }) => ok(core.forecasts.usage(query.by ?? 'role')),
    }),
  ];
}
