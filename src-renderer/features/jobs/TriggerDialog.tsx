/**
 * "Trigger now", said before it runs: which slot (the one the current instant falls in, the one
 * before it, the next one early, or one typed in), what running it does to that slot, whether
 * the preconditions are checked first — then one reason, and the slot named on the button.
 */
import { useEffect, useState, type FormEvent } from 'react';
import type { Job, TriggerChoice, TriggerChoices } from '../../../src-main/common/job-schema';
import { Dialog, DialogButtons, ReasonField, reasonProblem, useReasonRequired } from '../../components/Dialog';
import { ErrorBanner, Spinner } from '../../components/States';
import { toUiError, type UiError } from '../../lib/errors';
import { formatDateTime, formatRelative } from '../../lib/format';
import { dispositionMeta } from '../../lib/run-words';
import { formatInZone } from '../../lib/zones';
import { useActions } from '../../store/react';
import { choiceEffect, choiceTitle, triggerSummary } from './trigger-words';
import './trigger.css';

const REASON_WHY = 'it is written to the audit log with the run';

export function TriggerDialog({ job, onClose, onDone }: { job: Pick<Job, 'id' | 'name'>; onClose: () => void; onDone?: () => void }) {
  const { triggerChoices, jobAction } = useActions();
  const [choices, setChoices] = useState<TriggerChoices | null>(null);
  const [loadError, setLoadError] = useState<UiError | null>(null);
  const [pick, setPick] = useState<string>('current');
  const [typed, setTyped] = useState('');
  const [check, setCheck] = useState(false);
  const [reason, setReason] = useState('');
  const [touched, setTouched] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<UiError | null>(null);

  useEffect(() => {
    let live = true;
    triggerChoices(job.id).then(
      (c) => {
        if (!live) return;
        setChoices(c);
        // Start on the first slot that would do something.
        setPick(c.choices.find((x) => x.effect !== 'exists')?.which ?? 'other');
      },
      (e) => live && setLoadError(toUiError(e)),
    );
    return () => {
      live = false;
    };
  }, [job.id, triggerChoices]);

  const chosen: TriggerChoice | null = choices?.choices.find((c) => c.which === pick) ?? null;
  const slot = pick === 'other' ? typed.trim() : (chosen?.slot ?? '');
  const reasonError = reasonProblem(reason, REASON_WHY, useReasonRequired());
  const slotError = pick === 'other' && !slot ? 'Type the slot key, e.g. 2026-11-25.' : null;
  const now = Date.now();

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setTouched(true);
    if (reasonError || slotError || !choices || choices.refused) return;
    setBusy(true);
    setError(null);
    try {
      await jobAction('trigger', job, reason.trim(), { slot, checkPreconditions: check });
      onDone?.();
      onClose();
    } catch (err) {
      setError(toUiError(err));
      setBusy(false);
    }
  };

  return (
    <Dialog title={`Trigger now — ${job.name}`} onClose={onClose} wide testId="dialog-job-trigger">
      {loadError ? <ErrorBanner error={loadError} what="Could not tell which slot would run" /> : null}
      {!choices ? (
        loadError ? null : <Spinner label="Finding the slot…" />
      ) : (
        <form className="form" onSubmit={submit} noValidate>
          {choices.refused ? <p className="field-error">Nothing can be triggered: {choices.refused}.</p> : null}
          <fieldset className="choice-list" data-testid="trigger-slots">
            <legend className="field-label">Which slot</legend>
            {choices.choices.map((c) => (
              <label key={c.which} className={`choice${c.effect === 'exists' ? ' choice-off' : ''}`} data-testid={`trigger-slot-${c.which}`}>
                <input type="radio" name="trigger-slot" value={c.which} checked={pick === c.which} disabled={c.effect === 'exists'} onChange={() => setPick(c.which)} />
                <span>
                  <strong>{choiceTitle(c.which)}</strong> <span className="mono">{c.slot}</span>
                  <span className="muted small">
                    {' '}
                    — due {formatInZone(c.at, choices.zone)} {choices.zone} ·{' '}
                    <span title={c.at}>
                      {formatDateTime(c.at)} your time, {formatRelative(c.at, now)}
                    </span>
                  </span>
                  <span className="choice-effect small">
                    {c.disposition !== 'due' ? <span className="text-warn">{c.disposition === 'calendar_skip' ? 'Not a workday: the schedule skips it. ' : 'Its local time does not exist (DST): the schedule skips it. '}</span> : null}
                    {choiceEffect(c)}
                    {c.run ? <span className="muted"> ({dispositionMeta(c.run.disposition).label})</span> : null}
                  </span>
                </span>
              </label>
            ))}
            <label className="choice" data-testid="trigger-slot-other">
              <input type="radio" name="trigger-slot" value="other" checked={pick === 'other'} onChange={() => setPick('other')} />
              <span>
                <strong>Another slot</strong>{' '}
                <input
                  name="trigger-slot-key"
                  className="mono"
                  value={typed}
                  placeholder="2026-11-25"
                  aria-label="Slot key"
                  onFocus={() => setPick('other')}
                  onChange={(e) => setTyped(e.target.value)}
                  aria-invalid={touched && !!slotError}
                />
                {touched && slotError ? <span className="field-error"> {slotError}</span> : null}
              </span>
            </label>
          </fieldset>
          {choices.preconditions > 0 ? (
            <fieldset className="choice-list" data-testid="trigger-preconditions">
              <legend className="field-label">Preconditions ({choices.preconditions})</legend>
              <label className="choice">
                <input type="radio" name="trigger-check" checked={!check} onChange={() => setCheck(false)} />
                <span>Run at once, overriding them</span>
              </label>
              <label className="choice">
                <input type="radio" name="trigger-check" checked={check} onChange={() => setCheck(true)} data-testid="trigger-check-preconditions" />
                <span>Check them first: it runs as soon as they pass</span>
              </label>
            </fieldset>
          ) : (
            <p className="muted small">The job has no preconditions: it runs at once.</p>
          )}
          <p className="dialog-explain" data-testid="trigger-summary">
            {triggerSummary(slot, chosen, check)} The schedule and a pause are overridden; the kill switch and a disabled job are not. Still one run per slot.
          </p>
          <ReasonField value={reason} onChange={setReason} showError={touched} onBlur={() => setTouched(true)} rows={2} placeholder="Why now? (recorded in the audit log)" why={REASON_WHY} />
          {error ? <ErrorBanner error={error} /> : null}
          <DialogButtons onBack={onClose} label={slot ? `Run ${slot}` : 'Run'} busy={busy} disabled={!!choices.refused} testId="trigger-confirm" />
        </form>
      )}
    </Dialog>
  );
}
