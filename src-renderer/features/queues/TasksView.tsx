/**
 * Tasks: every task on the board, found by the server (title, payload text or id; role and
 * status), newest first — and one action over many of them at once: the ones ticked, or all
 * that match the filter, with one reason and a progress bar. A task opens in place, in the task
 * pane the role queues use (`#/tasks?task=42`); the list is driven from the keyboard too
 * (lib/list-keys: j/k, Enter opens, x ticks, a/r/c act on the task under the cursor).
 */
import { useEffect, useMemo, useRef, useState } from 'react';
import { changeWords } from '../../components/diff/diff-model';
import { useChanges } from '../../store/use-changes';
import { TASK_STATUSES, type BulkTaskAction, type Task } from '../../../src-main/common/model';
import { navigate, useViewRoute } from '../../lib/navigation';
import { TaskStatusBadge } from '../../components/Badge';
import { SelectField } from '../../components/SelectField';
import { EmptyState, ErrorBanner, ProgressBar, Spinner } from '../../components/States';
import { Table, type Column } from '../../components/Table';
import { RelativeTime } from '../../components/Time';
import { CostCell, DurationCell, taskDurationMs } from '../../components/row-usage';
import { useRowUsage } from '../../store/use-row-usage';
import { useNow } from '../../lib/now';
import { formatCount, summariseDetail } from '../../lib/format';
import { TASK_STATUS_LABEL } from '../../lib/status';
import { useListKeys } from '../../lib/list-keys';
import { useActions, useConsole, useWatch } from '../../store/react';
import type { BulkSelection } from '../../store/slices/tasks';
import { BulkDialog } from './BulkDialog';
import { actionsFor, TASK_ACTION_KEYS, type TaskPaneAction } from './logic';
import { TaskActionDialog } from './TaskDialogs';
import { TaskDetail } from './TaskDetail';
import './tasks.css';
import { BULK_ACTIONS, BULK_META, bulkFraction, filterFromRoute, routeFromFilter } from './tasks-logic';

const SEARCH_DEBOUNCE_MS = 300;

