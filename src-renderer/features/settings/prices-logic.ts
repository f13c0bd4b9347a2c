/**
 * The price table as the operator edits it (pure): one row per model id or prefix, prices as
 * typed; what is wrong with it in plain words, per row; and the table it saves. The rules are the
 * server's (common/prices.ts: `modelKey`, `modelPrice`), checked here first so a bad row is said
 * at the row and nothing is sent.
 */
import { modelKey, modelPrice, type ModelPrice } from '../../../src-main/common/prices';

export interface PriceRowDraft {
  model: string;
  input: string;
  output: string;
  cacheRead: string;
  cacheWrite: string;
}

export const PRICE_FIELDS = [
  { key: 'input', label: 'Input', wire: 'inputPerMTok', required: true },
  { key: 'output', label: 'Output', wire: 'outputPerMTok', required: true },
  { key: 'cacheRead', label: 'Cache read', wire: 'cacheReadPerMTok', required: false },
  { key: 'cacheWrite', label: 'Cache write', wire: 'cacheWritePerMTok', required: false },
] as const;

const text = (n: number | undefined) => (n === undefined ? '' : String(n));

export function draftFromTable(models: Record<string, ModelPrice>): PriceRowDraft[] {
  return Object.entries(models).map(([model, p]) => ({ model, input: text(p.inputPerMTok), output: text(p.outputPerMTok), cacheRead: text(p.cacheReadPerMTok), cacheWrite: text(p.cacheWritePerMTok) }));
}

export const EMPTY_ROW: PriceRowDraft = { model: '', input: '', output: '', cacheRead: '', cacheWrite: '' };

/** The table the draft saves, or the problems in words (row numbers from 1, as on screen). */
export function tableFromDraft(rows: PriceRowDraft[]): { models: Record<string, ModelPrice> } | { problems: Array<{ row: number; message: string }> } {
  const problems: Array<{ row: number; message: string }> = [];
  const models: Record<string, ModelPrice> = {};
  rows.forEach((r, i) => {
    const row = i + 1;
    const say = (message: string) => problems.push({ row, message: `Row ${row}: ${message}` });
    const id = r.model.trim();
    if (!id) say('name a model id, or a prefix ending in * (e.g. claude-sonnet-4*).');
    else if (!modelKey.safeParse(id).success) say(`“${id}” is not a model id: use letters, digits, “_”, “-”, “.”, “:”, “/” or “@”, and a “*” only at the end for a prefix.`);
    else if (id in models) say(`${id} is listed twice.`);
    const price: Record<string, number> = {};
    for (const f of PRICE_FIELDS) {
      const t = r[f.key].trim().replace(/^\$/, '');
      if (t === '') {
        if (f.required) say(`the ${f.label.toLowerCase()} price is needed (dollars per million tokens, e.g. 3).`);
        continue;
      }
      const n = Number(t);
      if (!Number.isFinite(n) || n < 0 || n > 100_000) say(`the ${f.label.toLowerCase()} price “${r[f.key].trim()}” is not an amount of dollars per million tokens (0 to 100,000, e.g. 3 or 0.30).`);
      else price[f.wire] = n;
    }
    const parsed = modelPrice.safeParse(price);
    if (id && parsed.success && !(id in models)) models[id] = parsed.data;
  });
  if (rows.length === 0) problems.push({ row: 0, message: 'The table needs at least one row; to go back to the shipped prices, use “Restore the shipped prices”.' });
  return problems.length ? { problems } : { models };
}
