/**
 * A frequent job's ledger read as counts: one row per day (or per hour of a day) with how its
 * slots went, newest first; a row opens the next level (the hours of a day, the slots of an hour).
 */
import { useState } from 'react';
import type { LedgerBucket } from '../../../src-main/common/job-schema';
import { Table, type Column } from '../../components/Table';
import { EmptyState } from '../../components/States';
import { formatDayLabel, formatCount } from '../../lib/format';
import { bucketRow, dueRows, HEAT_META, type BucketRow, type HeatClass } from './logic';

/** The segments of a row's bar, worst first (their colours are the heat map's). */
const BAR: Array<{ cls: HeatClass; of: (r: BucketRow) => number }> = [
  { cls: 'failed', of: (r) => r.problems },
  { cls: 'pending', of: (r) => r.pending },
  { cls: 'ok', of: (r) => r.ok },
  { cls: 'skipped_calendar', of: (r) => r.skipped },
];

export function BucketTable({ buckets, by, onPick, testId }: { buckets: readonly LedgerBucket[]; by: 'day' | 'hour'; onPick: (key: string) => void; testId: string }) {
  const [notDueToo, setNotDueToo] = useState(false);
  const all = buckets.map(bucketRow).reverse();
  const due = dueRows(all);
  const rows = notDueToo ? all : due;
  const n = (v: number, tone?: string) => (v ? <span className={`mono${tone ? ` text-${tone}` : ''}`}>{formatCount(v)}</span> : <span className="muted">—</span>);
  const columns: Column<BucketRow>[] = [
    {
      key: 'key',
      header: by === 'day' ? 'Day' : 'Hour',
      width: 'minmax(110px, 1fr)',
      render: (r) => (by === 'day' ? <span>{formatDayLabel(r.key)} <span className="muted small mono">{r.key}</span></span> : <span className="mono">{r.key.slice(11)}:00–{String(Number(r.key.slice(11)) + 1).padStart(2, '0')}:00</span>),
    },
    { key: 'slots', header: 'Slots', width: '64px', align: 'right', render: (r) => n(r.slots) },
    {
      key: 'bar',
      header: 'How they went',
      width: 'minmax(80px, 1.2fr)',
      render: (r) => (
        <span className="bucket-bar" aria-hidden>
          {BAR.map((b) => (b.of(r) ? <span key={b.cls} className={`heat-${b.cls}`} style={{ width: `${(100 * b.of(r)) / r.slots}%` }} /> : null))}
        </span>
      ),
    },
    { key: 'ok', header: 'Ran ok', width: '64px', align: 'right', title: HEAT_META.ok.hint, render: (r) => n(r.ok) },
    { key: 'bad', header: 'Problems', width: '76px', align: 'right', title: 'failed, held, missed or not ready', render: (r) => n(r.problems, 'bad') },
    { key: 'skip', header: 'Skipped', width: '70px', align: 'right', title: 'by the calendar, an operator or a policy', render: (r) => n(r.skipped) },
    { key: 'pend', header: 'Pending', width: '70px', align: 'right', title: HEAT_META.pending.hint, render: (r) => n(r.pending) },
    {
      key: 'later',
      header: 'Not due',
      width: '72px',
      align: 'right',
      showFrom: 760,
      title: 'upcoming, or before the job existed',
      render: (r) => n(r.upcoming + r.before),
    },
  ];
  return (
    <>
      <Table
      columns={columns}
      rows={rows}
      rowKey={(r) => r.key}
      rowHeight={38}
      maxHeight={480}
      onRowClick={(r) => onPick(r.key)}
      rowTone={(r) => (r.cls === 'upcoming' || r.cls === 'before_job' || r.cls === 'skipped_calendar' ? 'dim' : undefined)}
      testId={testId}
      ariaLabel={by === 'day' ? 'Days' : 'Hours'}
      empty={<EmptyState title={all.length ? `No slot was due yet in these ${by === 'day' ? 'days' : 'hours'}` : 'No slot in this range'} compact />}
      />
      {all.length > due.length ? (
        <button className="link small" onClick={() => setNotDueToo(!notDueToo)} data-testid={`${testId}-not-due`}>
          {notDueToo ? 'Hide' : 'Also show'} the {formatCount(all.length - due.length)} {by === 'day' ? 'days' : 'hours'} with nothing due yet (to come, or before the job existed)
        </button>
      ) : null}
    </>
  );
}
