/**
 * Runs: the slot ledger of one job — a calendar heat-map of expected vs actual slots over the
 * last weeks, every slot with its disposition, a run detail pane (checks with evidence, steps,
 * backfills) — and the backfill queue of every job with its actions.
 */
import { ActivitySection } from '../../components/logs/ActivitySection';
import { useActivity } from '../../store/use-log-source';
import { useEffect, useMemo, useState } from 'react';
import type { RunDetail } from '../../../src-main/common/console-api';
import type { Backfill, BackfillAction, JobSummary, LedgerEntry } from '../../../src-main/common/job-schema';
import { navigate, replaceRoute, useViewRoute } from '../../lib/navigation';
import { Badge } from '../../components/Badge';
import { PauseNote } from '../../components/PauseNote';
import { ReasonDialog } from '../../components/Dialog';
import { EmptyState, ErrorBanner, Spinner } from '../../components/States';
import { Table, type Column } from '../../components/Table';
import { RelativeTime } from '../../components/Time';
import { formatCount, formatDateTime, prettyJson, shortHash } from '../../lib/format';
import { useNow } from '../../lib/now';
import { dateInZone, formatInZone } from '../../lib/zones';
import { toUiError, type UiError } from '../../lib/errors';
import { DEFAULT_LEDGER_WEEKS } from '../../store/slices/runs';
import { useActions, useConsole, useWatch } from '../../store/react';
import { Evidence } from '../../components/Evidence';
import { JobSelect } from '../../components/JobSelect';
import { dispositionMeta, LAYER_VERDICT_META } from '../../lib/run-words';
import { describeSchedule } from '../../lib/schedule-words';
import { backfillActions, canRequestBackfill, filterLedger, HEAT_META, HEAT_ORDER, heatGrid, heatTitle, heatTotals, LEDGER_FILTERS, type HeatClass, type LedgerFilter } from './logic';

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
  const { selectLedgerJob, refresh } = useActions();
  const jobId = route.param;
  const weeks = Number(route.query.weeks) || DEFAULT_LEDGER_WEEKS;
  const slot = route.query.slot ?? null;

  useEffect(() => {
    if (!jobId && jobs.data && jobs.data.length > 0) replaceRoute('runs', jobs.data[0]!.id);
  }, [jobId, jobs.data]);
  useEffect(() => {
    selectLedgerJob(jobId, weeks);
  }, [jobId, weeks, selectLedgerJob]);

  if (!jobs.data) {
    if (jobs.error) return <ErrorBanner error={jobs.error} what="Could not load the jobs" onRetry={() => void refresh('jobs')} />;
    return <Spinner label="Loading jobs…" />;
  }
  const job = jobs.data.find((j) => j.id === jobId || j.name === jobId) ?? null;
  /** Route query keeping the weeks shown (`w`, default the current ones) unless they are the default. */
  const q = (extra: Record<string, string>, w = weeks) => ({ ...(w !== DEFAULT_LEDGER_WEEKS ? { weeks: String(w) } : {}), ...extra });

  return (
    <div className="view runs" data-testid="view-runs">
      <div className="toolbar">
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
            {job ? <HeatMapPanel job={job} weeks={weeks} /> : <div className="panel" />}
            <BackfillQueue jobId={job?.id ?? null} />
          </div>
          {job ? <Ledger job={job} slot={slot} onSelect={(s) => navigate('runs', job.id, q(s ? { slot: s } : {}))} /> : null}
        </>
      )}
    </div>
  );
}

