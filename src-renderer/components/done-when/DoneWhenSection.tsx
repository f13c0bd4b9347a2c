/**
 * "Done when…": the checks Gaffer runs itself before it calls the work done (PROTOCOL §13), with a
 * preview in plain words. Presentational: the state is `useDoneWhen`'s.
 */
import { useState, type ReactNode } from 'react';
import { VERIFY_CHECK_KINDS, type VerifyCheckKind, type VerifyOnFail } from '../../../src-main/common/verify';
import { KIND_LABELS, type CheckDraft, type DoneWhenState } from './use-done-when';

const ON_FAIL_LABELS: Record<VerifyOnFail, string> = {
  retry: 'try again, telling the agent what failed',
  needs_human: 'stop and ask me',
  fail: 'mark it failed',
};

function Text({ label, value, onChange, placeholder, help, mono }: { label: string; value: string; onChange: (v: string) => void; placeholder?: string; help?: string; mono?: boolean }) {
  return (
    <label className="field">
      <span className="field-label">{label}</span>
      <input value={value} onChange={(e) => onChange(e.target.value)} placeholder={placeholder} className={mono ? 'mono' : undefined} />
      {help ? <span className="field-help">{help}</span> : null}
    </label>
  );
}

function Box({ label, checked, onChange }: { label: string; checked: boolean; onChange: (v: boolean) => void }) {
  return (
    <label className="check-field">
      <input type="checkbox" checked={checked} onChange={(e) => onChange(e.target.checked)} /> {label}
    </label>
  );
}

function CheckFields({ d, set }: { d: CheckDraft; set: (p: Partial<CheckDraft>) => void }): ReactNode {
  switch (d.kind) {
    case 'command':
      return (
        <>
          <label className="field">
            <span className="field-label">Program and arguments, one per line</span>
            <textarea rows={2} className="mono" value={d.command} onChange={(e) => set({ command: e.target.value })} placeholder={'npm\ntest'} />
            <span className="field-help">run without a shell; passes when it exits with 0</span>
          </label>
          <div className="field-row">
            <Text label="Folder" value={d.cwd} onChange={(cwd) => set({ cwd })} placeholder="the workspace" mono />
            <Text label="Time limit (s)" value={d.timeoutS} onChange={(timeoutS) => set({ timeoutS })} placeholder="300" />
          </div>
        </>
      );
    case 'file':
      return (
        <>
          <Text label="Path" value={d.target} onChange={(target) => set({ target })} placeholder="out/report.md" mono help="relative paths are read in the workspace" />
          <Box label="not empty" checked={d.nonEmpty} onChange={(nonEmpty) => set({ nonEmpty })} />
          <Box label="changed during the attempt" checked={d.changedDuringAttempt} onChange={(changedDuringAttempt) => set({ changedDuringAttempt })} />
        </>
      );
    case 'git':
      return (
        <>
          <div className="field-row">
            <Text label="Repository" value={d.target} onChange={(target) => set({ target })} placeholder="the workspace" mono />
            <Text label="Over" value={d.base} onChange={(base) => set({ base })} placeholder="the workspace's base" mono />
            <Text label="At least … commits" value={d.minCommits} onChange={(minCommits) => set({ minCommits })} placeholder="1" />
          </div>
          <Box label="nothing left uncommitted" checked={d.clean} onChange={(clean) => set({ clean })} />
        </>
      );
    case 'output':
      return (
        <label className="field">
          <span className="field-label">JSON Schema of the output</span>
          <textarea rows={3} className="mono" value={d.schema} onChange={(e) => set({ schema: e.target.value })} placeholder='{"type": "object", "required": ["url"]}' />
        </label>
      );
    case 'http':
      return (
        <div className="field-row">
          <Text label="Address" value={d.target} onChange={(target) => set({ target })} placeholder="http://127.0.0.1:8080/health" mono />
          <Text label="Status" value={d.expectStatus} onChange={(expectStatus) => set({ expectStatus })} placeholder="any 2xx" />
        </div>
      );
  }
}

export function DoneWhenSection({ state, subject = 'task' }: { state: DoneWhenState; subject?: 'task' | 'job' }) {
  const [kind, setKind] = useState<VerifyCheckKind>('command');
  return (
    <fieldset className="done-when" data-testid="done-when">
      <legend>Done when…</legend>
      <p className="muted small">
        {state.checks.length === 0
          ? `Without checks, the ${subject === 'task' ? 'task is done' : 'run succeeds'} when its agent says so. Add a check and Gaffer makes sure first.`
          : null}
      </p>
      {state.checks.map((d, i) => (
        <div className="done-when-check" key={d.key} data-testid="done-when-check">
          <div className="field-row">
            <Text label={`Check ${i + 1}: ${KIND_LABELS[d.kind]} — name`} value={d.name} onChange={(name) => state.change(d.key, { name })} />
            <button type="button" className="btn btn-small" onClick={() => state.remove(d.key)} aria-label={`Remove check ${i + 1}`}>
              Remove
            </button>
          </div>
          <CheckFields d={d} set={(p) => state.change(d.key, p)} />
        </div>
      ))}
      <div className="field-row">
        <label className="inline-field">
          <span className="muted small">Add a check</span>
          <select value={kind} onChange={(e) => setKind(e.target.value as VerifyCheckKind)} aria-label="Kind of check to add">
            {VERIFY_CHECK_KINDS.map((k) => (
              <option key={k} value={k}>
                {KIND_LABELS[k]}
              </option>
            ))}
          </select>
        </label>
        <button type="button" className="btn" onClick={() => state.add(kind)} data-testid="done-when-add">
          Add check
        </button>
      </div>
      {state.checks.length > 0 ? (
        <>
          <label className="inline-field">
            <span className="muted small">If a check fails</span>
            <select value={state.onFail} onChange={(e) => state.setOnFail(e.target.value as VerifyOnFail)} aria-label="If a check fails">
              {(Object.keys(ON_FAIL_LABELS) as VerifyOnFail[]).map((k) => (
                <option key={k} value={k}>
                  {ON_FAIL_LABELS[k]}
                </option>
              ))}
            </select>
          </label>
          <label className="check-field">
            <input type="checkbox" checked={state.before} onChange={(e) => state.setBefore(e.target.checked)} /> before another attempt, check whether the work is already done
          </label>
          {state.preview ? (
            <p className="done-when-preview" data-testid="done-when-preview">
              {state.preview.charAt(0).toUpperCase() + state.preview.slice(1)}
            </p>
          ) : (
            state.problems.map((p) => (
              <span className="field-error" key={p} data-testid="done-when-problem">
                {p}
              </span>
            ))
          )}
        </>
      ) : null}
    </fieldset>
  );
}
