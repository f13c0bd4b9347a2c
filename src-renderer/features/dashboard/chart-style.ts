/** The dashboard charts' shared look (recharts props): axes in the muted colour, tooltips in the theme. */
export const chartAxis = { stroke: 'var(--fg-muted)', fontSize: 11, tickLine: false, axisLine: false } as const;

export const chartTooltip = {
  contentStyle: { background: 'var(--bg-raised)', border: '1px solid var(--border)', borderRadius: 6, fontSize: 12, color: 'var(--fg)' },
  labelStyle: { color: 'var(--fg)', fontWeight: 600 },
  itemStyle: { color: 'var(--fg)', padding: 0 },
  cursor: { fill: 'var(--hover)' },
};

/** The tooltip with its values written by `format` (dollars, a count, …). */
export const chartTooltipWith = (format: (v: number) => string) => ({ ...chartTooltip, formatter: (v: unknown) => format(Number(v)) });
