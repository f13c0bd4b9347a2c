import { DoneWhenSection } from '../../components/done-when/DoneWhenSection';
import { useDoneWhen } from '../../components/done-when/use-done-when';
import { useState, type ChangeEvent, type ReactNode } from 'react';
import { CapFields } from '../../components/CapFields';
import { capFromDraft, EMPTY_CAP, type CapDraft } from '../../lib/cap-draft';
import { Dialog, ReasonDialog } from '../../components/Dialog';
import { ErrorBanner } from '../../components/States';
import { toUiError, type UiError } from '../../lib/errors';
import { useActions } from '../../store/react';
import type { Task } from '../../../src-main/common/model';
import { validatePriority } from '../../lib/priority';
import { ACTION_META, isPayloadAction, parsePayloadText, payloadText, validateCreateTask, type CreateTaskErrors, type CreateTaskForm, type TaskPaneAction } from './logic';
import type { TaskActionKind } from '../../store/slices/queues';

export function TaskActionDialog({ task, kind, onClose }: { task: Task; kind: TaskPaneAction; onClose: () => void }) {
  if (isPayloadAction(kind)) return <PayloadDialog task={task} kind={kind} onClose={onClose} />;
  return <ReasonOnlyDialog task={task} kind={kind} onClose={onClose} />;
}

function ReasonOnlyDialog({ task, kind, onClose }: { task: Task; kind: TaskActionKind; onClose: () => void }) {
  const { taskAction } = useActions();
  const [priority, setPriority] = useState(String(task.priority));
  // Unblocking may raise the spend cap that stopped it (else the next attempt runs under the same cap).
  const [cap, setCap] = useState<CapDraft>(EMPTY_CAP);
  const parsedCap = capFromDraft(cap);
  const meta = ACTION_META[kind];
  return (
    <ReasonDialog
      title={`${meta.verb} — #${task.id}`}
      testId={`dialog-${kind}`}
      explain={<TaskExplain task={task} text={meta.explain} />}
      danger={meta.danger}
      confirmLabel={meta.verb}
      extra={
        kind === 'reprioritise' ? (
          <label className="field">
            <span className="field-label">New priority (now {task.priority}; higher is claimed first)</span>
            <input name="priority" inputMode="numeric" value={priority} onChange={(e) => setPriority(e.target.value)} />
          </label>
        ) : kind === 'unblock' ? (
          <CapFields value={cap} onChange={setCap} per="attempt" help="Leave empty to keep the task’s cap; if its cap stopped it, a new one lets the next attempt go further." />
        ) : null
      }
      validateExtra={kind === 'reprioritise' ? () => validatePriority(priority) : kind === 'unblock' ? () => ('problem' in parsedCap ? parsedCap.problem : null) : undefined}
      onConfirm={(reason) => taskAction(kind, task.id, reason, kind === 'reprioritise' ? Number(priority) : undefined, kind === 'unblock' && 'budget' in parsedCap && parsedCap.budget ? parsedCap.budget : undefined)}
      onClose={onClose}
    />
  );
}

/**
 * The payload editor: the task's payload as JSON, a reason, and — for a failed task, or a blocked
 * one when ticked — back to the backlog in the same step ("retry with changes").
 */
function PayloadDialog({ task, kind, onClose }: { task: Task; kind: 'editPayload' | 'retryWithChanges'; onClose: () => void }) {
  const { editTaskPayload } = useActions();
  const [text, setText] = useState(() => payloadText(task.payload));
  const [unblockToo, setUnblockToo] = useState(false);
  const parsed = parsePayloadText(text);
  const then = kind === 'retryWithChanges' ? 'retry' : task.status === 'blocked' && unblockToo ? 'unblock' : null;
  const meta = ACTION_META[kind];
  return (
    <ReasonDialog
      title={`${meta.label} — #${task.id}`}
      testId={`dialog-${kind}`}
      explain={<TaskExplain task={task} text={meta.explain} />}
      confirmLabel={then === 'unblock' ? 'Save and unblock' : meta.verb}
      extra={
        <>
          <label className="field">
            <span className="field-label">Payload (JSON; empty for none)</span>
            <textarea name="payload" className="mono" rows={8} value={text} onChange={(e) => setText(e.target.value)} aria-invalid={!parsed.ok} spellCheck={false} />
            {parsed.ok ? <span className="field-help">passed to the agent as is</span> : null}
          </label>
          {task.status === 'blocked' && kind === 'editPayload' ? (
            <label className="check">
              <input type="checkbox" checked={unblockToo} onChange={(e) => setUnblockToo(e.target.checked)} /> and unblock it: back to the backlog with this payload
            </label>
          ) : null}
        </>
      }
      validateExtra={() => (parsed.ok ? null : parsed.error)}
      onConfirm={(reason) => (parsed.ok ? editTaskPayload(task.id, parsed.payload, reason, then) : Promise.reject(new Error(parsed.error)))}
      onClose={onClose}
    />
  );
}

