import { useEffect, useMemo, useState, type ReactNode } from 'react';
import type { InstanceView } from '../../../src-main/common/console-api';
import type { InstanceStatus } from '../../../src-main/common/model';
import { navigate, replaceRoute, useViewRoute } from '../../lib/navigation';
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
  const route = useViewRoute('instances');
  // "Connect an agent" (dashboard) lands here with the token form open; the URL forgets it.
  const [connect] = useState(route.query.connect === '1');
  useEffect(() => {
    if (connect) replaceRoute('instances');
  }, [connect]);
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

  const graceS = config?.reconnectGraceS;
  const columns: Column<InstanceView>[] = [
    {
      key: 'status',
      header: 'Status',
      width: '118px',
      render: (i) =>
        i.status === 'disconnected' && i.disconnectedAt && graceS !== undefined ? (
          <div className="two-line">
            <span>
              <InstanceStatusBadge status={i.status} />
            </span>
            <span className="small" data-testid={`grace-${i.id}`} title="It may reconnect and keep its locks until then; after that it is offline and its locks expire.">
              back within <Countdown expiresAt={new Date(Date.parse(i.disconnectedAt) + graceS * 1000).toISOString()} windowS={graceS} label="reconnect grace ends" />
            </span>
          </div>
        ) : (
          <InstanceStatusBadge status={i.status} />
        ),
    },
    {
      key: 'name',
      header: 'Instance',
      width: 'minmax(160px, 1.4fr)',
      render: (i) => (
        <div className="two-line">
          <strong>{i.name}</strong>
          <span className="muted small" title={`${i.id}${i.version ? ` · version ${i.version}` : ''}`}>
            <span className="mono">{i.id}</span>
            {i.version ? ` · v${i.version}` : ''}
          </span>
        </div>
      ),
    },
    { key: 'role', header: 'Role', width: '96px', render: (i) => <Badge>{i.role}</Badge> },
    {
      key: 'seen',
      header: 'Heartbeat',
      width: '126px',
      render: (i) => {
        const late = i.status === 'online' && now - Date.parse(i.lastHeartbeatAt) > staleMs;
        return (
          <div className="two-line">
            <span className={late ? 'text-warn' : undefined} title={late ? 'later than two heartbeat intervals' : 'last heartbeat'}>
              <RelativeTime at={i.lastHeartbeatAt} />
            </span>
            <span className="muted small">
              {i.status === 'online' ? (
                <>
                  connected <RelativeTime at={i.connectedAt} granularityMs={10_000} />
                </>
              ) : i.disconnectedAt ? (
                <>
                  left <RelativeTime at={i.disconnectedAt} granularityMs={10_000} />
                </>
              ) : null}
            </span>
          </div>
        );
      },
    },
    {
      key: 'held',
      header: 'Holds',
      width: 'minmax(180px, 2fr)',
      // A lock taken away comes first: the agent was told, but may still be working on it.
      render: (i) => (
        <FirstTwo items={[...i.lostLocks.map((lost) => ({ lost })), ...i.held.map((held) => ({ held }))]} none="nothing">
          {(x) =>
            'lost' in x ? (
              <button
                key={`lost-${x.lost.taskId}`}
                className="held-item text-warn"
                onClick={() => navigate('queues', i.role, { task: String(x.lost.taskId) })}
                title={`${LOST_WORDS[x.lost.reason] ?? 'taken away'}: the agent was told to stop and has not reported since`}
              >
                <span className="task-id">#{x.lost.taskId}</span> <span className="held-title">lost its lock · {x.lost.title}</span>
              </button>
            ) : (
              <button key={x.held.taskId} className="held-item" onClick={() => navigate('queues', i.role, { task: String(x.held.taskId) })} title={x.held.title}>
                <span className="task-id">#{x.held.taskId}</span> <span className="held-title">{x.held.title}</span> <Countdown expiresAt={x.held.expiresAt} windowS={config?.lockWindowS} />
              </button>
            )
          }
        </FirstTwo>
      ),
    },
    {
      key: 'run',
      header: 'Current run',
      width: 'minmax(120px, 1fr)',
      render: (i) => (
        <FirstTwo items={i.currentRuns} none="none">
          {(r) => (
            <button key={r.runId} className="held-item" onClick={() => navigate('runs', r.jobId, { slot: r.slot })} title={`run ${r.runId}`}>
              <span className="held-title">
                {r.job} <span className="mono small">{r.slot}</span>
              </span>
            </button>
          )}
        </FirstTwo>
      ),
    },
  ];

  return (
    <div className="view" data-testid="view-instances">
      <section className="panel">
        <header className="panel-head">
          <h2>Instances</h2>
          <div className="seg" role="radiogroup" aria-label="Status">
            {(
              [
                ['live', `Active ${counts.online + counts.disconnected}`, 'connected, or disconnected and still within the reconnect grace'],
                ['online', `Connected ${counts.online}`, 'connected now'],
                ['disconnected', `Reconnecting ${counts.disconnected}`, 'disconnected, within the reconnect grace: they keep their locks if they come back in time'],
                ['offline', `Offline ${counts.offline}`, 'gone: their locks were taken back'],
                ['all', `All ${list.length}`, 'every instance Gaffer has seen'],
              ] as Array<[StatusFilter, string, string]>
            ).map(([k, label, hint]) => (
              <button key={k} role="radio" aria-checked={status === k} className={`seg-btn${status === k ? ' active' : ''}`} onClick={() => setStatus(k)} title={hint} data-testid={`instances-filter-${k}`}>
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
                <EmptyState title="No agent has connected yet">
                  Create an agent token below: the next screen shows the command that starts an agent with it, for this server. Agents appear here as soon as they say hello.
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
      <TokensPanel connect={connect} />
    </div>
  );
}

/** The first two of a cell's items, then "+N more" (the row stays one height). */
function FirstTwo<T>({ items, none, children }: { items: T[]; none: string; children: (item: T) => ReactNode }) {
  if (items.length === 0) return <span className="muted">{none}</span>;
  return (
    <div className="held">
      {items.slice(0, 2).map(children)}
      {items.length > 2 ? <span className="muted small">+{items.length - 2} more</span> : null}
    </div>
  );
}
