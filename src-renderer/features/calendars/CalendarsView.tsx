/**
 * Business calendars: the list, and an editor (zone, workdays, holidays, make-up workdays) with
 * validation at the field and `.ics` import (file picker → `calendars.importIcs` with its text;
 * the warnings and counts are shown).
 */
import { useReasonRequired } from '../../components/Dialog';
import { useEffect, useMemo, useRef, useState } from 'react';
import type { IcsImportResult } from '../../../src-main/common/console-api';
import type { BusinessCalendar, JobIssue } from '../../../src-main/common/job-schema';
import { navigate, useViewRoute } from '../../lib/navigation';
import { EmptyState, ErrorBanner, Spinner } from '../../components/States';
import { ZonePicker } from '../../components/ZonePicker';
import { formatBytes, formatDateTime } from '../../lib/format';
import { useDebouncedCall } from '../../lib/use-debounced-call';
import { dateInZone, operatorZone } from '../../lib/zones';
import { toUiError, type UiError } from '../../lib/errors';
import { useActions, useConsole, useWatch } from '../../store/react';
import { Field, FieldIssues, hasError } from '../../components/FormField';
import { WEEKDAYS } from '../../lib/days';
import { dedupeIssues, issuesAt, issuesFromError } from '../../lib/field-issues';
import { stableJson } from '../../lib/format';
import { emptyCalendarForm, formFromCalendar, upcomingDates, validateCalendarForm, type CalendarForm } from './logic';

export function CalendarsView() {
  useWatch('calendars', 'jobs');
  const route = useViewRoute('calendars');
  const res = useConsole((s) => s.calendars.list);
  const { refresh } = useActions();
  const selected = route.param;
  const today = dateInZone(Date.now(), operatorZone());

  if (!res.data) {
    if (res.error) return <ErrorBanner error={res.error} what="Could not load the calendars" onRetry={() => void refresh('calendars')} />;
    return <Spinner label="Loading calendars…" />;
  }
  const current = selected && selected !== 'new' ? (res.data.find((c) => c.id === selected) ?? null) : null;

  return (
    <div className="view calendars" data-testid="view-calendars">
      <div className="toolbar">
        <div className="muted small">
          {res.data.length} calendar{res.data.length === 1 ? '' : 's'} · workdays, holidays and make-up workdays as data, not cron tricks
        </div>
        <div className="toolbar-right">
          <button className="btn btn-primary" onClick={() => navigate('calendars', 'new')} data-testid="new-calendar">
            + New calendar
          </button>
        </div>
      </div>
      <div className="cal-grid">
        <div className="cal-list" data-testid="calendar-list">
          {res.data.length === 0 ? (
            <EmptyState title="No calendars yet" compact>
              A job with a calendar runs on its workdays only: on a holiday its slot is skipped or moved to the next workday (by policy). Create one, then import the official holidays from an{' '}
              <code>.ics</code> file.
            </EmptyState>
          ) : (
            res.data.map((c) => <CalendarCard key={c.id} c={c} active={c.id === selected} today={today} />)
          )}
        </div>
        {selected === 'new' ? (
          <div className="cal-editor">
            <CalendarEditor key="new" calendar={null} />
          </div>
        ) : current ? (
          <div className="cal-editor">
            <CalendarEditor key={current.id} calendar={current} />
            <IcsImport key={`ics-${current.id}`} calendar={current} />
          </div>
        ) : selected ? (
          <ErrorBanner error={{ code: 'not_found', message: `unknown calendar ${selected}` }} />
        ) : (
          <div className="panel muted small cal-hint">Pick a calendar to edit it, or create a new one.</div>
        )}
      </div>
    </div>
  );
}

