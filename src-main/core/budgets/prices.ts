/**
 * The price table (PROTOCOL §14): Gaffer prices a `usage` report that has tokens and a model but
 * no cost. One settings row (`prices`); absent, the shipped table (common/prices.ts) applies.
 *
 * Invariants:
 * 1. Pricing a report never reads the database: the table is kept in memory, read once and
 *    replaced on every change (a usage frame is on the agents' write path).
 * 2. A change is validated before anything is written, replaces the whole table, and is audited
 *    (`prices.update`) with the table before and after.
 * 3. A model no row matches is not priced (the report's cost stays 0 and `unpriced` says so):
 *    a guess would be worse than a visible gap.
 */
import { costOf, DEFAULT_PRICES, DEFAULT_PRICES_TAKEN_ON, MODELS_OR_RESET, oneOfModelsOrReset, priceFor, pricesFields, type ModelPrice, type PricedTokens, type PricesView } from '../../common/prices';
import { actorName, reason } from '../../common/schemas';
import { parseOrThrow } from '../../common/validate';
import type { CoreContext } from '../context';
import { settingsRow, type SettingsRow } from '../db/settings-row';
import { deleteSetting } from './store';

const KEY = 'prices';
const putOpts = pricesFields.extend({ actor: actorName, reason: reason.optional() }).refine(oneOfModelsOrReset, { message: MODELS_OR_RESET });

interface Stored {
  models: Record<string, ModelPrice>;
  updatedAt: string;
}

export class PriceTable {
  private readonly row: SettingsRow<Stored>;
  private table: PricesView | undefined;

  constructor(private readonly ctx: Pick<CoreContext, 'db' | 'store' | 'audit' | 'clock'>) {
    this.row = settingsRow(ctx.db, KEY);
  }

  view(): PricesView {
    if (this.table) return this.table;
    const s = this.row.read();
    this.table =
      s?.models && s.updatedAt
        ? { models: s.models, updatedAt: s.updatedAt, source: 'edited', defaultsTakenOn: DEFAULT_PRICES_TAKEN_ON }
        : { models: DEFAULT_PRICES, updatedAt: `${DEFAULT_PRICES_TAKEN_ON}T00:00:00.000Z`, source: 'defaults', defaultsTakenOn: DEFAULT_PRICES_TAKEN_ON };
    return this.table;
  }

  /** Dollars for the tokens of one report of `model`, or undefined when no row prices it (invariant 3). */
  price(model: string, t: PricedTokens): number | undefined {
    const p = priceFor(this.view().models, model);
    return p ? costOf(p, t) : undefined;
  }

  put(input: unknown): PricesView {
    const { models, reset, actor, reason: why } = parseOrThrow(putOpts, input, 'prices');
    const before = this.view();
    const updatedAt = new Date(this.ctx.clock.now()).toISOString();
    this.ctx.store.write(() => {
      if (reset) deleteSetting(this.ctx.db, KEY);
      else this.row.write({ models: models!, updatedAt });
      this.ctx.audit.append({
        type: 'prices.update',
        actor,
        subject: 'settings:prices',
        detail: { ...(why ? { reason: why } : {}), from: before.source === 'defaults' ? 'defaults' : before.models, to: reset ? 'defaults' : models },
      });
    });
    this.table = undefined;
    return this.view();
  }
}
