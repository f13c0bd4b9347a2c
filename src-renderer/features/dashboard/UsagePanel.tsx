/**
 * Usage and cost on the dashboard: cost per day by role (recharts), one job's cost over the same
 * days, spend by role and by job, and the most expensive runs this week.
 */
import { useMemo, useState } from 'react';
import { Bar, BarChart, CartesianGrid, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { formatCost, formatUsage } from '../../components/logs/usage-words';
import { navigate } from '../../lib/navigation';
import { useConsole, useWatch } from '../../store/react';
import { localDay } from './logic';
import { costByRoleRows, jobCostRows } from './usage-logic';
import { chartAxis, chartTooltipWith } from './chart-style';

const ROLE_COLOURS = ['var(--c-progress)', 'var(--c-done)', 'var(--c-blocked)', 'var(--c-ready)', 'var(--c-failed)', 'var(--c-backlog)'];
const tooltip = chartTooltipWith(formatCost);

export function UsagePanel({ now }: { now: number }) {
  useWatch('usage');
  const usage = useConsole((s) => s.usage.data);
  const today = localDay(new Date(now));
  const chart = useMemo(() => (usage ? costByRoleRows(usage.daily, today) : null), [usage, today]);
  const [job, setJob] = useState<string>('');
  const jobRows = useMemo(() => (usage && job ? jobCostRows(usage.daily, job, today) : null), [usage, job, today]);
  if (!usage || !chart) return null;
  const total = usage.byRole.reduce((n, r) => n + r.costUsd, 0);
  return (
    <section className="panel" data-testid="usage-panel">
      <header className="panel-head">
        <h2>Usage and cost, last 14 days</h2>
        <span className="muted">{formatCost(total)} in all</span>
      </header>
      {chart.roles.length === 0 ? (
        <p className="muted small">No usage reported yet. Agents report tokens and cost with <code>ctx.usage(…)</code>.</p>
      ) : (
        <div style={{ width: '100%', height: 200 }} data-testid="chart-cost">
          <ResponsiveContainer>
            <BarChart data={chart.rows} margin={{ top: 4, right: 8, bottom: 4, left: -4 }} barCategoryGap="18%">
              <CartesianGrid vertical={false} stroke="var(--grid)" />
              <XAxis dataKey="label" {...chartAxis} />
              <YAxis {...chartAxis} width={52} tickFormatter={(v: number) => formatCost(v)} />
              <Tooltip {...tooltip} isAnimationActive={false} />
              <Legend wrapperStyle={{ fontSize: 12 }} iconSize={10} />
              {chart.roles.map((r, i) => (
                <Bar key={r} dataKey={r} name={r} stackId="cost" fill={ROLE_COLOURS[i % ROLE_COLOURS.length]} isAnimationActive={false} />
              ))}
            </BarChart>
          </ResponsiveContainer>
        </div>
      )}
      <div className="subgrid">
        <div>
          <h3>By role</h3>
          <ul className="plain-list small">
            {usage.byRole.map((r) => (
              <li key={r.key}>
                <strong>{r.key}</strong> <span className="muted">{formatUsage(r)}</span>
              </li>
            ))}
          </ul>
          <h3>By job</h3>
          {usage.byJob.length === 0 ? (
            <p className="muted small">No job reported usage.</p>
          ) : (
            <>
              <label className="small">
                Follow a job{' '}
                <select value={job} onChange={(e) => setJob(e.target.value)}>
                  <option value="">—</option>
                  {usage.byJob.map((j) => (
                    <option key={j.key} value={j.key}>
                      {j.key} · {formatCost(j.costUsd)}
                    </option>
                  ))}
                </select>
              </label>
              {jobRows ? (
                <div style={{ width: '100%', height: 120 }} data-testid="chart-job-cost">
                  <ResponsiveContainer>
                    <BarChart data={jobRows} margin={{ top: 4, right: 8, bottom: 4, left: -4 }}>
                      <XAxis dataKey="label" {...chartAxis} />
                      <YAxis {...chartAxis} width={52} tickFormatter={(v: number) => formatCost(v)} />
                      <Tooltip {...tooltip} isAnimationActive={false} />
                      <Bar dataKey="costUsd" name="cost" fill="var(--c-progress)" isAnimationActive={false} />
                    </BarChart>
                  </ResponsiveContainer>
                </div>
              ) : null}
            </>
          )}
        </div>
        <div>
          <h3>Most expensive runs this week</h3>
          {usage.costliestRuns.length === 0 ? (
            <p className="muted small">No run reported usage this week.</p>
          ) : (
            <ol className="plain-list small" data-testid="costliest-runs">
              {usage.costliestRuns.map((r) => (
                <li key={r.runId}>
                  <button className="link mono" onClick={() => navigate('runs', r.jobId, { slot: r.slot })}>
                    {r.job} {r.slot}
                  </button>{' '}
                  <strong>{formatCost(r.costUsd)}</strong> <span className="muted">{formatUsage(r)}</span>
                </li>
              ))}
            </ol>
          )}
        </div>
      </div>
    </section>
  );
}
