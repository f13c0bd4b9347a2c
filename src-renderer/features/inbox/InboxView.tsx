import { useEffect, useMemo, useRef, useState } from 'react';
import { INBOX_KINDS, type InboxItem, type InboxKind } from '../../../src-main/common/attention';
import { Badge } from '../../components/Badge';
import { EmptyState, ErrorBanner, Spinner } from '../../components/States';
import { RelativeTime } from '../../components/Time';
import { formatCount, formatDateTime } from '../../lib/format';
import { useListKeys } from '../../lib/list-keys';
import { navigate, useViewRoute } from '../../lib/navigation';
import { useNow } from '../../lib/now';
import { useActions, useConsole, useWatch } from '../../store/react';
import { AckDialog, RunDecisionDialog, SnoozeDialog, TaskDecisionDialog } from './ItemDialogs';
import {
  emptyWords,
  entriesOf,
  focusParam,
  isLive,
  itemDecision,
  itemLink,
  kindLabel,
  latestOutput,
  liveDetail,
  liveFacts,
  retryTarget,
  SEVERITY_TONE,
  STATE_TABS,
  STATE_WORDS,
  withoutFocused,
} from './logic';
import { NotificationsPanel } from './NotificationsPanel';

type Pending =
  | { kind: 'ack'; ids: number[] }
  | { kind: 'snooze'; item: InboxItem }
  | { kind: 'task'; item: InboxItem; decision: 'unblock' | 'cancel' }
  | { kind: 'run'; item: InboxItem; decision: 'approve' | 'reject' };

export function InboxView() {
  const route = useViewRoute('inbox');
  const tab = route.query.tab === 'notifications' ? 'notifications' : 'items';
  return (
    <div className="view inbox" data-testid="view-inbox">
      <div className="tabs" role="tablist" aria-label="Inbox">
        <button role="tab" aria-selected={tab === 'items'} className={`tab${tab === 'items' ? ' active' : ''}`} onClick={() => navigate('inbox')} data-testid="inbox-tab-items">
          Items
        </button>
        <button role="tab" aria-selected={tab === 'notifications'} className={`tab${tab === 'notifications' ? ' active' : ''}`} onClick={() => navigate('inbox', null, { tab: 'notifications' })} data-testid="inbox-tab-notifications">
          Notifications
        </button>
      </div>
      {tab === 'items' ? <InboxItems focusId={focusParam(route.query)} /> : <NotificationsPanel />}
    </div>
  );
}

