import { useMemo, useState } from 'react';
import { INBOX_KIND_LABELS, INBOX_KINDS, type InboxCounts } from '../../../src-main/common/attention';
import { navigate } from '../../lib/navigation';
import { Badge } from '../../components/Badge';
import { EmptyState, ErrorBanner, Spinner, Stat } from '../../components/States';
import { RelativeTime } from '../../components/Time';
import { formatCount, formatDurationS } from '../../lib/format';
import { useNow } from '../../lib/now';
import { useActions, useConsole, useWatch } from '../../store/react';
import { DistributionChart, ThroughputChart } from './Charts';
import { SpendCaps } from './SpendCaps';
import { ConnectFirstAgent } from './ConnectFirstAgent';
import { SpendForecast } from './SpendForecast';
import { LogSearchPanel } from './LogSearchPanel';
import { UsagePanel } from './UsagePanel';
import { recoveryExplain } from '../../lib/recovery';
import { crashLooping, distributionRows, localDay, queueHealth, throughputRows, worstStuck } from './logic';

export function DashboardView() {
  useWatch('dashboard', 'settings', 'expiredLocks', 'instances', 'managed');
  const dash = useConsole((s) => s.dashboard);
  const managed = useConsole((s) => s.managedAgents.data);
  const loops = useMemo(() => crashLooping(managed ?? []), [managed]);
  const instances = useConsole((s) => s.instances.data);
  const settings = useConsole((s) => s.settings.data);
  const expired = useConsole((s) => s.expiredLocks.data);
  const { refresh } = useActions();
  const now = useNow(60_000);
  const d = dash.data;
  const health = useMemo(() => (d ? queueHealth(d.roles) : []), [d]);
  const stuck = worstStuck(health);
  const dist = useMemo(() => distributionRows(health), [health]);
  const through = useMemo(() => (d ? throughputRows(d.throughput, localDay(new Date(now))) : []), [d, now]);

  if (!d) {
    if (dash.error) return <ErrorBanner error={dash.error} what="Could not load the dashboard" onRetry={() => void refresh('dashboard')} />;
    return <Spinner label="Loading the dashboard…" />;
  }
  const rec = recoveryExplain(d.recoveryBoundS, settings?.config ?? null);
  const totalTasks = d.roles.reduce((n, r) => n + r.ready + r.waiting + r.inProgress + r.blocked + r.failed + r.done, 0);

  return (
    <div className="view dashboard" data-testid="view-dashboard">
      {dash.error ? <ErrorBanner error={dash.error} what="Live refresh failed; showing the last data" /> : null}
      {instances && instances.length === 0 ? <ConnectFirstAgent /> : null}
      <div className="stats">
        <Stat
          label="Online instances"
          value={formatCount(d.onlineInstances)}
          tone={d.onlineInstances === 0 ? 'warn' : 'ok'}
          sub={d.onlineInstances === 0 ? 'no agent is connected' : 'connected agents'}
          onClick={() => navigate('instances')}
          testId="stat-online"
        />
        <Stat label="Completed this week" value={formatCount(d.completedThisWeek)} sub="tasks reported done" testId="stat-completed" />
        <Stat
          label="Expired locks today"
          value={formatCount(d.expiredLocksToday)}
          tone={d.expiredLocksToday > 0 ? 'warn' : undefined}
          sub="by the watchdog or an operator"
          onClick={() => navigate('locks')}
          testId="stat-expired"
        />
        <Stat
          label="Runs needing attention"
          value={formatCount(d.runsNeedingAttention)}
          tone={d.runsNeedingAttention > 0 ? 'bad' : undefined}
          sub="failed, held or missed"
          onClick={() => navigate('runs')}
          testId="stat-runs"
        />
        <Stat
          label="Recovery bound"
          value={rec.short}
          sub={
            <span title={rec.long}>
              at most, for an abandoned task
            </span>
          }
          testId="stat-recovery"
        />
      </div>

      <InboxStrip counts={d.inbox} />
      {loops.map((l) => (
        <div key={l.name} className="callout callout-bad" role="status" data-testid="crash-loop-callout">
          <span className="callout-text">
            <strong>Agent {l.name} is crash looping</strong>
            {l.instances ? ` (${l.instances})` : ''} — it keeps exiting right after it starts{l.lastExit ? ` (last exit: ${l.lastExit})` : ''}.
          </span>
          <button className="btn btn-small" onClick={() => navigate('managed', l.name)}>
            Open the agent
          </button>
        </div>
      ))}
      {d.budgets.caps.length > 0 || (d.budgets.windows?.length ?? 0) > 0 || d.budgets.measured ? <SpendCaps budgets={d.budgets} /> : <SpendCapsHint />}

      {d.killSwitch ? (
        <div className="callout callout-bad" role="alert">
          <strong>Kill switch is ON</strong>
          {d.killSwitchBy ? (
            <span data-testid="kill-by">
              {' '}
              — turned on by <strong>{d.killSwitchBy.by}</strong> <RelativeTime at={d.killSwitchBy.at} />: “{d.killSwitchBy.reason}”.
            </span>
          ) : (
            '.'
          )}{' '}
          No job is triggered until it is turned off in Settings. Claims of one-off tasks continue.
          <button className="btn btn-small" onClick={() => navigate('settings')}>
            Open settings
          </button>
        </div>
      ) : null}

      {stuck ? (
        <div className="callout callout-warn" data-testid="stuck-callout">
          <strong>Stuck queue: {stuck.role}</strong> — {stuck.stuck}.{' '}
          <button className="link" onClick={() => navigate('queues', stuck.role)}>
            Open the {stuck.role} queue
          </button>
        </div>
      ) : null}

      <div className="grid-2">
        <section className="panel">
          <header className="panel-head">
            <h2>Distribution by role</h2>
            <span className="muted">which role’s queue is stuck: oldest ready task first</span>
          </header>
          {d.roles.length === 0 ? (
            <EmptyState title="No tasks yet" compact action={<button className="btn btn-small" onClick={() => navigate('queues')}>Create a task</button>}>
              Create a task under Role queues, or let an agent create one with <code>create_task</code>.
            </EmptyState>
          ) : (
            <>
              <DistributionChart rows={dist} />
              <div className="health" data-testid="queue-health">
                <div className="health-row health-head">
                  <span>Role</span>
                  <span className="num">Ready</span>
                  <span className="num">Waiting</span>
                  <span className="num">In prog.</span>
                  <span className="num">Blocked</span>
                  <span className="num">Online</span>
                  <span className="num">Oldest ready</span>
                </div>
                {health.slice(0, 12).map((r) => (
                  <button key={r.role} className={`health-row${r.stuck ? ' health-stuck' : r.slow ? ' health-slow' : ''}`} onClick={() => navigate('queues', r.role)} title={r.stuck ?? r.slow ?? undefined}>
                    <span className="health-role">
                      {r.stuck ? <span className="warn-icon" aria-label="stuck">⚠</span> : null}
                      {r.role}
                    </span>
                    <span className="num">{formatCount(r.ready)}</span>
                    <span className="num">{formatCount(r.waiting)}</span>
                    <span className="num">{formatCount(r.inProgress)}</span>
                    <span className="num">{formatCount(r.blocked + r.failed)}</span>
                    <span className={`num${r.onlineInstances === 0 && r.ready > 0 ? ' text-bad' : ''}`}>{r.onlineInstances}</span>
                    <span className="num">{r.oldestReadyAgeMs === null ? '—' : formatDurationS(r.oldestReadyAgeMs / 1000)}</span>
                  </button>
                ))}
              </div>
            </>
          )}
        </section>

        <section className="panel">
          <header className="panel-head">
            <h2>Throughput, last 7 days</h2>
            <span className="muted">{formatCount(totalTasks)} tasks on the board</span>
          </header>
          <ThroughputChart rows={through} />
          <div className="subgrid">
            <div>
              <h3>Next triggers</h3>
              {d.nextTriggers.length === 0 ? (
                <p className="muted small">No job is due: create or enable a job.</p>
              ) : (
                <ul className="plain-list">
                  {d.nextTriggers.slice(0, 5).map((t) => (
                    <li key={`${t.jobId}-${t.slot}`}>
                      <button className="link mono" onClick={() => navigate('jobs', t.jobId)}>
                        {t.job}
                      </button>{' '}
                      <Badge>{t.slot}</Badge> <RelativeTime at={t.at} />
                    </li>
                  ))}
                </ul>
              )}
            </div>
            <div>
              <h3>Latest expired locks</h3>
              {!expired || expired.length === 0 ? (
                <p className="muted small">None today. When an agent dies, its lock expires within the recovery bound and shows here.</p>
              ) : (
                <ul className="plain-list">
                  {[...expired]
                    .sort((a, b) => Date.parse(b.expiredAt) - Date.parse(a.expiredAt))
                    .slice(0, 4)
                    .map((c) => (
                    <li key={c.id}>
                      <button className="link" onClick={() => navigate('locks')}>
                        #{c.taskId} {c.title}
                      </button>{' '}
                      <span className="muted small">
                        from {c.holderName ?? c.holder} · <RelativeTime at={c.expiredAt} />
                      </span>
                    </li>
                  ))}
                </ul>
              )}
            </div>
          </div>
        </section>
        <UsagePanel now={now} />
        <SpendForecast settings={d.budgets.settings} />
        <LogSearchPanel now={now} />
      </div>
      {d.onlineInstances === 0 ? (
        <EmptyState title="No agents online">
          Create a token under <button className="link" onClick={() => navigate('instances')}>Instances</button> and start{' '}
          <code>examples/worker-agent.ts</code> with it.
        </EmptyState>
      ) : null}
    </div>
  );
}

