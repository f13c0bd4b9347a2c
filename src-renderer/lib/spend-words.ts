/**
 * Spend in plain words (pure), shared by the job editor, the dashboard and the task and run panes:
 * "$0.04 of $0.10", "about $4.10 a day; your cap for role dev is $5", "the 5-hour window for role
 * dev: 1.9M of 2M tokens, frees at 14:20".
 */
import type { BudgetSettings, WindowStatus } from '../../src-main/common/attention';
import type { JobForecast } from '../../src-main/common/prices';
import type { PerAttemptBudget } from '../../src-main/common/schemas';
import { formatCompact } from './format';

/** "$5" for whole dollars, "$4.10" above a dollar, "$0.04" / "$0.0012" below. */
export function dollars(n: number): string {
  if (n >= 1 && Number.isInteger(n)) return `$${n}`;
  if (n >= 0.01 || n === 0) return `$${n.toFixed(2)}`;
  return `$${n.toPrecision(2)}`;
}

/** The daily cap that applies to `role`: its own, else the one for all roles; null when none. */
export function dailyCapFor(role: string, s: Pick<BudgetSettings, 'perRoleDailyUsd' | 'globalDailyUsd'>): { usd: number; words: string } | null {
  const own = s.perRoleDailyUsd[role];
  if (own !== undefined) return { usd: own, words: `your cap for role ${role} is ${dollars(own)} a day` };
  if (s.globalDailyUsd !== null) return { usd: s.globalDailyUsd, words: `your cap for all roles is ${dollars(s.globalDailyUsd)} a day` };
  return null;
}

/** The job editor's forecast line. */
export function forecastLine(f: JobForecast, s: Pick<BudgetSettings, 'perRoleDailyUsd' | 'globalDailyUsd'> | null): string {
  if (f.perRun.runs === 0) return `No run of this job has reported spend yet, so there is nothing to forecast from. It will run about ${f.next24h.runs} time${f.next24h.runs === 1 ? '' : 's'} in the next 24 hours.`;
  const cap = s ? dailyCapFor(f.role, s) : null;
  const day = `About ${dollars(f.next24h.costUsd)} a day (${f.next24h.runs} run${f.next24h.runs === 1 ? '' : 's'} at about ${dollars(f.perRun.p50CostUsd)} each, up to ${dollars(f.perRun.p90CostUsd)})`;
  const month = `about ${dollars(f.next30d.costUsd)} over the next 30 days${f.extrapolated ? ' (estimated from the first slots)' : ''}`;
  const capWords = cap ? `; ${cap.words}${f.next24h.costUsd > cap.usd ? ' — the forecast is above it' : ''}` : '; no daily cap is set';
  return `${day}${capWords}. That is ${month}.`;
}

/** "$0.04 of $0.10" and the fraction for a bar, for each cap of one attempt; empty when there is no cap. */
export function spentOfCap(spent: { costUsd: number; tokens: number }, cap: PerAttemptBudget | null): Array<{ what: 'cost' | 'tokens'; words: string; fraction: number; over: boolean }> {
  const out: Array<{ what: 'cost' | 'tokens'; words: string; fraction: number; over: boolean }> = [];
  if (cap?.maxCostUsdPerRun !== undefined) {
    const c = cap.maxCostUsdPerRun;
    out.push({ what: 'cost', words: `${dollars(spent.costUsd)} of ${dollars(c)}`, fraction: Math.min(1, spent.costUsd / c), over: spent.costUsd >= c });
  }
  if (cap?.maxTokensPerRun !== undefined) {
    const t = cap.maxTokensPerRun;
    out.push({ what: 'tokens', words: `${spent.tokens.toLocaleString('en-US')} of ${t.toLocaleString('en-US')} tokens`, fraction: Math.min(1, spent.tokens / t), over: spent.tokens >= t });
  }
  return out;
}

/**
 * One spend window as a bar: its name ("5-hour window for role dev"), the amounts ("1.9M of 2M
 * tokens"), when it frees while used up, and all of it in one sentence. `time` says an instant.
 */
export function windowLine(w: WindowStatus, time: (iso: string) => string): { name: string; amounts: string; words: string; fraction: number } {
  const parts: string[] = [];
  let fraction = 0;
  if (w.maxTokens !== undefined) {
    parts.push(`${formatCompact(w.tokens)} of ${formatCompact(w.maxTokens)} tokens`);
    fraction = Math.max(fraction, w.tokens / w.maxTokens);
  }
  if (w.maxCostUsd !== undefined) {
    parts.push(`${dollars(w.costUsd)} of ${dollars(w.maxCostUsd)}`);
    fraction = Math.max(fraction, w.costUsd / w.maxCostUsd);
  }
  const bare = w.name.replace(/^the /, '');
  const name = `${bare.charAt(0).toUpperCase()}${bare.slice(1)}`;
  const state = w.reached ? (w.freesAt ? `, used up: frees at ${time(w.freesAt)}` : ', used up') : '';
  const amounts = `${parts.join(' and ')}${state}`;
  return { name, amounts, words: `${name}: ${amounts}`, fraction: Math.min(1, fraction) };
}
