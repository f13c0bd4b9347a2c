import { useId, useState, type FormEvent } from 'react';
import type { InboxItem } from '../../../src-main/common/attention';
import { Dialog, ReasonDialog } from '../../components/Dialog';
import { ErrorBanner } from '../../components/States';
import { toUiError, type UiError } from '../../lib/errors';
import { formatDateTime } from '../../lib/format';
import { useActions } from '../../store/react';
import { fromLocalInput, snoozePresets, toLocalInput } from './logic';
import { RunDecisionDialog as RunDecision } from '../../components/RunDecisionDialog';
import { CapFields } from '../../components/CapFields';
import { capFromDraft, EMPTY_CAP, type CapDraft } from '../../lib/cap-draft';

const MAX_NOTE = 2000;

function NoteField({ value, onChange, label = 'Note', placeholder }: { value: string; onChange: (v: string) => void; label?: string; placeholder: string }) {
  const id = useId();
  return (
    <label className="field" htmlFor={id}>
      <span className="field-label">
        {label} <span className="muted small">optional, kept with the item and in the audit log</span>
      </span>
      <textarea id={id} rows={3} value={value} maxLength={MAX_NOTE} placeholder={placeholder} onChange={(e) => onChange(e.target.value)} data-autofocus />
    </label>
  );
}

/** Acknowledge one item or several, with an optional note. */
export function AckDialog({ ids, onClose }: { ids: number[]; onClose: () => void }) {
  const { acknowledge } = useActions();
  const [note, setNote] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<UiError | null>(null);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await acknowledge(ids, note.trim() || null);
      onClose();
    } catch (err) {
      setError(toUiError(err));
      setBusy(false);
    }
  };
  const many = ids.length > 1;
  return (
    <Dialog title={many ? `Acknowledge ${ids.length} items` : 'Acknowledge'} onClose={onClose} testId="ack-dialog">
      <form className="form" onSubmit={submit} noValidate>
        <p className="dialog-explain">{many ? 'They leave the open list' : 'It leaves the open list'}; the next occurrence opens a new item.</p>
        <NoteField value={note} onChange={setNote} placeholder="What you did about it (e.g. restarted the agent)" />
        {error ? <ErrorBanner error={error} /> : null}
        <div className="dialog-actions">
          <button type="button" className="btn" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" className="btn btn-primary" disabled={busy} data-testid="ack-confirm">
            {busy ? 'Working…' : 'Acknowledge'}
          </button>
        </div>
      </form>
    </Dialog>
  );
}

/** Hide an item until a time: a preset or a local date and time. */
export function SnoozeDialog({ item, onClose }: { item: InboxItem; onClose: () => void }) {
  const { snooze } = useActions();
  const [now] = useState(() => Date.now());
  const presets = snoozePresets(now);
  const [until, setUntil] = useState(toLocalInput(Date.parse(presets[0]!.until)));
  const [note, setNote] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<UiError | null>(null);
  const whenId = useId();
  const at = fromLocalInput(until);
  const problem = at === null ? 'Choose a date and a time.' : at <= Date.now() ? 'Choose a time in the future.' : null;
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (problem || at === null) return;
    setBusy(true);
    setError(null);
    try {
      await snooze(item.id, new Date(at).toISOString(), note.trim() || null);
      onClose();
    } catch (err) {
      setError(toUiError(err));
      setBusy(false);
    }
  };
  return (
    <Dialog title="Snooze" onClose={onClose} testId="snooze-dialog">
      <form className="form" onSubmit={submit} noValidate>
        <p className="dialog-explain">“{item.title}” leaves the open list and comes back at the time you choose. Occurrences meanwhile are added to it.</p>
        <div className="seg" role="group" aria-label="Snooze for">
          {presets.map((p) => (
            <button key={p.label} type="button" className={`seg-btn${toLocalInput(Date.parse(p.until)) === until ? ' active' : ''}`} onClick={() => setUntil(toLocalInput(Date.parse(p.until)))}>
              {p.label}
            </button>
          ))}
        </div>
        <label className="field" htmlFor={whenId}>
          <span className="field-label">Until (your local time)</span>
          <input id={whenId} type="datetime-local" value={until} onChange={(e) => setUntil(e.target.value)} aria-invalid={!!problem} data-testid="snooze-until" />
          {problem ? <span className="field-error">{problem}</span> : at !== null ? <span className="field-help">{formatDateTime(at)}</span> : null}
        </label>
        <NoteField value={note} onChange={setNote} placeholder="Why later (e.g. waiting for the vendor)" />
        {error ? <ErrorBanner error={error} /> : null}
        <div className="dialog-actions">
          <button type="button" className="btn" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" className="btn btn-primary" disabled={busy || !!problem} data-testid="snooze-confirm">
            {busy ? 'Working…' : 'Snooze'}
          </button>
        </div>
      </form>
    </Dialog>
  );
}

/** Unblock a blocked task (it goes back to Ready with your note) or cancel it, from its item. */
export function TaskDecisionDialog({ item, decision, onClose }: { item: InboxItem; decision: 'unblock' | 'cancel'; onClose: () => void }) {
  const { taskAction, refresh } = useActions();
  const taskId = Number(item.subject.split(':')[1]);
  // Unblocking may raise the cap that stopped it (else the next attempt runs under the same cap).
  const [cap, setCap] = useState<CapDraft>(EMPTY_CAP);
  const parsed = capFromDraft(cap);
  return (
    <ReasonDialog
      title={decision === 'unblock' ? `Unblock task ${taskId}` : `Cancel task ${taskId}`}
      explain={
        decision === 'unblock'
          ? 'The task goes back to Ready for the next agent of its role; your note is written to the audit log with the decision. The item is acknowledged with it.'
          : 'The task is cancelled and no agent will claim it again. The item is acknowledged with it.'
      }
      confirmLabel={decision === 'unblock' ? 'Unblock' : 'Cancel the task'}
      danger={decision === 'cancel'}
      extra={decision === 'unblock' ? <CapFields value={cap} onChange={setCap} per="attempt" help={item.kind === 'budget' ? 'It was stopped by its spend cap: without a new one it runs under the same cap again.' : 'Leave empty to keep the task’s cap.'} /> : null}
      validateExtra={() => ('problem' in parsed ? parsed.problem : null)}
      onConfirm={async (reason) => {
        await taskAction(decision, taskId, reason, undefined, 'budget' in parsed && parsed.budget ? parsed.budget : undefined);
        await refresh('inbox');
      }}
      onClose={onClose}
      testId="task-decision-dialog"
    />
  );
}

/** Approve a held run (it runs again and the agent gets your note) or reject it (it stays failed). */
export function RunDecisionDialog({ item, decision, onClose }: { item: InboxItem; decision: 'approve' | 'reject'; onClose: () => void }) {
  const { decideRun } = useActions();
  const runId = item.subject.slice('run:'.length);
  return <RunDecision decision={decision} stoppedByCap={item.kind === 'budget'} onConfirm={(note, budget) => decideRun(runId, decision, note, budget)} onClose={onClose} />;
}