export function TasksView() {
  useWatch('tasks', 'roles', 'instances', 'settings');
  const route = useViewRoute('tasks');
  const list = useConsole((s) => s.taskList);
  const bulk = useConsole((s) => s.bulk);
  const roles = useConsole((s) => s.roles.data);
  const { setTaskFilter, loadMoreTaskList, stopBulk, refresh } = useActions();
  const filter = useMemo(() => filterFromRoute(route.query), [route.query]);
  const filterKey = JSON.stringify(filter);
  const roleNames = useMemo(() => (roles ?? []).map((r) => r.role).sort(), [roles]);
  const instances = useConsole((s) => s.instances.data);
  const lockWindowS = useConsole((s) => s.settings.data?.config.lockWindowS);
  const names = useMemo(() => new Map((instances ?? []).map((i) => [i.id, i.name])), [instances]);
  const openId = route.query.task && /^\d+$/.test(route.query.task) ? Number(route.query.task) : null;

  useEffect(() => {
    setTaskFilter(filter);
    // The key stands for the filter's fields.
  }, [filterKey, setTaskFilter]);

  // The search box follows the URL (Back/Forward) and writes to it once typing pauses.
  const [text, setText] = useState(filter.q ?? '');
  useEffect(() => setText(filter.q ?? ''), [filter.q]);
  useEffect(() => {
    if (text.trim() === (filter.q ?? '')) return;
    const t = window.setTimeout(() => navigate('tasks', null, routeFromFilter({ ...filter, q: text.trim() })), SEARCH_DEBOUNCE_MS);
    return () => window.clearTimeout(t);
  }, [text, filterKey]);

  const [picked, setPicked] = useState<ReadonlySet<number>>(new Set());
  const [allMatching, setAllMatching] = useState(false);
  const [acting, setActing] = useState<BulkTaskAction | null>(null);
  useEffect(() => {
    setPicked(new Set());
    setAllMatching(false);
  }, [filterKey]);

  const items = list.items;
  const known = useMemo(() => new Map(items.map((t) => [t.id, t])), [items]);
  const [paneAction, setPaneAction] = useState<{ task: Task; kind: TaskPaneAction } | null>(null);
  const openTask = (t: Task) => navigate('tasks', null, { ...routeFromFilter(filter), task: String(t.id) });
  const closeTask = () => navigate('tasks', null, routeFromFilter(filter));
  const allLoadedPicked = items.length > 0 && items.every((t) => picked.has(t.id));
  const total = list.total;
  const selectionSize = allMatching ? (total?.count ?? 0) : picked.size;
  const selection: BulkSelection = allMatching ? { kind: 'filter', filter } : { kind: 'ids', ids: [...picked] };
  const running = bulk?.status === 'running';

  const toggle = (id: number) => {
    setAllMatching(false);
    setPicked((p) => {
      const n = new Set(p);
      if (n.has(id)) n.delete(id);
      else n.add(id);
      return n;
    });
  };
  const toggleAll = () => {
    setAllMatching(false);
    setPicked(allLoadedPicked ? new Set() : new Set(items.map((t) => t.id)));
  };

  // The keyboard (lib/list-keys): the letters open the same dialogs as the pane's buttons.
  const listRef = useRef<HTMLElement>(null);
  const act = (kind: TaskPaneAction) => (i: number) => {
    const t = items[i];
    if (t && actionsFor(t).includes(kind)) setPaneAction({ task: t, kind });
  };
  const { cursor } = useListKeys({
    count: items.length,
    root: () => listRef.current,
    onOpen: (i) => openTask(items[i]!),
    onSelect: (i) => toggle(items[i]!.id),
    actions: Object.fromEntries(Object.entries(TASK_ACTION_KEYS).map(([kind, key]) => [key, act(kind as TaskPaneAction)])),
  });

  const changes = useChanges(list.items.map((t) => `task:${t.id}`));
  const now = useNow(30_000);
  const rowUsage = useRowUsage(
    items.map((t) => `task:${t.id}`),
    items.map((t) => t.updatedAt).join(),
  );
  const columns: Column<Task>[] = [
    {
      key: 'pick',
      header: <input type="checkbox" checked={allLoadedPicked || allMatching} onChange={toggleAll} aria-label="Select every task shown" data-testid="tasks-pick-all" />,
      width: '34px',
      render: (t) => (
        <input
          type="checkbox"
          checked={allMatching || picked.has(t.id)}
          onClick={(e) => e.stopPropagation()}
          onChange={() => toggle(t.id)}
          aria-label={`Select task #${t.id}`}
          data-testid={`tasks-pick-${t.id}`}
        />
      ),
    },
    { key: 'id', header: 'Task', width: '64px', render: (t) => <span className="mono">#{t.id}</span> },
    {
      key: 'title',
      header: 'Title · payload',
      width: 'minmax(200px, 3fr)',
      render: (t) => (
        <div className="two-line">
          <span className="ellipsis" title={t.title}>
            {t.title}
          </span>
          <span className="muted small mono ellipsis">{t.payload === null ? '—' : summariseDetail(t.payload, 90)}</span>
        </div>
      ),
    },
    { key: 'role', header: 'Role', width: 'minmax(70px, 0.7fr)', render: (t) => <span className="mono small">{t.role}</span> },
    { key: 'status', header: 'Status', width: '118px', render: (t) => <TaskStatusBadge task={t} /> },
    { key: 'prio', header: 'Priority', width: '64px', align: 'right', title: 'higher is claimed first', render: (t) => <span className="mono">{t.priority}</span> },
    { key: 'duration', header: 'Time', width: '76px', align: 'right', showFrom: 860, title: 'how long it has been held, or how long its latest attempt ran', render: (t) => <DurationCell ms={taskDurationMs(t, rowUsage[`task:${t.id}`], now)} /> },
    { key: 'cost', header: 'Cost', width: '70px', align: 'right', showFrom: 860, title: 'spend of all its attempts', render: (t) => <CostCell usage={rowUsage[`task:${t.id}`]} /> },
    { key: 'updated', header: 'Updated', width: '96px', showFrom: 760, render: (t) => <RelativeTime at={t.updatedAt} granularityMs={10_000} /> },
  ];
  // The workspace figures, when any task shown has a workspace (else no column).
  if (Object.keys(changes).length > 0) {
    columns.splice(columns.length - 1, 0, {
      key: 'changes',
      header: 'Changes',
      width: '150px',
      showFrom: 900,
      render: (t) => {
        const c = changes[`task:${t.id}`];
        return c ? <span className="small mono changes-cell">{changeWords(c)}</span> : <span className="muted">—</span>;
      },
    });
  }

  const setField = (patch: Partial<typeof filter>) => navigate('tasks', null, routeFromFilter({ ...filter, ...patch }));

  return (
    <div className="view tasks" data-testid="view-tasks">
      <div className="toolbar" role="search">
        <input
          className="filter filter-wide"
          type="search"
          name="tasks-q"
          data-view-filter
          placeholder="Search titles, payloads or #id  ( / )"
          aria-label="Search tasks by title, payload text or id"
          value={text}
          onChange={(e) => setText(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter') navigate('tasks', null, routeFromFilter({ ...filter, q: text.trim() }));
          }}
        />
        <SelectField label="Role" name="tasks-role" value={filter.role ?? ''} anyLabel="every role" options={roleNames.map((r) => ({ value: r, label: r }))} onChange={(v) => setField({ role: v || undefined })} />
        <SelectField
          label="Status"
          name="tasks-status"
          value={filter.status ?? ''}
          anyLabel="any status"
          options={TASK_STATUSES.map((v) => ({ value: v, label: TASK_STATUS_LABEL[v].toLowerCase() }))}
          onChange={(v) => setField({ status: (v || undefined) as typeof filter.status })}
        />
        <span className="muted small" data-testid="tasks-total" aria-live="polite">
          {total ? `${total.exact ? '' : 'at least '}${formatCount(total.count)} task${total.count === 1 ? '' : 's'} match` : list.loading ? 'searching…' : ''}
        </span>
        {list.loading ? <span className="spinner spinner-small" role="status" aria-label="loading" /> : null}
      </div>

      {selectionSize > 0 || running ? (
        <div className="bulk-bar panel" data-testid="bulk-bar" role="region" aria-label="Selected tasks">
          {running && bulk ? (
            <>
              <span className="small">
                {BULK_META[bulk.action].doing}… {formatCount(bulk.changed + bulk.skippedCount)} of {bulk.exact ? '' : 'at least '}
                {formatCount(bulk.total)}
              </span>
              <div className="bulk-progress">
                <ProgressBar fraction={bulkFraction(bulk)} label="Bulk action progress" />
              </div>
              <button className="btn btn-small" onClick={() => stopBulk()} data-testid="bulk-stop">
                Stop
              </button>
              <button className="btn btn-small btn-ghost" onClick={() => setActing(bulk.action)}>
                Details
              </button>
            </>
          ) : (
            <>
              <strong data-testid="bulk-count">
                {allMatching ? `All ${total?.exact === false ? 'at least ' : ''}${formatCount(selectionSize)} matching tasks` : `${formatCount(selectionSize)} selected`}
              </strong>
              {!allMatching && allLoadedPicked && total && total.count > items.length ? (
                <button className="link small" onClick={() => setAllMatching(true)} data-testid="bulk-select-matching">
                  Select all {total.exact ? '' : 'at least '}
                  {formatCount(total.count)} matching
                </button>
              ) : null}
              <span className="spacer" />
              {BULK_ACTIONS.map((a) => (
                <button key={a} className={`btn btn-small${BULK_META[a].danger ? ' btn-danger-quiet' : ''}`} onClick={() => setActing(a)} data-testid={`bulk-${a}`}>
                  {BULK_META[a].label}
                </button>
              ))}
              <button
                className="btn btn-small btn-ghost"
                onClick={() => {
                  setPicked(new Set());
                  setAllMatching(false);
                }}
              >
                Clear selection
              </button>
            </>
          )}
        </div>
      ) : null}

      {list.error ? <ErrorBanner error={list.error} what="Could not search the tasks" onRetry={() => void refresh('tasks')} /> : null}
      <div className={`tasks-body${openId !== null ? ' with-pane' : ''}`}>
        <section className="panel tasks-panel" ref={listRef}>
          {list.loadedAt === null && list.loading ? (
            <Spinner label="Searching…" />
          ) : (
            <Table
              columns={columns}
              rows={items}
              rowKey={(t) => t.id}
              rowHeight={46}
              maxHeight="calc(100vh - 290px)"
              onRowClick={openTask}
              selectedKey={openId}
              cursor={cursor}
              testId="tasks-table"
              ariaLabel="Tasks (j and k move, Enter opens, x selects, r retries, c cancels)"
              empty={
                <EmptyState title={filter.q || filter.role || filter.status ? 'No task matches' : 'No tasks yet'} compact>
                  {filter.q ? 'The search looks in titles, payload text and ids (type 42 or #42).' : 'Tasks appear here as they are created, newest first.'}
                </EmptyState>
              }
            />
          )}
          {list.next !== null ? (
            <div className="load-more">
              <button className="btn btn-small" onClick={() => void loadMoreTaskList()} disabled={list.loading} data-testid="tasks-more">
                {list.partial ? 'Search further back' : 'Show more'}
              </button>
              {list.partial ? <span className="muted small">The search reads a slice of the board at a time; older tasks may match too.</span> : null}
            </div>
          ) : null}
        </section>
        {openId !== null ? (
          <TaskDetail
            key={openId}
            taskId={openId}
            task={known.get(openId) ?? null}
            names={names}
            known={known}
            lockWindowS={lockWindowS}
            onAction={(task, kind) => setPaneAction({ task, kind })}
            onClose={closeTask}
          />
        ) : null}
      </div>
      {paneAction ? <TaskActionDialog task={paneAction.task} kind={paneAction.kind} onClose={() => setPaneAction(null)} /> : null}
      {acting ? (
        <BulkDialog
          action={acting}
          selection={selection}
          size={selectionSize}
          sizeExact={!allMatching || total?.exact !== false}
          onClose={() => setActing(null)}
          onFinished={() => {
            setPicked(new Set());
            setAllMatching(false);
          }}
        />
      ) : null}
    </div>
  );
}
