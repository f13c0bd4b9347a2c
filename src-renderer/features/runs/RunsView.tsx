/**
 * Runs: the slot ledger of one job — a calendar heat-map of expected vs actual slots over the
 * last weeks, every slot with its disposition (a frequent job's read as days → hours → slots), a
 * run detail pane (checks with evidence, steps, backfills) — the runs of every job in one ledger,
 * and the backfill queue of every job with its actions.
 */
import { ActivitySection } from '../../components/logs/ActivitySection';
import { AttemptSpendRow } from '../../components/AttemptSpendRow';
import { useAttemptSpend } from '../../store/use-attempt-spend';
import { WorkspaceSection } from '../../components/diff/WorkspaceSection';
import { useWorkspace } from '../../store/use-workspace';
import { useActivity } from '../../store/use-log-source';
import { useEffect, useMemo, useRef, useState } from 'react';
import type { RunDetail } from '../../../src-main/common/console-api';
import type { Backfill, BackfillAction, JobSummary, LedgerEntry, Run } from '../../../src-main/common/job-schema';
import { useListKeys, withKey } from '../../lib/list-keys';
import { navigate, replaceRoute, useViewRoute } from '../../lib/navigation';
import { Badge } from '../../components/Badge';
import { PauseNote } from '../../components/PauseNote';
import { ReasonDialog } from '../../components/Dialog';
import { EmptyState, ErrorBanner, Spinner } from '../../components/States';
import { Table, type Column } from '../../components/Table';
import { LocalTime, RelativeTime } from '../../components/Time';
import { formatCount, formatDateTime, formatDayLabel, prettyJson, shortHash } from '../../lib/format';
import { useNow } from '../../lib/now';
import { formatInZone } from '../../lib/zones';
import { toUiError, type UiError } from '../../lib/errors';
import { DEFAULT_LEDGER_WEEKS, isFrequent, type LedgerScope } from '../../store/slices/runs';
import { useActions, useConsole, useWatch } from '../../store/react';
import { Evidence } from '../../components/Evidence';
import { VerificationChecks } from '../../components/done-when/VerificationChecks';
import { JobSelect } from '../../components/JobSelect';
import { actorWords, backfillReasonWords, dispositionMeta, LAYER_VERDICT_META, runErrorView, settledWords } from '../../lib/run-words';
import { describeSchedule } from '../../lib/schedule-words';
import { AllRuns } from './AllRuns';
import { BucketTable } from './BucketTable';
import { OutcomeCell, runLine } from './OutcomeCell';
import { HeatMapPanel } from './HeatMap';
import { RunDecisionDialog } from '../../components/RunDecisionDialog';
import { backfillActions, canApproveRun, canRequestBackfill, canRetryRun, completingBackfill, entryDay, filterLedger, LEDGER_FILTERS, slotTimeline, type LedgerFilter } from './logic';
import './runs-extra.css';

const WEEK_CHOICES = [2, 6, 12];
/** Columns left out while the detail pane is open (the pane shows them). */
const NARROW_HIDDEN = new Set(['inst', 'trace', 'bf']);
const BACKFILL_ACTION_META: Record<BackfillAction, { label: string; explain: string; danger?: boolean }> = {
  run_now: { label: 'Run now', explain: 'Dispatches this slot now (kill switch permitting), carrying the steps an earlier attempt completed.' },
  cancel: { label: 'Cancel backfill', explain: 'Takes the slot out of the queue; it stays recorded as it ended.', danger: true },
  mark_done: { label: 'Mark done', explain: 'Says the work was done another way; the slot is recorded as backfilled by hand.' },
};

