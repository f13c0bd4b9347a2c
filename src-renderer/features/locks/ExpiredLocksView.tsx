import { useMemo, useState } from 'react';
import { recoveryBoundS } from '../../../src-main/common/config';
import type { ExpiredLockCard } from '../../../src-main/common/console-api';
import { navigate } from '../../lib/navigation';
import { Badge } from '../../components/Badge';
import { EmptyState, ErrorBanner, Spinner } from '../../components/States';
import { RelativeTime } from '../../components/Time';
import { formatDateTime, formatDurationS } from '../../lib/format';
import { useActions, useConsole, useWatch } from '../../store/react';
import { recoveryExplain } from '../../lib/recovery';
import { expiryReason, isForceRelease } from './logic';

const PAGE = 120;

export function ExpiredLocksView() {
  useWatch('expiredLocks', 'settings');
  const res = useConsole((s) => s.expiredLocks);
  const settings = useConsole((s) => s.settings.data);
  const { refresh } = useActions();
  const [filter, setFilter] = useState('');
  const [shown, setShown] = useState(PAGE);
  const cards = useMemo(() => {
    const f = filter.trim().toLowerCase();
    const all = [...(res.data ?? [])].sort((a, b) => Date.parse(b.expiredAt) - Date.parse(a.expiredAt) || b.id - a.id);
    return f ? all.filter((c) => `#${c.taskId} ${c.title} ${c.role} ${c.holder} ${c.holderName ?? ''} ${c.reason} ${c.reclaimedByName ?? ''}`.toLowerCase().includes(f)) : all;
  }, [res.data, filter]);

  if (!res.data) {
    if (res.error) return <ErrorBanner error={res.error} what="Could not load today's expired locks" onRetry={() => void refresh('expiredLocks')} />;
    return <Spinner label="Loading expired locks…" />;
  }
  const bound = settings ? recoveryExplain(recoveryBoundS(settings.config), settings.config) : null;
  const waiting = cards.filter((c) => !c.reclaimedAt).length;
  const released = cards.filter((c) => isForceRelease(c.reason)).length;

  return (
    <div className="view" data-testid="view-locks">
      <div className="toolbar">
        <div className="muted small">
          {cards.length - released} taken back by the watchdog · {released} force-released by an operator · {waiting} not re-claimed yet
          {bound ? (
            <span title={bound.long}>
              {' '}
              · the watchdog takes a lock back within {bound.short}
            </span>
          ) : null}
        </div>
        <div className="toolbar-right">
          <input className="filter" data-view-filter placeholder="Filter cards  ( / )" value={filter} onChange={(e) => setFilter(e.target.value)} aria-label="Filter expired locks" />
        </div>
      </div>
      {res.error ? <ErrorBanner error={res.error} what="Live refresh failed" /> : null}
      {cards.length === 0 ? (
        <EmptyState title={filter ? 'No card matches the filter' : 'No lock expired today'}>
          {filter
            ? 'Clear the filter to see every card.'
            : 'When an agent dies or stalls, the watchdog takes its lock back within the recovery bound; the task returns to Ready marked “previously expired”, and a card shows here.'}
        </EmptyState>
      ) : (
        <>
          <div className="cards" data-testid="expired-cards">
            {cards.slice(0, shown).map((c) => (
              <ExpiredCard key={c.id} card={c} />
            ))}
          </div>
          {cards.length > shown ? (
            <div className="center">
              <button className="btn" onClick={() => setShown(shown + PAGE)}>
                Show {Math.min(PAGE, cards.length - shown)} more of {cards.length - shown}
              </button>
            </div>
          ) : null}
        </>
      )}
    </div>
  );
}

function ExpiredCard({ card: c }: { card: ExpiredLockCard }) {
  const r = expiryReason(c.reason);
  const byOperator = isForceRelease(c.reason);
  const gapS = c.reclaimedAt ? (Date.parse(c.reclaimedAt) - Date.parse(c.expiredAt)) / 1000 : null;
  return (
    <article className={`xcard${c.reclaimedAt ? '' : ' xcard-open'}${byOperator ? ' xcard-operator' : ''}`} data-testid={`expired-card-${c.taskId}`} data-cause={byOperator ? 'operator' : 'watchdog'}>
      <div className="xcard-cause" data-testid="expiry-cause">
        {byOperator ? 'Force-released by an operator' : 'Taken back by the watchdog'}
      </div>
      <header className="xcard-head">
        <button className="link task-link" onClick={() => navigate('queues', c.role, { task: String(c.taskId) })}>
          #{c.taskId} {c.title}
        </button>
        <Badge>{c.role}</Badge>
      </header>
      <dl className="kv kv-tight">
        <dt>Holder</dt>
        <dd>
          <strong>{c.holderName ?? c.holder}</strong> <span className="muted small mono">fence {c.fence}</span>
        </dd>
        <dt>{byOperator ? 'Released' : 'Expired'}</dt>
        <dd>
          <RelativeTime at={c.expiredAt} /> <span className="muted small">{formatDateTime(c.expiredAt)}</span>
        </dd>
        <dt>Why</dt>
        <dd>
          <Badge tone={r.tone}>{r.label}</Badge>
          {byOperator ? (
            <>
              {' '}
              <button className="link small" onClick={() => navigate('audit', null, { subject: `task:${c.taskId}`, type: 'operator.force_release' })}>
                who and why
              </button>
            </>
          ) : null}
        </dd>
        <dt>Re-claimed</dt>
        <dd data-testid="reclaimed">
          {c.reclaimedAt ? (
            <>
              by <strong>{c.reclaimedByName ?? c.reclaimedBy}</strong> <RelativeTime at={c.reclaimedAt} />
              {gapS !== null ? <span className="muted small"> ({formatDurationS(gapS)} later)</span> : null}
            </>
          ) : (
            <span className="text-warn">not yet — back in Ready, marked previously expired</span>
          )}
        </dd>
      </dl>
    </article>
  );
}