/** What waits in the inbox, by kind; each kind opens the inbox filtered to it. */
function InboxStrip({ counts }: { counts: InboxCounts }) {
  const { setInboxFilter } = useActions();
  const open = (kind: (typeof INBOX_KINDS)[number] | null) => {
    setInboxFilter({ state: 'open', kind });
    navigate('inbox');
  };
  if (counts.open === 0) {
    return (
      <div className="callout callout-ok inbox-strip" data-testid="dashboard-inbox">
        <strong>Inbox is empty.</strong> <span className="muted">Nothing needs you{counts.snoozed > 0 ? ` now (${counts.snoozed} snoozed)` : ''}.</span>
      </div>
    );
  }
  return (
    <div className={`callout ${counts.critical > 0 ? 'callout-bad' : 'callout-warn'} inbox-strip`} role="status" data-testid="dashboard-inbox">
      <strong>
        {formatCount(counts.open)} item{counts.open === 1 ? '' : 's'} in the inbox{counts.critical > 0 ? ` (${formatCount(counts.critical)} critical)` : ''}:
      </strong>
      {INBOX_KINDS.filter((k) => (counts.byKind[k] ?? 0) > 0).map((k) => (
        <button key={k} className="link" onClick={() => open(k)}>
          {formatCount(counts.byKind[k] ?? 0)} {INBOX_KIND_LABELS[k].toLowerCase()}
        </button>
      ))}
      <button className="btn btn-small" onClick={() => open(null)}>
        Open the inbox
      </button>
    </div>
  );
}

/** No cap and no spend reported: one line, with the way to set a cap. */
function SpendCapsHint() {
  const dash = useConsole((s) => s.dashboard.data);
  const [open, setOpen] = useState(false);
  if (!dash) return null;
  return open ? (
    <SpendCaps budgets={dash.budgets} />
  ) : (
    <div className="muted small" data-testid="spend-caps-hint">
      No daily spend cap is set.{' '}
      <button className="link" onClick={() => setOpen(true)}>
        Set spend caps
      </button>
    </div>
  );
}
