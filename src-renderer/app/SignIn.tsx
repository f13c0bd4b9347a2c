/**
 * A browser tab without the operator token (opened by hand, or whose token was refused): paste it
 * here. It is kept for this tab only (sessionStorage) and never goes into the address bar.
 */
import { useState } from 'react';
import { useActions, useConsole } from '../store/react';

/** The token itself, or a pasted console URL that carries it (`…/#token=…`). */
export function tokenFromPaste(text: string): string {
  const t = text.trim();
  const m = /[#&?]token=([^&\s]+)/.exec(t);
  return m ? decodeURIComponent(m[1]!) : t;
}

export function SignIn() {
  const { signIn } = useActions();
  const refused = useConsole((s) => /refused/i.test(s.conn.lastError?.message ?? ''));
  const [text, setText] = useState('');
  const [error, setError] = useState<string | null>(null);
  return (
    <div className="sign-in" data-testid="sign-in">
      <form
        className="panel form"
        onSubmit={(e) => {
          e.preventDefault();
          const token = tokenFromPaste(text);
          if (!token) {
            setError('Paste the operator token, or the console URL Gaffer printed.');
            return;
          }
          signIn(token);
        }}
      >
        <h1>Open the console</h1>
        <p className="small">
          {refused ? 'The operator token of this tab was refused.' : 'This tab has no operator token.'} Gaffer printed the console URL when it started (it ends in <code>#token=…</code>); paste that URL, or
          the token itself (<code>GAFFER_OPERATOR_TOKEN</code> if you set one).
        </p>
        <label className="field">
          <span className="field-label">Operator token or console URL</span>
          <input name="operator-token" type="password" autoComplete="off" spellCheck={false} value={text} onChange={(e) => setText(e.target.value)} autoFocus aria-invalid={error ? true : undefined} />
          {error ? <span className="field-error">{error}</span> : <span className="field-help">kept for this tab only, never put in the address bar</span>}
        </label>
        <div className="dialog-actions">
          <button type="submit" className="btn btn-primary" data-testid="sign-in-submit">
            Open the console
          </button>
        </div>
      </form>
    </div>
  );
}
