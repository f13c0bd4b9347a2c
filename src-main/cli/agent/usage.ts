/**
 * Tokens and cost an attempt used, as increments (PROTOCOL §5 `usage`: Gaffer sums them). The
 * command reports them on `::gaffer::` lines, or an adapter reads them from a CLI's JSON output.
 */

import { cutText } from '../../common/line-splitter';

export interface UsageIncrement {
  inputTokens?: number;
  outputTokens?: number;
  costUsd?: number;
  model?: string;
}

export interface UsageTotals {
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  models: string[];
}

const count = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined);

/** A usage increment from untrusted JSON: only non-negative finite numbers count; undefined when nothing does. */
export function usageFrom(raw: unknown): UsageIncrement | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const r = raw as Record<string, unknown>;
  const u: UsageIncrement = {};
  const input = count(r.inputTokens);
  const output = count(r.outputTokens);
  const cost = count(r.costUsd);
  if (input !== undefined) u.inputTokens = Math.round(input);
  if (output !== undefined) u.outputTokens = Math.round(output);
  if (cost !== undefined) u.costUsd = cost;
  if (typeof r.model === 'string' && r.model.trim()) u.model = cutText(r.model.trim(), 200);
  return u.inputTokens === undefined && u.outputTokens === undefined && u.costUsd === undefined ? undefined : u;
}

export class UsageMeter {
  private totals: UsageTotals | null = null;

  add(u: UsageIncrement): void {
    const t = (this.totals ??= { inputTokens: 0, outputTokens: 0, costUsd: 0, models: [] });
    t.inputTokens += u.inputTokens ?? 0;
    t.outputTokens += u.outputTokens ?? 0;
    t.costUsd += u.costUsd ?? 0;
    if (u.model && !t.models.includes(u.model)) t.models.push(u.model);
  }

  /** Null when nothing was reported. */
  get total(): UsageTotals | null {
    return this.totals ? { ...this.totals, models: [...this.totals.models] } : null;
  }
}

export function describeUsage(u: UsageTotals): string {
  const cost = u.costUsd > 0 ? `, $${u.costUsd.toFixed(u.costUsd < 0.01 ? 6 : 4)}` : '';
  const models = u.models.length ? ` (${u.models.join(', ')})` : '';
  return `${u.inputTokens} input + ${u.outputTokens} output tokens${cost}${models}`;
}
