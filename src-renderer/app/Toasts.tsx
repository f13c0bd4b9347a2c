/** The toasts of the shell: operator actions' outcomes and live alerts. */
import { useActions, useConsole } from '../store/react';

export function Toasts() {
  const toasts = useConsole((s) => s.toasts);
  const { dismissToast } = useActions();
  return (
    <div className="toasts" aria-live="polite">
      {toasts.map((t) => (
        <div key={t.id} className={`toast toast-${t.tone}`} role={t.tone === 'error' ? 'alert' : 'status'}>
          <div className="toast-text">
            <div className="toast-title">
              {t.code ? <span className="error-code">{t.code}</span> : null}
              {t.title}
            </div>
            {t.body ? <div className="toast-body">{t.body}</div> : null}
          </div>
          <button className="icon-btn" aria-label="Dismiss" onClick={() => dismissToast(t.id)}>
            ×
          </button>
        </div>
      ))}
    </div>
  );
}
