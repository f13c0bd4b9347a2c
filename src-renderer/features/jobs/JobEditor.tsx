/**
 * The job editor: every field of the job record, validated at the field as you type (the shared
 * zod schema and contradiction checks, then the server's schedule checks via `jobs.validate`),
 * a live preview of the next slots (`jobs.preview` of the unsaved spec: calendar- and DST-aware),
 * and each policy explained in plain words next to it. Ctrl/Cmd+S saves, Esc leaves. The
 * "Rehearse" tab walks the unsaved settings through five scenarios (`jobs.rehearse`), again as
 * the operator edits; creating a job that was not rehearsed as it stands offers to rehearse first.
 *
 * 1. The status panel lists every issue there is (errors and warnings), each under the label of
 *    its section and field; the counts it shows are the counts of that list. A field shows its
 *    own issues once touched (name and role start empty, so they wait for a touch or a save).
 * 2. "Valid" means no issue of severity error from the same validator the save runs.
 * 3. Leaving with unsaved changes asks first, however the operator leaves (use-leave-guard.ts).
 * 4. The rehearsal follows the settings as they stand (debounced; longer behind the settings tab,
 *    where only the tab's count of scenarios that end badly shows it); an answer for older
 *    settings is shown dimmed until the new one comes. Creating a job offers a rehearsal unless
 *    the operator has looked at the rehearsal of exactly these settings.
 *
 * This file is the layout; each concern is a hook beside it, with its own test: the record and
 * its form (use-job-form), validation (use-job-validation: 1, 2), the slot preview
 * (use-slot-preview), the rehearsal (use-job-rehearsal: 4), the save (use-job-save), the policy
 * words (use-policy-words) and the keys (use-editor-keys); leaving is use-leave-guard (3).
 */
import { useEffect, useRef, useState, type KeyboardEvent as ReactKeyboardEvent, type ReactNode } from 'react';
import { BACKOFF_LABELS, CALENDAR_POLICY_LABELS, DST_GAP_LABELS, jobFieldLabel, jobSectionLabel, MISSED_WINDOW_LABELS, OVERLAP_LABELS } from '../../../src-main/common/job-labels';
import { MISSED_WINDOW_POLICIES, OVERLAP_POLICIES, PLACEHOLDER_HELP, type JobIssue, type PreconditionInput, type PreconditionKind, type PreviewResult } from '../../../src-main/common/job-schema';
import type { RehearsalResult } from '../../../src-main/common/rehearsal';
import { navigate } from '../../lib/navigation';
import { Badge } from '../../components/Badge';
import { Dialog, useReasonRequired } from '../../components/Dialog';
import { ErrorBanner, Spinner } from '../../components/States';
import { ZonePicker } from '../../components/ZonePicker';
import { formatDurationS } from '../../lib/format';
import { formatInZone, operatorZone } from '../../lib/zones';
import type { UiError } from '../../lib/errors';
import type { JobActionKind } from '../../store/slices/jobs';
import { useActions, useConsole, useWatch } from '../../store/react';
import { Field, FieldIssues, hasError } from '../../components/FormField';
import { WEEKDAYS } from '../../lib/days';
import { issuesAt } from '../../lib/field-issues';
import { describeSchedule } from '../../lib/schedule-words';
import { JobActionDialog } from './JobActionDialog';
import { JobSpendSection } from './JobSpendSection';
import { RehearsePanel } from './RehearsePanel';
import { emptyPrecondition, type JobForm, type MaintenanceForm, type PreconditionForm } from './form';
import { preconditionSentence, previewNote } from './logic';
import { useEditorKeys } from './use-editor-keys';
import { useJobForm } from './use-job-form';
import { useJobDoneWhen } from './use-job-done-when';
import { DoneWhenSection } from '../../components/done-when/DoneWhenSection';
import { useJobRehearsal } from './use-job-rehearsal';
import { useJobSave } from './use-job-save';
import { useJobValidation } from './use-job-validation';
import { useLeaveGuard } from './use-leave-guard';
import { usePolicyWords } from './use-policy-words';
import { useSlotPreview } from './use-slot-preview';

const KINDS: Array<{ kind: PreconditionKind; label: string }> = [
  { kind: 'signal', label: 'Signal' },
  { kind: 'file', label: 'File' },
  { kind: 'http', label: 'HTTP' },
  { kind: 'command', label: 'Command' },
  { kind: 'agent', label: 'Agent precheck' },
];