function InboxItems({ focusId }: { focusId: number | null }) {
  useWatch('inbox');
  const filter = useConsole((s) => s.inboxFilter);
  const res = useConsole((s) => s.inboxList);
  const focus = useConsole((s) => s.inboxFocus);
  const { refresh, setInboxFilter, focusInboxItem } = useActions();
  const [selected, setSelected] = useState<Set<number>>(new Set());
  const [pending, setPending] = useState<Pending | null>(null);
  const list = res.data && res.data.filter.state === filter.state && res.data.filter.kind === filter.kind ? res.data : null;
  // A focused item is shown once, on top, whatever its state; the list goes on below it.
  const items = useMemo(() => withoutFocused(list?.items ?? [], focusId), [list, focusId]);
  const counts = res.data?.counts;
  const focused = focusId !== null && focus.data?.id === focusId ? focus.data : null;

  useEffect(() => {
    focusInboxItem(focusId);
  }, [focusId, focusInboxItem]);

  // Selection follows what is shown: an item that left the list is no longer selected.
  useEffect(() => {
    setSelected((cur) => {
      const ids = new Set(items.map((i) => i.id));
      const next = new Set([...cur].filter((id) => ids.has(id)));
      return next.size === cur.size ? cur : next;
    });
  }, [items]);

  const toggle = (id: number) =>
    setSelected((cur) => {
      const next = new Set(cur);
      if (next.has(id)) next.delete(id);
      else next.add(id);
      return next;
    });
  const live = filter.state === 'open' || filter.state === 'snoozed';
  // The keyboard: j/k move through the items, x selects, Enter opens, a/r/e/c act (lib/list-keys).
  const listRef = useRef<HTMLUListElement>(null);
  const { retryRun } = useActions();
  const { cursor } = useListKeys({
    count: items.length,
    root: () => listRef.current,
    onSelect: (i) => live && toggle(items[i]!.id),
    onOpen: (i) => {
      const link = itemLink(items[i]!);
      if (link) navigate(link.view, link.param, link.query);
    },
    actions: {
      a: (i) => {
        const item = items[i]!;
        const d = itemDecision(item);
        if (d === 'run') setPending({ kind: 'run', item, decision: 'approve' });
        else if (d === 'task') setPending({ kind: 'task', item, decision: 'unblock' });
      },
      c: (i) => itemDecision(items[i]!) === 'task' && setPending({ kind: 'task', item: items[i]!, decision: 'cancel' }),
      e: (i) => isLive(items[i]!) && setPending({ kind: 'ack', ids: [items[i]!.id] }),
      r: (i) => {
        const target = retryTarget(items[i]!);
        if (target) void retryRun(target).catch(() => {});
      },
    },
  });
  const allSelected = items.length > 0 && items.every((i) => selected.has(i.id));

  return (
    <>
      <div className="toolbar inbox-toolbar">
        <div className="seg" role="group" aria-label="Which items">
          {STATE_TABS.map((t) => (
            <button key={t.id} className={`seg-btn${filter.state === t.id ? ' active' : ''}`} aria-pressed={filter.state === t.id} onClick={() => setInboxFilter({ state: t.id })} data-testid={`inbox-state-${t.id}`}>
              {t.label}
              {t.id === 'open' && counts ? <span className="tab-count">{formatCount(counts.open)}</span> : null}
              {t.id === 'snoozed' && counts && counts.snoozed > 0 ? <span className="tab-count">{formatCount(counts.snoozed)}</span> : null}
            </button>
          ))}
        </div>
        <label className="inline-field">
          <span className="muted small">Kind</span>
          <select value={filter.kind ?? ''} onChange={(e) => setInboxFilter({ kind: (e.target.value || null) as InboxKind | null })} aria-label="Kind of item" data-testid="inbox-kind">
            <option value="">All kinds</option>
            {INBOX_KINDS.map((k) => (
              <option key={k} value={k}>
                {kindLabel(k)}
                {counts?.byKind[k] ? ` (${counts.byKind[k]})` : ''}
              </option>
            ))}
          </select>
        </label>
        {live && items.length > 0 ? (
          <div className="toolbar-right">
            <label className="check">
              <input type="checkbox" checked={allSelected} onChange={() => setSelected(allSelected ? new Set() : new Set(items.map((i) => i.id)))} data-testid="inbox-select-all" />
              Select all
            </label>
            <button className="btn btn-primary" disabled={selected.size === 0} onClick={() => setPending({ kind: 'ack', ids: [...selected] })} data-testid="inbox-ack-selected">
              Acknowledge {selected.size > 0 ? selected.size : ''} selected
            </button>
          </div>
        ) : null}
      </div>
      {focusId !== null ? (
        <section className="inbox-focus" aria-label="The item you opened" data-testid="inbox-focus">
          <div className="inbox-focus-head">
            <span className="muted small">
              The item you opened{focused ? ` (${STATE_WORDS[focused.state]})` : ''}
            </span>
            <button className="btn btn-small btn-ghost" onClick={() => navigate('inbox')} data-testid="inbox-focus-close">
              Show only the list
            </button>
          </div>
          {focus.error && !focused ? (
            <ErrorBanner error={focus.error} what={focus.error.code === 'not_found' ? 'There is no such item (it may have been removed)' : 'Could not load the item'} onRetry={() => void refresh('inbox')} />
          ) : !focused ? (
            <Spinner label="Loading the item…" />
          ) : (
            <ul className="inbox-list">
              <InboxRow
                item={focused}
                focused
                selected={false}
                onToggle={null}
                onAck={() => setPending({ kind: 'ack', ids: [focused.id] })}
                onSnooze={() => setPending({ kind: 'snooze', item: focused })}
                onTask={(decision) => setPending({ kind: 'task', item: focused, decision })}
                onRun={(decision) => setPending({ kind: 'run', item: focused, decision })}
              />
            </ul>
          )}
        </section>
      ) : null}
      {res.error ? <ErrorBanner error={res.error} what="Could not load the inbox" onRetry={() => void refresh('inbox')} /> : null}
      {!list ? (
        res.error ? null : <Spinner label="Loading the inbox…" />
      ) : items.length === 0 ? (
        <EmptyState title={emptyWords(filter.state).title}>{emptyWords(filter.state).body}</EmptyState>
      ) : (
        <ul className="inbox-list" data-testid="inbox-list" ref={listRef} aria-label="Inbox items (j and k move, x selects, a approves, e acknowledges)">
          {items.map((item, i) => (
            <InboxRow
              key={item.id}
              listIndex={i}
              cursor={cursor === i}
              item={item}
              selected={selected.has(item.id)}
              onToggle={live ? () => toggle(item.id) : null}
              onAck={() => setPending({ kind: 'ack', ids: [item.id] })}
              onSnooze={() => setPending({ kind: 'snooze', item })}
              onTask={(decision) => setPending({ kind: 'task', item, decision })}
              onRun={(decision) => setPending({ kind: 'run', item, decision })}
            />
          ))}
          {list.more ? <li className="list-end muted small">Showing the newest {items.length}; acknowledge some to see older ones.</li> : null}
        </ul>
      )}
      {pending?.kind === 'ack' ? <AckDialog ids={pending.ids} onClose={() => setPending(null)} /> : null}
      {pending?.kind === 'snooze' ? <SnoozeDialog item={pending.item} onClose={() => setPending(null)} /> : null}
      {pending?.kind === 'task' ? <TaskDecisionDialog item={pending.item} decision={pending.decision} onClose={() => setPending(null)} /> : null}
      {pending?.kind === 'run' ? <RunDecisionDialog item={pending.item} decision={pending.decision} onClose={() => setPending(null)} /> : null}
    </>
  );
}