export function RunsView() {
  useWatch('jobs', 'runs');
  const route = useViewRoute('runs');
  const jobs = useConsole((s) => s.jobs.list);
  const { selectLedgerJob, selectLedgerScope, refresh } = useActions();
  const everyJob = route.query.all === '1';
  const jobId = everyJob ? null : route.param;
  const weeks = Number(route.query.weeks) || DEFAULT_LEDGER_WEEKS;
  const slot = route.query.slot ?? null;
  const day = route.query.day ?? null;
  const hour = route.query.hour ?? null;

  useEffect(() => {
    if (!everyJob && !jobId && jobs.data && jobs.data.length > 0) replaceRoute('runs', jobs.data[0]!.id);
  }, [everyJob, jobId, jobs.data]);
  useEffect(() => {
    if (!everyJob) selectLedgerJob(jobId, weeks);
  }, [everyJob, jobId, weeks, selectLedgerJob]);
  useEffect(() => {
    selectLedgerScope({ day, hour });
  }, [day, hour, selectLedgerScope]);

  if (!jobs.data) {
    if (jobs.error) return <ErrorBanner error={jobs.error} what="Could not load the jobs" onRetry={() => void refresh('jobs')} />;
    return <Spinner label="Loading jobs…" />;
  }
  const job = jobs.data.find((j) => j.id === jobId || j.name === jobId) ?? null;
  /** Route query keeping the weeks shown (`w`, default the current ones) unless they are the default. */
  const q = (extra: Record<string, string>, w = weeks) => ({ ...(w !== DEFAULT_LEDGER_WEEKS ? { weeks: String(w) } : {}), ...extra });
  const scopeSwitch = (
    <div className="seg" role="radiogroup" aria-label="Which runs">
      <button role="radio" aria-checked={!everyJob} className={`seg-btn${!everyJob ? ' active' : ''}`} onClick={() => navigate('runs', route.query.job ?? jobs.data?.[0]?.id ?? null)} data-testid="runs-one-job">
        One job
      </button>
      <button role="radio" aria-checked={everyJob} className={`seg-btn${everyJob ? ' active' : ''}`} onClick={() => navigate('runs', null, { all: '1' })} data-testid="runs-every-job">
        Every job
      </button>
    </div>
  );

  if (everyJob) {
    return (
      <div className="view runs" data-testid="view-runs">
        <div className="toolbar">{scopeSwitch}</div>
        <AllRuns jobs={jobs.data} query={route.query} />
        <BackfillQueue jobId={null} />
      </div>
    );
  }

  return (
    <div className="view runs" data-testid="view-runs">
      <div className="toolbar">
        {scopeSwitch}
        <JobSelect jobs={jobs.data} value={job?.id ?? null} onPick={(id) => navigate('runs', id, q({}))} testId="runs-job" />
        {job ? (
          <span className="muted small">
            {describeSchedule(job.schedule, job.calendar)} · {job.schedule.timezone ?? 'UTC'}
            {job.calendar ? ` · calendar ${job.calendar}` : ''} · v{job.version}
          </span>
        ) : null}
        <div className="toolbar-right">
          <div className="seg" role="radiogroup" aria-label="Weeks shown">
            {WEEK_CHOICES.map((w) => (
              <button key={w} role="radio" aria-checked={w === weeks} className={`seg-btn${w === weeks ? ' active' : ''}`} onClick={() => job && navigate('runs', job.id, q({}, w))}>
                {w} weeks
              </button>
            ))}
          </div>
          {job ? (
            <>
              <button className="btn btn-small" onClick={() => navigate('why', job.id)}>
                Why? for this job
              </button>
              <button className="btn btn-small btn-ghost" onClick={() => navigate('jobs', job.id)}>
                Edit job
              </button>
            </>
          ) : null}
        </div>
      </div>

      {job?.paused ? (
        <div className="callout callout-warn" data-testid="runs-paused">
          <PauseNote pause={job.paused} />
        </div>
      ) : null}

      {jobs.data.length === 0 ? (
        <EmptyState title="No jobs yet" action={<button className="btn btn-primary" onClick={() => navigate('jobs', 'new')}>Create a job</button>}>
          The ledger lists every slot a job’s schedule expects and what happened to it: ran, skipped (calendar, not ready, paused…), missed, failed, held, backfilled.
        </EmptyState>
      ) : (
        <>
          <div className="runs-top">
            {job ? <HeatMapPanel job={job} weeks={weeks} pickedDay={day} onPickDay={(d) => navigate('runs', job.id, q(d ? { day: d } : {}))} /> : <div className="panel" />}
            <BackfillQueue jobId={job?.id ?? null} />
          </div>
          {job ? (
            <Ledger
              job={job}
              slot={slot}
              scope={{ day, hour }}
              onScope={(sc) => navigate('runs', job.id, q({ ...(sc.day ? { day: sc.day } : {}), ...(sc.hour ? { hour: sc.hour } : {}) }))}
              onSelect={(s) => navigate('runs', job.id, q({ ...(day ? { day } : {}), ...(hour ? { hour } : {}), ...(s ? { slot: s } : {}) }))}
            />
          ) : null}
        </>
      )}
    </div>
  );
}

