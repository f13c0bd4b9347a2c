import { useMemo, useState } from 'react';
import type { InstanceView } from '../../../src-main/common/console-api';
import type { InstanceStatus } from '../../../src-main/common/model';
import { navigate } from '../../lib/navigation';
import { Badge, InstanceStatusBadge } from '../../components/Badge';
import { EmptyState, ErrorBanner, Spinner } from '../../components/States';
import { Table, type Column } from '../../components/Table';
import { Countdown, RelativeTime } from '../../components/Time';
import { formatCount } from '../../lib/format';
import { useNow } from '../../lib/now';
import { useActions, useConsole, useWatch } from '../../store/react';
import { TokensPanel } from './TokensPanel';
import { filterInstances, type StatusFilter } from './logic';

/** Why a lock was taken away, in the words of the "lost its lock" tooltip. */
const LOST_WORDS: Record<string, string> = {
  force_release: 'Force-released by an operator',
  expired: 'Its lock expired',
  cancelled: 'The task was cancelled',
  budget: 'Stopped by a budget cap',
};

export function InstancesView() {
  useWatch('instances', 'settings', 'tokens');
  const res = useConsole((s) => s.instances);
  const config = useConsole((s) => s.settings.data?.config);
  const { refresh } = useActions();
  const [status, setStatus] = useState<StatusFilter>('live');
  const [text, setText] = useState('');
  const now = useNow(5000);
  const list = res.data ?? [];
  const rows = useMemo(() => filterInstances(list, status, text), [list, status, text]);
  const counts = useMemo(() => {
    const c = { online: 0, disconnected: 0, offline: 0 } as Record<InstanceStatus, number>;
    for (const i of list) c[i.status]++;
    return c;
  }, [list]);
  const staleMs = (config?.heartbeatIntervalMs ?? 20_000) * 2;

  const columns: Column<InstanceView>[] = [
    { key: 'status', header: 'Status', width: '128px', render: (i) => <InstanceStatusBadge status={i.status} /> },
    {
      key: 'name',
      header: 'Instance',
      width: 'minmax(180px, 1.4fr)',
      render: (i) => (
        <div className="two-line">
          <strong>{i.name}</strong>
          <span className="mono muted small" title={i.id}>
            {i.id}
          </span>
        </div>
      ),
    },
    { key: 'role', header: 'Role', width: '110px', render: (i) => <Badge>{i.role}</Badge> },
    {
      key: 'hb',
      header: 'Last heartbeat',
      width: '130px',
      render: (i) => {
        const late = i.status === 'online' && now - Date.parse(i.lastHeartbeatAt) > staleMs;
        return (
          <span className={late ? 'text-warn' : undefined} title={late ? 'later than two heartbeat intervals' : undefined}>
            <RelativeTime at={i.lastHeartbeatAt} />
          </span>
        );
      },
    },
    {
      key: 'since',
      header: 'Connected',
      width: '120px',
      render: (i) => (i.status === 'online' ? <RelativeTime at={i.connectedAt} granularityMs={10_000} /> : i.disconnectedAt ? <span className="muted">left <RelativeTime at={i.disconnectedAt} granularityMs={10_000} /></span> : '—'),
    },
    {
      key: 'held',
      header: 'Holds',
      width: 'minmax(220px, 2fr)',
      render: (i) => {
        const lost = i.lostLocks;
        if (i.held.length === 0 && lost.length === 0) return <span className="muted">nothing</span>;
        // A lock taken away comes first: the agent was told, but may still be working on it.
        const shownLost = lost.slice(0, 2);
        const shownHeld = i.held.slice(0, 2 - shownLost.length);
        const more = lost.length + i.held.length - shownLost.length - shownHeld.length;
        return (
          <div className="held">
            {shownLost.map((l) => (
              <button
                key={`lost-${l.taskId}`}
                className="held-item text-warn"
                onClick={() => navigate('queues', i.role, { task: String(l.taskId) })}
                title={`${LOST_WORDS[l.reason] ?? 'taken away'}: the agent was told to stop and has not reported since`}
              >
                <span className="task-id">#{l.taskId}</span> <span className="held-title">lost its lock · {l.title}</span>
              </button>
            ))}
            {shownHeld.map((h) => (
              <button key={h.taskId} className="held-item" onClick={() => navigate('queues', i.role, { task: String(h.taskId) })} title={h.title}>
                <span className="task-id">#{h.taskId}</span> <span className="held-title">{h.title}</span> <Countdown expiresAt={h.expiresAt} windowS={config?.lockWindowS} />
              </button>
            ))}
            {more > 0 ? <span className="muted small">+{more} more</span> : null}
          </div>
        );
      },
    },
    {
      key: 'run',
      header: 'Current run',
      width: '110px',
      render: () => <span className="muted" title="no run in progress">—</span>,
    },
    { key: 'ver', header: 'Version', width: '80px', render: (i) => <span className="muted small">{i.version ?? '—'}</span> },
  ];

  return (
    <div className="view" data-testid="view-instances">
      <section className="panel">
        <header className="panel-head">
          <h2>Instances</h2>
          <div className="seg" role="radiogroup" aria-label="Status">
            {(
              [
                ['live', `Connected ${counts.online + counts.disconnected}`],
                ['online', `Online ${counts.online}`],
                ['disconnected', `Disconnected ${counts.disconnected}`],
                ['offline', `Offline ${counts.offline}`],
                ['all', `All ${list.length}`],
              ] as Array<[StatusFilter, string]>
            ).map(([k, label]) => (
              <button key={k} role="radio" aria-checked={status === k} className={`seg-btn${status === k ? ' active' : ''}`} onClick={() => setStatus(k)}>
                {label}
              </button>
            ))}
          </div>
          <input className="filter" data-view-filter placeholder="Filter by name, id, role  ( / )" value={text} onChange={(e) => setText(e.target.value)} aria-label="Filter instances" />
        </header>
        {res.error ? <ErrorBanner error={res.error} what={res.data ? 'Could not refresh instances (showing the last data)' : 'Could not load instances'} onRetry={() => void refresh('instances')} /> : null}
        {!res.data ? (
          res.error ? null : <Spinner label="Loading instances…" />
        ) : (
          <Table
            columns={columns}
            rows={rows}
            rowKey={(i) => i.id}
            rowHeight={48}
            maxHeight="min(60vh, 640px)"
            rowTone={(i) => (i.status === 'offline' ? 'dim' : undefined)}
            testId="instances-table"
            ariaLabel="Instances"
            empty={
              list.length === 0 ? (
                <EmptyState title="No agents online">
                  Create a token below and start <code>examples/worker-agent.ts</code> with it (<code>GAFFER_TOKEN=… npx tsx examples/worker-agent.ts</code>). Agents appear here as soon
                  as they say hello.
                </EmptyState>
              ) : (
                <EmptyState title="No instance matches" compact>
                  {counts.online + counts.disconnected === 0 && status === 'live'
                    ? `All ${formatCount(counts.offline)} known instances are offline. Start an agent, or show Offline.`
                    : 'Change the status or the filter.'}
                </EmptyState>
              )
            }
          />
        )}
      </section>
      <TokensPanel />
    </div>
  );
}
