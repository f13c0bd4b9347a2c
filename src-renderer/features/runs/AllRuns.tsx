/**
 * Runs of every job in one ledger, newest slot first, filtered by job, status, disposition and
 * the days the slots were due (the operator's days). A row opens the slot in its job's ledger.
 * The keyboard (lib/list-keys): j/k move, Enter opens the slot, a approves a held run, r retries a failed one.
 */
import { useEffect, useMemo, useRef, useState } from 'react';
import { changeWords } from '../../components/diff/diff-model';
import { useChanges } from '../../store/use-changes';
import { RUN_DISPOSITIONS, RUN_STATUSES, type JobSummary, type Run } from '../../../src-main/common/job-schema';
import { useListKeys } from '../../lib/list-keys';
import { navigate } from '../../lib/navigation';
import { SelectField } from '../../components/SelectField';
import { EmptyState, ErrorBanner, Spinner } from '../../components/States';
import { Table, type Column } from '../../components/Table';
import { LocalTime } from '../../components/Time';
import { formatCount, shortHash } from '../../lib/format';
import { dispositionMeta, runErrorView } from '../../lib/run-words';
import { useActions, useConsole, useWatch } from '../../store/react';
import type { AllRunsFilter } from '../../store/slices/runs';
import { RunDecisionDialog } from '../../components/RunDecisionDialog';
import { allRunsQuery, canApproveRun, canRetryRun, filterOfAllRunsQuery } from './logic';
import { OutcomeCell, runLine } from './OutcomeCell';
import { CostCell, DurationCell, runDurationMs } from '../../components/row-usage';
import { useRowUsage } from '../../store/use-row-usage';
import { useNow } from '../../lib/now';

