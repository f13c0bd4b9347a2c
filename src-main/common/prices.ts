/**
 * The price table (PROTOCOL §14, `GET/PUT /job-settings/prices`): what a million tokens of a
 * model cost, so Gaffer can price a `usage` report that carries tokens and a model but no cost.
 * A row's key is a model id (`claude-sonnet-4-5-20250929`) or a prefix ending in `*`
 * (`claude-sonnet-4-5*`); an exact id wins, else the longest prefix that matches.
 */
import { z } from 'zod';

const perMTok = z.number().min(0).max(100_000);

export const modelPrice = z.strictObject({
  inputPerMTok: perMTok,
  outputPerMTok: perMTok,
  /** Default: the input price (a cache read billed as plain input). */
  cacheReadPerMTok: perMTok.optional(),
  /** Default: the input price. */
  cacheWritePerMTok: perMTok.optional(),
});
export type ModelPrice = z.infer<typeof modelPrice>;

/** A model id, or a prefix of one ending in `*`. */
export const modelKey = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.:/@-]*\*?$/, 'a model id (letters, digits, "_", "-", ".", ":", "/", "@"), or a prefix of one ending in "*"');

export const pricesFields = z.strictObject({
  /** The whole table: it replaces the one stored. */
  models: z.record(modelKey, modelPrice).optional(),
  /** Go back to the table shipped with Gaffer (then `models` must be left out). */
  reset: z.literal(true).optional(),
});
export const oneOfModelsOrReset = (v: { models?: unknown; reset?: unknown }) => (v.models === undefined) !== (v.reset === undefined);
export const MODELS_OR_RESET = 'give either models (the whole table) or reset: true';
export const pricesInput = pricesFields.refine(oneOfModelsOrReset, { message: MODELS_OR_RESET });
export type PricesInput = z.infer<typeof pricesInput>;

export interface PricesView {
  models: Record<string, ModelPrice>;
  /** When the table was last changed (ISO); for the shipped table, the day its prices were taken. */
  updatedAt: string;
  /** `defaults`: the shipped table, as taken on `defaultsTakenOn`; `edited`: the operator's. */
  source: 'defaults' | 'edited';
  defaultsTakenOn: string;
}

/** Tokens of one report as priced (input includes the cache reads and writes, as on the wire). */
export interface PricedTokens {
  inputTokens?: number | undefined;
  outputTokens?: number | undefined;
  cacheReadTokens?: number | undefined;
  cacheWriteTokens?: number | undefined;
}

/** The table row for `model`: the exact id, else the longest `*` prefix that matches; undefined when none. */
export function priceFor(models: Record<string, ModelPrice>, model: string): ModelPrice | undefined {
  const exact = models[model];
  if (exact) return exact;
  let best: { len: number; p: ModelPrice } | undefined;
  for (const [key, p] of Object.entries(models)) {
    if (!key.endsWith('*')) continue;
    const prefix = key.slice(0, -1);
    if (model.startsWith(prefix) && (!best || prefix.length > best.len)) best = { len: prefix.length, p };
  }
  return best?.p;
}

/**
 * Dollars for `t` at price `p`. Input tokens include the cache reads and writes (the wire's
 * meaning): those are priced at their own rates, the rest at the input rate.
 */
export function costOf(p: ModelPrice, t: PricedTokens): number {
  const read = t.cacheReadTokens ?? 0;
  const write = t.cacheWriteTokens ?? 0;
  const plain = Math.max(0, (t.inputTokens ?? 0) - read - write);
  return (plain * p.inputPerMTok + read * (p.cacheReadPerMTok ?? p.inputPerMTok) + write * (p.cacheWritePerMTok ?? p.inputPerMTok) + (t.outputTokens ?? 0) * p.outputPerMTok) / 1e6;
}