function HeatMapPanel({ job, weeks }: { job: JobSummary; weeks: number }) {
  const ledger = useConsole((s) => s.runs.ledger);
  const now = useNow(60_000);
  const zone = job.schedule.timezone ?? 'UTC';
  const today = dateInZone(now, zone);
  const grid = useMemo(() => heatGrid(ledger.items, zone, today, weeks), [ledger.items, zone, today, weeks]);
  const totals = useMemo(() => heatTotals(ledger.items), [ledger.items]);
  return (
    <section className="panel" data-testid="heatmap-panel">
      <header className="panel-head">
        <h2>Expected vs actual</h2>
        <span className="muted small">one cell per day in {zone}; the worst slot of the day sets the colour</span>
        {ledger.loading ? <span className="spinner spinner-small" aria-label="loading" /> : null}
      </header>
      {ledger.error ? <ErrorBanner error={ledger.error} what="Could not load the ledger" /> : null}
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
            {col.map((d) => (
              <span
                key={d.day}
                className={`heat-cell heat-${d.cls}${d.day === today ? ' heat-today' : ''}${d.future ? ' heat-future' : ''}`}
                title={heatTitle(d)}
                data-day={d.day}
                data-heat={d.cls}
                role="img"
                aria-label={heatTitle(d)}
              >
                {d.slots > 1 ? <span className="heat-n">{d.slots > 99 ? '99+' : d.slots}</span> : null}
              </span>
            ))}
          </div>
        ))}
      </div>
      <div className="heat-legend">
        {HEAT_ORDER.filter((c) => c !== 'none').map((c: HeatClass) => (
          <span key={c} className="heat-key" title={HEAT_META[c].hint}>
            <span className={`heat-cell heat-${c}`} aria-hidden /> {HEAT_META[c].label}
            {totals[c] ? <strong> {formatCount(totals[c])}</strong> : null}
          </span>
        ))}
      </div>
      {ledger.truncated ? <p className="small text-warn">More slots than shown: pick fewer weeks to see them all.</p> : null}
    </section>
  );
}

function Ledger({ job, slot, onSelect }: { job: JobSummary; slot: string | null; onSelect: (slot: string | null) => void }) {
  const ledger = useConsole((s) => s.runs.ledger);
  const [filter, setFilter] = useState<LedgerFilter>('past');
  const now = useNow(60_000);
  const zone = job.schedule.timezone ?? 'UTC';
  const rows = useMemo(() => filterLedger(ledger.items, filter, now), [ledger.items, filter, now]);
  const selected = slot ? (ledger.items.find((e) => e.slot === slot) ?? null) : null;

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
      render: (e) => (
        <div className="two-line">
          <span>
            <Badge tone={dispositionMeta(e.disposition).tone}>{dispositionMeta(e.disposition).label}</Badge>
          </span>
          <span className="muted small">{e.run ? `${e.run.status}${e.run.trigger !== 'schedule' ? ` · ${e.run.trigger.replace('_', ' ')}` : ''}` : e.expected === null ? 'not in the schedule now' : 'no run'}</span>
        </div>
      ),
    },
    { key: 'att', header: 'Att.', width: '44px', align: 'right', title: 'attempts (dispatches)', render: (e) => (e.run ? <span className="mono">{e.run.attempt}</span> : <span className="muted">—</span>) },
    { key: 'inst', header: 'Instance', width: 'minmax(90px, 0.8fr)', render: (e) => (e.run?.instanceId ? <span className="mono small" title={e.run.instanceId}>{shortHash(e.run.instanceId, 14)}</span> : <span className="muted">—</span>) },
    { key: 'ver', header: 'Ver.', width: '40px', align: 'right', showFrom: 1000, render: (e) => (e.run ? <span className="mono">v{e.run.version}</span> : <span className="muted">—</span>) },
    { key: 'trace', header: 'Trace', width: '92px', showFrom: 1000, render: (e) => (e.run ? <span className="mono small" title={e.run.traceId}>{shortHash(e.run.traceId, 10)}</span> : <span className="muted">—</span>) },
    {
      key: 'err',
      header: 'Error',
      width: 'minmax(140px, 1.4fr)',
      render: (e) =>
        e.run?.lastError ? (
          <div className="two-line" title={e.run.lastError}>
            <span>{e.run.errorClass ? <Badge tone={e.run.errorClass === 'needs_human' || e.run.errorClass === 'fatal' ? 'failed' : 'blocked'}>{e.run.errorClass.replace('_', ' ')}</Badge> : null}</span>
            <span className="small">{e.run.lastError}</span>
          </div>
        ) : (
          <span className="muted">—</span>
        ),
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
          <span className="muted small">
            {formatCount(rows.length)} of {formatCount(ledger.items.length)} slots{ledger.from ? ` since ${formatDateTime(ledger.from)}` : ''} · every expected slot, ran or not
          </span>
          <span className="spacer" />
          <div className="seg" role="radiogroup" aria-label="Show">
            {LEDGER_FILTERS.map((f) => (
              <button key={f.id} role="radio" aria-checked={filter === f.id} className={`seg-btn${filter === f.id ? ' active' : ''}`} onClick={() => setFilter(f.id)} title={f.hint} data-testid={`ledger-filter-${f.id}`}>
                {f.label}
              </button>
            ))}
          </div>
        </header>
        {ledger.loading && ledger.items.length === 0 ? (
          <Spinner label="Loading the ledger…" />
        ) : (
          <Table
            columns={slot ? columns.filter((c) => !NARROW_HIDDEN.has(c.key)) : columns}
            rows={rows}
            rowKey={(e) => e.slot}
            rowHeight={48}
            maxHeight={520}
            onRowClick={(e) => onSelect(e.slot === slot ? null : e.slot)}
            selectedKey={slot}
            rowTone={(e) => (e.disposition === 'scheduled' || e.disposition === 'before_job' || e.disposition === 'skipped_calendar' ? 'dim' : undefined)}
            testId="ledger-table"
            ariaLabel="Slots"
            empty={<EmptyState title={filter === 'past' ? 'No slot was due in this range yet' : 'Nothing to show for this filter'} compact />}
          />
        )}
      </section>
      {slot ? <SlotDetail job={job} slot={slot} entry={selected} onClose={() => onSelect(null)} /> : null}
    </div>
  );
}