function Ledger({
  job,
  slot,
  scope,
  onScope,
  onSelect,
}: {
  job: JobSummary;
  slot: string | null;
  scope: LedgerScope;
  onScope: (scope: LedgerScope) => void;
  onSelect: (slot: string | null) => void;
}) {
  const ledger = useConsole((s) => s.runs.ledger);
  const days = useConsole((s) => s.runs.days);
  const hours = useConsole((s) => s.runs.hours);
  const [filter, setFilter] = useState<LedgerFilter>('past');
  const now = useNow(60_000);
  const zone = job.schedule.timezone ?? 'UTC';
  const frequent = isFrequent(days);
  // A job with a few slots a day has them all loaded: a day is a filter. A frequent one reads the day's hours, then an hour's slots.
  const scoped = useMemo(() => (!frequent && scope.day ? ledger.items.filter((e) => entryDay(e, zone) === scope.day) : ledger.items), [frequent, scope.day, ledger.items, zone]);
  const rows = useMemo(() => filterLedger(scoped, filter, now), [scoped, filter, now]);
  const selected = slot ? (ledger.items.find((e) => e.slot === slot) ?? null) : null;
  const level: 'days' | 'hours' | 'slots' = !frequent ? 'slots' : !scope.day ? 'days' : !scope.hour ? 'hours' : 'slots';
  // The keyboard (lib/list-keys): j/k move through the slots, Enter opens one, a approves a held run, r retries a failed one.
  const { retryRun, decideRun } = useActions();
  const [approving, setApproving] = useState<Run | null>(null);
  const tableRef = useRef<HTMLDivElement>(null);
  const { cursor } = useListKeys({
    count: level === 'slots' ? rows.length : 0,
    root: () => tableRef.current,
    onOpen: (i) => onSelect(rows[i]!.slot),
    actions: {
      a: (i) => {
        const run = rows[i]!.run;
        if (run && canApproveRun(run)) setApproving(run);
      },
      r: (i) => {
        const e = rows[i]!;
        if (e.run && canRetryRun(e)) void retryRun(e.run).catch(() => {});
      },
    },
  });

  const columns: Column<LedgerEntry>[] = [
    {
      key: 'slot',
      header: 'Slot',
      width: 'minmax(150px, 1.1fr)',
      render: (e) => (
        <div className="two-line">
          <span className="mono">{e.slot}</span>
          <span className="muted small">{formatInZone(e.at, zone, now)}</span>
        </div>
      ),
    },
    {
      key: 'disp',
      header: 'Disposition',
      width: 'minmax(130px, 1fr)',
      render: (e) => <OutcomeCell disposition={e.disposition} detail={e.run ? runLine(e.run, e.backfills) : e.expected === null ? 'not in the schedule now' : 'no run'} />,
    },
    { key: 'att', header: 'Att.', width: '44px', align: 'right', title: 'attempts (dispatches)', render: (e) => (e.run ? <span className="mono">{e.run.attempt}</span> : <span className="muted">—</span>) },
    { key: 'inst', header: 'Instance', width: 'minmax(90px, 0.8fr)', render: (e) => (e.run?.instanceId ? <span className="mono small" title={e.run.instanceId}>{shortHash(e.run.instanceId, 14)}</span> : <span className="muted">—</span>) },
    { key: 'ver', header: 'Ver.', width: '40px', align: 'right', showFrom: 1000, render: (e) => (e.run ? <span className="mono">v{e.run.version}</span> : <span className="muted">—</span>) },
    { key: 'trace', header: 'Trace', width: '92px', showFrom: 1000, render: (e) => (e.run ? <span className="mono small" title={e.run.traceId}>{shortHash(e.run.traceId, 10)}</span> : <span className="muted">—</span>) },
    {
      key: 'err',
      header: 'Error',
      width: 'minmax(140px, 1.4fr)',
      render: (e) => {
        const err = e.run ? runErrorView(e.run) : null;
        if (!err) return <span className="muted">—</span>;
        // A run that went on to succeed: its error belongs to an earlier attempt.
        if (err.earlier) return <span className="small muted ellipsis" title={err.text}>earlier attempt: {err.text}</span>;
        return (
          <div className="two-line" title={err.text}>
            <span>{e.run!.errorClass ? <Badge tone={e.run!.errorClass === 'needs_human' || e.run!.errorClass === 'fatal' ? 'failed' : 'blocked'}>{e.run!.errorClass.replace('_', ' ')}</Badge> : null}</span>
            <span className="small">{err.text}</span>
          </div>
        );
      },
    },
    {
      key: 'bf',
      header: 'Backfill',
      width: '84px',
      render: (e) => (e.backfills.length ? <Badge tone={backfillTone(e.backfills[e.backfills.length - 1]!.status)}>{e.backfills[e.backfills.length - 1]!.status}</Badge> : <span className="muted">—</span>),
    },
    {
      key: 'why',
      header: '',
      width: '44px',
      align: 'right',
      render: (e) => (
        <button
          className="icon-btn"
          title="Why? Explain this slot"
          aria-label={`Why ${e.slot}`}
          onClick={(ev) => {
            ev.stopPropagation();
            navigate('why', job.id, { at: e.at });
          }}
          data-testid={`why-${e.slot}`}
        >
          ?
        </button>
      ),
    },
  ];

  return (
    <div className={`ledger-body${slot ? ' with-pane' : ''}`}>
      <section className="panel ledger-panel" data-testid="ledger">
        <header className="panel-head">
          <h2>Slot ledger</h2>
          {scope.day ? (
            <nav className="crumbs" aria-label="Ledger level" data-testid="ledger-crumbs">
              <button className="link" onClick={() => onScope({ day: null, hour: null })}>
                every day
              </button>
              <span className="sep">›</span>
              {scope.hour ? (
                <>
                  <button className="link" onClick={() => onScope({ day: scope.day, hour: null })}>
                    {formatDayLabel(scope.day)}
                  </button>
                  <span className="sep">›</span>
                  <span>{scope.hour.slice(11)}:00</span>
                </>
              ) : (
                <span>{formatDayLabel(scope.day)}</span>
              )}
            </nav>
          ) : null}
          <span className="muted small">
            {level === 'days'
              ? `${formatCount(days.items.length)} days · ${formatCount(days.items.reduce((n, b) => n + b.slots, 0))} slots — pick a day to see its hours`
              : level === 'hours'
                ? `${formatCount(hours.items.length)} hours — pick an hour to see its slots`
                : `${formatCount(rows.length)} of ${formatCount(scoped.length)} slots${!scope.day && ledger.from ? ` since ${formatDateTime(ledger.from)}` : ''} · every expected slot, ran or not`}
          </span>
          <span className="spacer" />
          {level === 'slots' ? (
            <div className="seg" role="radiogroup" aria-label="Show">
              {LEDGER_FILTERS.map((f) => (
                <button key={f.id} role="radio" aria-checked={filter === f.id} className={`seg-btn${filter === f.id ? ' active' : ''}`} onClick={() => setFilter(f.id)} title={f.hint} data-testid={`ledger-filter-${f.id}`}>
                  {f.label}
                </button>
              ))}
            </div>
          ) : null}
        </header>
        {level === 'days' ? (
          <BucketTable buckets={days.items} by="day" onPick={(d) => onScope({ day: d, hour: null })} testId="ledger-days" />
        ) : level === 'hours' ? (
          hours.loading && hours.items.length === 0 ? (
            <Spinner label="Counting the hours…" />
          ) : (
            <BucketTable buckets={hours.items} by="hour" onPick={(h) => onScope({ day: scope.day, hour: h })} testId="ledger-hours" />
          )
        ) : ledger.loading && ledger.items.length === 0 ? (
          <Spinner label="Loading the ledger…" />
        ) : (
          <div ref={tableRef}>
            <Table
              columns={slot ? columns.filter((c) => !NARROW_HIDDEN.has(c.key)) : columns}
              rows={rows}
              rowKey={(e) => e.slot}
              rowHeight={48}
              maxHeight={520}
              onRowClick={(e) => onSelect(e.slot === slot ? null : e.slot)}
              selectedKey={slot}
              cursor={cursor}
              rowTone={(e) => (e.disposition === 'scheduled' || e.disposition === 'before_job' || e.disposition === 'skipped_calendar' ? 'dim' : undefined)}
              testId="ledger-table"
              ariaLabel="Slots"
              empty={<EmptyState title={filter === 'past' ? 'No slot was due in this range yet' : 'Nothing to show for this filter'} compact />}
            />
          </div>
        )}
      </section>
      {slot ? <SlotDetail job={job} slot={slot} entry={selected} onApprove={setApproving} onClose={() => onSelect(null)} /> : null}
      {approving ? (
        <RunDecisionDialog decision="approve" stoppedByCap={approving.errorClass === 'budget'} onConfirm={(note, budget) => decideRun(approving.id, 'approve', note, budget)} onClose={() => setApproving(null)} />
      ) : null}
    </div>
  );
}

