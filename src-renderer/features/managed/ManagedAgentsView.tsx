/**
 * Managed agents: the agent processes Gaffer starts and keeps running. `#/managed` lists them;
 * `#/managed/<name>` shows one: its definition, each process (pid, status, uptime, restarts, last
 * exit, the instance it became) with its recent output, and start / stop / restart for the agent
 * or one instance (each with a reason, audited).
 */
import { useEffect, useMemo, useState } from 'react';
import type { ManagedAction, ManagedAgent, ManagedProcess } from '../../../src-main/common/managed-agents';
import { navigate, useViewRoute } from '../../lib/navigation';
import { Badge } from '../../components/Badge';
import { ReasonDialog } from '../../components/Dialog';
import { EmptyState, ErrorBanner, Spinner } from '../../components/States';
import { Table, type Column } from '../../components/Table';
import { RelativeTime } from '../../components/Time';
import { useNow } from '../../lib/now';
import { useActions, useConsole, useWatch } from '../../store/react';
import { ManagedAgentEditor } from './ManagedAgentEditor';
import { PROCESS_STATUS_META } from '../../lib/status';
import { describeLastExit, formatUptime, MODE_LABELS, summarise } from './logic';
import './managed.css';

interface Acting {
  agent: ManagedAgent;
  action: ManagedAction | 'delete';
  instance?: number;
}

const ACTION_META: Record<ManagedAction | 'delete', { verb: string; danger?: boolean; explain: (instance?: number) => string }> = {
  start: { verb: 'Start', explain: (i) => (i ? `Instance ${i} is started again.` : 'Gaffer starts its processes now, and again whenever Gaffer starts.') },
  stop: {
    verb: 'Stop',
    danger: true,
    explain: (i) =>
      `${i ? `Instance ${i} stops` : 'Every instance stops'} taking work; what runs may finish (up to its grace), then it is stopped and its task handed back. ${i ? 'It stays stopped until you start it or Gaffer restarts.' : 'It stays stopped, also across restarts of Gaffer, until you start it.'}`,
  },
  restart: { verb: 'Restart', explain: (i) => `A new process starts for ${i ? `instance ${i}` : 'each instance'}; once it is up, the old one is drained (it finishes or hands back its work). A failed or crash-looping instance gets a fresh try.` },
  delete: { verb: 'Delete', danger: true, explain: () => 'Its processes are stopped (their tasks handed back) and its token revoked. The definition is removed; the audit log keeps its history.' },
};

function StatusBadge({ p }: { p: ManagedProcess }) {
  const m = PROCESS_STATUS_META[p.status];
  return (
    <Badge tone={m.tone} title={p.message ?? m.hint}>
      <span className="dot" aria-hidden />
      {m.label}
    </Badge>
  );
}

/** While an agent is shown its output is read again this often (output lines come without events). */
const OUTPUT_REFRESH_MS = 2000;