function CalendarCard({ c, active, today }: { c: BusinessCalendar; active: boolean; today: string }) {
  const jobs = useConsole((s) => s.jobs.list.data);
  const users = (jobs ?? []).filter((j) => j.calendar === c.id);
  const next = upcomingDates(c, today);
  return (
    <button className={`cal-card${active ? ' selected' : ''}`} onClick={() => navigate('calendars', c.id)} data-testid={`calendar-${c.id}`}>
      <div className="cal-card-head">
        <strong>{c.name}</strong> <span className="muted small mono">{c.id}</span>
      </div>
      <div className="small muted">
        {c.timezone} · {WEEKDAYS.filter((d) => c.workdays.includes(d.iso)).map((d) => d.short).join(' ') || 'no weekly workdays'}
      </div>
      <div className="small">
        {c.holidays.length} holiday{c.holidays.length === 1 ? '' : 's'} · {c.extraWorkdays.length} make-up workday{c.extraWorkdays.length === 1 ? '' : 's'} · v{c.version}
        {users.length ? ` · used by ${users.map((j) => j.name).join(', ')}` : ''}
      </div>
      {next.length ? (
        <div className="small muted">
          next:{' '}
          {next.map((n) => (
            <span key={n.day} className={n.kind === 'holiday' ? 'text-warn' : 'text-info'}>
              {n.day} {n.kind === 'holiday' ? 'holiday' : 'make-up'}{' '}
            </span>
          ))}
        </div>
      ) : null}
    </button>
  );
}