function InboxRow({
  item,
  listIndex,
  cursor = false,
  focused = false,
  selected,
  onToggle,
  onAck,
  onSnooze,
  onTask,
  onRun,
}: {
  item: InboxItem;
  /** Its place in the list the keyboard moves through (lib/list-keys), and whether the cursor is on it. */
  listIndex?: number;
  cursor?: boolean;
  /** The item a link opened: highlighted, and scrolled into view when it arrives. */
  focused?: boolean;
  selected: boolean;
  onToggle: (() => void) | null;
  onAck: () => void;
  onSnooze: () => void;
  onTask: (decision: 'unblock' | 'cancel') => void;
  onRun: (decision: 'approve' | 'reject') => void;
}) {
  const { retryRun } = useActions();
  const link = itemLink(item);
  const entries = entriesOf(item);
  const output = latestOutput(item);
  const live = isLive(item);
  const decision = itemDecision(item);
  const blockedTask = decision === 'task';
  const heldRun = decision === 'run';
  const retry = retryTarget(item);
  const [retrying, setRetrying] = useState(false);
  // Ages and waits read live: "waited 12 min" keeps counting while the item is open.
  const now = useNow(30_000);
  const ref = useRef<HTMLLIElement>(null);
  useEffect(() => {
    if (!focused || !ref.current) return;
    ref.current.scrollIntoView({ block: 'nearest' });
    // The keyboard starts at the item too (its buttons are the next Tab stops).
    ref.current.focus({ preventScroll: true });
  }, [focused, item.id]);
  const doRetry = async () => {
    if (!retry) return;
    setRetrying(true);
    try {
      await retryRun(retry);
    } catch {
      // The toast said why; the button is offered again.
    } finally {
      setRetrying(false);
    }
  };
  return (
    <li
      ref={ref}
      className={`inbox-item sev-${item.severity}${selected ? ' selected' : ''}${focused ? ' focused' : ''}${item.state === 'resolved' ? ' resolved' : ''}`}
      data-testid={focused ? 'inbox-focused-item' : `inbox-item-${item.id}`}
      tabIndex={focused || listIndex !== undefined ? (cursor ? 0 : -1) : undefined}
      data-list-row={listIndex}
      aria-current={cursor ? 'true' : undefined}
    >
      <div className="inbox-item-head">
        {onToggle ? <input type="checkbox" checked={selected} onChange={onToggle} aria-label={`Select “${item.title}”`} /> : null}
        <Badge tone={item.state === 'resolved' ? 'neutral' : SEVERITY_TONE[item.severity]} strong>
          {kindLabel(item.kind)}
        </Badge>
        {item.count > 1 ? <span className="badge tone-neutral" title="Occurrences folded into this item">×{item.count}</span> : null}
        <span className="muted small" title={formatDateTime(item.at)}>
          {item.count > 1 ? 'latest ' : ''}
          <RelativeTime at={item.lastAt} />
        </span>
        {item.state === 'snoozed' && item.snoozedUntil ? <span className="muted small">· snoozed until {formatDateTime(item.snoozedUntil)}</span> : null}
        {item.state === 'acked' ? (
          <span className="muted small">
            · acknowledged by {item.ackedBy} <RelativeTime at={item.ackedAt!} />
          </span>
        ) : null}
        {item.state === 'resolved' ? <Badge tone="done">resolved</Badge> : null}
      </div>
      <div className="inbox-item-title">{item.title}</div>
      {item.detail ? <div className="inbox-item-detail prewrap">{liveDetail(item, now)}</div> : null}
      {item.state === 'resolved' ? (
        <div className="inbox-resolution" data-testid="inbox-resolution">
          Resolved itself {item.resolvedAt ? <RelativeTime at={item.resolvedAt} /> : null}
          {item.resolution ? `: ${item.resolution}` : ''}
        </div>
      ) : null}
      {item.note ? <div className="note">Note: {item.note}</div> : null}
      {entries.length > 0 || output !== null ? (
        <details className="inbox-evidence">
          <summary>Evidence{entries.length > 1 ? ` (${entries.length} occurrences${item.count > entries.length ? `, newest ${entries.length} of ${item.count}` : ''})` : ''}</summary>
          <ol className="plain-list">
            {entries.slice(0, 12).map((e, i) => (
              <li key={i}>
                <dl className="kv kv-tight">
                  {liveFacts(item, e, i === 0, now).map((f) => (
                    <FactRow key={f.label} label={f.label} value={f.value} />
                  ))}
                </dl>
              </li>
            ))}
          </ol>
          {output !== null ? (
            <>
              <h3>Output of the latest attempt</h3>
              <pre className="json">{typeof output === 'string' ? output : JSON.stringify(output, null, 2)}</pre>
            </>
          ) : null}
        </details>
      ) : null}
      <div className="row-actions">
        {retry ? (
          <button className="btn btn-small btn-primary" disabled={retrying} onClick={() => void doRetry()} title={`Runs ${retry.slot} again now, as a new attempt of the same run (key: r)`} aria-keyshortcuts="r" data-testid="inbox-retry">
            {retrying ? 'Retrying…' : 'Retry now'}
          </button>
        ) : null}
        {link ? (
          <button className="btn btn-small" onClick={() => navigate(link.view, link.param, link.query)}>
            {link.label}
          </button>
        ) : null}
        {heldRun ? (
          <>
            <button className="btn btn-small" onClick={() => onRun('approve')} data-testid="inbox-approve" title="Approve the run with a note (key: a)" aria-keyshortcuts="a">
              Approve…
            </button>
            <button className="btn btn-small btn-danger-quiet" onClick={() => onRun('reject')} data-testid="inbox-reject">
              Reject…
            </button>
          </>
        ) : null}
        {blockedTask ? (
          <>
            <button className="btn btn-small" onClick={() => onTask('unblock')} data-testid="inbox-unblock" title="Unblock the task with your answer as the note (key: a)" aria-keyshortcuts="a">
              Unblock…
            </button>
            <button className="btn btn-small btn-danger-quiet" onClick={() => onTask('cancel')} data-testid="inbox-cancel-task" title="Cancel the task (key: c)" aria-keyshortcuts="c">
              Cancel the task…
            </button>
          </>
        ) : null}
        <span className="spacer" />
        {live ? (
          <>
            <button className="btn btn-small" onClick={onSnooze} data-testid="inbox-snooze">
              Snooze…
            </button>
            <button className={`btn btn-small${retry ? '' : ' btn-primary'}`} onClick={onAck} data-testid="inbox-ack" title="Acknowledge with a note (key: e)" aria-keyshortcuts="e">
              Acknowledge
            </button>
          </>
        ) : null}
      </div>
    </li>
  );
}

function FactRow({ label, value }: { label: string; value: string }) {
  return (
    <>
      <dt>{label}</dt>
      <dd className="prewrap">{value}</dd>
    </>
  );
}