export function ManagedAgentsView() {
  useWatch('managed');
  const route = useViewRoute('managed');
  const list = useConsole((s) => s.managedAgents);
  const { selectManagedAgent, refresh } = useActions();
  const [editing, setEditing] = useState<ManagedAgent | 'new' | null>(null);
  const [acting, setActing] = useState<Acting | null>(null);
  const [filter, setFilter] = useState('');
  const selectedName = route.param;
  const agents = list.data ?? [];
  const selected = agents.find((a) => a.name === selectedName || a.id === selectedName) ?? null;
  useEffect(() => selectManagedAgent(selected?.id ?? null), [selectManagedAgent, selected?.id]);
  useEffect(() => {
    if (!selected) return;
    const t = setInterval(() => void refresh('managed'), OUTPUT_REFRESH_MS);
    return () => clearInterval(t);
  }, [refresh, selected]);

  const rows = useMemo(() => {
    const f = filter.trim().toLowerCase();
    return f ? agents.filter((a) => `${a.name} ${a.role} ${a.command.join(' ')}`.toLowerCase().includes(f)) : agents;
  }, [agents, filter]);

  const columns: Column<ManagedAgent>[] = [
    {
      key: 'name',
      header: 'Agent',
      width: 'minmax(150px, 1fr)',
      render: (a) => (
        <div className="two-line">
          <button className="link strong" onClick={() => navigate('managed', a.name)}>
            {a.name}
          </button>
          <span className="muted small">{MODE_LABELS[a.mode].label}</span>
        </div>
      ),
    },
    { key: 'role', header: 'Role', width: '110px', render: (a) => <Badge>{a.role}</Badge> },
    {
      key: 'status',
      header: 'Processes',
      width: 'minmax(170px, 1fr)',
      render: (a) => {
        const s = summarise(a);
        return <Badge tone={s.tone}>{s.text}</Badge>;
      },
    },
    { key: 'command', header: 'Command', width: 'minmax(160px, 2fr)', render: (a) => <span className="managed-command-cell mono small" title={a.command.join(' ')}>{a.command.join(' ')}</span> },
    { key: 'version', header: 'Version', width: '70px', align: 'right', render: (a) => a.version },
  ];

  return (
    <div className="view" data-testid="view-managed">
      <section className="panel">
        <header className="panel-head">
          <h2>Managed agents</h2>
          <input className="filter" data-view-filter placeholder="Filter by name, role, command  ( / )" value={filter} onChange={(e) => setFilter(e.target.value)} aria-label="Filter managed agents" />
          <button className="btn btn-primary" onClick={() => setEditing('new')}>
            New managed agent
          </button>
        </header>
        {list.error ? <ErrorBanner error={list.error} what={list.data ? 'Could not refresh (showing the last data)' : 'Could not load the managed agents'} onRetry={() => void refresh('managed')} /> : null}
        {!list.data ? (
          list.error ? null : <Spinner label="Loading managed agents…" />
        ) : (
          <Table
            columns={columns}
            rows={rows}
            rowKey={(a) => a.id}
            rowHeight={48}
            selectedKey={selected?.id ?? null}
            onRowClick={(a) => navigate('managed', a.name)}
            testId="managed-table"
            ariaLabel="Managed agents"
            empty={
              agents.length === 0 ? (
                <EmptyState title="No managed agents yet">
                  A managed agent is a command Gaffer starts, keeps running and stops with itself: a CLI agent such as Claude Code or Codex run once per task, or an agent program of
                  your own. Gaffer creates its token. Start with <strong>New managed agent</strong>.
                </EmptyState>
              ) : (
                <EmptyState title="No agent matches" compact>
                  Change the filter.
                </EmptyState>
              )
            }
          />
        )}
      </section>
      {selected ? <AgentDetail agent={selected} onEdit={() => setEditing(selected)} onAct={(action, instance) => setActing({ agent: selected, action, ...(instance !== undefined ? { instance } : {}) })} /> : null}
      {editing ? <ManagedAgentEditor agent={editing === 'new' ? null : editing} onClose={() => setEditing(null)} onSaved={(a) => navigate('managed', a.name)} /> : null}
      {acting ? <ActionDialog acting={acting} onClose={() => setActing(null)} /> : null}
    </div>
  );
}

function ActionDialog({ acting, onClose }: { acting: Acting; onClose: () => void }) {
  const { deleteManagedAgent, controlManagedAgent, toast } = useActions();
  const meta = ACTION_META[acting.action];
  const target = acting.instance ? `${acting.agent.name}-${acting.instance}` : acting.agent.name;
  return (
    <ReasonDialog
      title={`${meta.verb} — ${target}`}
      explain={meta.explain(acting.instance)}
      confirmLabel={meta.verb}
      {...(meta.danger ? { danger: true } : {})}
      onClose={onClose}
      onConfirm={async (reason) => {
        if (acting.action === 'delete') {
          await deleteManagedAgent(acting.agent.id, reason);
          navigate('managed');
        } else {
          await controlManagedAgent(acting.agent.id, acting.action, reason, acting.instance);
        }
        toast('success', `${meta.verb}: ${target}`);
      }}
    />
  );
}