export function JobEditor({ jobId }: { jobId: string | null }) {
  useWatch('calendars', 'roles');
  const { getJob, validateJob, previewJob, rehearseJob, saveJob } = useActions();
  const calendars = useConsole((s) => s.calendars.list.data);
  const roles = useConsole((s) => s.roles.data);
  const shell = useConsole((s) => s.shell);
  const isNew = jobId === null;
  const reasonRequired = useReasonRequired();
  const [acting, setActing] = useState<JobActionKind | null>(null);
  const [tab, setTab] = useState<'settings' | 'rehearse'>('settings');
  const rootRef = useRef<HTMLDivElement>(null);

  // One hook per concern: the record and its form, validation, the slot preview, the rehearsal, the save.
  const { job, loadError, load, form, patch, dirty, reset } = useJobForm(jobId, getJob);
  const validation = useJobValidation(form, isNew, validateJob);
  const { cv, specKey, allIssues, shown, errors, warnings, serverPending, touch, submitted, saveError } = validation;
  const kindAt = (i: number) => form.preconditions[i]?.kind;
  const preview = useSlotPreview(cv.spec, previewJob);
  const rehearsal = useJobRehearsal({ spec: cv.spec, errors, isNew, tab, rehearseJob });
  const { rehearseSpec, rehearsedNow } = rehearsal;
  const guard = useLeaveGuard(dirty, shell);
  const { sentences, zone } = usePolicyWords(cv.spec, form, calendars);

  const focusField = (field: string) => {
    const root = rootRef.current;
    if (!root) return;
    for (let f = field; f; f = f.includes('.') ? f.slice(0, f.lastIndexOf('.')) : '') {
      const el = root.querySelector<HTMLElement>(`[data-field="${CSS.escape(f)}"] :is(input, select, textarea, button)`);
      if (el) {
        el.focus();
        el.scrollIntoView({ block: 'center', behavior: 'smooth' });
        return;
      }
    }
  };

  const { reason, setReason, busy, savedVersion, offerRehearsal, setOfferRehearsal, save } = useJobSave({
    isNew,
    job,
    validation,
    rehearsalSeen: rehearsal.seen,
    saveJob,
    showError: (field) => {
      setTab('settings');
      focusField(field);
    },
    showReason: () => document.querySelector<HTMLElement>('[data-testid="save-reason"]')?.focus(),
    onCreated: (j) => {
      guard.release();
      navigate('jobs', j.id);
    },
    onUpdated: reset,
  });
  useEditorKeys(save);

  // A tab starts at its top (the settings are a long page; the rehearsal would open scrolled away).
  useEffect(() => {
    rootRef.current?.scrollIntoView?.({ block: 'start' });
  }, [tab]);

  if (!isNew && !job) {
    if (loadError) return <ErrorBanner error={loadError} what={`Could not load job ${jobId}`} onRetry={load} />;
    return <Spinner label="Loading the job…" />;
  }

  const roleNames = [...new Set([...(roles ?? []).map((r) => r.role), ...(job ? [job.role] : [])])].sort();

  return (
    <div className="view job-editor" data-testid="view-job-editor" ref={rootRef}>
      <div className="toolbar">
        <button className="btn btn-small btn-ghost" onClick={() => navigate('jobs')} title="Back to the list (Esc)">
          ← Jobs
        </button>
        <h2 className="editor-title">{isNew ? 'New job' : job!.name}</h2>
        {job ? (
          <>
            <Badge tone="neutral" title="bumped on every edit; stored on each run">
              <span data-testid="job-version">version {job.version}</span>
            </Badge>
            {job.paused ? (
              <Badge tone="blocked" title={job.paused.reason}>
                paused by {job.paused.by}
              </Badge>
            ) : null}
            {!job.enabled ? <Badge tone="cancelled">disabled</Badge> : null}
          </>
        ) : null}
        {savedVersion !== null && job && savedVersion === job.version ? (
          <span className="text-ok small" data-testid="saved-note">
            ✓ saved as version {savedVersion}
          </span>
        ) : null}
        {job ? (
          <div className="toolbar-right">
            <button className="btn btn-small" onClick={() => setActing('trigger')} disabled={!job.enabled} data-testid="editor-trigger">
              Trigger now
            </button>
            <button className="btn btn-small" onClick={() => setActing(job.paused ? 'resume' : 'pause')} data-testid="editor-pause">
              {job.paused ? 'Resume' : 'Pause'}
            </button>
            <button className="btn btn-small btn-ghost" onClick={() => navigate('runs', job.id)}>
              Runs ▦
            </button>
            <button className="btn btn-small btn-ghost" onClick={() => navigate('why', job.id)}>
              Why? ?
            </button>
          </div>
        ) : null}
      </div>

      <div className="tabs editor-tabs" role="tablist" aria-label="Job editor">
        <button type="button" role="tab" id="editor-tab-settings" aria-controls="editor-panel-settings" aria-selected={tab === 'settings'} className={`tab${tab === 'settings' ? ' active' : ''}`} onClick={() => setTab('settings')} onKeyDown={tabKeys} data-testid="tab-settings">
          Settings
        </button>
        <button type="button" role="tab" id="editor-tab-rehearse" aria-controls="editor-panel-rehearse" aria-selected={tab === 'rehearse'} className={`tab${tab === 'rehearse' ? ' active' : ''}`} onClick={() => setTab('rehearse')} onKeyDown={tabKeys} data-testid="tab-rehearse">
          Rehearse
          {rehearsedNow ? <span className="tab-count" title="scenarios that end badly with these settings">{badCount(rehearsal.result!) ? `${badCount(rehearsal.result!)} end badly` : 'all end well'}</span> : null}
        </button>
      </div>

      {tab === 'rehearse' ? (
        <div role="tabpanel" id="editor-panel-rehearse" aria-labelledby="editor-tab-rehearse">
          <RehearsePanel
            result={rehearsal.result}
            error={rehearsal.error}
            loading={rehearsal.loading}
            stale={!rehearsedNow}
            blocked={rehearseSpec ? null : 'Fix the settings marked in red first: a job with errors cannot be rehearsed.'}
            onRetry={rehearsal.retry}
          />
          <div className="dialog-actions rehearse-actions">
            <button type="button" className="btn" onClick={() => setTab('settings')}>
              ← Back to the settings
            </button>
            {isNew ? (
              <button type="button" className="btn btn-primary" onClick={() => void save({ skipRehearsalOffer: true })} disabled={busy || !rehearseSpec} data-testid="rehearse-create">
                {busy ? 'Saving…' : 'Create job'}
              </button>
            ) : null}
          </div>
        </div>
      ) : null}

      <div className="editor-grid" role="tabpanel" id="editor-panel-settings" aria-labelledby="editor-tab-settings" hidden={tab !== 'settings'}>
        <form
          className="editor-form"
          noValidate
          onSubmit={(e) => {
            e.preventDefault();
            void save();
          }}
          aria-label="Job settings"
        >
          <Section title="Job" hint="The name is part of every idempotency key (job + slot); the role picks which agents receive it.">
            <div className="field-row">
              <Field issues={shown} field="name" label={jobFieldLabel('name')}>
                <input name="name" value={form.name} autoFocus={isNew} placeholder="daily-report" onChange={(e) => patch({ name: e.target.value })} onBlur={() => touch('name')} aria-invalid={hasError(shown, 'name')} spellCheck={false} />
              </Field>
              <Field issues={shown} field="role" label={jobFieldLabel('role')} help="agents of this role receive the trigger">
                <input name="role" list="job-roles" value={form.role} placeholder="reporter" onChange={(e) => patch({ role: e.target.value })} onBlur={() => touch('role')} aria-invalid={hasError(shown, 'role')} spellCheck={false} />
                <datalist id="job-roles">
                  {roleNames.map((r) => (
                    <option key={r} value={r} />
                  ))}
                </datalist>
              </Field>
            </div>
            <Field issues={shown} field="description" label={jobFieldLabel('description')}>
              <input name="description" value={form.description} placeholder="What it does, for whoever reads this next" onChange={(e) => patch({ description: e.target.value })} />
            </Field>
            {isNew ? (
              <label className="check-row" data-field="enabled">
                <input type="checkbox" name="enabled" checked={form.enabled} onChange={(e) => patch({ enabled: e.target.checked })} /> Enabled: start scheduling as soon as it is saved
              </label>
            ) : (
              <p className="small muted">
                {job!.enabled ? 'Enabled' : 'Disabled'} — enabling and disabling are actions with a reason in the job list. Last edited by {job!.updatedBy}.
              </p>
            )}
          </Section>

          <Section title="Schedule" sentence={sentences?.schedule} testId="section-schedule">
            <div className="group" data-field="schedule">
              <div className="seg" role="radiogroup" aria-label="Schedule kind">
                {(['cron', 'interval'] as const).map((k) => (
                  <button key={k} type="button" role="radio" aria-checked={form.scheduleKind === k} className={`seg-btn${form.scheduleKind === k ? ' active' : ''}`} onClick={() => patch({ scheduleKind: k, ...(k === 'cron' && !form.timezone ? { timezone: operatorZone() } : {}) })}>
                    {k === 'cron' ? 'Cron + time zone' : 'Interval'}
                  </button>
                ))}
              </div>
              <FieldIssues issues={issuesAt(shown, 'schedule')} />
            </div>
            <div className="field-row">
              {form.scheduleKind === 'cron' ? (
                <Field issues={shown} field="schedule.cron" label={jobFieldLabel('schedule.cron')} help={form.cron.trim() ? describeSchedule({ cron: form.cron }, form.calendar) : 'minute hour day-of-month month day-of-week'}>
                  <input name="cron" className="mono" value={form.cron} placeholder="0 9 * * 1-5" onChange={(e) => patch({ cron: e.target.value })} aria-invalid={hasError(shown, 'schedule.cron')} spellCheck={false} />
                </Field>
              ) : (
                <Field issues={shown} field="schedule.everyS" label={jobFieldLabel('schedule.everyS')} help={Number(form.everyS) > 0 ? describeSchedule({ everyS: Number(form.everyS) }, form.calendar) : 'slots are multiples of it since 1970 (stable across restarts)'}>
                  <input name="everyS" inputMode="numeric" value={form.everyS} onChange={(e) => patch({ everyS: e.target.value })} aria-invalid={hasError(shown, 'schedule.everyS')} />
                </Field>
              )}
              <Field issues={shown} field="schedule.timezone" label={jobFieldLabel('schedule.timezone')} help={form.scheduleKind === 'interval' ? 'optional: local dates for calendars and slot keys' : 'slots are computed in this zone; instants are stored in UTC'}>
                <ZonePicker name="timezone" value={form.timezone} onChange={(z) => patch({ timezone: z })} invalid={hasError(shown, 'schedule.timezone')} allowEmpty={form.scheduleKind === 'interval'} />
              </Field>
            </div>
          </Section>

          <Section title="Execution window" sentence={sentences?.window}>
            <div className="group" data-field="window">
              <label className="check-row">
                <input type="checkbox" name="windowOn" checked={form.windowOn} onChange={(e) => patch({ windowOn: e.target.checked })} /> Only start inside a daily window (local time of the job’s zone)
              </label>
              <FieldIssues issues={issuesAt(shown, 'window')} />
            </div>
            {form.windowOn ? (
              <div className="field-row">
                <Field issues={shown} field="window.start" label={jobFieldLabel('window.start')}>
                  <input name="windowStart" className="mono" value={form.windowStart} placeholder="09:00" onChange={(e) => patch({ windowStart: e.target.value })} aria-invalid={hasError(shown, 'window.start')} />
                </Field>
                <Field issues={shown} field="window.end" label={jobFieldLabel('window.end')} help="24:00 for the end of the day">
                  <input name="windowEnd" className="mono" value={form.windowEnd} placeholder="10:00" onChange={(e) => patch({ windowEnd: e.target.value })} aria-invalid={hasError(shown, 'window.end')} />
                </Field>
                <Field issues={shown} field="window.recheckEveryS" label={jobFieldLabel('window.recheckEveryS')} help={Number(form.recheckEveryS) > 0 ? formatDurationS(Number(form.recheckEveryS)) : undefined}>
                  <input name="recheckEveryS" inputMode="numeric" value={form.recheckEveryS} onChange={(e) => patch({ recheckEveryS: e.target.value })} aria-invalid={hasError(shown, 'window.recheckEveryS')} />
                </Field>
              </div>
            ) : null}
          </Section>

          <Section title="Business calendar" sentence={sentences?.calendar}>
            <div className="field-row">
              <Field issues={shown} field="calendar" label={jobFieldLabel('calendar')} help={<button type="button" className="link small" onClick={() => navigate('calendars')}>manage calendars</button>}>
                <select name="calendar" value={form.calendar} onChange={(e) => patch({ calendar: e.target.value, ...(e.target.value ? {} : { calendarPolicy: '' }) })} aria-invalid={hasError(shown, 'calendar')}>
                  <option value="">none: every day counts</option>
                  {(calendars ?? []).map((c) => (
                    <option key={c.id} value={c.id}>
                      {c.name} ({c.id}, {c.timezone})
                    </option>
                  ))}
                  {form.calendar && !(calendars ?? []).some((c) => c.id === form.calendar) ? <option value={form.calendar}>{form.calendar} (unknown)</option> : null}
                </select>
              </Field>
              <Field issues={shown} field="calendarPolicy" label={jobFieldLabel('calendarPolicy')}>
                <select name="calendarPolicy" value={form.calendarPolicy} onChange={(e) => patch({ calendarPolicy: e.target.value as JobForm['calendarPolicy'] })} aria-invalid={hasError(shown, 'calendarPolicy')}>
                  <option value="">default ({CALENDAR_POLICY_LABELS.skip})</option>
                  <option value="skip">{CALENDAR_POLICY_LABELS.skip}</option>
                  <option value="next_workday">{CALENDAR_POLICY_LABELS.next_workday}</option>
                </select>
              </Field>
            </div>
            {issuesAt(shown, 'calendar.timezone').length ? (
              <div className="group" data-field="calendar.timezone">
                <FieldIssues issues={issuesAt(shown, 'calendar.timezone')} />
              </div>
            ) : null}
          </Section>

          <Section title="Preconditions" sentence={sentences?.preconditions} testId="section-preconditions">
            {form.preconditions.map((p, i) => (
              <PreconditionCard
                key={i}
                index={i}
                p={p}
                count={form.preconditions.length}
                issues={shown}
                sentence={cv.spec.preconditions ? preconditionSentence((cv.spec.preconditions as PreconditionInput[])[i]!, form.role || 'the job’s') : ''}
                onChange={(np) => patch({ preconditions: form.preconditions.map((x, k) => (k === i ? np : x)) })}
                onRemove={() => patch({ preconditions: form.preconditions.filter((_, k) => k !== i) })}
                onMove={(d) => {
                  const list = [...form.preconditions];
                  const [x] = list.splice(i, 1);
                  list.splice(i + d, 0, x!);
                  patch({ preconditions: list });
                }}
              />
            ))}
            <div className="add-row">
              <span className="muted small">Add a check:</span>
              {KINDS.map((k) => (
                <button key={k.kind} type="button" className="btn btn-small" onClick={() => patch({ preconditions: [...form.preconditions, emptyPrecondition(k.kind)] })} data-testid={`add-precondition-${k.kind}`}>
                  + {k.label}
                </button>
              ))}
            </div>
            <p className="small muted">
              Placeholders in paths, URLs, arguments and signal keys: <code>{PLACEHOLDER_HELP}</code> — resolved per slot in the job’s zone, so “yesterday” is right across month and year ends.
            </p>
          </Section>

          <Section title="Execution conditions" sentence={sentences?.executionConditions}>
            <div className="field-row">
              <Field issues={shown} field="executionConditions.maxConcurrentPerRole" label={jobFieldLabel('executionConditions.maxConcurrentPerRole')} help="most runs of this role at once (all its jobs); empty = no limit">
                <input name="maxConcurrentPerRole" inputMode="numeric" value={form.maxConcurrentPerRole} placeholder="no limit" onChange={(e) => patch({ maxConcurrentPerRole: e.target.value })} aria-invalid={hasError(shown, 'executionConditions.maxConcurrentPerRole')} />
              </Field>
              <div className="field" />
            </div>
            <div className="field-label">Maintenance windows (nothing of this job is dispatched inside them)</div>
            {form.maintenanceWindows.map((m, i) => (
              <MaintenanceRow
                key={i}
                index={i}
                m={m}
                issues={shown}
                onChange={(nm) => patch({ maintenanceWindows: form.maintenanceWindows.map((x, k) => (k === i ? nm : x)) })}
                onRemove={() => patch({ maintenanceWindows: form.maintenanceWindows.filter((_, k) => k !== i) })}
              />
            ))}
            <div className="add-row">
              <button type="button" className="btn btn-small" onClick={() => patch({ maintenanceWindows: [...form.maintenanceWindows, { start: '01:00', end: '02:00', days: [] }] })}>
                + Maintenance window
              </button>
            </div>
          </Section>

          <Section title="Retry" sentence={sentences?.retry}>
            {issuesAt(shown, 'retry').length ? (
              <div className="group" data-field="retry">
                <FieldIssues issues={issuesAt(shown, 'retry')} />
              </div>
            ) : null}
            <div className="field-row">
              <Field issues={shown} field="retry.maxAttempts" label={jobFieldLabel('retry.maxAttempts')} help="including the first">
                <input name="retryMaxAttempts" inputMode="numeric" value={form.retryMaxAttempts} onChange={(e) => patch({ retryMaxAttempts: e.target.value })} aria-invalid={hasError(shown, 'retry.maxAttempts')} />
              </Field>
              <Field issues={shown} field="retry.firstDelayS" label={jobFieldLabel('retry.firstDelayS')} help={Number(form.retryFirstDelayS) >= 0 ? formatDurationS(Number(form.retryFirstDelayS)) : undefined}>
                <input name="retryFirstDelayS" inputMode="numeric" value={form.retryFirstDelayS} onChange={(e) => patch({ retryFirstDelayS: e.target.value })} aria-invalid={hasError(shown, 'retry.firstDelayS')} />
              </Field>
              <Field issues={shown} field="retry.backoff" label={jobFieldLabel('retry.backoff')}>
                <select name="retryBackoff" value={form.retryBackoff} onChange={(e) => patch({ retryBackoff: e.target.value as JobForm['retryBackoff'] })}>
                  <option value="fixed">{BACKOFF_LABELS.fixed}</option>
                  <option value="exponential">{BACKOFF_LABELS.exponential}</option>
                </select>
              </Field>
            </div>
          </Section>

          <Section title="Missed window" sentence={sentences?.missedWindow} testId="section-missed">
            <div className="field-row">
              <Field issues={shown} field="missedWindow" label={jobFieldLabel('missedWindow')}>
                <select name="missedWindow" value={form.missedWindow} onChange={(e) => patch({ missedWindow: e.target.value as JobForm['missedWindow'] })} aria-invalid={hasError(shown, 'missedWindow')}>
                  {MISSED_WINDOW_POLICIES.map((p) => (
                    <option key={p} value={p}>
                      {MISSED_WINDOW_LABELS[p]}
                    </option>
                  ))}
                </select>
              </Field>
              <Field issues={shown} field="toleranceS" label={jobFieldLabel('toleranceS')} help={form.missedWindow === 'run_now' ? (Number(form.toleranceS) > 0 ? `up to ${formatDurationS(Number(form.toleranceS))} late` : 'required for “run now”') : 'only for “run now”'}>
                <input name="toleranceS" inputMode="numeric" value={form.toleranceS} placeholder={form.missedWindow === 'run_now' ? '1800' : '—'} onChange={(e) => patch({ toleranceS: e.target.value })} aria-invalid={hasError(shown, 'toleranceS')} />
              </Field>
            </div>
          </Section>

          <Section title="Overlap" sentence={sentences?.overlap}>
            <Field issues={shown} field="overlap" label={jobFieldLabel('overlap')}>
              <select name="overlap" value={form.overlap} onChange={(e) => patch({ overlap: e.target.value as JobForm['overlap'] })} aria-invalid={hasError(shown, 'overlap')}>
                {OVERLAP_POLICIES.map((p) => (
                  <option key={p} value={p}>
                    {OVERLAP_LABELS[p]}
                  </option>
                ))}
              </select>
            </Field>
          </Section>

          <Section title="Daylight saving time" sentence={sentences?.dstGapPolicy}>
            <Field issues={shown} field="dstGapPolicy" label={jobFieldLabel('dstGapPolicy')}>
              <select name="dstGapPolicy" value={form.dstGapPolicy} onChange={(e) => patch({ dstGapPolicy: e.target.value as JobForm['dstGapPolicy'] })}>
                <option value="shift_forward">{DST_GAP_LABELS.shift_forward}</option>
                <option value="skip">{DST_GAP_LABELS.skip}</option>
              </select>
            </Field>
          </Section>

          <Section title="Backfill and deadline" sentence={sentences ? `${sentences.backfillCapPerTick} ${sentences.runTimeoutS}` : undefined}>
            <div className="field-row">
              <Field issues={shown} field="backfillCapPerTick" label={jobFieldLabel('backfillCapPerTick')} help="0 = only by hand">
                <input name="backfillCapPerTick" inputMode="numeric" value={form.backfillCapPerTick} onChange={(e) => patch({ backfillCapPerTick: e.target.value })} aria-invalid={hasError(shown, 'backfillCapPerTick')} />
              </Field>
              <Field issues={shown} field="runTimeoutS" label={jobFieldLabel('runTimeoutS')} help={Number(form.runTimeoutS) > 0 ? formatDurationS(Number(form.runTimeoutS)) : undefined}>
                <input name="runTimeoutS" inputMode="numeric" value={form.runTimeoutS} onChange={(e) => patch({ runTimeoutS: e.target.value })} aria-invalid={hasError(shown, 'runTimeoutS')} />
              </Field>
            </div>
          </Section>

          <JobSpendSection form={form} patch={patch} issues={shown} jobId={job?.id ?? null} version={job?.version ?? null} />

          <Section title="Payload" sentence={sentences?.payload}>
            <Field issues={shown} field="payload" label={jobFieldLabel('payload')}>
              <textarea name="payload" className="mono" rows={5} value={form.payload} placeholder='{"report": "daily", "channel": "#ops"}' onChange={(e) => patch({ payload: e.target.value })} aria-invalid={hasError(shown, 'payload')} spellCheck={false} />
            </Field>
          </Section>

          <JobDoneWhen key={job?.id ?? 'new'} verify={form.verify} patch={patch} />
        </form>

        <aside className="editor-side">
          <section className="panel" data-testid="editor-status">
            <header className="panel-head">
              <h2>{isNew ? 'Create' : 'Save'}</h2>
              {errors.length ? (
                <Badge tone="failed">
                  <span data-testid="problem-count">{errors.length}</span> problem{errors.length === 1 ? '' : 's'}
                </Badge>
              ) : serverPending ? (
                <span className="muted small">checking…</span>
              ) : (
                <Badge tone="done">valid</Badge>
              )}
              {warnings.length ? (
                <Badge tone="blocked" title="the job can be saved; these are worth a look">
                  <span data-testid="warning-count">{warnings.length}</span> warning{warnings.length === 1 ? '' : 's'}
                </Badge>
              ) : null}
              {!isNew ? <span className="muted small">{dirty ? `saving makes version ${job!.version + 1}` : 'no changes'}</span> : null}
            </header>
            {allIssues.length ? (
              <ul className="issue-list" data-testid="issue-summary">
                {[...errors, ...warnings].map((i) => (
                  <li key={`${i.field}:${i.message}`} className={i.severity === 'error' ? 'text-bad' : 'text-warn'} data-severity={i.severity}>
                    <button type="button" className="link small" onClick={() => focusField(i.field)} title="go to the setting">
                      {issuePlace(i.field, kindAt)}
                    </button>
                    {': '}
                    {i.severity === 'warning' ? '⚠ ' : ''}
                    {i.message}
                  </li>
                ))}
              </ul>
            ) : null}
            <label className="field">
              <span className="field-label">
                Reason {isNew || !reasonRequired ? <span className="muted small">(optional)</span> : <span className="req">required</span>}
              </span>
              <input
                name="reason"
                data-testid="save-reason"
                value={reason}
                placeholder={isNew ? 'Why this job exists' : 'Why this change (audited)'}
                onChange={(e) => setReason(e.target.value)}
                aria-invalid={submitted && !isNew && reasonRequired && !reason.trim()}
              />
              {submitted && !isNew && reasonRequired && !reason.trim() ? <span className="field-error">A reason is required: it is written to the audit log with the new version.</span> : null}
            </label>
            {saveError && saveError.key === specKey && !saveError.issues.length ? <ErrorBanner error={saveError.error} what="Not saved" /> : null}
            {saveError && saveError.key === specKey && saveError.issues.length ? <div className="field-error">Not saved: {saveError.error.message}</div> : null}
            <div className="dialog-actions">
              <button type="button" className="btn" onClick={() => navigate('jobs')} title="Esc">
                Cancel
              </button>
              <button type="button" className="btn btn-primary" onClick={() => void save()} disabled={busy || (!isNew && !dirty)} data-testid="save-job" title="Ctrl/⌘ S">
                {busy ? 'Saving…' : isNew ? 'Create job' : 'Save'} <kbd>Ctrl S</kbd>
              </button>
            </div>

          </section>

          <section className="panel" data-testid="job-preview">
            <header className="panel-head">
              <h2>Next slots</h2>
              <span className="muted small">
                {zone}
                {form.windowOn ? ` · window ${form.windowStart}–${form.windowEnd}` : ''}
              </span>
              {preview.loading ? <span className="spinner spinner-small" role="status" aria-label="updating" /> : null}
            </header>
            <PreviewList preview={preview.result} error={preview.error} zone={zone} stale={preview.stale} />
          </section>
        </aside>
      </div>
      {offerRehearsal ? (
        <Dialog title="Rehearse it first?" onClose={() => setOfferRehearsal(false)} testId="rehearse-offer">
          <div className="form">
            <p className="dialog-explain">
              Before {form.name.trim() || 'this job'} runs for real, see how it lives through a normal day, late data, a downstream timeout, a restart and days of downtime — with these settings, in a second, without anything running.
            </p>
            <div className="dialog-actions">
              <button type="button" className="btn" onClick={() => void save({ skipRehearsalOffer: true })} data-testid="rehearse-offer-skip">
                Create without rehearsing
              </button>
              <button
                type="button"
                className="btn btn-primary"
                data-autofocus
                onClick={() => {
                  setOfferRehearsal(false);
                  setTab('rehearse');
                }}
                data-testid="rehearse-offer-go"
              >
                Rehearse first
              </button>
            </div>
          </div>
        </Dialog>
      ) : null}
      {acting && job ? <JobActionDialog job={job} kind={acting} onClose={() => setActing(null)} onDone={load} /> : null}
      {guard.pending !== null ? (
        <Dialog title="Leave without saving?" onClose={guard.stay} testId="leave-dialog">
          <div className="form">
            <p className="dialog-explain">
              {isNew ? 'This new job has not been created yet' : `Your changes to ${job!.name} are not saved`}: leaving now discards them.
            </p>
            <div className="dialog-actions">
              <button type="button" className="btn" onClick={guard.stay} data-autofocus data-testid="leave-stay">
                Keep editing
              </button>
              <button type="button" className="btn btn-danger" onClick={guard.leave} data-testid="leave-discard">
                Discard changes
              </button>
            </div>
          </div>
        </Dialog>
      ) : null}
    </div>
  );
}

