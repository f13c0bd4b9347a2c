/** The dialog that defines a managed agent, or changes one (with a reason, audited). */
import { useId, useMemo, useState, type FormEvent, type ReactNode } from 'react';
import { COMMAND_AGENT_PARSE_FORMATS, MAX_MANAGED_INSTANCES, type ManagedAgent } from '../../../src-main/common/managed-agents';
import { Dialog, useReasonRequired } from '../../components/Dialog';
import { ErrorBanner } from '../../components/States';
import { toUiError, type UiError } from '../../lib/errors';
import { useActions } from '../../store/react';
import { changedFields, emptyForm, formFromAgent, formToDefinition, MODE_LABELS, replacesProcesses, type FormErrors, type ManagedForm } from './logic';

function Field({ id, label, help, error, children }: { id: string; label: ReactNode; help?: ReactNode; error?: string | undefined; children: ReactNode }) {
  return (
    <label className="field" htmlFor={id}>
      <span className="field-label">{label}</span>
      {children}
      {help ? <span className="field-help">{help}</span> : null}
      {error ? <span className="field-error">{error}</span> : null}
    </label>
  );
}

export function ManagedAgentEditor({ agent, onClose, onSaved }: { agent: ManagedAgent | null; onClose: () => void; onSaved: (a: ManagedAgent) => void }) {
  const { createManagedAgent, updateManagedAgent, toast } = useActions();
  const [form, setForm] = useState<ManagedForm>(() => (agent ? formFromAgent(agent) : emptyForm()));
  const [reason, setReason] = useState('');
  const [touched, setTouched] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<UiError | null>(null);
  const ids = { name: useId(), role: useId(), command: useId(), instances: useId(), cwd: useId(), env: useId(), timeout: useId(), parse: useId(), workspace: useId(), base: useId(), keep: useId(), onRetry: useId(), reason: useId() };
  const { definition, errors } = useMemo(() => formToDefinition(form), [form]);
  const patch = agent && definition ? changedFields(agent, definition) : null;
  const reasonRequired = useReasonRequired();
  const reasonError = reason.trim() || !reasonRequired ? null : 'A reason is required: it is written to the audit log with your change.';
  const shown: FormErrors = touched ? errors : {};
  const perTask = form.mode === 'per_task';
  const set = <K extends keyof ManagedForm>(k: K, v: ManagedForm[K]) => setForm((f) => ({ ...f, [k]: v }));

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setTouched(true);
    if (!definition || reasonError || (patch && Object.keys(patch).length === 0)) return;
    setBusy(true);
    setError(null);
    try {
      const saved = agent ? await updateManagedAgent(agent.id, patch!, reason.trim()) : await createManagedAgent(definition, reason.trim());
      toast('success', agent ? `Saved ${saved.name}` : `Created ${saved.name}`, agent && replacesProcesses(patch!) ? 'New processes start next to the old ones; the old ones are drained once the new ones are up.' : undefined);
      onSaved(saved);
      onClose();
    } catch (err) {
      setError(toUiError(err));
      setBusy(false);
    }
  };

  return (
    <Dialog title={agent ? `Change ${agent.name}` : 'New managed agent'} onClose={onClose} wide testId="managed-editor">
      <form className="form" onSubmit={submit} noValidate>
        <div className="managed-form-row">
          <Field id={ids.name} label="Name" error={shown.name} help={agent ? 'The name cannot change.' : 'Its instances are called name-1, name-2, …'}>
            <input id={ids.name} value={form.name} disabled={!!agent} onChange={(e) => set('name', e.target.value)} placeholder="nightly-coder" data-autofocus />
          </Field>
          <Field id={ids.role} label="Role" error={shown.role} help="It claims tasks and job runs of this role.">
            <input id={ids.role} value={form.role} onChange={(e) => set('role', e.target.value)} placeholder="dev" />
          </Field>
          <Field id={ids.instances} label="Instances" error={shown.instances} help="How many run at once.">
            <input id={ids.instances} type="number" min={1} max={MAX_MANAGED_INSTANCES} value={form.instances} onChange={(e) => set('instances', e.target.value)} />
          </Field>
        </div>
        <fieldset className="field">
          <legend className="field-label">Mode</legend>
          <div className="seg" role="radiogroup" aria-label="Mode">
            {(['per_task', 'long_running'] as const).map((m) => (
              <button key={m} type="button" role="radio" aria-checked={form.mode === m} className={`seg-btn${form.mode === m ? ' active' : ''}`} onClick={() => set('mode', m)}>
                {MODE_LABELS[m].label}
              </button>
            ))}
          </div>
          <span className="field-help">{MODE_LABELS[form.mode].help}</span>
        </fieldset>
        <Field id={ids.command} label="Command" error={shown.command} help="The program, then one argument per line (no shell unless you tick it below).">
          <textarea id={ids.command} rows={4} className="mono" value={form.command} onChange={(e) => set('command', e.target.value)} placeholder={'claude\n-p\nFix the task described in $GAFFER_PAYLOAD_FILE\n--output-format\nstream-json\n--verbose'} />
        </Field>
        <div className="managed-form-row">
          <Field id={ids.cwd} label="Working directory" error={shown.cwd} help="An absolute path; empty: Gaffer’s own.">
            <input id={ids.cwd} className="mono" value={form.cwd} onChange={(e) => set('cwd', e.target.value)} placeholder="/home/me/repo" />
          </Field>
          {perTask ? (
            <Field id={ids.timeout} label="Time limit per run (s)" error={shown.timeoutS} help="Empty: none. Past it the command is stopped and the task fails.">
              <input id={ids.timeout} type="number" min={1} value={form.timeoutS} onChange={(e) => set('timeoutS', e.target.value)} />
            </Field>
          ) : null}
          {perTask ? (
            <Field id={ids.parse} label="Read its output as" error={shown.parse} help="For readable logs and token usage.">
              <select id={ids.parse} value={form.parse} onChange={(e) => set('parse', e.target.value)}>
                <option value="">plain lines</option>
                {COMMAND_AGENT_PARSE_FORMATS.map((f) => (
                  <option key={f} value={f}>
                    {f}
                  </option>
                ))}
              </select>
            </Field>
          ) : null}
        </div>
        {perTask ? (
          <label className="check">
            <input type="checkbox" checked={form.shell} onChange={(e) => set('shell', e.target.checked)} /> Run the command through the shell (its lines are joined into one command line)
          </label>
        ) : null}
        {perTask ? (
          <div className="row">
            <Field id={ids.workspace} label="Workspace (git repository)" error={shown.workspace} help="Each run in its own git worktree of this repository, on a branch named after the task or run. Empty: none.">
              <input id={ids.workspace} className="mono" value={form.workspace} onChange={(e) => set('workspace', e.target.value)} placeholder="/home/me/repo" />
            </Field>
            {form.workspace.trim() ? (
              <Field id={ids.base} label="Start branches from" help="A branch, tag or commit; empty: the repository’s current commit.">
                <input id={ids.base} className="mono" value={form.workspaceBase} onChange={(e) => set('workspaceBase', e.target.value)} placeholder="main" />
              </Field>
            ) : null}
          </div>
        ) : null}
        {perTask && form.workspace.trim() ? (
          <div className="row">
            <Field id={ids.onRetry} label="On a retry">
              <select id={ids.onRetry} value={form.workspaceOnRetry} onChange={(e) => set('workspaceOnRetry', e.target.value as ManagedForm['workspaceOnRetry'])}>
                <option value="resume">continue where the last attempt stopped</option>
                <option value="fresh">start again from a clean copy</option>
              </select>
            </Field>
            <Field id={ids.keep} label="Keep the worktree">
              <select id={ids.keep} value={form.workspaceKeep} onChange={(e) => set('workspaceKeep', e.target.value as ManagedForm['workspaceKeep'])}>
                <option value="failed">only when the run did not succeed</option>
                <option value="always">always</option>
                <option value="never">never (the branch stays)</option>
              </select>
            </Field>
            <label className="check">
              <input type="checkbox" checked={form.workspaceSandbox} onChange={(e) => set('workspaceSandbox', e.target.checked)} /> Sandbox (Linux): only the worktree is writable; Gaffer’s data is hidden
            </label>
          </div>
        ) : null}
        <Field id={ids.env} label="Environment" error={shown.env} help="NAME=value per line, added to Gaffer’s own environment. Stored in Gaffer’s database; the audit log records the names only.">
          <textarea id={ids.env} rows={3} className="mono" value={form.env} onChange={(e) => set('env', e.target.value)} placeholder="ANTHROPIC_API_KEY=…" />
        </Field>
        <Field id={ids.reason} label={reasonRequired ? <>Reason <span className="req">required</span></> : 'Reason (optional)'} error={touched ? (reasonError ?? undefined) : undefined}>
          <textarea id={ids.reason} rows={2} value={reason} onChange={(e) => setReason(e.target.value)} placeholder="Why? (recorded in the audit log)" />
        </Field>
        {agent && patch && Object.keys(patch).length === 0 && touched ? <div className="field-error">Nothing changed.</div> : null}
        {error ? <ErrorBanner error={error} /> : null}
        <div className="dialog-actions">
          <button type="button" className="btn" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" className="btn btn-primary" disabled={busy}>
            {busy ? 'Saving…' : agent ? 'Save' : 'Create and start'}
          </button>
        </div>
      </form>
    </Dialog>
  );
}
