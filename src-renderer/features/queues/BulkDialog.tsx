/**
 * One action over many tasks: what it will do and to how many, one reason (and the priority),
 * then its progress chunk by chunk — stoppable between chunks — and what it left alone.
 */
import { useState, type FormEvent } from 'react';
import type { BulkTaskAction } from '../../../src-main/common/model';
import { Dialog, DialogButtons, ReasonField, reasonProblem, useReasonRequired } from '../../components/Dialog';
import { ErrorBanner, ProgressBar } from '../../components/States';
import { formatCount } from '../../lib/format';
import { useActions, useConsole } from '../../store/react';
import type { BulkSelection } from '../../store/slices/tasks';
import { validatePriority } from '../../lib/priority';
import { appliesToWords, BULK_META, bulkFraction, skippedReasons } from './tasks-logic';

const REASON_WHY = 'it is written to the audit log of every task it changes';

export function BulkDialog({
  action,
  selection,
  size,
  sizeExact,
  onClose,
  onFinished,
}: {
  action: BulkTaskAction;
  selection: BulkSelection;
  /** How many tasks are selected (for a filter: its count, at least when not exact). */
  size: number;
  sizeExact: boolean;
  onClose: () => void;
  /** The action ran (done, stopped or failed): the selection is spent. */
  onFinished: () => void;
}) {
  const bulk = useConsole((s) => s.bulk);
  const { runBulk, stopBulk, clearBulk } = useActions();
  const meta = BULK_META[action];
  // Opened on a running action ("Details"): straight to its progress.
  const [started, setStarted] = useState(bulk?.status === 'running');
  const [reason, setReason] = useState('');
  const [priority, setPriority] = useState('0');
  const [touched, setTouched] = useState(false);
  const trimmed = reason.trim();
  const reasonError = reasonProblem(reason, REASON_WHY, useReasonRequired());
  const priorityError = action === 'reprioritise' ? validatePriority(priority) : null;
  const what = `${sizeExact ? '' : 'at least '}${formatCount(size)} task${size === 1 ? '' : 's'}`;

  const submit = (e: FormEvent) => {
    e.preventDefault();
    setTouched(true);
    if (reasonError || priorityError) return;
    setStarted(true);
    void runBulk(action, selection, trimmed, action === 'reprioritise' ? Number(priority) : undefined).then(onFinished, onFinished);
  };

  const close = () => {
    if (bulk && bulk.status !== 'running') clearBulk();
    onClose();
  };

  if (started && bulk) {
    const finished = bulk.status !== 'running';
    const reasons = skippedReasons(bulk.skipped, bulk.skippedCount);
    return (
      <Dialog title={`${BULK_META[bulk.action].verb} — ${finished ? (bulk.status === 'done' ? 'done' : bulk.status === 'stopped' ? 'stopped' : 'stopped by an error') : 'working'}`} onClose={close} testId="dialog-bulk">
        <div className="form">
          <ProgressBar fraction={bulkFraction(bulk)} label="Bulk action progress" />
          <p className="small" data-testid="bulk-progress" aria-live="polite">
            {formatCount(bulk.changed)} {BULK_META[bulk.action].done}
            {bulk.skippedCount ? `, ${formatCount(bulk.skippedCount)} left as they were` : ''} — {formatCount(bulk.changed + bulk.skippedCount)} of {bulk.exact ? '' : 'at least '}
            {formatCount(bulk.total)} looked at, {bulk.chunks} step{bulk.chunks === 1 ? '' : 's'} of at most 200
          </p>
          {bulk.error ? <ErrorBanner error={bulk.error} what="The action stopped" /> : null}
          {reasons.length ? (
            <div data-testid="bulk-skipped">
              <h3 className="pane-h3">Left as they were</h3>
              <ul className="plain-list small">
                {reasons.map((r) => (
                  <li key={r.why}>
                    <strong>{formatCount(r.count)}</strong> {r.why}
                    {r.ids.length ? <span className="muted mono"> ({r.ids.map((id) => `#${id}`).join(', ')}{r.count > r.ids.length ? ', …' : ''})</span> : null}
                  </li>
                ))}
              </ul>
            </div>
          ) : null}
          <p className="muted small">Each changed task has its own audit row with your reason{bulk.bulkId ? <> and the bulk id <span className="mono">{bulk.bulkId}</span></> : null}.</p>
          <div className="dialog-actions">
            {finished ? (
              <button type="button" className="btn btn-primary" onClick={close} data-testid="bulk-close">
                Close
              </button>
            ) : (
              <>
                <button type="button" className="btn" onClick={onClose}>
                  Keep working in the background
                </button>
                <button type="button" className="btn btn-danger" onClick={() => stopBulk()} data-testid="bulk-dialog-stop">
                  Stop after this step
                </button>
              </>
            )}
          </div>
        </div>
      </Dialog>
    );
  }

  return (
    <Dialog title={`${meta.verb} — ${what}`} onClose={onClose} testId={`dialog-bulk-${action}`}>
      <form className="form" onSubmit={submit} noValidate>
        <p className="dialog-explain">
          {meta.explain} Only {appliesToWords(action)} tasks are changed; any other is left as it is and listed afterwards. It runs 200 tasks at a time, so agents keep claiming meanwhile; you can stop it between steps.
        </p>
        {action === 'reprioritise' ? (
          <label className="field">
            <span className="field-label">New priority (higher is claimed first)</span>
            <input name="priority" inputMode="numeric" value={priority} onChange={(e) => setPriority(e.target.value)} aria-invalid={touched && !!priorityError} />
            {touched && priorityError ? <span className="field-error">{priorityError}</span> : null}
          </label>
        ) : null}
        <ReasonField value={reason} onChange={setReason} showError={touched} onBlur={() => setTouched(true)} placeholder="Why? (recorded in the audit log of each task)" why={REASON_WHY} />
        {bulk?.status === 'running' ? <p className="field-error">Another bulk action is still running; wait for it or stop it first.</p> : null}
        <DialogButtons onBack={onClose} label={`${meta.verb.split(' ')[0]} ${what}`} danger={meta.danger} disabled={bulk?.status === 'running'} testId="bulk-confirm" />
      </form>
    </Dialog>
  );
}
