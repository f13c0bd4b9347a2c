import { useId } from 'react';
import type { CapDraft } from '../lib/cap-draft';

/** Two optional inputs for a spend cap per attempt: dollars and tokens. */
/** `per`: what one cap counts ("run" for a job, "attempt" for a task). */
export function CapFields({ value, onChange, label = 'New spend cap for the next attempt', help, per = 'run' }: { value: CapDraft; onChange: (v: CapDraft) => void; label?: string; help?: string; per?: string }) {
  const usdId = useId();
  const tokId = useId();
  return (
    <fieldset className="field cap-fields" data-testid="cap-fields">
      <legend className="field-label">
        {label} <span className="muted small">optional</span>
      </legend>
      <div className="field-row">
        <label htmlFor={usdId} className="field">
          <span className="field-help">Dollars per {per}</span>
          <input id={usdId} inputMode="decimal" placeholder="e.g. 0.50" value={value.usd} onChange={(e) => onChange({ ...value, usd: e.target.value })} data-testid="cap-usd" />
        </label>
        <label htmlFor={tokId} className="field">
          <span className="field-help">Tokens per {per}</span>
          <input id={tokId} inputMode="numeric" placeholder="e.g. 200000" value={value.tokens} onChange={(e) => onChange({ ...value, tokens: e.target.value })} data-testid="cap-tokens" />
        </label>
      </div>
      {help ? <span className="field-help">{help}</span> : null}
    </fieldset>
  );
}