/** How many scenarios of a rehearsal end badly. */
function badCount(r: RehearsalResult): number {
  return r.scenarios.filter((s) => !s.endsWell).length;
}

/** Left/right arrows move between the editor's tabs (the tab list pattern). */
function tabKeys(e: ReactKeyboardEvent<HTMLButtonElement>) {
  if (e.key !== 'ArrowLeft' && e.key !== 'ArrowRight') return;
  const tabs = [...(e.currentTarget.parentElement?.querySelectorAll<HTMLButtonElement>('[role="tab"]') ?? [])];
  const next = tabs[(tabs.indexOf(e.currentTarget) + (e.key === 'ArrowRight' ? 1 : tabs.length - 1)) % tabs.length];
  next?.focus();
  next?.click();
  e.preventDefault();
}

/** Where an issue is, in the editor's words: "Retry", "Missed window · Tolerance (s)", "Check 2 · URL". */
function issuePlace(field: string, kindAt: (i: number) => string | undefined): string {
  const section = jobSectionLabel(field);
  const label = jobFieldLabel(field, kindAt);
  return label === section || label === 'Job' ? section : `${section} · ${label}`;
}

/** "Done when…": mounted once the job is loaded, so its checks start from the saved declaration. */
function JobDoneWhen({ verify, patch }: { verify: JobForm['verify']; patch: (p: Partial<JobForm>) => void }) {
  return <DoneWhenSection state={useJobDoneWhen(verify, patch)} subject="job" />;
}

