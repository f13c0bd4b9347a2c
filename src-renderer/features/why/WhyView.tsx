/**
 * "Why didn't it run?": pick a job and an instant (in the job's zone). The answer leads with the
 * verdict and the layer that held the slot back, with the fix at hand (set the missing signal,
 * resume the job, turn the kill switch off, queue the slot for backfill, run it), then each
 * layer's verdict in the order the runner evaluates them — time → preconditions → execution
 * conditions → overlap / existing run — with the reason and the evidence in the operator's local
 * time (ISO UTC on hover), plus the run record. Past instants are answered from recorded facts;
 * future ones are forecasts, and say so.
 */
import { useEffect, useMemo, useState } from 'react';
import type { Explanation, JobSummary, LayerItem } from '../../../src-main/common/job-schema';
import { navigate, replaceRoute, useViewRoute } from '../../lib/navigation';
import { Badge } from '../../components/Badge';
import { EmptyState, ErrorBanner, Spinner } from '../../components/States';
import { LocalTime, RelativeTime, TimeText } from '../../components/Time';
import { formatInZone, localInZone, offsetLabel, operatorZone } from '../../lib/zones';
import { toUiError, type UiError } from '../../lib/errors';
import { useActions, useConsole, useWatch } from '../../store/react';
import { Evidence } from '../../components/Evidence';
import { JobSelect } from '../../components/JobSelect';
import { dispositionMeta, LAYER_VERDICT_META, runErrorView } from '../../lib/run-words';
import { blockingLayer, instantOf, layersOf, quickPicks, verdictOf, type LayerView } from './logic';
import { WhyFixes } from './WhyFixes';
import './why.css';

export function WhyView() {
  useWatch('jobs');
  const route = useViewRoute('why');
  const jobs = useConsole((s) => s.jobs.list);
  const { explainJob, refresh } = useActions();
  const jobId = route.param;
  const job = jobs.data?.find((j) => j.id === jobId || j.name === jobId) ?? null;
  const zone = job?.schedule.timezone ?? 'UTC';
  const at = route.query.at ?? null;
  const [answer, setAnswer] = useState<{ key: string; e: Explanation } | null>(null);
  const [error, setError] = useState<UiError | null>(null);
  const [loading, setLoading] = useState(false);
  // Bumped after a fix from the answer itself: ask again (not every fix reloads the job list).
  const [asked, setAsked] = useState(0);

  useEffect(() => {
    if (!jobId && jobs.data && jobs.data.length > 0) replaceRoute('why', jobs.data[0]!.id);
  }, [jobId, jobs.data]);

  const key = `${job?.id ?? ''}@${at ?? 'now'}`;
  // Live: a run or job change re-asks (the answer for a past slot can still change while it runs).
  // Both invalidate 'jobs', and every reload of the list brings a fresh `job` object.
  useEffect(() => {
    if (!job) return;
    let live = true;
    setLoading(true);
    explainJob(job.id, at ?? undefined).then(
      (e) => {
        if (!live) return;
        setAnswer({ key, e });
        setError(null);
        setLoading(false);
      },
      (e) => {
        if (!live) return;
        setError(toUiError(e));
        setLoading(false);
      },
    );
    return () => {
      live = false;
    };
  }, [job, at, explainJob, asked]);

  const [local, setLocal] = useState('');
  useEffect(() => {
    setLocal(at ? localInZone(Date.parse(at), zone) : localInZone(Date.now(), zone));
  }, [at, zone]);
  const picks = useMemo(() => quickPicks(Date.now(), zone, job?.nextSlot?.at ?? null), [zone, job?.nextSlot?.at]);

  const ask = (l: string) => {
    if (!job) return;
    const iso = instantOf(l, zone);
    if (iso) navigate('why', job.id, { at: iso });
  };

  if (!jobs.data) {
    if (jobs.error) return <ErrorBanner error={jobs.error} what="Could not load the jobs" onRetry={() => void refresh('jobs')} />;
    return <Spinner label="Loading jobs…" />;
  }
  if (jobs.data.length === 0) {
    return (
      <div className="view" data-testid="view-why">
        <EmptyState title="No jobs yet" action={<button className="btn btn-primary" onClick={() => navigate('jobs', 'new')}>Create a job</button>}>
          Pick a job and an instant to see each layer’s verdict: time, preconditions, execution conditions, and the run record.
        </EmptyState>
      </div>
    );
  }
  const e = answer && answer.key === key ? answer.e : null;

  return (
    <div className="view why" data-testid="view-why">
      <form
        className="toolbar why-picker"
        onSubmit={(ev) => {
          ev.preventDefault();
          ask(local);
        }}
      >
        <JobSelect jobs={jobs.data} value={job?.id ?? null} onPick={(id) => navigate('why', id, at ? { at } : {})} testId="why-job" />
        <label className="inline-field">
          <span className="muted small">At</span>
          <input type="datetime-local" name="why-at" value={local} onChange={(ev) => setLocal(ev.target.value)} onBlur={() => local && ask(local)} data-testid="why-at" />
          <span className="muted small" title="the instant is read in the job's time zone">
            {zone} ({offsetLabel(Date.now(), zone)})
          </span>
        </label>
        <button type="submit" className="btn btn-small btn-primary">
          Explain
        </button>
        <div className="btn-group" role="group" aria-label="Quick picks">
          {picks.map((p) => (
            <button key={p.id} type="button" className="btn btn-small" onClick={() => (p.id === 'now' ? job && navigate('why', job.id) : ask(p.local))} data-testid={`why-pick-${p.id}`}>
              {p.label}
            </button>
          ))}
        </div>
        {loading ? <span className="spinner spinner-small" role="status" aria-label="loading" /> : null}
      </form>

      {error ? <ErrorBanner error={error} what="Could not explain" /> : null}
      {!e ? !error ? <Spinner label="Asking the scheduler…" /> : null : <ExplanationView e={e} zone={zone} job={job!} onFixed={() => setAsked((n) => n + 1)} />}
    </div>
  );
}