function CalendarEditor({ calendar }: { calendar: BusinessCalendar | null }) {
  const { validateCalendar, saveCalendar } = useActions();
  const isNew = calendar === null;
  const reasonRequired = useReasonRequired();
  const [form, setForm] = useState<CalendarForm>(() => (calendar ? formFromCalendar(calendar) : emptyCalendarForm(operatorZone())));
  const [initial, setInitial] = useState(form);
  const [reason, setReason] = useState('');
  const [submitted, setSubmitted] = useState(false);
  const [busy, setBusy] = useState(false);
  const [saveError, setSaveError] = useState<UiError | null>(null);
  const [saveIssues, setSaveIssues] = useState<JobIssue[]>([]);
  const [server, setServer] = useState<{ key: string; issues: JobIssue[] } | null>(null);
  const v = useMemo(() => validateCalendarForm(form), [form]);
  const key = useMemo(() => stableJson(v.calendar), [v.calendar]);
  useDebouncedCall(key, v.calendar as unknown as Record<string, unknown>, validateCalendar, (k, r) => setServer(r.ok ? { key: k, issues: r.value.issues } : null));
  // The server's word on a field counts where the form found nothing there (no double messages).
  const clientFields = new Set(v.issues.filter((i) => i.severity === 'error').map((i) => i.field));
  const serverIssues = server && server.key === key ? server.issues.filter((i) => !clientFields.has(i.field)) : [];
  const issues = dedupeIssues([...v.issues, ...serverIssues, ...saveIssues]).filter(
    (i) => submitted || !(isNew && ((i.field === 'id' && form.id === '') || (i.field === 'name' && form.name === ''))),
  );
  const dirty = stableJson(form) !== stableJson(initial);
  // A newer version arrived (an import, another window): follow it unless you are editing.
  const initialRef = useRef(initial);
  useEffect(() => {
    if (!calendar) return;
    const f = formFromCalendar(calendar);
    const prev = initialRef.current;
    if (stableJson(prev) === stableJson(f)) return;
    setForm((now) => (stableJson(now) === stableJson(prev) ? f : now));
    initialRef.current = f;
    setInitial(f);
  }, [calendar]);
  const patch = (p: Partial<CalendarForm>) => {
    setForm((f) => ({ ...f, ...p }));
    setSaveIssues([]);
  };

  const save = async () => {
    setSubmitted(true);
    if (!v.valid || issues.some((i) => i.severity === 'error')) return;
    if (!isNew && reasonRequired && !reason.trim()) return;
    setBusy(true);
    setSaveError(null);
    try {
      const c = await saveCalendar({ create: isNew, calendar: v.calendar, ...(reason.trim() ? { reason: reason.trim() } : {}) });
      setReason('');
      navigate('calendars', c.id);
    } catch (e) {
      const err = toUiError(e);
      setSaveError(err);
      setSaveIssues(issuesFromError(err.detail).map((i) => ({ ...i, field: i.field.replace(/^calendar\./, '') })));
    } finally {
      setBusy(false);
    }
  };

  const holidays = v.calendar.holidays.length;
  const extra = v.calendar.extraWorkdays.length;

  return (
    <>
      <section className="panel" data-testid="calendar-editor">
        <header className="panel-head">
          <h2>{isNew ? 'New calendar' : `Edit ${calendar!.name}`}</h2>
          {calendar ? (
            <span className="muted small">
              version {calendar.version} · updated {formatDateTime(calendar.updatedAt)} by {calendar.updatedBy}
            </span>
          ) : null}
        </header>
        <form
          className="form form-flat"
          noValidate
          onSubmit={(e) => {
            e.preventDefault();
            void save();
          }}
        >
          <div className="field-row">
            <Field markField={false} label="Id" field="id" issues={issues} help={isNew ? 'jobs refer to it by this id' : 'fixed'}>
              <input name="cal-id" value={form.id} disabled={!isNew} placeholder="cn-2026" onChange={(e) => patch({ id: e.target.value })} aria-invalid={hasError(issues, 'id')} />
            </Field>
            <Field markField={false} label="Name" field="name" issues={issues}>
              <input name="cal-name" value={form.name} placeholder="China 2026" onChange={(e) => patch({ name: e.target.value })} aria-invalid={hasError(issues, 'name')} />
            </Field>
          </div>
          <Field markField={false} label="Time zone" field="timezone" issues={issues} help="the zone its dates are meant in (a job in another zone reads them as its own dates, with a warning)">
            <ZonePicker name="cal-timezone" value={form.timezone} onChange={(z) => patch({ timezone: z })} invalid={hasError(issues, 'timezone')} />
          </Field>
          <div className="field" data-field="workdays">
            <span className="field-label">Workdays of the week</span>
            <div className="days" role="group" aria-label="Workdays">
              {WEEKDAYS.map((d) => (
                <button
                  key={d.iso}
                  type="button"
                  aria-pressed={form.workdays.includes(d.iso)}
                  className={`day-btn${form.workdays.includes(d.iso) ? ' active' : ''}`}
                  onClick={() => patch({ workdays: form.workdays.includes(d.iso) ? form.workdays.filter((x) => x !== d.iso) : [...form.workdays, d.iso].sort((a, b) => a - b) })}
                >
                  {d.short}
                </button>
              ))}
            </div>
            <FieldIssues markField={false} issues={issuesAt(issues, 'workdays')} />
          </div>
          <div className="field-row">
            <Field markField={false} label={`Holidays (${holidays})`} field="holidays" issues={issues} help="YYYY-MM-DD, one per line: no slot on these days">
              <textarea name="cal-holidays" className="mono" rows={8} value={form.holidays} placeholder={'2026-10-01\n2026-10-02'} onChange={(e) => patch({ holidays: e.target.value })} aria-invalid={hasError(issues, 'holidays')} />
            </Field>
            <Field markField={false} label={`Make-up workdays (${extra})`} field="extraWorkdays" issues={issues} help="weekend days that are working days (after a long holiday)">
              <textarea name="cal-extra" className="mono" rows={8} value={form.extraWorkdays} placeholder="2026-10-10" onChange={(e) => patch({ extraWorkdays: e.target.value })} aria-invalid={hasError(issues, 'extraWorkdays')} />
            </Field>
          </div>
          <label className="field">
            <span className="field-label">
              Reason {isNew || !reasonRequired ? <span className="muted small">(optional)</span> : <span className="req">required</span>}
            </span>
            <input name="cal-reason" value={reason} placeholder={isNew ? 'Why this calendar' : 'Why this change (audited)'} onChange={(e) => setReason(e.target.value)} aria-invalid={submitted && !isNew && reasonRequired && !reason.trim()} />
            {submitted && !isNew && reasonRequired && !reason.trim() ? <span className="field-error">A reason is required: calendar changes move every job that uses it.</span> : null}
          </label>
          {saveError && !saveIssues.length ? <ErrorBanner error={saveError} what="Not saved" /> : null}
          <div className="dialog-actions">
            <button type="button" className="btn" onClick={() => navigate('calendars')}>
              Cancel
            </button>
            <button type="submit" className="btn btn-primary" disabled={busy || (!isNew && !dirty)} data-testid="save-calendar">
              {busy ? 'Saving…' : isNew ? 'Create calendar' : 'Save'}
            </button>
          </div>
        </form>
      </section>
    </>
  );
}

