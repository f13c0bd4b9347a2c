import { Bar, BarChart, CartesianGrid, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { formatCompact } from '../../lib/format';
import type { DistributionRow, ThroughputRow } from './logic';
import { chartAxis, chartTooltip } from './chart-style';


export function DistributionChart({ rows }: { rows: DistributionRow[] }) {
  const height = Math.max(160, rows.length * 30 + 60);
  return (
    <div style={{ width: '100%', height }} data-testid="chart-distribution">
      <ResponsiveContainer>
        <BarChart data={rows} layout="vertical" margin={{ top: 4, right: 16, bottom: 4, left: 4 }} barCategoryGap={6}>
          <CartesianGrid horizontal={false} stroke="var(--grid)" />
          <XAxis type="number" {...chartAxis} tickFormatter={formatCompact} allowDecimals={false} />
          <YAxis
            type="category"
            dataKey="queue"
            {...chartAxis}
            width={90}
            tick={(raw: unknown) => {
              const props = raw as { x: number; y: number; payload: { value: string } };
              const row = rows.find((r) => r.queue === props.payload.value);
              return (
                <text x={props.x - 4} y={props.y} dy={4} textAnchor="end" fontSize={12} fill={row?.stuck ? 'var(--c-failed)' : 'var(--fg)'} fontWeight={row?.stuck ? 700 : 500}>
                  {row?.stuck ? '⚠ ' : ''}
                  {props.payload.value}
                </text>
              );
            }}
          />
          <Tooltip {...chartTooltip} isAnimationActive={false} />
          <Legend wrapperStyle={{ fontSize: 12 }} iconSize={10} itemSorter={null} />
          <Bar dataKey="ready" name="Ready" stackId="q" fill="var(--c-ready)" isAnimationActive={false} />
          <Bar dataKey="waiting" name="Backlog (waiting)" stackId="q" fill="var(--c-backlog)" isAnimationActive={false} />
          <Bar dataKey="inProgress" name="In progress" stackId="q" fill="var(--c-progress)" isAnimationActive={false} />
          <Bar dataKey="blocked" name="Blocked/failed" stackId="q" fill="var(--c-blocked)" isAnimationActive={false} radius={[0, 3, 3, 0]} />
        </BarChart>
      </ResponsiveContainer>
    </div>
  );
}

export function ThroughputChart({ rows }: { rows: ThroughputRow[] }) {
  return (
    <div style={{ width: '100%', height: 220 }} data-testid="chart-throughput">
      <ResponsiveContainer>
        <BarChart data={rows} margin={{ top: 4, right: 8, bottom: 4, left: -8 }} barCategoryGap="22%">
          <CartesianGrid vertical={false} stroke="var(--grid)" />
          <XAxis dataKey="label" {...chartAxis} />
          <YAxis {...chartAxis} tickFormatter={formatCompact} allowDecimals={false} width={44} />
          <Tooltip {...chartTooltip} isAnimationActive={false} />
          <Legend wrapperStyle={{ fontSize: 12 }} iconSize={10} itemSorter={null} />
          <Bar dataKey="done" name="Done" fill="var(--c-done)" isAnimationActive={false} radius={[3, 3, 0, 0]} />
          <Bar dataKey="failed" name="Failed" fill="var(--c-failed)" isAnimationActive={false} radius={[3, 3, 0, 0]} />
          <Bar dataKey="expired" name="Expired locks" fill="var(--c-blocked)" isAnimationActive={false} radius={[3, 3, 0, 0]} />
        </BarChart>
      </ResponsiveContainer>
    </div>
  );
}