function ExplanationView({ e, zone, job, onFixed }: { e: Explanation; zone: string; job: JobSummary; onFixed: () => void }) {
  const v = verdictOf(e);
  const layers = layersOf(e);
  const blocker = blockingLayer(layers);
  const me = operatorZone();
  return (
    <>
      <section className={`panel why-head why-${v.tone}`} data-testid="why-verdict" data-kind={v.kind}>
        <div className="why-title-row">
          <Badge tone={e.tense === 'past' ? 'neutral' : 'ready'} strong>
            {e.tense === 'past' ? (e.run ? 'RECORDED FACTS' : 'PAST — NO RECORD') : 'FORECAST'}
          </Badge>
          <h2 className="why-title">{v.title}</h2>
        </div>
        {blocker ? (
          <p className="why-blocker" data-testid="why-blocker" data-layer={blocker.layer.key}>
            Held back at step {blocker.layer.step}, <strong>{blocker.layer.title}</strong>:{' '}
            <TimeText text={blocker.item ? `${blocker.item.name} — ${blocker.item.reason}` : blocker.layer.reason} />
          </p>
        ) : null}
        <WhyFixes e={e} job={job} onDone={onFixed} />
        <p className="why-note">{v.note}</p>
        <p className="why-outcome" data-testid="why-outcome">
          <TimeText text={e.outcome} />
        </p>
        <dl className="kv kv-tight why-facts">
          <dt>Asked about</dt>
          <dd>
            {formatInZone(e.at, zone)} <span className="muted small">{zone}</span> · {formatInZone(e.at, me)} <span className="muted small">your time</span>
          </dd>
          <dt>Slot</dt>
          <dd>
            {e.slot ? (
              <>
                <span className="mono">{e.slot.slot}</span> due {formatInZone(e.slot.at, zone)} · window {formatInZone(e.slot.window.opensAt, zone)} – {formatInZone(e.slot.window.closesAt, zone)}
                {e.slot.window.latestStart !== e.slot.window.closesAt ? <span className="muted small"> (+ tolerance until {formatInZone(e.slot.window.latestStart, zone)})</span> : null}{' '}
                <button className="link small" onClick={() => navigate('runs', e.jobId, { slot: e.slot!.slot })}>
                  in the ledger
                </button>
              </>
            ) : (
              <span className="muted">none at or before this instant</span>
            )}
          </dd>
          {e.nextSlot ? (
            <>
              <dt>Next slot</dt>
              <dd>
                <span className="mono">{e.nextSlot.slot}</span> {formatInZone(e.nextSlot.at, zone)}{' '}
                <button className="link small" onClick={() => navigate('why', e.jobId, { at: e.nextSlot!.at })} data-testid="why-next-slot">
                  explain it
                </button>
              </dd>
            </>
          ) : null}
          <dt>Job now</dt>
          <dd data-testid="why-job-state">
            v{e.version} · {e.jobState.enabled ? 'enabled' : <strong className="text-bad">disabled</strong>}
            {e.jobState.paused ? (
              <span className="text-warn">
                {' '}
                · paused by <strong>{e.jobState.paused.by}</strong> <RelativeTime at={e.jobState.paused.at} />: “{e.jobState.paused.reason}”
              </span>
            ) : null}
            {e.jobState.killSwitch.on ? (
              <span className="text-bad">
                {' '}
                · kill switch ON (by {e.jobState.killSwitch.by}: “{e.jobState.killSwitch.reason}”)
              </span>
            ) : null}
          </dd>
          <dt>Answered</dt>
          <dd className="muted small">
            <LocalTime at={e.now} />
          </dd>
        </dl>
      </section>

      <ol className="layers" data-testid="why-layers">
        {layers.map((l) => (
          <LayerCard key={l.key} layer={l} e={e} />
        ))}
      </ol>

      {e.run ? (
        <section className="panel" data-testid="why-run">
          <header className="panel-head">
            <h2>Run record</h2>
            <Badge tone={dispositionMeta(e.run.disposition).tone}>{dispositionMeta(e.run.disposition).label}</Badge>
            <span className="muted small mono">{e.run.id}</span>
          </header>
          <dl className="kv kv-tight">
            <dt>Status</dt>
            <dd>
              {e.run.status} · attempt {e.run.attempt} · {e.run.retryCount}/{e.run.maxRetry} retries · trigger {e.run.trigger}
            </dd>
            <dt>Instance</dt>
            <dd className="mono small">{e.run.instanceId ?? '—'}</dd>
            <dt>Version</dt>
            <dd>v{e.run.version}</dd>
            <dt>Trace</dt>
            <dd className="mono small">{e.run.traceId}</dd>
            {runErrorView(e.run) ? (
              <>
                <dt>{runErrorView(e.run)!.earlier ? 'Earlier error' : 'Last error'}</dt>
                <dd className={runErrorView(e.run)!.earlier ? 'muted' : undefined}>
                  {runErrorView(e.run)!.earlier ? 'an attempt before the slot succeeded: ' : e.run.errorClass ? <Badge tone="failed">{e.run.errorClass}</Badge> : null} {runErrorView(e.run)!.text}
                </dd>
              </>
            ) : null}
            <dt>Steps</dt>
            <dd>{e.steps.length ? e.steps.map((s) => s.step).join(' → ') : <span className="muted">none recorded</span>}</dd>
            <dt>Backfills</dt>
            <dd>{e.backfills.length ? e.backfills.map((b) => `#${b.id} ${b.status} (${b.reason})`).join('; ') : <span className="muted">none</span>}</dd>
          </dl>
          {e.trail.length ? (
            <>
              <h3 className="pane-h3">Audit trail</h3>
              <ul className="trail">
                {e.trail.map((t) => (
                  <li key={t.id}>
                    <span className="muted small mono">
                      <LocalTime at={t.at} />
                    </span>{' '}
                    <span className="mono">{t.type}</span> <span className="muted small">by {t.actor}</span>
                  </li>
                ))}
              </ul>
            </>
          ) : null}
        </section>
      ) : null}
    </>
  );
}