function Section({ title, sentence, hint, children, testId }: { title: string; sentence?: string; hint?: string; children: ReactNode; testId?: string }) {
  return (
    <section className="panel editor-section" data-testid={testId}>
      <header className="panel-head">
        <h2>{title}</h2>
        {hint ? <span className="muted small">{hint}</span> : null}
      </header>
      {sentence ? (
        <p className="policy" data-testid="policy-sentence">
          {sentence}
        </p>
      ) : null}
      <div className="section-body">{children}</div>
    </section>
  );
}

function PreconditionCard(p: {
  index: number;
  p: PreconditionForm;
  count: number;
  issues: JobIssue[];
  sentence: string;
  onChange: (p: PreconditionForm) => void;
  onRemove: () => void;
  onMove: (d: -1 | 1) => void;
}) {
  const { index: i, p: pc } = p;
  const at = (k: string) => `preconditions.${i}.${k}`;
  const labelOf = (k: string) => jobFieldLabel(at(k), () => pc.kind);
  const set = (x: Partial<PreconditionForm>) => p.onChange({ ...pc, ...x });
  const inv = (k: string) => hasError(p.issues, at(k));
  return (
    <div className="pre-card" data-field={`preconditions.${i}`} data-testid={`precondition-${i}`}>
      <div className="pre-head">
        <span className="pre-index">{i + 1}</span>
        <select aria-label="Kind" value={pc.kind} onChange={(e) => set({ kind: e.target.value as PreconditionKind })}>
          {KINDS.map((k) => (
            <option key={k.kind} value={k.kind}>
              {k.label}
            </option>
          ))}
        </select>
        <input className="pre-label" aria-label="Label" placeholder="label (optional)" value={pc.label} onChange={(e) => set({ label: e.target.value })} aria-invalid={inv('label')} />
        <span className="spacer" />
        <button type="button" className="icon-btn" aria-label="Move up" disabled={i === 0} onClick={() => p.onMove(-1)}>
          ↑
        </button>
        <button type="button" className="icon-btn" aria-label="Move down" disabled={i === p.count - 1} onClick={() => p.onMove(1)}>
          ↓
        </button>
        <button type="button" className="icon-btn" aria-label={`Remove check ${i + 1}`} onClick={p.onRemove}>
          ×
        </button>
      </div>
      <FieldIssues issues={issuesAt(p.issues, `preconditions.${i}`).concat(issuesAt(p.issues, at('label')))} />
      {pc.kind === 'file' ? (
        <div className="field-row">
          <Field issues={p.issues} field={at('path')} label={labelOf('path')}>
            <input className="mono" value={pc.path} placeholder="/data/orders-{yesterday}.csv" onChange={(e) => set({ path: e.target.value })} aria-invalid={inv('path')} />
          </Field>
          <Field issues={p.issues} field={at('check')} label={labelOf('check')}>
            <select value={pc.check} onChange={(e) => set({ check: e.target.value as PreconditionForm['check'], ...(e.target.value === 'exists' ? { after: '' } : {}) })}>
              <option value="exists">it exists</option>
              <option value="modified_after">it was modified after…</option>
            </select>
          </Field>
          {pc.check === 'modified_after' ? (
            <Field issues={p.issues} field={at('after')} label={labelOf('after')}>
              <select value={pc.after} onChange={(e) => set({ after: e.target.value as PreconditionForm['after'] })} aria-invalid={inv('after')}>
                <option value="">midnight of the slot’s date</option>
                <option value="yesterday">midnight of the day before</option>
                <option value="slot">the slot’s due time</option>
              </select>
            </Field>
          ) : null}
        </div>
      ) : pc.kind === 'http' ? (
        <>
          <Field issues={p.issues} field={at('url')} label={labelOf('url')}>
            <input className="mono" value={pc.url} placeholder="http://127.0.0.1:8080/partitions/{date}" onChange={(e) => set({ url: e.target.value })} aria-invalid={inv('url')} />
          </Field>
          <div className="field-row">
            <Field issues={p.issues} field={at('expectStatus')} label={labelOf('expectStatus')} help="default 200">
              <input inputMode="numeric" value={pc.expectStatus} placeholder="200" onChange={(e) => set({ expectStatus: e.target.value })} aria-invalid={inv('expectStatus')} />
            </Field>
            <Field issues={p.issues} field={at('jsonField')} label={labelOf('jsonField')} help="dotted path, e.g. data.ready">
              <input className="mono" value={pc.jsonField} onChange={(e) => set({ jsonField: e.target.value })} aria-invalid={inv('jsonField')} />
            </Field>
            <Field issues={p.issues} field={at('equals')} label={labelOf('equals')} help="empty: the field must be truthy">
              <input className="mono" value={pc.equals} placeholder="true" onChange={(e) => set({ equals: e.target.value })} aria-invalid={inv('equals')} />
            </Field>
            <Field issues={p.issues} field={at('timeoutS')} label={labelOf('timeoutS')}>
              <input inputMode="numeric" value={pc.timeoutS} placeholder="10" onChange={(e) => set({ timeoutS: e.target.value })} aria-invalid={inv('timeoutS')} />
            </Field>
          </div>
        </>
      ) : pc.kind === 'command' ? (
        <div className="field-row">
          <Field issues={p.issues} field={at('argv')} label={labelOf('argv')} help="one per line, no shell">
            <textarea className="mono" rows={3} value={pc.argv} placeholder={'test\n-s\n/data/done-{date}'} onChange={(e) => set({ argv: e.target.value })} aria-invalid={inv('argv')} />
          </Field>
          <Field issues={p.issues} field={at('cwd')} label={labelOf('cwd')}>
            <input className="mono" value={pc.cwd} onChange={(e) => set({ cwd: e.target.value })} aria-invalid={inv('cwd')} />
          </Field>
          <Field issues={p.issues} field={at('timeoutS')} label={labelOf('timeoutS')}>
            <input inputMode="numeric" value={pc.timeoutS} placeholder="10" onChange={(e) => set({ timeoutS: e.target.value })} aria-invalid={inv('timeoutS')} />
          </Field>
        </div>
      ) : pc.kind === 'signal' ? (
        <div className="field-row">
          <Field issues={p.issues} field={at('name')} label={labelOf('name')}>
            <input className="mono" value={pc.name} placeholder="data-ready" onChange={(e) => set({ name: e.target.value })} aria-invalid={inv('name')} />
          </Field>
          <Field issues={p.issues} field={at('key')} label={labelOf('key')} help="default {date}: the slot’s business date">
            <input className="mono" value={pc.key} placeholder="{date}" onChange={(e) => set({ key: e.target.value })} aria-invalid={inv('key')} />
          </Field>
        </div>
      ) : (
        <div className="field-row">
          <Field issues={p.issues} field={at('check')} label={labelOf('check')}>
            <input className="mono" value={pc.agentCheck} placeholder="inbox-reachable" onChange={(e) => set({ agentCheck: e.target.value })} aria-invalid={inv('check')} />
          </Field>
          <Field issues={p.issues} field={at('role')} label={labelOf('role')} help="default: the job’s role">
            <input className="mono" value={pc.role} onChange={(e) => set({ role: e.target.value })} aria-invalid={inv('role')} />
          </Field>
          <Field issues={p.issues} field={at('timeoutS')} label={labelOf('timeoutS')}>
            <input inputMode="numeric" value={pc.timeoutS} placeholder="10" onChange={(e) => set({ timeoutS: e.target.value })} aria-invalid={inv('timeoutS')} />
          </Field>
        </div>
      )}
      {p.sentence ? <p className="policy policy-small">{p.sentence}</p> : null}
    </div>
  );
}

