/**
 * Spend while it happens (PROTOCOL §14): the price table (`/job-settings/prices`) and the
 * forecasts (`/jobs/{id}/forecast`, `/usage/forecast`); documented by their catalogue entries
 * (common/ops/spend.ts). The core validates again and audits every change.
 */
import { z } from 'zod';
import { OPS } from '../../common/ops';
import type { Core } from '../../core/create-core';
import { defineRoute } from './define-route';
import { emptyQuery, ok, type Route } from './router';

const jobIdParam = z.string().min(1).max(200);

export function spendRoutes(core: Core): Route[] {
  return [
    defineRoute({
      op: 'budgets.prices',
      query: emptyQuery,
      handle: () => ok({ prices: core.prices.view() }),
    }),
    defineRoute({
      op: 'budgets.putPrices',
      query: emptyQuery,
      body: OPS['budgets.putPrices'].input,
      handle: ({ body }, c) => ok({ prices: core.prices.put({ ...body, actor: c.actor }) }),
    }),
    defineRoute({
      op: 'budgets.jobForecast',
      params: { id: jobIdParam },
      query: emptyQuery,
      handle: ({ params: { id } }) => ok(core.forecasts.job(id)),
    }),
    defineRoute({
      op: 'budgets.forecast',
      query: OPS['budgets.forecast'].input,
      handle: ({ query }) => ok(core.forecasts.usage(query.by ?? 'role')),
    }),
  ];
}
