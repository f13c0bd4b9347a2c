/** Usage and cost for the dashboard (pure): daily cost per role as chart rows. */
import type { DailyUsage } from '../../../src-main/common/logs';
import { addDays } from '../../lib/days';

export interface CostDayRow {
  day: string;
  label: string;
  /** One key per role: its cost that day (USD). */
  [role: string]: number | string;
}

/** `days` local days ending with `today`, each with every role's cost (0 when none). */
export function costByRoleRows(daily: DailyUsage[], today: string, days = 14): { rows: CostDayRow[]; roles: string[] } {
  const roles = [...new Set(daily.map((d) => d.role))].sort();
  const rows: CostDayRow[] = [];
  for (let i = days - 1; i >= 0; i--) {
    const day = addDays(today, -i);
    const row: CostDayRow = { day, label: day.slice(5) };
    for (const r of roles) row[r] = 0;
    rows.push(row);
  }
  const index = new Map(rows.map((r) => [r.day, r]));
  for (const d of daily) {
    const row = index.get(d.day);
    if (row) row[d.role] = (row[d.role] as number) + d.costUsd;
  }
  return { rows, roles };
}

/** A job's cost per day over the same days. */
export function jobCostRows(daily: DailyUsage[], job: string, today: string, days = 14): Array<{ day: string; label: string; costUsd: number; tokens: number }> {
  const out = [];
  for (let i = days - 1; i >= 0; i--) {
    const day = addDays(today, -i);
    const rows = daily.filter((d) => d.job === job && d.day === day);
    out.push({ day, label: day.slice(5), costUsd: rows.reduce((n, d) => n + d.costUsd, 0), tokens: rows.reduce((n, d) => n + d.inputTokens + d.outputTokens, 0) });
  }
  return out;
}
