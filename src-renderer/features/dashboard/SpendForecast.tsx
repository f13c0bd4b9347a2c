/**
 * The forecast on the dashboard: what each role's jobs will spend in the next 24 hours and the next
 * 30 days (cost per run of their recent runs times the runs their schedules make), next to the
 * daily cap that applies, as bars (recharts) and in words.
 */
import { useEffect, useMemo, useState } from 'react';
import { Bar, BarChart, CartesianGrid, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import type { BudgetSettings } from '../../../src-main/common/attention';
import type { UsageForecastRow } from '../../../src-main/common/prices';
import { dollars } from '../../lib/spend-words';
import { useActions, useConsole, useWatch } from '../../store/react';
import { forecastBars, type ForecastBar } from './spend-logic';
import { chartAxis, chartTooltipWith } from './chart-style';

const tooltip = chartTooltipWith(dollars);

export function SpendForecast({ settings }: { settings: BudgetSettings }) {
  useWatch('usage');
  const { usageForecast } = useActions();
  // Read again when usage or runs change (the usage topic follows both).
  const usageAt = useConsole((s) => s.usage.loadedAt);
  const [items, setItems] = useState<UsageForecastRow[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    usageForecast().then(
      (r) => live && (setItems(r), setError(null)),
      (e: unknown) => live && setError(e instanceof Error ? e.message : String(e)),
    );
    return () => {
      live = false;
    };
  }, [usageForecast, usageAt]);
  const bars = useMemo(() => (items ? forecastBars(items, settings) : null), [items, settings]);
  return (
    <section className="panel" data-testid="spend-forecast">
      <header className="panel-head">
        <h2>Spend forecast</h2>
        <span className="muted small">each role’s enabled jobs: cost per run of their recent runs × the runs their schedules will make</span>
      </header>
      {error ? <p className="text-bad small">Could not work out the forecast: {error}</p> : null}
      {!bars ? null : bars.day.length === 0 ? (
        <p className="muted small">No enabled job to forecast.</p>
      ) : (
        <div className="subgrid">
          <ForecastChart title="Next 24 hours" rows={bars.day} capName="daily cap" testId="chart-forecast-day" />
          <ForecastChart title="Next 30 days" rows={bars.month} capName="daily cap × 30" testId="chart-forecast-month" />
        </div>
      )}
    </section>
  );
}

function ForecastChart({ title, rows, capName, testId }: { title: string; rows: ForecastBar[]; capName: string; testId: string }) {
  return (
    <div>
      <h3>{title}</h3>
      <div style={{ width: '100%', height: Math.max(140, rows.length * 34 + 60) }} data-testid={testId}>
        <ResponsiveContainer>
          <BarChart data={rows} layout="vertical" margin={{ top: 4, right: 16, bottom: 4, left: 4 }} barCategoryGap={6}>
            <CartesianGrid horizontal={false} stroke="var(--grid)" />
            <XAxis type="number" {...chartAxis} tickFormatter={(v: number) => dollars(v)} />
            <YAxis type="category" dataKey="label" {...chartAxis} width={80} />
            <Tooltip {...tooltip} isAnimationActive={false} />
            <Legend wrapperStyle={{ fontSize: 12 }} iconSize={10} />
            <Bar dataKey="forecast" name="forecast" fill="var(--c-progress)" isAnimationActive={false} />
            <Bar dataKey="cap" name={capName} fill="var(--c-backlog)" isAnimationActive={false} />
          </BarChart>
        </ResponsiveContainer>
      </div>
      <ul className="plain-list small" data-testid={`${testId}-words`}>
        {rows.map((r) => (
          <li key={r.key} className={r.cap !== null && r.forecast > r.cap ? 'text-bad' : undefined}>
            {r.key === '*' ? 'All roles' : `Role ${r.label}`}: about {dollars(r.forecast)}
            {r.cap === null ? ' · no cap' : ` of ${dollars(r.cap)} (${capName})${r.forecast > r.cap ? ' — above the cap' : ''}`}
          </li>
        ))}
      </ul>
    </div>
  );
}
