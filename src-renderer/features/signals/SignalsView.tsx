/**
 * Signals: the readiness flags jobs wait for (`data-ready` for `2026-12-01`), with who set them
 * and when; set one by hand or clear it, each with a reason; and which jobs wait on which name.
 */
import { useMemo, useState, type ChangeEvent } from 'react';
import type { Signal } from '../../../src-main/common/model';
import { navigate, useViewRoute } from '../../lib/navigation';
import { Dialog, DialogButtons, ReasonDialog, ReasonField, reasonProblem, useReasonRequired } from '../../components/Dialog';
import { EmptyState, ErrorBanner, Spinner } from '../../components/States';
import { Table, type Column } from '../../components/Table';
import { LocalTime } from '../../components/Time';
import { formatCount, summariseDetail } from '../../lib/format';
import { toUiError, type UiError } from '../../lib/errors';
import { useActions, useConsole, useWatch } from '../../store/react';
import { SIGNALS_MAX } from '../../store/slices/signals';
import { filterSignals, signalWaiters, todayKey, validateSetSignal, type SetSignalForm } from './logic';
import './signals.css';

export function SignalsView() {
  useWatch('signals', 'jobs');
  const route = useViewRoute('signals');
  const list = useConsole((s) => s.signals.list);
  const jobs = useConsole((s) => s.jobs.list.data);
  const { refresh } = useActions();
  const [text, setText] = useState(route.query.q ?? '');
  const [setting, setSetting] = useState<Partial<SetSignalForm> | null>(null);
  const [clearing, setClearing] = useState<Signal | null>(null);
  const waiters = useMemo(() => signalWaiters(jobs ?? []), [jobs]);
  const rows = useMemo(() => filterSignals(list.data?.items ?? [], text), [list.data, text]);
  const names = useMemo(() => [...new Set([...(list.data?.items ?? []).map((s) => s.name), ...waiters.keys()])].sort(), [list.data, waiters]);

  const columns: Column<Signal>[] = [
    { key: 'name', header: 'Signal', width: 'minmax(120px, 1fr)', render: (s) => <span className="mono">{s.name}</span> },
    { key: 'key', header: 'Business key', width: 'minmax(110px, 1fr)', render: (s) => <span className="mono">{s.key}</span> },
    { key: 'at', header: 'Set at (your time)', width: '150px', render: (s) => <LocalTime at={s.setAt} /> },
    { key: 'by', header: 'Set by', width: 'minmax(110px, 1fr)', render: (s) => <span className="mono small ellipsis" title={s.actor}>{s.actor}</span> },
    { key: 'value', header: 'Value', width: 'minmax(90px, 1fr)', showFrom: 820, render: (s) => (s.value === undefined ? <span className="muted">—</span> : <span className="mono small ellipsis">{summariseDetail(s.value, 60)}</span>) },
    {
      key: 'act',
      header: '',
      width: '72px',
      align: 'right',
      render: (s) => (
        <button className="btn btn-small btn-danger-quiet" onClick={() => setClearing(s)} aria-label={`Clear ${s.name} for ${s.key}`} data-testid={`clear-${s.name}-${s.key}`}>
          Clear
        </button>
      ),
    },
  ];

  return (
    <div className="view signals" data-testid="view-signals">
      <div className="toolbar">
        <input className="filter" type="search" data-view-filter placeholder="Filter by name, key or who set it  ( / )" aria-label="Filter signals" value={text} onChange={(e) => setText(e.target.value)} />
        <span className="muted small">{list.data ? `${formatCount(rows.length)} of ${formatCount(list.data.items.length)} signals` : ''}</span>
        <div className="toolbar-right">
          <button className="btn btn-primary" onClick={() => setSetting({})} data-testid="signal-set-open">
            Set a signal
          </button>
        </div>
      </div>
      <div className="signals-body">
        <section className="panel" data-testid="signals-panel">
          <header className="panel-head">
            <h2>Signals set now</h2>
            <span className="muted small">a job waiting on a signal runs once it is set for the slot’s business key</span>
          </header>
          {list.error ? <ErrorBanner error={list.error} what="Could not load the signals" onRetry={() => void refresh('signals')} /> : null}
          {!list.data ? (
            list.error ? null : <Spinner label="Loading signals…" />
          ) : (
            <Table
              columns={columns}
              rows={rows}
              rowKey={(s) => `${s.name}/${s.key}`}
              rowHeight={40}
              testId="signals-table"
              ariaLabel="Signals"
              empty={
                <EmptyState title={text ? 'No signal matches' : 'No signal is set'} compact>
                  Agents and scripts set signals through the API (<code>POST /api/v1/signals</code>); you can set one here too.
                </EmptyState>
              }
            />
          )}
          {list.data?.more ? <p className="small text-warn">Only the first {formatCount(SIGNALS_MAX)} signals are listed; filter to find others.</p> : null}
        </section>
        <section className="panel" data-testid="signal-waiters">
          <header className="panel-head">
            <h2>Jobs that wait on a signal</h2>
          </header>
          {waiters.size === 0 ? (
            <p className="muted small">No job has a signal precondition.</p>
          ) : (
            <ul className="plain-list">
              {[...waiters].map(([name, ws]) => (
                <li key={name} className="small">
                  <span className="mono">{name}</span>
                  <ul className="plain-list">
                    {ws.map((w) => (
                      <li key={w.jobId}>
                        <button className="link" onClick={() => navigate('why', w.jobId)}>
                          {w.job}
                        </button>{' '}
                        <span className="muted">for key {w.key === '{date}' ? 'the slot’s date' : <span className="mono">{w.key}</span>}</span>{' '}
                        <button className="link" onClick={() => setSetting({ name, key: w.key.includes('{') ? todayKey(Date.now()) : w.key })}>
                          set it…<span className="visually-hidden"> ({name} for {w.job})</span>
                        </button>
                      </li>
                    ))}
                  </ul>
                </li>
              ))}
            </ul>
          )}
        </section>
      </div>
      {setting ? <SetSignalDialog initial={setting} names={names} onClose={() => setSetting(null)} /> : null}
      {clearing ? (
        <ClearSignalDialog signal={clearing} onClose={() => setClearing(null)} />
      ) : null}
    </div>
  );
}