function AgentDetail({ agent, onEdit, onAct }: { agent: ManagedAgent; onEdit: () => void; onAct: (a: ManagedAction | 'delete', instance?: number) => void }) {
  const detail = useConsole((s) => (s.managedDetail.data?.id === agent.id ? s.managedDetail : null));
  const now = useNow(1000);
  const a = detail?.data ?? agent;
  const [shownInstance, setShownInstance] = useState<number | null>(null);
  const withOutput = a.processes.filter((p) => p.status !== 'draining');
  const output = withOutput.find((p) => p.instance === shownInstance) ?? withOutput[0];

  const columns: Column<ManagedProcess>[] = [
    {
      key: 'instance',
      header: '#',
      width: '28px',
      render: (p) => (
        <button className="link strong" onClick={() => setShownInstance(p.instance)} aria-label={`Show the output of instance ${p.instance}`} title="Show its output">
          {p.instance}
        </button>
      ),
    },
    { key: 'status', header: 'Status', width: '124px', render: (p) => <StatusBadge p={p} /> },
    { key: 'pid', header: 'PID', width: '64px', align: 'right', render: (p) => <span className="mono">{p.pid ?? '—'}</span> },
    { key: 'uptime', header: 'Up', width: '76px', render: (p) => (p.startedAt ? formatUptime(p.startedAt, now) : p.nextStartAt ? <span className="muted">again <RelativeTime at={p.nextStartAt} /></span> : '—') },
    { key: 'restarts', header: 'Restarts', width: '64px', align: 'right', render: (p) => p.restarts },
    { key: 'exit', header: 'Last exit', width: 'minmax(100px, 1.2fr)', render: (p) => <span className="small" title={p.lastExit?.at}>{describeLastExit(p)}</span> },
    {
      key: 'inst',
      header: 'Became',
      width: 'minmax(90px, 1fr)',
      render: (p) => (p.instanceId ? <button className="link mono small managed-command-cell" onClick={() => navigate('instances')} title={`${p.instanceId}: show in Instances`}>{p.instanceId}</button> : <span className="muted small managed-command-cell" title={p.message ?? undefined}>{p.message ?? 'not connected yet'}</span>),
    },
    {
      key: 'act',
      header: '',
      width: '124px',
      render: (p) =>
        p.status === 'draining' ? (
          <span className="muted small">being replaced</span>
        ) : (
          <div className="managed-row-actions">
            {p.status === 'stopped' && a.desired === 'running' ? (
              <button className="btn btn-small" onClick={() => onAct('start', p.instance)}>
                Start
              </button>
            ) : (
              <button className="btn btn-small" onClick={() => onAct('restart', p.instance)} disabled={a.desired === 'stopped'}>
                Restart
              </button>
            )}
            <button className="btn btn-small" onClick={() => onAct('stop', p.instance)} disabled={p.status === 'stopped'}>
              Stop
            </button>
          </div>
        ),
    },
  ];

  return (
    <section className="panel" data-testid="managed-detail">
      <header className="panel-head">
        <h2>{a.name}</h2>
        <Badge tone={summarise(a).tone}>{summarise(a).text}</Badge>
        <span className="spacer" />
        {a.desired === 'stopped' ? (
          <button className="btn btn-primary" onClick={() => onAct('start')}>
            Start
          </button>
        ) : (
          <>
            <button className="btn" onClick={() => onAct('restart')}>
              Restart
            </button>
            <button className="btn btn-danger" onClick={() => onAct('stop')}>
              Stop
            </button>
          </>
        )}
        <button className="btn" onClick={onEdit}>
          Change…
        </button>
        <button className="btn btn-danger" onClick={() => onAct('delete')}>
          Delete
        </button>
      </header>
      {!a.supervised ? <p className="muted">This Gaffer does not run managed agents (it started without its local server), so nothing of this agent is running.</p> : null}
      <dl className="kv">
        <dt>Mode</dt>
        <dd>{MODE_LABELS[a.mode].label}</dd>
        <dt>Role</dt>
        <dd>{a.role}</dd>
        <dt>Command</dt>
        <dd className="managed-command">{a.command.map((x) => (/[\s"']/.test(x) ? JSON.stringify(x) : x)).join(' ')}</dd>
        <dt>Directory</dt>
        <dd className="mono">{a.cwd ?? 'Gaffer’s own'}</dd>
        {a.mode === 'per_task' ? (
          <>
            <dt>Per run</dt>
            <dd>
              {a.timeoutS ? `stopped after ${a.timeoutS} s` : 'no time limit'}
              {a.shell ? ' · through the shell' : ''}
              {a.parse ? ` · output read as ${a.parse}` : ''}
            </dd>
          </>
        ) : null}
        <dt>Environment</dt>
        <dd className="mono">{Object.keys(a.env).length ? Object.keys(a.env).join(', ') : 'Gaffer’s own only'}</dd>
        <dt>Changed</dt>
        <dd>
          version {a.version}, <RelativeTime at={a.updatedAt} granularityMs={10_000} /> by {a.updatedBy}
        </dd>
      </dl>
      <Table
        columns={columns}
        rows={a.processes}
        rowKey={(p) => `${p.instance}:${p.pid ?? 'none'}:${p.status}`}
        rowHeight={44}
        onRowClick={(p) => setShownInstance(p.instance)}
        testId="managed-processes"
        ariaLabel={`Processes of ${a.name}`}
      />
      {output ? (
        <>
          <h3>
            Recent output of {a.name}-{output.instance}
          </h3>
          {output.recentOutput && output.recentOutput.length > 0 ? (
            <pre className="json managed-output" data-testid="managed-output" tabIndex={0}>
              {output.recentOutput.map((l, i) => (
                <div key={i} className={l.stream === 'stderr' ? 'stderr' : undefined}>
                  {l.text}
                </div>
              ))}
            </pre>
          ) : (
            <p className="muted">{detail ? 'Nothing printed yet.' : 'Loading…'}</p>
          )}
        </>
      ) : null}
    </section>
  );
}
