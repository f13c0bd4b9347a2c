import type { ReactNode } from 'react';
import { errorHint, type UiError } from '../lib/errors';

/** An empty state that says what to do next. */
export function EmptyState({ title, children, action, compact }: { title: string; children?: ReactNode; action?: ReactNode; compact?: boolean }) {
  return (
    <div className={`empty${compact ? ' empty-compact' : ''}`} role="status">
      <div className="empty-title">{title}</div>
      {children ? <div className="empty-body">{children}</div> : null}
      {action ? <div className="empty-action">{action}</div> : null}
    </div>
  );
}

/** An error that says what went wrong, with its stable code. */
export function ErrorBanner({ error, what, onRetry }: { error: UiError; what?: string; onRetry?: () => void }) {
  const hint = errorHint(error);
  return (
    <div className="error-banner" role="alert">
      <div className="error-main">
        <span className="error-code">{error.code}</span>
        <span>
          {what ? <strong>{what}: </strong> : null}
          {error.message}
        </span>
      </div>
      {hint ? <div className="error-hint">{hint}</div> : null}
      {onRetry ? (
        <button className="btn btn-small" onClick={onRetry}>
          Try again
        </button>
      ) : null}
    </div>
  );
}

export function Spinner({ label }: { label?: string }) {
  return (
    <span className="spinner-wrap" role="status">
      <span className="spinner" aria-hidden />
      {label ? <span className="muted">{label}</span> : null}
    </span>
  );
}

export function Stat({ label, value, sub, tone, onClick, testId }: { label: string; value: ReactNode; sub?: ReactNode; tone?: string; onClick?: () => void; testId?: string }) {
  const Tag = onClick ? 'button' : 'div';
  return (
    <Tag className={`stat${tone ? ` stat-${tone}` : ''}${onClick ? ' stat-link' : ''}`} onClick={onClick} data-testid={testId}>
      <div className="stat-label">{label}</div>
      <div className="stat-value">{value}</div>
      {sub ? <div className="stat-sub">{sub}</div> : null}
    </Tag>
  );
}

export function ProgressBar({ fraction, label }: { fraction: number | null; label?: string }) {
  return (
    <div className={`progress${fraction === null ? ' progress-indeterminate' : ''}`} role="progressbar" aria-valuemin={0} aria-valuemax={100} aria-valuenow={fraction === null ? undefined : Math.round(fraction * 100)} aria-label={label}>
      <div className="progress-fill" style={fraction === null ? undefined : { width: `${Math.round(fraction * 1000) / 10}%` }} />
    </div>
  );
}