function LayerCard({ layer: l, e }: { layer: LayerView; e: Explanation }) {
  const m = LAYER_VERDICT_META[l.verdict];
  return (
    <li className={`layer tone-${m.tone}`} data-testid={`layer-${l.key}`} data-verdict={l.verdict}>
      <div className="layer-step" aria-hidden>
        {l.step}
      </div>
      <div className="layer-body">
        <div className="layer-head">
          <h3>{l.title}</h3>
          <Badge tone={m.tone} strong>
            {m.label}
          </Badge>
          {e.tense === 'future' && l.key !== 'time' ? <span className="muted small">as things stand now</span> : null}
        </div>
        <p className="layer-reason">
          <TimeText text={l.reason} />
        </p>
        {l.items.length === 1 && l.items[0]!.reason === l.reason ? (
          // One item saying what the layer says: only its evidence.
          <Evidence evidence={l.items[0]!.evidence} />
        ) : l.items.length ? (
          <ul className="layer-items">
            {l.items.map((i) => (
              <LayerItemRow key={i.name} item={i} />
            ))}
          </ul>
        ) : null}
      </div>
    </li>
  );
}

function LayerItemRow({ item: i }: { item: LayerItem }) {
  const m = LAYER_VERDICT_META[i.verdict];
  return (
    <li className="layer-item" data-testid={`layer-item-${i.name}`}>
      <div className="layer-item-head">
        <Badge tone={m.tone}>{m.label}</Badge> <strong className="mono">{i.name}</strong>
        {i.count ? (
          <span className="muted small">
            {' '}
            checked {i.count}× · last <LocalTime at={i.at ?? null} />
            {i.changedAt && i.firstAt && i.changedAt !== i.firstAt ? (
              <>
                {' '}
                · verdict changed <LocalTime at={i.changedAt} />
              </>
            ) : null}
          </span>
        ) : null}
      </div>
      <div className="small">
        <TimeText text={i.reason} />
      </div>
      <Evidence evidence={i.evidence} />
    </li>
  );
}
