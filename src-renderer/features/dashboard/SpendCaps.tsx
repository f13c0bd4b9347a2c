import { useState } from 'react';
import type { BudgetsInput, BudgetsView } from '../../../src-main/common/attention';
import { ReasonDialog } from '../../components/Dialog';
import { ProgressBar } from '../../components/States';
import { formatDateTime } from '../../lib/format';
import { windowLine } from '../../lib/spend-words';
import { dateInZone, formatInZone, localInZone } from '../../lib/zones';
import { useActions } from '../../store/react';
import { capsDraftFrom, capsDraftProblems, capsDraftToInput, EMPTY_WINDOW, money, type CapsDraft, type WindowDraft } from './spend-logic';

/** Today's spend against each daily cap, when they reset, and the caps themselves (editable). */
export function SpendCaps({ budgets }: { budgets: BudgetsView }) {
  const [editing, setEditing] = useState(false);
  return (
    <section className="panel" data-testid="spend-caps">
      <header className="panel-head">
        <h2>Spend caps today</h2>
        <span className="muted">
          {budgets.day} ({budgets.zone}) · reset at midnight, {formatDateTime(budgets.resetsAt)}
        </span>
        <span className="spacer" />
        <button className="btn btn-small" onClick={() => setEditing(true)} data-testid="spend-caps-edit">
          Set caps…
        </button>
      </header>
      {!budgets.measured ? <p className="muted small">No spend is reported yet: agents report what they spend with usage frames; until then spend reads $0.00 and no cap is reached.</p> : null}
      {budgets.caps.length === 0 ? (
        <p className="muted small">No daily cap is set. A cap stops dispatching a role’s jobs and handing out its tasks for the rest of the day once reached.</p>
      ) : (
        <ul className="plain-list caps">
          {budgets.caps.map((c) => (
            <li key={`${c.scope}:${c.role ?? ''}`} className={c.reached ? 'cap cap-reached' : 'cap'} data-testid={`cap-${c.role ?? 'global'}`}>
              <span className="cap-name">{c.scope === 'global' ? 'All roles' : `Role ${c.role}`}</span>
              <ProgressBar fraction={Math.min(1, c.spentUsd / c.capUsd)} label={`${c.scope === 'global' ? 'all roles' : c.role}: ${money(c.spentUsd)} of ${money(c.capUsd)}`} />
              <span className={`num small${c.reached ? ' text-bad' : ''}`}>
                {money(c.spentUsd)} of {money(c.capUsd)}
                {c.reached ? ' · reached' : ''}
              </span>
            </li>
          ))}
        </ul>
      )}
      <SpendWindows budgets={budgets} />
      {editing ? <CapsDialog budgets={budgets} onClose={() => setEditing(false)} /> : null}
    </section>
  );
}

/** The rolling spend windows (subscription-billed CLIs): tokens or cost of the last hours against their caps, and when a used-up one frees. */
function SpendWindows({ budgets }: { budgets: BudgetsView }) {
  const windows = budgets.windows ?? [];
  if (windows.length === 0) return null;
  const zone = budgets.zone;
  const today = budgets.day;
  // Today: the time alone ("14:20"); another day: with its day.
  const time = (iso: string) => (dateInZone(Date.parse(iso), zone) === today ? localInZone(Date.parse(iso), zone).slice(11) : formatInZone(iso, zone));
  return (
    <>
      <h3 className="small">Spend windows (rolling)</h3>
      <ul className="plain-list caps spend-windows" data-testid="spend-windows">
        {windows.map((w) => {
          const line = windowLine(w, time);
          return (
            <li key={`${w.scope}:${w.role ?? ''}:${w.hours}`} className={w.reached ? 'cap cap-reached' : 'cap'} data-testid={`window-${w.role ?? 'global'}-${w.hours}`} title={line.words}>
              <span className="cap-name">
                {w.scope === 'global' ? 'All roles' : `Role ${w.role}`}, last {+w.hours.toFixed(2)} h
              </span>
              <ProgressBar fraction={line.fraction} label={line.words} />
              <span className={`num small${w.reached ? ' text-bad' : ''}`}>{line.amounts}</span>
            </li>
          );
        })}
      </ul>
    </>
  );
}