/** The run's log and timeline. */
function RunActivity({ runId, version }: { runId: string; version: string }) {
  return <ActivitySection {...useActivity(`run:${runId}`, version)} now={useNow(30_000)} />;
}

function backfillTone(s: Backfill['status']): string {
  return s === 'done' ? 'done' : s === 'cancelled' ? 'cancelled' : s === 'dispatched' ? 'progress' : s === 'queued' ? 'ready' : 'failed';
}

function SlotDetail({ job, slot, entry, onClose }: { job: JobSummary; slot: string; entry: LedgerEntry | null; onClose: () => void }) {
  const { getRun, requestBackfill } = useActions();
  const [detail, setDetail] = useState<RunDetail | null>(null);
  const [error, setError] = useState<UiError | null>(null);
  const [asking, setAsking] = useState(false);
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
              {run ? <Badge>{run.status}</Badge> : null}
              {run?.held ? <Badge tone="failed">held for review</Badge> : null}
              {run && run.trigger !== 'schedule' ? <Badge tone="ready">{run.trigger.replace('_', ' ')}</Badge> : null}
            </div>
            <div className="actions-row">
              <button className="btn btn-small btn-primary" onClick={() => navigate('why', job.id, { at: entry.at })} data-testid="slot-why">
                Why? Explain this slot
              </button>
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
                  <dt>Instance</dt>
                  <dd className="mono small wrap">{run.instanceId ?? '—'}</dd>
                  <dt>Version</dt>
                  <dd>v{run.version}{run.version !== job.version ? <span className="muted small"> (job is v{job.version} now)</span> : null}</dd>
                  <dt>Trace id</dt>
                  <dd className="mono small wrap">{run.traceId}</dd>
                  <dt>Idempotency</dt>
                  <dd className="mono small wrap">{run.idempotencyKey}</dd>
                  <dt>Timeline</dt>
                  <dd className="small">
                    claimed {formatDateTime(run.createdAt)}
                    {run.triggeredAt ? <div>triggered {formatDateTime(run.triggeredAt)}</div> : null}
                    {run.startedAt ? <div>started {formatDateTime(run.startedAt)}</div> : null}
                    {run.finishedAt ? <div>finished {formatDateTime(run.finishedAt)}</div> : null}
                  </dd>
                  {run.lastError ? (
                    <>
                      <dt>Last error</dt>
                      <dd>
                        {run.errorClass ? <Badge tone="failed">{run.errorClass.replace('_', ' ')}</Badge> : null} <span className="prewrap">{run.lastError}</span>
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
                        #{b.id} <Badge tone={backfillTone(b.status)}>{b.status}</Badge> {b.reason} · {b.attempts} dispatch{b.attempts === 1 ? '' : 'es'}
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
        <label className="check">
          <input type="checkbox" checked={onlyThis} onChange={(e) => setOnlyThis(e.target.checked)} /> this job only
        </label>
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
                <span className="muted small">{b.reason}</span>
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