function MaintenanceRow({ index: i, m, issues, onChange, onRemove }: { index: number; m: MaintenanceForm; issues: JobIssue[]; onChange: (m: MaintenanceForm) => void; onRemove: () => void }) {
  const base = `executionConditions.maintenanceWindows.${i}`;
  return (
    <div className="mw-row" data-field={base}>
      <label className="field" data-field={`${base}.start`}>
        <span className="field-label">From</span>
        <input className="mono" value={m.start} onChange={(e) => onChange({ ...m, start: e.target.value })} aria-invalid={hasError(issues, `${base}.start`)} />
      </label>
      <label className="field" data-field={`${base}.end`}>
        <span className="field-label">To</span>
        <input className="mono" value={m.end} onChange={(e) => onChange({ ...m, end: e.target.value })} aria-invalid={hasError(issues, `${base}.end`)} />
      </label>
      <div className="days" role="group" aria-label="Days (none = every day)">
        {WEEKDAYS.map((d) => (
          <button
            key={d.iso}
            type="button"
            aria-pressed={m.days.includes(d.iso)}
            className={`day-btn${m.days.includes(d.iso) ? ' active' : ''}`}
            onClick={() => onChange({ ...m, days: m.days.includes(d.iso) ? m.days.filter((x) => x !== d.iso) : [...m.days, d.iso] })}
          >
            {d.short}
          </button>
        ))}
      </div>
      <button type="button" className="icon-btn" aria-label={`Remove maintenance window ${i + 1}`} onClick={onRemove}>
        ×
      </button>
      <div className="mw-issues">
        <FieldIssues issues={[...issuesAt(issues, base), ...issuesAt(issues, `${base}.start`), ...issuesAt(issues, `${base}.end`), ...issuesAt(issues, `${base}.days`)]} />
      </div>
    </div>
  );
}