function ClearSignalDialog({ signal: s, onClose }: { signal: Signal; onClose: () => void }) {
  const { clearSignal } = useActions();
  return (
    <ReasonDialog
      title={`Clear ${s.name} for ${s.key}`}
      explain={`A job waiting on ${s.name} for ${s.key} will wait again until it is set. Set by ${s.actor}.`}
      confirmLabel="Clear it"
      danger
      testId="dialog-signal-clear"
      onConfirm={(reason) => clearSignal({ name: s.name, key: s.key, reason })}
      onClose={onClose}
    />
  );
}

/** Set (or set again) a signal, with a reason. */
export function SetSignalDialog({ initial, names, onClose }: { initial: Partial<SetSignalForm>; names: string[]; onClose: () => void }) {
  const { setSignal } = useActions();
  const [form, setForm] = useState<SetSignalForm>({ name: initial.name ?? '', key: initial.key ?? todayKey(Date.now()), value: initial.value ?? '' });
  const [reason, setReason] = useState('');
  const [submitted, setSubmitted] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<UiError | null>(null);
  const v = validateSetSignal(form);
  const errors = v.ok ? {} : v.errors;
  const reasonError = reasonProblem(reason, undefined, useReasonRequired());
  const bind = (k: keyof SetSignalForm) => ({
    name: `signal-${k}`,
    value: form[k],
    onChange: (e: ChangeEvent<HTMLInputElement | HTMLTextAreaElement>) => setForm({ ...form, [k]: e.target.value }),
    'aria-invalid': submitted && !!errors[k],
  });
  return (
    <Dialog title="Set a signal" onClose={onClose} testId="dialog-signal-set">
      <form
        className="form"
        noValidate
        onSubmit={async (e) => {
          e.preventDefault();
          setSubmitted(true);
          if (!v.ok || reasonError) return;
          setBusy(true);
          setError(null);
          try {
            await setSignal({ ...v.value, reason: reason.trim() });
            onClose();
          } catch (err) {
            setError(toUiError(err));
            setBusy(false);
          }
        }}
      >
        <div className="field-row">
          <label className="field">
            <span className="field-label">Signal</span>
            <input {...bind('name')} list="known-signals" placeholder="data-ready" data-autofocus={initial.name ? undefined : true} />
            <datalist id="known-signals">
              {names.map((n) => (
                <option key={n} value={n} />
              ))}
            </datalist>
            {submitted && errors.name ? <span className="field-error">{errors.name}</span> : null}
          </label>
          <label className="field">
            <span className="field-label">Business key</span>
            <input {...bind('key')} placeholder="2026-12-01" />
            {submitted && errors.key ? <span className="field-error">{errors.key}</span> : <span className="field-help">usually the date the data is for</span>}
          </label>
        </div>
        <label className="field">
          <span className="field-label">Value (JSON, optional)</span>
          <textarea {...bind('value')} rows={2} className="mono" placeholder='{"rows": 1200}' />
          {submitted && errors.value ? <span className="field-error">{errors.value}</span> : null}
        </label>
        <ReasonField value={reason} onChange={setReason} showError={submitted} rows={2} autoFocus={!!initial.name} />
        {error ? <ErrorBanner error={error} /> : null}
        <DialogButtons onBack={onClose} label="Set signal" busy={busy} busyLabel="Setting…" testId="signal-set-confirm" />
      </form>
    </Dialog>
  );
}
