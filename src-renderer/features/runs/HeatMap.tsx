/**
 * The heat map of one job: a cell per local day of the job's zone over the weeks shown, coloured
 * by the worst thing that happened that day; the counts come from the server's day counts, so a
 * job with thousands of slots a day reads the same as a daily one. A day with slots is a button:
 * it narrows the ledger below to that day.
 */
import { useMemo } from 'react';
import type { JobSummary } from '../../../src-main/common/job-schema';
import { ErrorBanner } from '../../components/States';
import { formatCount } from '../../lib/format';
import { useNow } from '../../lib/now';
import { dateInZone } from '../../lib/zones';
import { useConsole } from '../../store/react';
import { HEAT_META, HEAT_ORDER, heatGrid, heatTitle, heatTotals, type HeatClass } from './logic';

const LEGEND: HeatClass[] = HEAT_ORDER.filter((c) => c !== 'none');
/** Shown in the legend without a number: nothing happened (yet) to count. */
const UNCOUNTED = new Set<HeatClass>(['upcoming', 'before_job']);

export function HeatMapPanel({ job, weeks, pickedDay, onPickDay }: { job: JobSummary; weeks: number; pickedDay: string | null; onPickDay: (day: string | null) => void }) {
  const days = useConsole((s) => s.runs.days);
  const now = useNow(60_000);
  const zone = job.schedule.timezone ?? 'UTC';
  const today = dateInZone(now, zone);
  const grid = useMemo(() => heatGrid(days.items, today, weeks), [days.items, today, weeks]);
  const totals = useMemo(() => heatTotals(days.items), [days.items]);
  return (
    <section className="panel" data-testid="heatmap-panel">
      <header className="panel-head">
        <h2>Expected vs actual</h2>
        <span className="muted small">one cell per day in {zone}; the worst slot of the day sets the colour; pick a day to see its slots</span>
        {days.loading ? <span className="spinner spinner-small" role="status" aria-label="loading" /> : null}
      </header>
      {days.error ? <ErrorBanner error={days.error} what="Could not count the slots" /> : null}
      <div className="heatmap" data-testid="heatmap">
        <div className="heat-days" aria-hidden>
          {['Mon', '', 'Wed', '', 'Fri', '', 'Sun'].map((d, i) => (
            <span key={i}>{d}</span>
          ))}
        </div>
        {grid.map((col) => (
          <div className="heat-col" key={col[0]!.day}>
            <span className="heat-week muted" aria-hidden>
              {Number(col[0]!.day.slice(8)) <= 7 ? new Date(`${col[0]!.day}T00:00:00Z`).toLocaleString('en-US', { month: 'short', timeZone: 'UTC' }) : ''}
            </span>
            {col.map((d) => {
              const cls = `heat-cell heat-${d.cls}${d.day === today ? ' heat-today' : ''}${d.future ? ' heat-future' : ''}${d.day === pickedDay ? ' heat-picked' : ''}`;
              return d.slots > 0 ? (
                <button
                  key={d.day}
                  type="button"
                  className={cls}
                  title={heatTitle(d)}
                  aria-label={heatTitle(d)}
                  aria-pressed={d.day === pickedDay}
                  data-day={d.day}
                  data-heat={d.cls}
                  onClick={() => onPickDay(d.day === pickedDay ? null : d.day)}
                />
              ) : (
                <span key={d.day} className={cls} title={heatTitle(d)} data-day={d.day} data-heat={d.cls} role="img" aria-label={heatTitle(d)} />
              );
            })}
          </div>
        ))}
      </div>
      <div className="heat-legend">
        {LEGEND.map((c) => (
          <span key={c} className="heat-key" title={HEAT_META[c].hint}>
            <span className={`heat-cell heat-${c}`} aria-hidden /> {HEAT_META[c].label}
            {!UNCOUNTED.has(c) && totals[c] ? <strong> {formatCount(totals[c])}</strong> : null}
          </span>
        ))}
      </div>
      {!days.complete && days.loadedAt !== null ? <p className="small text-warn">More slots than counted: pick fewer weeks to count them all.</p> : null}
    </section>
  );
}