/**
 * The shipped table: list prices per million tokens of the vendors' current models, standard tier
 * (short-context prices where a model has two; cache writes at the 5-minute rate), as taken on
 * `DEFAULT_PRICES_TAKEN_ON` from Anthropic's, OpenAI's and Google's pricing pages. Edit it in
 * Settings when they change, or for a negotiated rate.
 */
export const DEFAULT_PRICES_TAKEN_ON = '2025-11-25';
export const DEFAULT_PRICES: Record<string, ModelPrice> = {
  'claude-opus-4-5*': { inputPerMTok: 5, outputPerMTok: 25, cacheReadPerMTok: 0.5, cacheWritePerMTok: 6.25 },
  'claude-opus-4*': { inputPerMTok: 15, outputPerMTok: 75, cacheReadPerMTok: 1.5, cacheWritePerMTok: 18.75 },
  'claude-sonnet-4*': { inputPerMTok: 3, outputPerMTok: 15, cacheReadPerMTok: 0.3, cacheWritePerMTok: 3.75 },
  'claude-haiku-4-5*': { inputPerMTok: 1, outputPerMTok: 5, cacheReadPerMTok: 0.1, cacheWritePerMTok: 1.25 },
  'claude-3-5-haiku*': { inputPerMTok: 0.8, outputPerMTok: 4, cacheReadPerMTok: 0.08, cacheWritePerMTok: 1 },
  'gpt-5.1*': { inputPerMTok: 1.25, outputPerMTok: 10, cacheReadPerMTok: 0.125 },
  'gpt-5*': { inputPerMTok: 1.25, outputPerMTok: 10, cacheReadPerMTok: 0.125 },
  'gpt-5-mini*': { inputPerMTok: 0.25, outputPerMTok: 2, cacheReadPerMTok: 0.025 },
  'gpt-5-nano*': { inputPerMTok: 0.05, outputPerMTok: 0.4, cacheReadPerMTok: 0.005 },
  'gpt-4.1*': { inputPerMTok: 2, outputPerMTok: 8, cacheReadPerMTok: 0.5 },
  'o4-mini*': { inputPerMTok: 1.1, outputPerMTok: 4.4, cacheReadPerMTok: 0.275 },
  'gemini-3-pro*': { inputPerMTok: 2, outputPerMTok: 12, cacheReadPerMTok: 0.2 },
  'gemini-2.5-pro*': { inputPerMTok: 1.25, outputPerMTok: 10, cacheReadPerMTok: 0.125 },
  'gemini-2.5-flash*': { inputPerMTok: 0.3, outputPerMTok: 2.5, cacheReadPerMTok: 0.03 },
  'gemini-2.5-flash-lite*': { inputPerMTok: 0.1, outputPerMTok: 0.4, cacheReadPerMTok: 0.01 },
};

/** A job's forecast (PROTOCOL §14, `GET /jobs/{id}/forecast`; core/budgets/forecast.ts). */
export interface JobForecast {
  jobId: string;
  job: string;
  role: string;
  perRun: { runs: number; p50CostUsd: number; p90CostUsd: number };
  next24h: { runs: number; costUsd: number };
  next30d: { runs: number; costUsd: number };
  /** True when the 30-day count was extrapolated (invariant 1). */
  extrapolated: boolean;
}

export interface UsageForecastRow {
  key: string;
  next24h: { runs: number; costUsd: number };
  next30d: { runs: number; costUsd: number };
}

/**
 * The latest attempt of a task or run against its spend cap (the console's panes): the cap that
 * applies to it (a run's own, given on approval, else its job's; a task's, set on creation or
 * unblock) and what the attempt reported so far, estimates included.
 */
export interface AttemptSpend {
  subject: string;
  /** The attempt counted (0 before the first claim or start). */
  attempt: number;
  cap: { maxCostUsdPerRun?: number; maxTokensPerRun?: number } | null;
  /** Where the cap comes from: `run` (set when it was approved), `job`, `task`; null when none. */
  capFrom: 'run' | 'job' | 'task' | null;
  spent: { costUsd: number; tokens: number };
}
