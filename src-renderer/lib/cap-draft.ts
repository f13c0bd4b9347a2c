/**
 * A spend cap per attempt as typed in a form (dollars and tokens, both optional) and what the
 * server takes (`budget: {maxCostUsdPerRun?, maxTokensPerRun?}`, PROTOCOL §14).
 */
import type { PerAttemptBudget } from '../../src-main/common/schemas';

export interface CapDraft {
  usd: string;
  tokens: string;
}

export const EMPTY_CAP: CapDraft = { usd: '', tokens: '' };

/** The cap typed, `null` when none is, or the problem in words. */
export function capFromDraft(d: CapDraft): { budget: PerAttemptBudget | null } | { problem: string } {
  const usd = d.usd.trim().replace(/^\$/, '');
  const tokens = d.tokens.trim().replace(/[_,\s]/g, '');
  const out: PerAttemptBudget = {};
  if (usd) {
    const n = Number(usd);
    if (!Number.isFinite(n) || n <= 0) return { problem: 'The cost cap is a positive amount of dollars, e.g. 0.50.' };
    out.maxCostUsdPerRun = n;
  }
  if (tokens) {
    const n = Number(tokens);
    if (!Number.isInteger(n) || n <= 0) return { problem: 'The token cap is a positive whole number, e.g. 200000.' };
    out.maxTokensPerRun = n;
  }
  return { budget: Object.keys(out).length ? out : null };
}

/** "$0.50 or 200,000 tokens per run", for showing a cap. */
export function capWords(b: PerAttemptBudget | null | undefined): string {
  if (!b || (b.maxCostUsdPerRun === undefined && b.maxTokensPerRun === undefined)) return 'no cap';
  const parts = [b.maxCostUsdPerRun !== undefined ? `$${b.maxCostUsdPerRun.toFixed(2)}` : null, b.maxTokensPerRun !== undefined ? `${b.maxTokensPerRun.toLocaleString('en-US')} tokens` : null].filter(Boolean);
  return `${parts.join(' or ')} per run`;
}
