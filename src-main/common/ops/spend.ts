/** Spend while it happens (PROTOCOL §14): the price table tokens are priced with, and the forecasts. */
import { z } from 'zod';
import { MODELS_OR_RESET, modelPrice, oneOfModelsOrReset, pricesFields, type AttemptSpend, type JobForecast, type PricesView, type UsageForecastRow } from '../prices';
import { logSubject } from './logs';
import { reason } from '../schemas';
import { op } from './define';
import { empty } from './tasks';

const BOTH = ['console', 'operator'] as const;
const pricesView = z.object({
  models: z.record(z.string(), modelPrice),
  updatedAt: z.string(),
  source: z.enum(['defaults', 'edited']),
  defaultsTakenOn: z.string(),
});
const pricesReply = z.object({ prices: pricesView });
const runsAndCost = z.object({ runs: z.number(), costUsd: z.number() });
const jobForecast = z.object({
  jobId: z.string(),
  job: z.string(),
  role: z.string(),
  perRun: z.object({ runs: z.number(), p50CostUsd: z.number(), p90CostUsd: z.number() }),
  next24h: runsAndCost,
  next30d: runsAndCost,
  extrapolated: z.boolean(),
});
const attemptSpend = z.object({
  subject: z.string(),
  attempt: z.number(),
  cap: z.object({ maxCostUsdPerRun: z.number().optional(), maxTokensPerRun: z.number().optional() }).nullable(),
  capFrom: z.enum(['run', 'job', 'task']).nullable(),
  spent: z.object({ costUsd: z.number(), tokens: z.number() }),
});
const usageForecast = z.object({ items: z.array(z.object({ key: z.string(), next24h: runsAndCost, next30d: runsAndCost })) });

export const spendOps = {
  /** The price table tokens are priced with. */
  'budgets.prices': op<PricesView>()({
    summary: 'The price table Gaffer prices tokens with: `{models: {"<model id or prefix*>": {inputPerMTok, outputPerMTok, cacheReadPerMTok?, cacheWritePerMTok?}}, updatedAt, source, defaultsTakenOn}`.',
    input: empty,
    result: pricesView,
    callers: BOTH,
    reason: 'none',
    rest: [{ method: 'GET', path: '/job-settings/prices', status: { 200: '`{prices}`' }, response: pricesReply }],
  }),
  /** Replaces the price table (`models`), or restores the shipped one (`reset: true`). */
  'budgets.putPrices': op<PricesView>()({
    summary: 'Replace the price table (`models`: the whole table), or go back to the shipped one (`reset: true`).',
    input: pricesFields.extend({ reason: reason.optional() }).refine(oneOfModelsOrReset, { message: MODELS_OR_RESET }),
    result: pricesView,
    callers: BOTH,
    reason: 'optional',
    rest: [{ method: 'PUT', path: '/job-settings/prices', status: { 200: '`{prices}`' }, response: pricesReply }],
  }),
  /** A job's forecast: cost per run times the runs of the next 24 h and 30 days. */
  'budgets.jobForecast': op<JobForecast>()({
    summary: 'What a job will spend: cost per run (p50/p90 over its recent runs) times the runs its schedule and calendar make in the next 24 hours and 30 days.',
    input: z.strictObject({ jobId: z.string().min(1).max(200) }),
    result: jobForecast,
    callers: BOTH,
    reason: 'none',
    rest: [{ method: 'GET', path: '/jobs/:id/forecast', status: { 200: '`{jobId, job, role, perRun: {runs, p50CostUsd, p90CostUsd}, next24h: {runs, costUsd}, next30d: {runs, costUsd}, extrapolated}`' } }],
  }),
  /** Every enabled job's forecast, per role or per job. */
  'budgets.forecast': op<{ items: UsageForecastRow[] }>()({
    summary: 'Every enabled job’s forecast summed per role (default) or per job.',
    input: z.strictObject({ by: z.enum(['role', 'job']).optional() }),
    result: usageForecast,
    callers: BOTH,
    reason: 'none',
    rest: [{ method: 'GET', path: '/usage/forecast', status: { 200: '`{items: [{key, next24h: {runs, costUsd}, next30d: {runs, costUsd}}]}`' } }],
  }),
  /** The console's panes: the latest attempt of a task or run against its spend cap. */
  'budgets.attemptSpend': op<AttemptSpend>()({
    summary: 'The latest attempt of a task or run against the spend cap that applies to it (the run’s own, else its job’s; the task’s), with what it reported so far.',
    input: z.strictObject({ subject: logSubject }),
    result: attemptSpend,
    callers: ['console'],
    reason: 'none',
  }),
} as const;