function IcsImport({ calendar }: { calendar: BusinessCalendar }) {
  const { importIcs } = useActions();
  const [file, setFile] = useState<{ name: string; size: number; text: string } | null>(null);
  const [mode, setMode] = useState<'merge' | 'replace'>('merge');
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<IcsImportResult | null>(null);
  const [error, setError] = useState<UiError | null>(null);
  const [touched, setTouched] = useState(false);
  const reasonRequired = useReasonRequired();
  const reasonMissing = reasonRequired && !reason.trim();
  const resultRef = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (result) resultRef.current?.scrollIntoView({ block: 'nearest' });
  }, [result]);

  return (
    <section className="panel" data-testid="ics-import">
      <header className="panel-head">
        <h2>Import an .ics file</h2>
        <span className="muted small">every event is a holiday, except events titled make-up or working day (also the Chinese terms), which are make-up workdays</span>
      </header>
      <div className="form form-flat">
        <div className="field-row">
          <label className="field">
            <span className="field-label">File</span>
            <input
              type="file"
              accept=".ics,text/calendar"
              name="ics-file"
              data-testid="ics-file"
              onChange={async (e) => {
                const f = e.target.files?.[0];
                setResult(null);
                setError(null);
                if (!f) return setFile(null);
                setFile({ name: f.name, size: f.size, text: await f.text() });
              }}
            />
            {file ? <span className="field-help">{file.name} · {formatBytes(file.size)}</span> : null}
          </label>
          <label className="field">
            <span className="field-label">Mode</span>
            <select value={mode} onChange={(e) => setMode(e.target.value as 'merge' | 'replace')} name="ics-mode">
              <option value="merge">merge into the lists</option>
              <option value="replace">replace both lists</option>
            </select>
          </label>
        </div>
        <label className="field">
          <span className="field-label">{reasonRequired ? <>Reason <span className="req">required</span></> : 'Reason (optional)'}</span>
          <input name="ics-reason" value={reason} placeholder="e.g. official 2026 holidays" onChange={(e) => setReason(e.target.value)} aria-invalid={touched && reasonMissing} />
          {touched && reasonMissing ? <span className="field-error">A reason is required: it is written to the audit log with the import.</span> : null}
        </label>
        {error ? <ErrorBanner error={error} what="Import refused" /> : null}
        <div className="dialog-actions">
          <button
            type="button"
            className="btn btn-primary"
            disabled={!file || busy}
            data-testid="ics-import-button"
            onClick={async () => {
              setTouched(true);
              if (!file || reasonMissing) return;
              setBusy(true);
              setError(null);
              try {
                const r = await importIcs(calendar.id, file.text, mode, reason.trim());
                setResult(r);
                setReason('');
                setTouched(false);
              } catch (e) {
                setError(toUiError(e));
              } finally {
                setBusy(false);
              }
            }}
          >
            {busy ? 'Importing…' : 'Import'}
          </button>
        </div>
        {result ? (
          <div className="callout callout-ok" data-testid="ics-result" role="status" ref={resultRef}>
            <div>
              <strong>
                Imported: +{result.added.holidays} holiday{result.added.holidays === 1 ? '' : 's'}, +{result.added.extraWorkdays} make-up workday{result.added.extraWorkdays === 1 ? '' : 's'}
              </strong>{' '}
              — now {result.calendar.holidays.length} holidays and {result.calendar.extraWorkdays.length} make-up workdays (version {result.calendar.version}).
              {result.warnings.length ? (
                <ul className="warn-list" data-testid="ics-warnings">
                  {result.warnings.slice(0, 20).map((w, i) => (
                    <li key={i} className="text-warn small">
                      ⚠ {w}
                    </li>
                  ))}
                  {result.warnings.length > 20 ? <li className="muted small">…and {result.warnings.length - 20} more</li> : null}
                </ul>
              ) : (
                <span className="muted small"> No warnings.</span>
              )}
            </div>
          </div>
        ) : null}
      </div>
    </section>
  );
}