function PreviewList({ preview, error, zone, stale }: { preview: PreviewResult | null; error: UiError | null; zone: string; stale: boolean }) {
  const me = operatorZone();
  const now = Date.now();
  if (error) return <ErrorBanner error={error} what="No preview" />;
  if (!preview) return <Spinner label="Computing the next slots…" />;
  const runs = preview.items.filter((p) => p.disposition === 'due').length;
  const cutShort = preview.truncated ? (
    <p className="muted small" data-testid="preview-truncated">
      {preview.items.length
        ? `Cut short: the preview stopped after ${preview.items.length} slots, ${runs} of which run; later slots are not shown.`
        : 'Cut short: no slot in the next ten years.'}
    </p>
  ) : null;
  if (preview.items.length === 0) {
    return (
      cutShort ?? (
        <p className="muted small" data-testid="preview-empty">
          No slots to show: fix the schedule settings marked in red and the preview follows.
        </p>
      )
    );
  }
  return (
    <>
      <ol className={`preview${stale ? ' stale' : ''}`} data-testid="preview-list">
        {preview.items.map((p) => {
          const note = previewNote(p);
          const skipped = p.disposition !== 'due';
          return (
            <li key={`${p.slot}-${p.at}`} className={`preview-item${skipped ? ' skipped' : ''}${note && !skipped ? ' moved' : ''}`} data-testid="preview-item" data-local={p.local} data-disposition={p.disposition}>
              <div className="preview-line1">
                <span className="mono preview-slot">{p.slot}</span>
                <span className="preview-when">{skipped ? <s>{formatInZone(p.at, preview.timezone || zone, now)}</s> : formatInZone(p.at, preview.timezone || zone, now)}</span>
              </div>
              <div className="preview-line2 muted small">
                {me !== (preview.timezone || zone) ? <span>{formatInZone(p.at, me, now)} your time</span> : <span>same as your time</span>}
                {p.dayType && p.dayType !== 'workday' && !skipped ? <Badge tone="ready">{p.dayType.replace('_', ' ')}</Badge> : null}
                {note ? <span className={skipped ? 'text-warn' : 'text-info'}>{note}</span> : null}
              </div>
            </li>
          );
        })}
      </ol>
      {cutShort}
    </>
  );
}