/** The run's log and timeline. */
function RunActivity({ runId, version }: { runId: string; version: string }) {
  return (
    <>
      <ActivitySection {...useActivity(`run:${runId}`, version)} now={useNow(30_000)} />
      <WorkspaceSection {...useWorkspace(`run:${runId}`, version)} />
    </>
  );
}

/** The latest attempt's spend against the run's cap, ticking while it runs. */
function RunSpend({ run }: { run: Run }) {
  return <AttemptSpendRow spend={useAttemptSpend(`run:${run.id}`, `${run.status}:${run.attempt}:${run.updatedAt}`, run.status === 'running')} />;
}

function backfillTone(s: Backfill['status']): string {
  return s === 'done' ? 'done' : s === 'cancelled' ? 'cancelled' : s === 'dispatched' ? 'progress' : s === 'queued' ? 'ready' : 'failed';
}

function SlotDetail({ job, slot, entry, onApprove, onClose }: { job: JobSummary; slot: string; entry: LedgerEntry | null; onApprove: (run: Run) => void; onClose: () => void }) {
  const { getRun, requestBackfill, retryRun } = useActions();
  const [detail, setDetail] = useState<RunDetail | null>(null);
  const [error, setError] = useState<UiError | null>(null);
  const [asking, setAsking] = useState(false);
  const [retrying, setRetrying] = useState(false);
  const runId = entry?.run?.id ?? null;
  const updatedAt = entry?.run?.updatedAt ?? null;
  const zone = job.schedule.timezone ?? 'UTC';
  useEffect(() => {
    if (!runId) return;
    let live = true;
    getRun(runId).then(
      (d) => live && (setDetail(d), setError(null)),
      (e) => live && setError(toUiError(e)),
    );
    return () => {
      live = false;
    };
  }, [runId, updatedAt, getRun]);
  const run = detail && detail.run.id === runId ? detail.run : (entry?.run ?? null);
  const backfills = detail && detail.run.id === runId ? detail.backfills : (entry?.backfills ?? []);
  const done = completingBackfill(backfills);
  const errorView = run ? runErrorView(run) : null;
  const settled = run ? settledWords(run, backfills) : null;
  const retry = async () => {
    if (!run) return;
    setRetrying(true);
    try {
      await retryRun(run);
    } catch {
      // The toast said why.
    } finally {
      setRetrying(false);
    }
  };

  return (
    <aside className="pane" aria-label={`Slot ${slot}`} data-testid="slot-detail">
      <div className="pane-head">
        <h2>
          Slot <span className="mono">{slot}</span>
        </h2>
        <button className="icon-btn" aria-label="Close (Esc)" title="Close (Esc)" onClick={onClose} data-pane-close>
          ×
        </button>
      </div>
      <div className="pane-body">
        {!entry ? (
          <p className="muted">This slot is outside the range shown.</p>
        ) : (
          <>
            <div className="chips">
              <Badge tone={dispositionMeta(entry.disposition).tone} strong>
                {dispositionMeta(entry.disposition).label}
              </Badge>
              {run ? settled ? <span className="small" data-testid="slot-settled">{settled}</span> : <Badge>{run.status}</Badge> : null}
              {run?.held && run.disposition !== 'backfilled' ? <Badge tone="failed">held for review</Badge> : null}
              {run && run.trigger !== 'schedule' ? <Badge tone="ready">{run.trigger.replace('_', ' ')}</Badge> : null}
            </div>
            <div className="actions-row">
              <button className="btn btn-small btn-primary" onClick={() => navigate('why', job.id, { at: entry.at })} data-testid="slot-why">
                Why? Explain this slot
              </button>
              {run && canApproveRun(run) ? (
                <button className="btn btn-small" onClick={() => onApprove(run)} title={withKey('Runs it again with your note for the agent', 'a')} aria-keyshortcuts="a" data-testid="slot-approve">
                  Approve…
                </button>
              ) : null}
              {canRetryRun({ run: run ?? null, backfills }) ? (
                <button className="btn btn-small" disabled={retrying} onClick={() => void retry()} title={withKey('Runs this slot again now, as a new attempt of the same run (its completed steps kept)', 'r')}
                  aria-keyshortcuts="r" data-testid="slot-retry">
                  {retrying ? 'Retrying…' : 'Retry now'}
                </button>
              ) : null}
              {canRequestBackfill(entry) ? (
                <button className="btn btn-small" onClick={() => setAsking(true)} data-testid="slot-backfill">
                  Queue for backfill
                </button>
              ) : null}
              {run ? (
                <button className="btn btn-small btn-ghost" onClick={() => navigate('audit', null, { subject: `run:${run.id}` })}>
                  Audit trail
                </button>
              ) : null}
            </div>
            <dl className="kv">
              <dt>Due</dt>
              <dd>
                {formatInZone(entry.at, zone)} <span className="muted small">{zone}</span>
                <div className="muted small">{formatDateTime(entry.at)} your time</div>
              </dd>
              {!run ? (
                <>
                  <dt>Run</dt>
                  <dd className="muted">{entry.disposition === 'scheduled' ? 'not due yet' : 'no run was recorded for this slot'}</dd>
                </>
              ) : (
                <>
                  <dt>Run</dt>
                  <dd className="mono small wrap">{run.id}</dd>
                  <dt>Attempts</dt>
                  <dd>
                    {run.attempt} · {run.retryCount} retr{run.retryCount === 1 ? 'y' : 'ies'} of {run.maxRetry}
                    {run.nextAttemptAt ? (
                      <div className="muted small">
                        next look <RelativeTime at={run.nextAttemptAt} />
                      </div>
                    ) : null}
                  </dd>
                  <RunSpend run={run} />
                  <dt>Instance</dt>
                  <dd className="mono small wrap" data-testid="slot-instance">
                    {done?.instanceId ? (
                      <>
                        {done.instanceId} <span className="muted small">(backfill #{done.id})</span>
                        {run.instanceId && run.instanceId !== done.instanceId ? <div className="muted small">first attempt: {run.instanceId}</div> : null}
                      </>
                    ) : (
                      (run.instanceId ?? '—')
                    )}
                  </dd>
                  <dt>Version</dt>
                  <dd>v{run.version}{run.version !== job.version ? <span className="muted small"> (job is v{job.version} now)</span> : null}</dd>
                  <dt>Trace id</dt>
                  <dd className="mono small wrap">{run.traceId}</dd>
                  <dt>Idempotency</dt>
                  <dd className="mono small wrap">{run.idempotencyKey}</dd>
                  <dt>Timeline</dt>
                  <dd className="small" data-testid="slot-timeline">
                    {slotTimeline(run, backfills).map((t, i) => (
                      <div key={i}>
                        <LocalTime at={t.at} /> {t.what}
                      </div>
                    ))}
                  </dd>
                  {errorView ? (
                    <>
                      <dt>{errorView.earlier ? 'Earlier error' : 'Last error'}</dt>
                      <dd className={errorView.earlier ? 'muted' : undefined} data-testid="slot-error">
                        {errorView.earlier ? <span className="small">an attempt before the slot succeeded: </span> : run.errorClass ? <Badge tone="failed">{run.errorClass.replace('_', ' ')}</Badge> : null}{' '}
                        <span className="prewrap">{errorView.text}</span>
                      </dd>
                    </>
                  ) : null}
                  {run.covers.length ? (
                    <>
                      <dt>Also covers</dt>
                      <dd className="mono small">{run.covers.join(', ')}</dd>
                    </>
                  ) : null}
                  {run.coveredBy ? (
                    <>
                      <dt>Covered by</dt>
                      <dd className="mono small">{run.coveredBy}</dd>
                    </>
                  ) : null}
                </>
              )}
            </dl>
            {error ? <ErrorBanner error={error} what="Could not load the run" /> : null}
            {run && !detail && !error ? <Spinner label="Loading checks and steps…" /> : null}
            {detail && detail.run.id === runId ? (
              <>
                <h3 className="pane-h3">Steps</h3>
                {detail.steps.length === 0 ? (
                  <p className="muted small">No step checkpoints recorded.</p>
                ) : (
                  <ol className="steps" data-testid="run-steps">
                    {detail.steps.map((s) => (
                      <li key={`${s.step}-${s.attempt}`}>
                        <span className="mono">{s.step}</span> <span className="muted small">attempt {s.attempt} · {formatDateTime(s.at)}{s.ref ? ` · ref ${s.ref}` : ''}</span>
                      </li>
                    ))}
                  </ol>
                )}
                {detail.run.verification ? (
                  <>
                    {/* Done means verified (PROTOCOL §13): Gaffer's own checks of the latest attempt, as the task pane shows them. */}
                    <h3 className="pane-h3">Work checked</h3>
                    <VerificationChecks verification={detail.run.verification} />
                  </>
                ) : null}
                <h3 className="pane-h3">Checks</h3>
                {detail.checks.length === 0 ? (
                  <p className="muted small">No check recorded for this slot.</p>
                ) : (
                  <ul className="checks">
                    {detail.checks.map((c) => (
                      <li key={`${c.layer}-${c.name}`} className="check-item">
                        <div>
                          <Badge tone={LAYER_VERDICT_META[c.verdict].tone}>{LAYER_VERDICT_META[c.verdict].label}</Badge> <strong>{c.name}</strong> <span className="muted small">{c.layer}</span>
                        </div>
                        <div className="small">{c.reason}</div>
                        <div className="muted small">
                          checked {c.count}× · last {formatDateTime(c.at)}
                          {c.changedAt !== c.firstAt ? ` · changed ${formatDateTime(c.changedAt)}` : ''}
                        </div>
                        <Evidence evidence={c.evidence} />
                      </li>
                    ))}
                  </ul>
                )}
                <h3 className="pane-h3">Backfills</h3>
                {detail.backfills.length === 0 ? (
                  <p className="muted small">Never queued for backfill.</p>
                ) : (
                  <ul className="plain-list">
                    {detail.backfills.map((b) => (
                      <li key={b.id} className="small">
                        #{b.id} <Badge tone={backfillTone(b.status)}>{b.status}</Badge> {backfillReasonWords(b.reason)}
                        {b.approval ? ` · approved by ${actorWords(b.approval.by)}` : ''} · {b.attempts} dispatch{b.attempts === 1 ? '' : 'es'}
                        {b.note ? <span className="muted"> · “{b.note}”</span> : null}
                      </li>
                    ))}
                  </ul>
                )}
                {run && run.output !== null && run.output !== undefined ? (
                  <>
                    <h3 className="pane-h3">Output</h3>
                    <pre className="json">{prettyJson(run.output, 20_000)}</pre>
                  </>
                ) : null}
                <RunActivity runId={detail.run.id} version={`${detail.run.status}:${detail.run.attempt}:${detail.run.updatedAt}`} />
              </>
            ) : null}
          </>
        )}
      </div>
      {asking && entry ? (
        <ReasonDialog
          title={`Queue ${slot} for backfill`}
          explain={`The slot goes to the backfill queue of ${job.name}; it runs at the next window (at most ${job.backfillCapPerTick} per tick, oldest first) or when you press Run now.`}
          confirmLabel="Queue it"
          testId="dialog-request-backfill"
          onConfirm={(reason) => requestBackfill(job.id, slot, reason)}
          onClose={() => setAsking(false)}
        />
      ) : null}
    </aside>
  );
}

function BackfillQueue({ jobId }: { jobId: string | null }) {
  const res = useConsole((s) => s.runs.backfills);
  const { backfillAction, refresh } = useActions();
  const [onlyThis, setOnlyThis] = useState(false);
  const [acting, setActing] = useState<{ b: Backfill; action: BackfillAction } | null>(null);
  const items = useMemo(() => (res.data ?? []).filter((b) => !onlyThis || b.jobId === jobId), [res.data, onlyThis, jobId]);
  return (
    <section className="panel" data-testid="backfill-queue">
      <header className="panel-head">
        <h2>Backfill queue</h2>
        <span className="muted small">missed and failed slots, oldest first</span>
        <span className="spacer" />
        {jobId ? (
          <label className="check">
            <input type="checkbox" checked={onlyThis} onChange={(e) => setOnlyThis(e.target.checked)} /> this job only
          </label>
        ) : null}
      </header>
      {res.error ? <ErrorBanner error={res.error} what="Could not load the backfill queue" onRetry={() => void refresh('runs')} /> : null}
      {!res.data ? (
        <Spinner label="Loading…" />
      ) : items.length === 0 ? (
        <p className="muted small">Empty. Slots that miss their window (run-now beyond its tolerance) or fail for good land here; at each new window up to the job’s cap run first, oldest first.</p>
      ) : (
        <ul className="bf-list">
          {items.map((b) => (
            <li key={b.id} className={`bf-item bf-${b.status}`} data-testid={`backfill-${b.id}`}>
              <div className="bf-line1">
                <button className="link" onClick={() => navigate('runs', b.jobId, { slot: b.slot })}>
                  {b.job} <span className="mono">{b.slot}</span>
                </button>
                <Badge tone={backfillTone(b.status)}>{b.status}</Badge>
                <span className="muted small">{backfillReasonWords(b.reason)}</span>
                <span className="spacer" />
                {backfillActions(b).map((a) => (
                  <button key={a} className={`btn btn-small${BACKFILL_ACTION_META[a].danger ? ' btn-danger-quiet' : ''}`} onClick={() => setActing({ b, action: a })} data-testid={`backfill-${a}-${b.id}`}>
                    {BACKFILL_ACTION_META[a].label}
                  </button>
                ))}
              </div>
              <div className="muted small">
                queued <RelativeTime at={b.createdAt} /> · {b.attempts} dispatch{b.attempts === 1 ? '' : 'es'}
                {b.errorClass ? ` · ${b.errorClass.replace('_', ' ')}` : ''}
                {b.lastError ? ` · ${b.lastError}` : ''}
              </div>
            </li>
          ))}
        </ul>
      )}
      {acting ? (
        <ReasonDialog
          title={`${BACKFILL_ACTION_META[acting.action].label} — ${acting.b.job} ${acting.b.slot}`}
          explain={BACKFILL_ACTION_META[acting.action].explain}
          confirmLabel={BACKFILL_ACTION_META[acting.action].label}
          danger={BACKFILL_ACTION_META[acting.action].danger}
          testId={`dialog-backfill-${acting.action}`}
          onConfirm={(reason) => backfillAction(acting.b, acting.action, reason)}
          onClose={() => setActing(null)}
        />
      ) : null}
    </section>
  );
}
