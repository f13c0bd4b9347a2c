import { useMemo, useRef, useState } from 'react';
import type { JobSummary } from '../../../src-main/common/job-schema';
import { navigate, useViewRoute } from '../../lib/navigation';
import { Badge } from '../../components/Badge';
import { PauseNote } from '../../components/PauseNote';
import { EmptyState, ErrorBanner, Spinner } from '../../components/States';
import { RowMenu } from '../../components/RowMenu';
import { Table, type Column } from '../../components/Table';
import { RelativeTime } from '../../components/Time';
import { formatCount, formatDateTime } from '../../lib/format';
import { useListKeys, withKey } from '../../lib/list-keys';
import { useNow } from '../../lib/now';
import { formatInZone, operatorZone } from '../../lib/zones';
import type { JobActionKind } from '../../store/slices/jobs';
import { useActions, useConsole, useWatch } from '../../store/react';
import { JobActionDialog, JOB_ACTION_META } from './JobActionDialog';
import { JobEditor } from './JobEditor';
import { dispositionMeta } from '../../lib/run-words';
import { describeSchedule } from '../../lib/schedule-words';
import { jobState } from './logic';

/** `#/jobs` lists the jobs; `#/jobs/new` and `#/jobs/<id>` open the editor. */
export function JobsView() {
  const route = useViewRoute('jobs');
  if (route.param) return <JobEditor key={route.param} jobId={route.param === 'new' ? null : route.param} />;
  return <JobList />;
}

/** Below this table width the row actions fold into "Trigger now" and a menu. */
const WIDE_ACTIONS = 1100;
const ACTIONS_HEADER = <span className="visually-hidden">Actions</span>;

/** "Asia/Shanghai" → "Shanghai" (the zone's city, for tight cells). */
function shortZone(zone: string): string {
  return zone.split('/').pop()!.replace(/_/g, ' ');
}

