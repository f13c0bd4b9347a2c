/**
 * Settings: the price table Gaffer prices tokens with when an agent reports tokens and a model but
 * no cost (claude-code, codex and gemini CLIs as they stream). Viewed as a table; edited row by
 * row (a model id, or a prefix ending in *), checked in plain words before anything is sent;
 * saved whole (`budgets.putPrices`), or back to the shipped table.
 */
import { useEffect, useState } from 'react';
import type { PricesView } from '../../../src-main/common/prices';
import { formatDateTime } from '../../lib/format';
import { toUiError } from '../../lib/errors';
import { useActions } from '../../store/react';
import { draftFromTable, EMPTY_ROW, PRICE_FIELDS, tableFromDraft, type PriceRowDraft } from './prices-logic';

export function PricesPanel() {
  const { prices, savePrices } = useActions();
  const [view, setView] = useState<PricesView | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [draft, setDraft] = useState<PriceRowDraft[] | null>(null);
  const [reason, setReason] = useState('');
  const [problems, setProblems] = useState<string[]>([]);
  const [badRows, setBadRows] = useState<ReadonlySet<number>>(new Set());
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    let live = true;
    prices().then(
      (v) => live && setView(v),
      (e: unknown) => live && setLoadError(toUiError(e).message),
    );
    return () => {
      live = false;
    };
  }, [prices]);

  const save = async (what: 'draft' | 'reset') => {
    let models: Parameters<typeof savePrices>[0] = 'reset';
    if (what === 'draft') {
      const t = tableFromDraft(draft ?? []);
      if ('problems' in t) {
        setProblems(t.problems.map((p) => p.message));
        setBadRows(new Set(t.problems.map((p) => p.row)));
        return;
      }
      models = t.models;
    }
    setProblems([]);
    setBadRows(new Set());
    setBusy(true);
    try {
      setView(await savePrices(models, reason.trim() || undefined));
      setDraft(null);
      setReason('');
    } catch (e) {
      setProblems([`Not saved: ${toUiError(e).message}`]);
    } finally {
      setBusy(false);
    }
  };

  if (!view) return loadError ? <p className="small text-bad">Could not load the price table: {loadError}</p> : null;
  const set = (i: number, patch: Partial<PriceRowDraft>) => setDraft((d) => (d ?? []).map((r, k) => (k === i ? { ...r, ...patch } : r)));
  const rows = draft ?? draftFromTable(view.models);
  return (
    <section className="panel" data-testid="prices-panel">
      <header className="panel-head">
        <h2>Token prices</h2>
        <span className="muted small" data-testid="prices-source">
          {view.source === 'defaults' ? `Shipped prices, as taken on ${view.defaultsTakenOn}` : `Edited ${formatDateTime(view.updatedAt)} (shipped prices were taken on ${view.defaultsTakenOn})`}
        </span>
        <span className="spacer" />
        {draft ? null : (
          <button type="button" className="btn btn-small" onClick={() => setDraft(draftFromTable(view.models))} data-testid="prices-edit">
            Edit prices…
          </button>
        )}
      </header>
      <p className="small muted">
        Dollars per million tokens. When an agent reports tokens and a model but no cost, Gaffer prices them here: an exact model id first, else the longest prefix ending in * that
        matches. Cache prices left empty cost as plain input.
      </p>
      <div className="prices-scroll">
        <table className="table prices-table">
          <thead>
            <tr>
              <th scope="col">Model id or prefix</th>
              {PRICE_FIELDS.map((f) => (
                <th key={f.key} scope="col" className="num">
                  {f.label}
                </th>
              ))}
              {draft ? <th scope="col" aria-label="Remove" /> : null}
            </tr>
          </thead>
          <tbody>
            {rows.map((r, i) => (
              <tr key={i} data-testid="price-row">
                {draft ? (
                  <>
                    <td>
                      <input aria-label={`Row ${i + 1}: model id or prefix`} aria-invalid={badRows.has(i + 1)} className="mono" value={r.model} onChange={(e) => set(i, { model: e.target.value })} spellCheck={false} />
                    </td>
                    {PRICE_FIELDS.map((f) => (
                      <td key={f.key}>
                        <input aria-label={`Row ${i + 1}: ${f.label.toLowerCase()} price`} aria-invalid={badRows.has(i + 1)} inputMode="decimal" className="num" size={7} value={r[f.key]} placeholder={f.required ? '' : 'as input'} onChange={(e) => set(i, { [f.key]: e.target.value })} />
                      </td>
                    ))}
                    <td>
                      <button type="button" className="btn btn-small btn-danger-quiet" onClick={() => setDraft((d) => (d ?? []).filter((_, k) => k !== i))} aria-label={`Remove row ${i + 1}`}>
                        Remove
                      </button>
                    </td>
                  </>
                ) : (
                  <>
                    <td className="mono">{r.model}</td>
                    {PRICE_FIELDS.map((f) => (
                      <td key={f.key} className="num">
                        {r[f.key] === '' ? <span className="muted">—</span> : `$${r[f.key]}`}
                      </td>
                    ))}
                  </>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {problems.length ? (
        <div role="alert">
          <ul className="small text-bad" data-testid="prices-problems">
            {problems.map((p) => (
              <li key={p}>{p}</li>
            ))}
          </ul>
        </div>
      ) : null}
      {draft ? (
        <div className="form">
          <div>
            <button type="button" className="btn btn-small" onClick={() => setDraft([...draft, { ...EMPTY_ROW }])} data-testid="prices-add">
              + Add a model
            </button>
          </div>
          <label className="field">
            <span className="field-label">
              Reason <span className="muted small">optional, audited</span>
            </span>
            <input value={reason} onChange={(e) => setReason(e.target.value)} placeholder="Vendor price change, negotiated rate…" data-testid="prices-reason" />
          </label>
          <div className="dialog-actions">
            <button type="button" className="btn btn-danger-quiet" disabled={busy} onClick={() => void save('reset')} data-testid="prices-reset">
              Restore the shipped prices
            </button>
            <span className="spacer" />
            <button
              type="button"
              className="btn"
              onClick={() => {
                setDraft(null);
                setProblems([]);
              }}
            >
              Cancel
            </button>
            <button type="button" className="btn btn-primary" disabled={busy} onClick={() => void save('draft')} data-testid="prices-save">
              {busy ? 'Saving…' : 'Save prices'}
            </button>
          </div>
        </div>
      ) : null}
    </section>
  );
}