/** Which task a dialog acts on, and what the action does. */
function TaskExplain({ task, text }: { task: Task; text: string }) {
  return (
    <>
      <strong>{task.title}</strong>
      <br />
      {text}
    </>
  );
}

const EMPTY_FORM: CreateTaskForm = { title: '', role: '', priority: '', dependsOn: '', payload: '' };

export function CreateTaskDialog({ defaultRole, roles, onClose, onCreated }: { defaultRole: string | null; roles: string[]; onClose: () => void; onCreated: (t: Task) => void }) {
  const { createTask } = useActions();
  const [form, setForm] = useState<CreateTaskForm>({ ...EMPTY_FORM, role: defaultRole ?? '' });
  const [touched, setTouched] = useState<Partial<Record<keyof CreateTaskForm, boolean>>>({});
  const [submitted, setSubmitted] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<UiError | null>(null);
  const doneWhen = useDoneWhen();
  const [capDraft, setCapDraft] = useState<CapDraft>(EMPTY_CAP);
  const cap = capFromDraft(capDraft);
  const v = validateCreateTask(form);
  const errors: CreateTaskErrors = v.ok ? {} : v.errors;
  const show = (k: keyof CreateTaskForm) => (submitted || touched[k]) && errors[k];

  const field = (k: keyof CreateTaskForm, label: string, input: ReactNode, help?: string) => (
    <label className="field">
      <span className="field-label">{label}</span>
      {input}
      {show(k) ? <span className="field-error" data-testid={`error-${k}`}>{errors[k]}</span> : help ? <span className="field-help">{help}</span> : null}
    </label>
  );
  const bind = (k: keyof CreateTaskForm) => ({
    name: k,
    value: form[k],
    onChange: (e: ChangeEvent<HTMLInputElement | HTMLTextAreaElement>) => setForm({ ...form, [k]: e.target.value }),
    onBlur: () => setTouched({ ...touched, [k]: true }),
    'aria-invalid': !!show(k),
  });

  return (
    <Dialog title="Create a task" onClose={onClose} testId="dialog-create-task">
      <form
        className="form"
        noValidate
        onSubmit={async (e) => {
          e.preventDefault();
          setSubmitted(true);
          if (!v.ok || doneWhen.problems.length > 0 || 'problem' in cap) return;
          setBusy(true);
          setError(null);
          try {
            const t = await createTask({ ...v.value, ...(doneWhen.spec ? { verify: doneWhen.spec } : {}), ...(cap.budget ? { budget: cap.budget } : {}) });
            onCreated(t);
            onClose();
          } catch (err) {
            setError(toUiError(err));
            setBusy(false);
          }
        }}
      >
        {field('title', 'Title', <input {...bind('title')} data-autofocus placeholder="Summarise the release notes" />)}
        <div className="field-row">
          {field(
            'role',
            'Role',
            <>
              <input {...bind('role')} list="known-roles" placeholder="dev" />
              <datalist id="known-roles">
                {roles.map((r) => (
                  <option key={r} value={r} />
                ))}
              </datalist>
            </>,
            'which kind of agent takes it',
          )}
          {field('priority', 'Priority', <input {...bind('priority')} inputMode="numeric" placeholder="0" />, 'higher is claimed first')}
        </div>
        {field('dependsOn', 'Depends on', <input {...bind('dependsOn')} placeholder="#12, #13" />, 'task ids that must be done first')}
        {field('payload', 'Payload (JSON)', <textarea {...bind('payload')} rows={4} className="mono" placeholder='{"repo": "gaffer"}' />, 'optional, passed to the agent as is')}
        <CapFields label="Spend cap per attempt" per="attempt" value={capDraft} onChange={setCapDraft} help="Empty for no cap. Past it the agent loses the task at once and it is blocked for you, with what it made so far kept." />
        {submitted && 'problem' in cap ? (
          <span className="field-error" data-testid="error-budget">
            {cap.problem}
          </span>
        ) : null}
        <DoneWhenSection state={doneWhen} />
        {error ? <ErrorBanner error={error} /> : null}
        <div className="dialog-actions">
          <button type="button" className="btn" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" className="btn btn-primary" disabled={busy}>
            {busy ? 'Creating…' : 'Create task'}
          </button>
        </div>
      </form>
    </Dialog>
  );
}
