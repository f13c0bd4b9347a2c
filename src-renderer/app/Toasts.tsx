/** The toasts of the shell: operator actions' outcomes and live alerts. */
import { navigate } from '../lib/navigation';
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
            {t.link ? (
              <button
                className="link toast-link"
                onClick={() => {
                  navigate(t.link!.view, t.link!.param ?? null, t.link!.query ?? {});
                  dismissToast(t.id);
                }}
                data-testid="toast-link"
              >
                {t.link.label}
              </button>
            ) : null}
          </div>
          <button className="icon-btn" aria-label="Dismiss" onClick={() => dismissToast(t.id)}>
            ×
          </button>
        </div>
      ))}
    </div>
  );
}