function JobList() {
  useWatch('jobs', 'dashboard');
  const list = useConsole((s) => s.jobs.list);
  const killSwitch = useConsole((s) => s.dashboard.data?.killSwitch ?? false);
  const { refresh } = useActions();
  const [filter, setFilter] = useState('');
  const [acting, setActing] = useState<{ job: JobSummary; kind: JobActionKind } | null>(null);
  const now = useNow(30_000);
  const me = operatorZone();

  const rows = useMemo(() => {
    const f = filter.trim().toLowerCase();
    const all = list.data ?? [];
    return f ? all.filter((j) => `${j.name} ${j.role} ${j.description ?? ''} ${j.paused?.reason ?? ''}`.toLowerCase().includes(f)) : all;
  }, [list.data, filter]);

  // The keyboard (lib/list-keys): j/k move, Enter opens the editor, t triggers, p pauses or resumes.
  const tableRef = useRef<HTMLDivElement>(null);
  const { cursor } = useListKeys({
    count: rows.length,
    root: () => tableRef.current,
    onOpen: (i) => navigate('jobs', rows[i]!.id),
    actions: {
      t: (i) => rows[i]!.enabled && !killSwitch && setActing({ job: rows[i]!, kind: 'trigger' }),
      p: (i) => setActing({ job: rows[i]!, kind: rows[i]!.paused ? 'resume' : 'pause' }),
    },
  });

  if (!list.data) {
    if (list.error) return <ErrorBanner error={list.error} what="Could not load the jobs" onRetry={() => void refresh('jobs')} />;
    return <Spinner label="Loading jobs…" />;
  }
  const triggerButton = (j: JobSummary) => (
    <button className="btn btn-small" disabled={!j.enabled || killSwitch} title={!j.enabled ? 'enable it first' : killSwitch ? 'the kill switch is on' : withKey(JOB_ACTION_META.trigger.explain, 't')}
      aria-keyshortcuts="t" onClick={() => setActing({ job: j, kind: 'trigger' })} data-testid={`trigger-${j.name}`}>
      Trigger now
    </button>
  );
  const paused = list.data.filter((j) => j.paused).length;
  const disabled = list.data.filter((j) => !j.enabled).length;

  const columns: Column<JobSummary>[] = [
    {
      key: 'name',
      header: 'Job',
      width: 'minmax(120px, 0.9fr)',
      render: (j) => (
        <div className="two-line">
          <button className="link strong" onClick={() => navigate('jobs', j.id)} data-testid={`job-link-${j.name}`}>
            {j.name}
          </button>
          <span className="muted small" title={j.description}>
            role <span className="mono">{j.role}</span>
            {j.description ? ` · ${j.description}` : ''}
          </span>
        </div>
      ),
    },
    {
      key: 'schedule',
      header: 'Schedule',
      width: 'minmax(140px, 1.35fr)',
      render: (j) => (
        <div className="two-line">
          <span title={j.schedule.cron ? `cron ${j.schedule.cron}` : undefined}>{describeSchedule(j.schedule, j.calendar)}</span>
          <span className="muted small" title={`${j.schedule.timezone ?? 'UTC'}${j.window ? ` · window ${j.window.start}–${j.window.end}` : ''}${j.calendar ? ` · calendar ${j.calendar}` : ''}`}>
            {j.schedule.timezone ?? 'UTC'}
            {j.window ? ` · window ${j.window.start}–${j.window.end}` : ''}
            {j.calendar ? ` · ${j.calendar}` : ''}
          </span>
        </div>
      ),
    },
    {
      key: 'next',
      header: 'Next slot',
      width: 'minmax(170px, 1.45fr)',
      render: (j) =>
        j.nextSlot ? (
          <div className="two-line" title={`slot ${j.nextSlot.slot} · ${formatDateTime(j.nextSlot.at)} (${me})`}>
            <span>
              {formatInZone(j.nextSlot.at, j.schedule.timezone ?? 'UTC', now)} <span className="muted small">{shortZone(j.schedule.timezone ?? 'UTC')}</span>
            </span>
            <span className="muted small">
              {formatInZone(j.nextSlot.at, me, now)} yours · <RelativeTime at={j.nextSlot.at} granularityMs={30_000} />
            </span>
          </div>
        ) : (
          <span className="muted">none</span>
        ),
    },
    {
      key: 'last',
      header: 'Last outcome',
      width: 'minmax(110px, 0.8fr)',
      render: (j) =>
        j.lastRun ? (
          <div className="two-line">
            <span>
              <Badge tone={dispositionMeta(j.lastRun.disposition).tone}>{dispositionMeta(j.lastRun.disposition).label}</Badge>
            </span>
            <span className="muted small" title={`slot ${j.lastRun.slot}`}>
              {j.lastRun.finishedAt ? <RelativeTime at={j.lastRun.finishedAt} granularityMs={30_000} /> : `slot ${j.lastRun.slot}`}
              {j.openBackfills ? <span className="text-warn"> · {j.openBackfills} backfill{j.openBackfills === 1 ? '' : 's'}</span> : null}
            </span>
          </div>
        ) : (
          <span className="muted">no run yet</span>
        ),
    },
    {
      key: 'state',
      header: 'State',
      width: 'minmax(130px, 1.1fr)',
      render: (j) => {
        const st = jobState(j);
        return (
          <div className="two-line" data-testid={`job-state-${j.name}`}>
            <span>
              <Badge tone={st.tone}>
                <span className="dot" aria-hidden />
                {st.label}
              </Badge>
            </span>
            {j.paused ? (
              <PauseNote pause={j.paused} testId={`job-pause-${j.name}`} />
            ) : (
              <span className="muted small">{j.enabled ? (killSwitch ? 'kill switch on: nothing dispatched' : 'runs as scheduled') : 'not scheduled'}</span>
            )}
          </div>
        );
      },
    },
    { key: 'version', header: 'Ver.', width: '44px', align: 'right', title: 'version: bumped on every edit and stored on each run', render: (j) => <span className="mono">v{j.version}</span> },
    {
      key: 'actions',
      header: ACTIONS_HEADER,
      width: '178px',
      align: 'right',
      showFrom: WIDE_ACTIONS,
      render: (j) => (
        <div className="row-actions-2">
          <div className="row-actions">
            {triggerButton(j)}
            {j.paused ? (
              <button className="btn btn-small" onClick={() => setActing({ job: j, kind: 'resume' })} title={withKey('Resume the job', 'p')} aria-keyshortcuts="p" data-testid={`resume-${j.name}`}>
                Resume
              </button>
            ) : (
              <button className="btn btn-small" onClick={() => setActing({ job: j, kind: 'pause' })} title={withKey('Pause the job', 'p')} aria-keyshortcuts="p" data-testid={`pause-${j.name}`}>
                Pause
              </button>
            )}
          </div>
          <div className="row-links small">
            <button className="link" onClick={() => setActing({ job: j, kind: j.enabled ? 'disable' : 'enable' })} data-testid={`${j.enabled ? 'disable' : 'enable'}-${j.name}`}>
              {j.enabled ? 'Disable' : 'Enable'}
            </button>
            <button className="link" title="Slot ledger and backfill queue" onClick={() => navigate('runs', j.id)}>
              Runs
            </button>
            <button className="link" title="Why didn’t it run?" onClick={() => navigate('why', j.id)}>
              Why?
            </button>
          </div>
        </div>
      ),
    },
    {
      key: 'menu',
      header: ACTIONS_HEADER,
      width: '124px',
      align: 'right',
      showBelow: WIDE_ACTIONS,
      render: (j) => (
        <div className="row-actions">
          {triggerButton(j)}
          <RowMenu
            label={`More actions for ${j.name}`}
            testId={`more-${j.name}`}
            items={[
              j.paused
                ? { label: 'Resume', title: withKey('Resume the job', 'p'), onSelect: () => setActing({ job: j, kind: 'resume' }), testId: `resume-${j.name}` }
                : { label: 'Pause', title: withKey('Pause the job', 'p'), onSelect: () => setActing({ job: j, kind: 'pause' }), testId: `pause-${j.name}` },
              { label: j.enabled ? 'Disable' : 'Enable', danger: j.enabled, onSelect: () => setActing({ job: j, kind: j.enabled ? 'disable' : 'enable' }), testId: `${j.enabled ? 'disable' : 'enable'}-${j.name}` },
              { label: 'Runs', title: 'Slot ledger and backfill queue', onSelect: () => navigate('runs', j.id) },
              { label: 'Why didn’t it run?', onSelect: () => navigate('why', j.id) },
            ]}
          />
        </div>
      ),
    },
  ];

  return (
    <div className="view" data-testid="view-jobs">
      <div className="toolbar">
        <div className="muted small" data-testid="jobs-summary">
          {formatCount(list.data.length)} job{list.data.length === 1 ? '' : 's'}
          {paused ? ` · ${paused} paused` : ''}
          {disabled ? ` · ${disabled} disabled` : ''} · times in each job’s zone, and yours ({me})
        </div>
        <div className="toolbar-right">
          <input className="filter" data-view-filter placeholder="Filter jobs  ( / )" value={filter} onChange={(e) => setFilter(e.target.value)} aria-label="Filter jobs" />
          <button className="btn btn-primary" onClick={() => navigate('jobs', 'new')} data-testid="new-job">
            + New job
          </button>
        </div>
      </div>
      {killSwitch ? (
        <div className="callout callout-bad" role="alert">
          <strong>Kill switch is ON.</strong> No job is dispatched until it is turned off in Settings.
        </div>
      ) : null}
      {list.error ? <ErrorBanner error={list.error} what="Live refresh failed; showing the last data" /> : null}
      {list.data.length === 0 ? (
        <EmptyState
          title="No jobs yet"
          action={
            <button className="btn btn-primary" onClick={() => navigate('jobs', 'new')}>
              Create the first job
            </button>
          }
        >
          A job is periodic work owned by Gaffer: a schedule in a time zone, the conditions it must meet, and what to do when it cannot run. Agents of its role receive a{' '}
          <code>job_trigger</code> (<code>agent.onJob</code> in the SDK) — they never schedule themselves.
        </EmptyState>
      ) : (
        <div ref={tableRef}>
          <Table
            columns={columns}
            rows={rows}
            rowKey={(j) => j.id}
            rowHeight={56}
            rowTone={(j) => (!j.enabled ? 'dim' : undefined)}
            cursor={cursor}
            testId="jobs-table"
            ariaLabel="Jobs (j and k move, Enter opens, t triggers, p pauses or resumes)"
            empty={<EmptyState title="No job matches the filter" compact />}
          />
        </div>
      )}
      {acting ? <JobActionDialog job={acting.job} kind={acting.kind} onClose={() => setActing(null)} /> : null}
    </div>
  );
}
