/**
 * Modal dialog, and the reason dialog every state-changing operator action goes through
 * (SPEC §7: every operator action takes a reason and is audited with its actor). A solo operator
 * may leave the reason out (the setting "Require a reason for actions", off by default): the
 * field then says "(optional)" and the server audits "no reason given".
 */
import { createContext, useContext, useEffect, useId, useRef, useState, type FormEvent, type ReactNode } from 'react';
import { toUiError, type UiError } from '../lib/errors';
import { ErrorBanner } from './States';

/**
 * Where a dialog's focus starts: the field marked `data-autofocus`, else its first field, else its
 * first button below the title — never the title's × (a keyboard user would type into nothing,
 * and Enter would close the dialog).
 */
export function first(root: HTMLElement | null): HTMLElement | null {
  if (!root) return null;
  const body = (sel: string) => [...root.querySelectorAll<HTMLElement>(sel)].find((el) => !el.closest('.dialog-head') && !(el as HTMLInputElement).disabled);
  return body('[data-autofocus]') ?? body('input:not([type="hidden"]), textarea, select') ?? body('button') ?? null;
}

export function Dialog({ title, onClose, children, wide, testId }: { title: string; onClose: () => void; children: ReactNode; wide?: boolean; testId?: string }) {
  const ref = useRef<HTMLDivElement>(null);
  const titleId = useId();
  useEffect(() => {
    const prev = document.activeElement as HTMLElement | null;
    first(ref.current)?.focus();
    const onKey = (e: KeyboardEvent) => {
      // A closed dialog's listener can outlive its DOM: React removes it with the effects, a frame or
      // more after the dialog left the page on a busy machine. Until then an Esc meant for the page
      // (closing the pane behind) must not be swallowed here.
      if (e.key === 'Escape' && ref.current?.isConnected) {
        e.stopPropagation();
        onClose();
      }
    };
    window.addEventListener('keydown', onKey, true);
    return () => {
      window.removeEventListener('keydown', onKey, true);
      prev?.focus?.();
    };
  }, [onClose]);
  return (
    <div className="overlay" onMouseDown={(e) => e.target === e.currentTarget && onClose()}>
      <div className={`dialog${wide ? ' dialog-wide' : ''}`} role="dialog" aria-modal="true" aria-labelledby={titleId} ref={ref} data-testid={testId}>
        <div className="dialog-head">
          <h2 id={titleId}>{title}</h2>
          <button className="icon-btn" aria-label="Close" onClick={onClose}>
            ×
          </button>
        </div>
        {children}
      </div>
    </div>
  );
}

/**
 * Whether a reason must be typed: the operator's "Require a reason for actions" (the app provides
 * it from the settings, app/ReasonRule.tsx). Outside a provider (a dialog on its own) it is the
 * strict rule: required.
 */
export const ReasonRequired = createContext(true);
export const useReasonRequired = (): boolean => useContext(ReasonRequired);

export interface ReasonDialogProps {
  title: string;
  /** What will happen, in plain words (with the rule it follows). */
  explain?: ReactNode;
  confirmLabel: string;
  danger?: boolean;
  /** Extra fields above the reason (e.g. the new priority); return an error text to block. */
  extra?: ReactNode;
  validateExtra?: () => string | null;
  onConfirm: (reason: string) => Promise<unknown>;
  onClose: () => void;
  testId?: string;
}

export function ReasonDialog(p: ReasonDialogProps) {
  const [reason, setReason] = useState('');
  const [touched, setTouched] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<UiError | null>(null);
  const [extraError, setExtraError] = useState<string | null>(null);
  const trimmed = reason.trim();
  const reasonError = reasonProblem(reason, undefined, useReasonRequired());

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setTouched(true);
    const xe = p.validateExtra?.() ?? null;
    setExtraError(xe);
    if (reasonError || xe) return;
    setBusy(true);
    setError(null);
    try {
      await p.onConfirm(trimmed);
      p.onClose();
    } catch (err) {
      setError(toUiError(err));
      setBusy(false);
    }
  };

  return (
    <Dialog title={p.title} onClose={p.onClose} testId={p.testId ?? 'reason-dialog'}>
      <form onSubmit={submit} className="form" noValidate>
        {p.explain ? <p className="dialog-explain">{p.explain}</p> : null}
        {p.extra}
        {extraError ? <div className="field-error">{extraError}</div> : null}
        <ReasonField value={reason} onChange={setReason} showError={touched} onBlur={() => setTouched(true)} />
        {error ? <ErrorBanner error={error} /> : null}
        <DialogButtons onBack={p.onClose} label={p.confirmLabel} busy={busy} danger={p.danger} />
      </form>
    </Dialog>
  );
}

/**
 * What is wrong with a typed reason, or null (the server's rule: 1–2000 characters once trimmed;
 * empty is fine when the reason is not `required`).
 */
export function reasonProblem(reason: string, what = 'it is written to the audit log with your action', required = true): string | null {
  const t = reason.trim();
  return t.length === 0 ? (required ? `A reason is required: ${what}.` : null) : t.length > 2000 ? 'At most 2000 characters.' : null;
}

/** The reason every operator action takes (required unless the operator says not), its problem shown once `showError`. */
export function ReasonField(p: { value: string; onChange: (v: string) => void; showError: boolean; onBlur?: () => void; placeholder?: string; rows?: number; autoFocus?: boolean; why?: string }) {
  const id = useId();
  const required = useReasonRequired();
  const problem = reasonProblem(p.value, p.why, required);
  return (
    <label className="field" htmlFor={id}>
      <span className="field-label">{required ? <>Reason <span className="req">required</span></> : 'Reason (optional)'}</span>
      <textarea
        id={id}
        name="reason"
        rows={p.rows ?? 3}
        value={p.value}
        data-autofocus={p.autoFocus === false ? undefined : true}
        placeholder={p.placeholder ?? 'Why? (recorded in the audit log; Enter confirms, Shift+Enter adds a line)'}
        onChange={(e) => p.onChange(e.target.value)}
        onBlur={p.onBlur}
        // Enter submits the dialog (Shift+Enter starts a new line): a reason is a sentence, not a document.
        onKeyDown={(e) => {
          if (e.key !== 'Enter' || e.shiftKey || e.nativeEvent.isComposing) return;
          e.preventDefault();
          e.currentTarget.form?.requestSubmit();
        }}
        aria-keyshortcuts="Enter"
        aria-invalid={p.showError && !!problem}
      />
      {p.showError && problem ? <span className="field-error">{problem}</span> : null}
    </label>
  );
}

/** A dialog's Back and confirm buttons (never two that say "Cancel"). */
export function DialogButtons(p: { onBack: () => void; label: string; busy?: boolean; busyLabel?: string; danger?: boolean; disabled?: boolean; testId?: string }) {
  return (
    <div className="dialog-actions">
      <button type="button" className="btn" onClick={p.onBack}>
        Back
      </button>
      <button type="submit" className={`btn ${p.danger ? 'btn-danger' : 'btn-primary'}`} disabled={p.busy || p.disabled} data-testid={p.testId}>
        {p.busy ? (p.busyLabel ?? 'Working…') : p.label}
      </button>
    </div>
  );
}