export function AllRuns({ jobs, query }: { jobs: JobSummary[]; query: Record<string, string> }) {
  useWatch('runs');
  const all = useConsole((s) => s.runs.all);
  const { setAllRunsFilter, loadMoreAllRuns, refresh, retryRun, decideRun } = useActions();
  const [approving, setApproving] = useState<Run | null>(null);
  const filter = useMemo(() => filterOfAllRunsQuery(query), [query]);
  const key = JSON.stringify(filter);
  useEffect(() => {
    setAllRunsFilter(filter);
    // The key stands for the filter's fields.
  }, [key, setAllRunsFilter]);
  const set = (patch: Record<string, string>) => navigate('runs', null, allRunsQuery({ ...query, ...patch }));

  const tableRef = useRef<HTMLDivElement>(null);
  const open = (r: Run) => navigate('runs', r.jobId, { slot: r.slot });
  const { cursor } = useListKeys({
    count: all.items.length,
    root: () => tableRef.current,
    onOpen: (i) => open(all.items[i]!),
    actions: {
      a: (i) => canApproveRun(all.items[i]!) && setApproving(all.items[i]!),
      r: (i) => {
        const run = all.items[i]!;
        // The server re-checks the backfills this list does not carry; a refusal is a toast.
        if (canRetryRun({ run, backfills: [] })) void retryRun(run).catch(() => {});
      },
    },
  });

  const changes = useChanges(all.items.map((r) => `run:${r.id}`));
  const now = useNow(30_000);
  const rowUsage = useRowUsage(
    all.items.map((r) => `run:${r.id}`),
    all.items.map((r) => r.updatedAt).join(),
  );
  const columns: Column<Run>[] = [
    { key: 'due', header: 'Due (your time)', width: '132px', render: (r) => <LocalTime at={r.slotAt} /> },
    { key: 'job', header: 'Job', width: 'minmax(110px, 1fr)', render: (r) => <span className="ellipsis" title={r.job}>{r.job}</span> },
    { key: 'slot', header: 'Slot', width: 'minmax(110px, 1fr)', render: (r) => <span className="mono small">{r.slot}</span> },
    {
      key: 'outcome',
      header: 'Outcome',
      width: 'minmax(130px, 1fr)',
      render: (r) => <OutcomeCell disposition={r.disposition} detail={runLine(r)} />,
    },
    { key: 'att', header: 'Att.', width: '44px', align: 'right', title: 'attempts (dispatches)', render: (r) => <span className="mono">{r.attempt}</span> },
    { key: 'duration', header: 'Time', width: '70px', align: 'right', title: 'from start to finish (so far, while running)', render: (r) => <DurationCell ms={runDurationMs(r, now)} /> },
    { key: 'cost', header: 'Cost', width: '64px', align: 'right', title: 'spend of all its attempts', render: (r) => <CostCell usage={rowUsage[`run:${r.id}`]} /> },
    { key: 'inst', header: 'Instance', width: 'minmax(90px, 0.8fr)', showFrom: 900, render: (r) => (r.instanceId ? <span className="mono small" title={r.instanceId}>{shortHash(r.instanceId, 14)}</span> : <span className="muted">—</span>) },
    {
      key: 'err',
      header: 'Error',
      width: 'minmax(120px, 1.4fr)',
      render: (r) => {
        const e = runErrorView(r);
        return e ? (
          <span className={`small ellipsis${e.earlier ? ' muted' : ''}`} title={e.text}>
            {e.earlier ? 'earlier attempt: ' : ''}
            {e.text}
          </span>
        ) : (
          <span className="muted">—</span>
        );
      },
    },
  ];
  // The workspace figures, when any run shown has a workspace (else no column).
  if (Object.keys(changes).length > 0) {
    columns.push({
      key: 'changes',
      header: 'Changes',
      width: '150px',
      showFrom: 900,
      render: (r) => {
        const c = changes[`run:${r.id}`];
        return c ? <span className="small mono changes-cell">{changeWords(c)}</span> : <span className="muted">—</span>;
      },
    });
  }

  return (
    <section className="panel" data-testid="all-runs">
      <header className="panel-head">
        <h2>Runs of every job</h2>
        <span className="muted small">{all.loadedAt !== null ? `${formatCount(all.items.length)}${all.next ? '+' : ''} runs, newest slot first` : ''}</span>
        {all.loading ? <span className="spinner spinner-small" role="status" aria-label="loading" /> : null}
      </header>
      <div className="all-runs-filters">
        <SelectField label="Job" name="runs-job" value={query.job ?? ''} anyLabel="every job" options={jobs.map((j) => ({ value: j.id, label: j.name }))} onChange={(v) => set({ job: v })} />
        <SelectField label="Status" name="runs-status" value={filter.status ?? ''} anyLabel="any status" options={RUN_STATUSES.map((v) => ({ value: v, label: v }))} onChange={(v) => set({ status: v })} />
        <SelectField label="Outcome" name="runs-disposition" value={filter.disposition ?? ''} anyLabel="any outcome" options={RUN_DISPOSITIONS.map((d) => ({ value: d, label: dispositionMeta(d).label }))} onChange={(v) => set({ disposition: v })} />
        <label className="inline-field">
          <span className="muted small">Due from</span>
          <input type="date" name="runs-from" value={query.from ?? ''} onChange={(e) => set({ from: e.target.value })} aria-label="Due from (your date)" />
        </label>
        <label className="inline-field">
          <span className="muted small">to</span>
          <input type="date" name="runs-to" value={query.to ?? ''} onChange={(e) => set({ to: e.target.value })} aria-label="Due up to and including (your date)" />
        </label>
      </div>
      {all.error ? <ErrorBanner error={all.error} what="Could not list the runs" onRetry={() => void refresh('runs')} /> : null}
      {all.loadedAt === null && all.loading ? (
        <Spinner label="Loading runs…" />
      ) : (
        <div ref={tableRef}>
          <Table
            columns={columns}
            rows={all.items}
            rowKey={(r) => r.id}
            rowHeight={46}
            maxHeight={520}
            onRowClick={open}
            cursor={cursor}
            testId="all-runs-table"
            ariaLabel="Runs of every job (j and k move, Enter opens, a approves a held run, r retries a failed one)"
            empty={<EmptyState title={Object.keys(filter as AllRunsFilter).length ? 'No run matches' : 'No run yet'} compact />}
          />
        </div>
      )}
      {approving ? (
        <RunDecisionDialog decision="approve" stoppedByCap={approving.errorClass === 'budget'} onConfirm={(note, budget) => decideRun(approving.id, 'approve', note, budget)} onClose={() => setApproving(null)} />
      ) : null}
      {all.next !== null ? (
        <div className="load-more">
          <button className="btn btn-small" onClick={() => void loadMoreAllRuns()} disabled={all.loading} data-testid="all-runs-more">
            Show older runs
          </button>
        </div>
      ) : null}
    </section>
  );
}
