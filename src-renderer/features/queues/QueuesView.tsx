import { useEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import type { UiError } from '../../lib/errors';
import type { RolePause } from '../../../src-main/common/job-schema';
import type { Task, TaskStatus } from '../../../src-main/common/model';
import { navigate, replaceRoute, useViewRoute } from '../../lib/navigation';
import { Badge, TaskStatusBadge } from '../../components/Badge';
import { ReasonDialog } from '../../components/Dialog';
import { EmptyState, ErrorBanner, Spinner } from '../../components/States';
import { Countdown, RelativeTime } from '../../components/Time';
import { VirtualList } from '../../components/VirtualList';
import { formatCount, formatDateTime, formatDurationS } from '../../lib/format';
import { useListKeys } from '../../lib/list-keys';
import { BOARD_STATUS_META } from '../../lib/status';
import { useActions, useConsole, useWatch } from '../../store/react';
import { actionsFor, blockersOf, COLUMNS, columnTotals, groupIntoColumns, TASK_ACTION_KEYS, type ColumnId, type TaskPaneAction } from './logic';
import { CreateTaskDialog, TaskActionDialog } from './TaskDialogs';
import { TaskDetail } from './TaskDetail';

const CARD_H = 78;

export function QueuesView() {
  useWatch('roles', 'queue', 'instances', 'settings');
  const route = useViewRoute('queues');
  const roles = useConsole((s) => s.roles);
  const queue = useConsole((s) => s.queue);
  const instances = useConsole((s) => s.instances.data);
  const lockWindowS = useConsole((s) => s.settings.data?.config.lockWindowS);
  const { selectRole, loadMoreTasks, refresh } = useActions();
  const [filter, setFilter] = useState('');
  const [creating, setCreating] = useState(false);
  const [acting, setActing] = useState<{ task: Task; kind: TaskPaneAction } | null>(null);

  const roleNames = useMemo(() => (roles.data ?? []).map((r) => r.role).sort(), [roles.data]);
  const role = route.param;
  const selectedTaskId = route.query.task ? Number(route.query.task) : null;

  // Pick a role when none is in the URL.
  useEffect(() => {
    if (!role && roleNames.length > 0) replaceRoute('queues', roleNames[0]!);
  }, [role, roleNames]);
  useEffect(() => {
    selectRole(role);
  }, [role, selectRole]);

  const names = useMemo(() => new Map((instances ?? []).map((i) => [i.id, i.name])), [instances]);
  const allLoaded = useMemo(() => Object.values(queue.columns).flatMap((c) => c.items), [queue.columns]);
  const known = useMemo(() => new Map(allLoaded.map((t) => [t.id, t])), [allLoaded]);
  const filtered = useMemo(() => {
    const f = filter.trim().toLowerCase();
    if (!f) return allLoaded;
    return allLoaded.filter((t) => `#${t.id} ${t.title} ${t.lock ? (names.get(t.lock.instanceId) ?? t.lock.instanceId) : ''}`.toLowerCase().includes(f));
  }, [allLoaded, filter, names]);
  const grouped = useMemo(() => groupIntoColumns(filtered), [filtered]);
  const summary = roles.data?.find((r) => r.role === role);
  const totals = columnTotals(summary);
  const selected = selectedTaskId !== null ? (known.get(selectedTaskId) ?? null) : null;

  const openTask = (t: Task) => navigate('queues', role, { task: String(t.id) });
  // The keyboard (lib/list-keys): j/k walk the cards column by column, left to right; Enter opens;
  // a/r/c open the pane's unblock / retry / cancel dialog for the card under the cursor.
  const flat = useMemo(() => COLUMNS.flatMap((c) => grouped[c.id]), [grouped]);
  const firstOf = useMemo(() => {
    let n = 0;
    return Object.fromEntries(COLUMNS.map((c) => [c.id, (n += grouped[c.id].length) - grouped[c.id].length])) as Record<ColumnId, number>;
  }, [grouped]);
  const boardRef = useRef<HTMLDivElement>(null);
  const act = (kind: TaskPaneAction) => (i: number) => {
    const t = flat[i];
    if (t && actionsFor(t).includes(kind)) setActing({ task: t, kind });
  };
  const { cursor } = useListKeys({
    count: flat.length,
    root: () => boardRef.current,
    onOpen: (i) => openTask(flat[i]!),
    actions: Object.fromEntries(Object.entries(TASK_ACTION_KEYS).map(([kind, key]) => [key, act(kind as TaskPaneAction)])),
  });

  if (!roles.data) {
    if (roles.error) return <ErrorBanner error={roles.error} what="Could not load the roles" onRetry={() => void refresh('roles')} />;
    return <Spinner label="Loading roles…" />;
  }

  return (
    <div className="view queues" data-testid="view-queues">
      <div className="toolbar">
        <div className="tabs" role="tablist" aria-label="Roles">
          {roleNames.map((r) => {
            const s = roles.data!.find((x) => x.role === r)!;
            return (
              <button key={r} role="tab" aria-selected={r === role} className={`tab${r === role ? ' active' : ''}`} onClick={() => navigate('queues', r)} data-testid={`role-tab-${r}`}>
                {r}
                <span className="tab-count">{formatCount(s.ready + s.waiting + s.inProgress + s.blocked + s.failed)}</span>
                {s.ready > 0 && s.onlineInstances === 0 ? <span className="warn-icon" title={`no ${r} instance online`}>⚠</span> : null}
              </button>
            );
          })}
          {role && !roleNames.includes(role) ? (
            <button role="tab" aria-selected className="tab active">
              {role}
            </button>
          ) : null}
        </div>
        <div className="toolbar-right">
          <input className="filter" data-view-filter placeholder="Filter loaded tasks  ( / )" value={filter} onChange={(e) => setFilter(e.target.value)} aria-label="Filter tasks" />
          <button className="btn btn-primary" onClick={() => setCreating(true)} data-testid="create-task">
            + New task
          </button>
        </div>
      </div>

      {roleNames.length === 0 && !role ? (
        <EmptyState
          title="The board is empty"
          action={
            <button className="btn btn-primary" onClick={() => setCreating(true)}>
              Create the first task
            </button>
          }
        >
          Create a task for a role (say <code>dev</code>); an agent of that role claims it with <code>claim</code>: no claim, no work.
        </EmptyState>
      ) : (
        <>
          {role ? <RolePauseBar role={role} pause={summary?.paused ?? null} /> : null}
          {summary ? (
            <div className="role-meta muted small" data-testid="role-meta">
              {summary.onlineInstances} {role} instance{summary.onlineInstances === 1 ? '' : 's'} online
              {summary.oldestReadyAgeMs !== null ? ` · oldest ready task has waited ${formatDurationS(summary.oldestReadyAgeMs / 1000)}` : ''}
              {' '}· a failed claim is a skip, never a wait
            </div>
          ) : null}
          <div className={`board${selected || selectedTaskId ? ' with-pane' : ''}`}>
            <div className="columns" ref={boardRef}>
              {COLUMNS.map((c) => (
                <BoardColumn
                  key={c.id}
                  id={c.id}
                  label={c.label}
                  hint={c.hint}
                  tasks={grouped[c.id]}
                  total={totals[c.id]}
                  loading={c.statuses.some((s) => queue.columns[s].loading)}
                  error={c.statuses.map((s) => queue.columns[s].error).find(Boolean) ?? null}
                  hasMore={c.statuses.some((s) => queue.columns[s].next !== null)}
                  onMore={() => c.statuses.forEach((s: TaskStatus) => void loadMoreTasks(s))}
                  cursor={cursor !== null && cursor >= firstOf[c.id] && cursor < firstOf[c.id] + grouped[c.id].length ? cursor - firstOf[c.id] : null}
                  render={(t, i) => (
                    <TaskCard task={t} names={names} known={known} lockWindowS={lockWindowS} selected={t.id === selectedTaskId} listIndex={firstOf[c.id] + i} onOpen={() => openTask(t)} />
                  )}
                />
              ))}
            </div>
            {selectedTaskId !== null ? (
              <TaskDetail
                key={selectedTaskId}
                taskId={selectedTaskId}
                task={selected}
                names={names}
                known={known}
                lockWindowS={lockWindowS}
                onAction={(task, kind) => setActing({ task, kind })}
                onClose={() => navigate('queues', role)}
              />
            ) : null}
          </div>
        </>
      )}
      {creating ? (
        <CreateTaskDialog
          defaultRole={role}
          roles={roleNames}
          onClose={() => setCreating(false)}
          onCreated={(t) => navigate('queues', t.role, { task: String(t.id) })}
        />
      ) : null}
      {acting ? <TaskActionDialog task={acting.task} kind={acting.kind} onClose={() => setActing(null)} /> : null}
    </div>
  );
}

function BoardColumn(p: {
  id: ColumnId;
  label: string;
  hint: string;
  tasks: Task[];
  total: number | null;
  loading: boolean;
  error: UiError | null;
  hasMore: boolean;
  onMore: () => void;
  /** The keyboard cursor's place in this column (scrolled into view), if it is here. */
  cursor: number | null;
  render: (t: Task, index: number) => ReactNode;
}) {
  const tone = { backlog: 'backlog', ready: 'ready', in_progress: 'progress', blocked: 'blocked', done: 'done' }[p.id];
  const { hasMore, loading, onMore } = p;
  const onEnd = useMemo(() => (hasMore && !loading ? onMore : undefined), [hasMore, loading, onMore]);
  return (
    <section className={`column col-${tone}`} data-testid={`column-${p.id}`} aria-label={p.label}>
      <header className="column-head" title={p.hint}>
        <span className={`col-dot tone-${tone}`} aria-hidden />
        <span className="column-title">{p.label}</span>
        <span className="column-count" title={p.total !== null && p.total > p.tasks.length ? `${p.tasks.length} loaded of ${p.total}` : undefined}>
          {p.total !== null && p.total > p.tasks.length ? `${formatCount(p.tasks.length)} / ${formatCount(p.total)}` : formatCount(p.tasks.length)}
        </span>
        {p.loading ? <span className="spinner spinner-small" role="status" aria-label="loading" /> : null}
      </header>
      {p.error ? <ErrorBanner error={p.error} /> : null}
      {p.tasks.length === 0 && !p.loading ? (
        <div className="column-empty muted small">{emptyText(p.id)}</div>
      ) : (
        <VirtualList items={p.tasks} rowHeight={CARD_H} getKey={(t) => t.id} render={(t, i) => p.render(t, i)} onEndReached={onEnd} activeIndex={p.cursor} className="column-list" testId={`list-${p.id}`} />
      )}
    </section>
  );
}

function emptyText(id: ColumnId): string {
  switch (id) {
    case 'backlog':
      return 'Nothing waiting on dependencies.';
    case 'ready':
      return 'Nothing claimable. Create a task, or finish its prerequisites.';
    case 'in_progress':
      return 'No locks held. Agents claim ready tasks when they poll.';
    case 'blocked':
      return 'Nothing blocked or failed.';
    case 'done':
      return 'Nothing finished yet.';
  }
}

export function TaskCard({
  task: t,
  names,
  known,
  lockWindowS,
  selected,
  listIndex,
  onOpen,
}: {
  task: Task;
  names: Map<string, string>;
  known: Map<number, Task>;
  lockWindowS: number | undefined;
  selected: boolean;
  /** Its place in the board's keyboard order (lib/list-keys). */
  listIndex?: number;
  onOpen: () => void;
}) {
  const blockers = t.status === 'backlog' ? blockersOf(t, known) : [];
  return (
    <div className="card-pad">
      <button className={`task-card${selected ? ' selected' : ''}`} onClick={onOpen} data-testid={`task-${t.id}`} data-status={t.status} data-list-row={listIndex}>
        <div className="task-line1">
          <span className="task-id">#{t.id}</span>
          <span className="task-title" title={t.title}>
            {t.title}
          </span>
          {t.priority !== 0 ? (
            <span className="prio" title="priority: higher is claimed first">
              ↑{t.priority}
            </span>
          ) : null}
        </div>
        <div className="task-line2">
          {t.status === 'in_progress' && t.lock ? (
            <>
              <span className="holder" title={`holder ${t.lock.instanceId}, fence ${t.lock.fence}`}>
                ● {names.get(t.lock.instanceId) ?? t.lock.instanceId.slice(0, 10)}
              </span>
              <Countdown expiresAt={t.lock.expiresAt} windowS={lockWindowS} />
            </>
          ) : t.status === 'backlog' && t.unmetDependencies > 0 ? (
            <span className="blockers" title="dependencies not done yet">
              waits on{' '}
              {blockers.length
                ? blockers.slice(0, 4).map((b) => (
                    <span key={b.id} className={`dep tone-${b.status ? BOARD_STATUS_META[b.status].tone : 'backlog'}`}>
                      #{b.id}
                    </span>
                  ))
                : `${t.unmetDependencies} task${t.unmetDependencies === 1 ? '' : 's'}`}
              {blockers.length > 4 ? <span className="muted"> +{blockers.length - 4}</span> : null}
            </span>
          ) : t.status === 'blocked' || t.status === 'failed' ? (
            <>
              <TaskStatusBadge task={t} />
              {t.note ? <span className="note" title={t.note}>{t.note}</span> : null}
            </>
          ) : t.status === 'done' || t.status === 'cancelled' ? (
            <>
              {t.status === 'cancelled' ? <TaskStatusBadge task={t} /> : null}
              <span className="muted">
                <RelativeTime at={t.updatedAt} granularityMs={10_000} />
              </span>
            </>
          ) : (
            <span className="muted">
              created <RelativeTime at={t.createdAt} granularityMs={10_000} />
            </span>
          )}
          <span className="spacer" />
          {t.attempt > 1 ? <Badge title="number of claims so far">attempt {t.attempt}</Badge> : null}
          {t.previouslyExpired ? (
            <Badge tone="blocked" title="an earlier holder's lock expired: the work may be half done — the agent verifies before continuing">
              prev. expired
            </Badge>
          ) : null}
        </div>
      </button>
    </div>
  );
}

/** A paused role says so (who, since when, why, until when); the operator pauses or resumes the whole role here. */
function RolePauseBar({ role, pause }: { role: string; pause: RolePause | null }) {
  const { pauseRole, resumeRole } = useActions();
  const [acting, setActing] = useState<'pause' | 'resume' | null>(null);
  const [until, setUntil] = useState('');
  const untilAt = until === '' ? null : new Date(until).getTime();
  return (
    <>
      {pause ? (
        <div className="callout callout-warn" data-testid="role-paused">
          <span>
            <strong>Role {role} is paused</strong> by <strong>{pause.by}</strong> <RelativeTime at={pause.at} />: “{pause.reason}” · {pause.until ? `until ${formatDateTime(pause.until)} (resumes by itself)` : 'until resumed'}. Its jobs start
            nothing new and its tasks are not handed out; work already started finishes.
          </span>
          <button className="btn btn-small" onClick={() => setActing('resume')} data-testid="role-resume">
            Resume the role…
          </button>
        </div>
      ) : (
        <div className="role-actions">
          <button className="btn btn-small btn-ghost" onClick={() => setActing('pause')} data-testid="role-pause">
            Pause role {role}…
          </button>
        </div>
      )}
      {acting ? (
        <ReasonDialog
          title={acting === 'pause' ? `Pause role ${role}` : `Resume role ${role}`}
          explain={
            acting === 'pause'
              ? 'Every job of the role starts nothing new, and agents of the role get no task when they claim. Work already started finishes. Jobs paused on their own keep their own pause.'
              : 'Its jobs run again as scheduled (those paused on their own stay paused), and its tasks are handed out again.'
          }
          extra={
            acting === 'pause' ? (
              <label className="field">
                <span className="field-label">
                  Until <span className="muted small">optional: it resumes by itself then (your local time)</span>
                </span>
                <input type="datetime-local" value={until} onChange={(e) => setUntil(e.target.value)} />
              </label>
            ) : undefined
          }
          validateExtra={() => (acting === 'pause' && untilAt !== null && !(untilAt > Date.now()) ? 'Choose an end of the pause in the future, or leave it empty.' : null)}
          confirmLabel={acting === 'pause' ? 'Pause the role' : 'Resume the role'}
          danger={acting === 'pause'}
          onConfirm={(reason) => (acting === 'pause' ? pauseRole(role, reason, untilAt === null ? null : new Date(untilAt).toISOString()) : resumeRole(role, reason))}
          onClose={() => setActing(null)}
          testId="role-pause-dialog"
        />
      ) : null}
    </>
  );
}
