/** The spend caps form (pure): what the operator types, what it saves, what the server would refuse. */
import type { BudgetSettings, BudgetsInput, SpendWindow } from '../../../src-main/common/attention';
import type { UsageForecastRow } from '../../../src-main/common/prices';

export interface CapsDraft {
  global: string;
  roles: Array<{ role: string; usd: string }>;
  /** Rolling spend windows, as typed: an empty role is a window over all roles; tokens take "2M" or "500k". */
  windows: WindowDraft[];
}

export interface WindowDraft {
  role: string;
  hours: string;
  tokens: string;
  usd: string;
}

export const EMPTY_WINDOW: WindowDraft = { role: '', hours: '5', tokens: '', usd: '' };

export const money = (n: number): string => `$${n.toFixed(2)}`;

export function capsDraftFrom(s: BudgetSettings): CapsDraft {
  return {
    global: s.globalDailyUsd === null ? '' : String(s.globalDailyUsd),
    roles: Object.entries(s.perRoleDailyUsd).map(([role, usd]) => ({ role, usd: String(usd) })),
    windows: (s.windows ?? []).map((w) => ({
      role: w.role ?? '',
      hours: String(w.hours),
      tokens: w.maxTokens === undefined ? '' : String(w.maxTokens),
      usd: w.maxCostUsd === undefined ? '' : String(w.maxCostUsd),
    })),
  };
}

/** A token count as people type it: "2000000", "2M", "500k" (null: empty; NaN: not a count). */
export function tokenCount(v: string): number | null {
  const t = v.trim().replace(/[,_ ]/g, '');
  if (t === '') return null;
  const m = /^(\d+(?:\.\d+)?)([kKmM]?)$/.exec(t);
  if (!m) return Number.NaN;
  const n = Number(m[1]) * ({ k: 1e3, m: 1e6 }[m[2]!.toLowerCase() as 'k' | 'm'] ?? 1);
  return Number.isInteger(n) ? n : Number.NaN;
}

const MAX_WINDOW_HOURS = 24 * 31;

const amount = (v: string): number | null => (v.trim() === '' ? null : Number(v.trim()));
const ROLE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

export function capsDraftProblems(d: CapsDraft): string[] {
  const out: string[] = [];
  const g = amount(d.global);
  if (g !== null && !(g > 0)) out.push('The cap for all roles is an amount above 0, or empty for none.');
  const seen = new Set<string>();
  for (const r of d.roles) {
    if (!ROLE.test(r.role.trim())) out.push(`“${r.role}” is not a role name (letters, digits, “_”, “-” or “.”).`);
    else if (seen.has(r.role.trim())) out.push(`Role ${r.role} is listed twice.`);
    seen.add(r.role.trim());
    const v = amount(r.usd);
    if (v === null || !(v > 0)) out.push(`The cap of role ${r.role || '?'} is an amount above 0.`);
  }
  d.windows.forEach((w, i) => {
    const name = `Spend window ${i + 1}`;
    if (w.role.trim() !== '' && !ROLE.test(w.role.trim())) out.push(`${name}: “${w.role}” is not a role name (letters, digits, “_”, “-” or “.”), or leave it empty for all roles.`);
    const hours = amount(w.hours);
    if (hours === null || !(hours > 0 && hours <= MAX_WINDOW_HOURS)) out.push(`${name}: its length is a number of hours above 0, at most ${MAX_WINDOW_HOURS} (31 days).`);
    const tokens = tokenCount(w.tokens);
    const usd = amount(w.usd);
    if (tokens === null && usd === null) out.push(`${name}: give it a token limit, a dollar limit, or both.`);
    if (tokens !== null && !(tokens > 0)) out.push(`${name}: the token limit is a whole number above 0 (e.g. 2000000 or 2M).`);
    if (usd !== null && !(usd > 0)) out.push(`${name}: the dollar limit is an amount above 0.`);
  });
  return out;
}

function windowInput(w: WindowDraft): SpendWindow {
  const role = w.role.trim();
  const tokens = tokenCount(w.tokens);
  const usd = amount(w.usd);
  return {
    scope: role === '' ? 'global' : 'role',
    ...(role === '' ? {} : { role }),
    hours: Number(w.hours.trim()),
    ...(tokens === null ? {} : { maxTokens: tokens }),
    ...(usd === null ? {} : { maxCostUsd: usd }),
  };
}

/** The PUT for the draft: roles no longer listed are removed (`null`). */
export function capsDraftToInput(d: CapsDraft, before: BudgetSettings): BudgetsInput {
  const roles: Record<string, number | null> = {};
  for (const role of Object.keys(before.perRoleDailyUsd)) roles[role] = null;
  for (const r of d.roles) roles[r.role.trim()] = Number(r.usd.trim());
  // The windows listed replace the stored ones (an empty list removes them all).
  return { globalDailyUsd: amount(d.global), perRoleDailyUsd: roles, windows: d.windows.map(windowInput) };
}

/** One bar pair of the forecast chart: what a role's jobs will spend, and its cap over the same time. */
export interface ForecastBar {
  key: string;
  label: string;
  forecast: number;
  /** The role's daily cap (else the cap for all roles) times the days; null when none. */
  cap: number | null;
}

/**
 * The forecast chart's rows: per role, next 24 hours and next 30 days against the daily cap that
 * applies (its own, else the one for all roles); with a cap for all roles, one more row for all.
 */
export function forecastBars(items: UsageForecastRow[], s: Pick<BudgetSettings, 'perRoleDailyUsd' | 'globalDailyUsd'>): { day: ForecastBar[]; month: ForecastBar[] } {
  const capOf = (role: string) => s.perRoleDailyUsd[role] ?? s.globalDailyUsd;
  const rows = [...items].sort((a, b) => b.next30d.costUsd - a.next30d.costUsd || a.key.localeCompare(b.key));
  const day: ForecastBar[] = rows.map((r) => ({ key: r.key, label: r.key, forecast: r.next24h.costUsd, cap: capOf(r.key) }));
  const month: ForecastBar[] = rows.map((r) => ({ key: r.key, label: r.key, forecast: r.next30d.costUsd, cap: nullOr(capOf(r.key), 30) }));
  if (s.globalDailyUsd !== null && rows.length > 1) {
    day.push({ key: '*', label: 'all roles', forecast: rows.reduce((n, r) => n + r.next24h.costUsd, 0), cap: s.globalDailyUsd });
    month.push({ key: '*', label: 'all roles', forecast: rows.reduce((n, r) => n + r.next30d.costUsd, 0), cap: s.globalDailyUsd * 30 });
  }
  return { day, month };
}

const nullOr = (v: number | null, times: number): number | null => (v === null ? null : v * times);