function CapsDialog({ budgets, onClose }: { budgets: BudgetsView; onClose: () => void }) {
  const { saveBudgets } = useActions();
  const [draft, setDraft] = useState<CapsDraft>(() => capsDraftFrom(budgets.settings));
  const set = (patch: Partial<CapsDraft>) => setDraft({ ...draft, ...patch });
  return (
    <ReasonDialog
      title="Spend caps"
      explain={`A day runs midnight to midnight in ${budgets.zone}. Once a role's cap (or the cap for all roles) is reached, its jobs are not dispatched and its tasks are not handed out until midnight.`}
      confirmLabel="Save caps"
      extra={
        <div className="form">
          <label className="field">
            <span className="field-label">All roles, USD per day (empty: no cap)</span>
            <input inputMode="decimal" value={draft.global} onChange={(e) => set({ global: e.target.value })} data-testid="cap-global-input" />
          </label>
          {draft.roles.map((r, i) => (
            <div key={i} className="field-row">
              <label className="field">
                <span className="field-label">Role</span>
                <input value={r.role} onChange={(e) => set({ roles: draft.roles.map((x, k) => (k === i ? { ...x, role: e.target.value } : x)) })} />
              </label>
              <label className="field">
                <span className="field-label">USD per day</span>
                <input inputMode="decimal" value={r.usd} onChange={(e) => set({ roles: draft.roles.map((x, k) => (k === i ? { ...x, usd: e.target.value } : x)) })} />
              </label>
              <button type="button" className="btn btn-small btn-danger-quiet" onClick={() => set({ roles: draft.roles.filter((_, k) => k !== i) })}>
                Remove
              </button>
            </div>
          ))}
          <div>
            <button type="button" className="btn btn-small" onClick={() => set({ roles: [...draft.roles, { role: '', usd: '' }] })}>
              Add a role cap
            </button>
          </div>
          <h3 className="small">Rolling windows</h3>
          <p className="muted small">
            For subscription-billed CLIs: what the last few hours may spend, in tokens or dollars (e.g. 2M tokens in 5 hours for role dev). Once used up, work waits until enough spend leaves the window.
          </p>
          {draft.windows.map((w, i) => {
            const setWindow = (patch: Partial<WindowDraft>) => set({ windows: draft.windows.map((x, k) => (k === i ? { ...x, ...patch } : x)) });
            return (
              <div key={i} className="field-row" data-testid={`window-row-${i}`}>
                <label className="field">
                  <span className="field-label">Role (empty: all)</span>
                  <input value={w.role} onChange={(e) => setWindow({ role: e.target.value })} />
                </label>
                <label className="field">
                  <span className="field-label">Hours</span>
                  <input inputMode="decimal" value={w.hours} onChange={(e) => setWindow({ hours: e.target.value })} />
                </label>
                <label className="field">
                  <span className="field-label">Tokens</span>
                  <input value={w.tokens} placeholder="2M" onChange={(e) => setWindow({ tokens: e.target.value })} />
                </label>
                <label className="field">
                  <span className="field-label">USD</span>
                  <input inputMode="decimal" value={w.usd} onChange={(e) => setWindow({ usd: e.target.value })} />
                </label>
                <button type="button" className="btn btn-small btn-danger-quiet" onClick={() => set({ windows: draft.windows.filter((_, k) => k !== i) })}>
                  Remove
                </button>
              </div>
            );
          })}
          <div>
            <button type="button" className="btn btn-small" onClick={() => set({ windows: [...draft.windows, { ...EMPTY_WINDOW }] })}>
              Add a window
            </button>
          </div>
        </div>
      }
      validateExtra={() => capsDraftProblems(draft)[0] ?? null}
      onConfirm={(reason) => saveBudgets(capsDraftToInput(draft, budgets.settings) as BudgetsInput, reason)}
      onClose={onClose}
      testId="spend-caps-dialog"
    />
  );
}
