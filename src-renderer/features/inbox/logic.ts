/** Pure rules of the Inbox view: where an item links to, snooze presets, the facts worth showing. */
import { INBOX_KIND_LABELS, type InboxItem, type InboxKind, type InboxState } from '../../../src-main/common/attention';
import type { ViewId } from '../../lib/routes';
import type { InboxStateFilter } from '../../store/slices/inbox';

export interface ItemLink {
  label: string;
  view: ViewId;
  param: string | null;
  query: Record<string, string>;
}

const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : null);

/** The thing the item is about, as a place in the console (null when there is nothing to open). */
export function itemLink(item: Pick<InboxItem, 'subject' | 'evidence'>): ItemLink | null {
  const [type, ...rest] = item.subject.split(':');
  const id = rest.join(':');
  const ev = item.evidence;
  switch (type) {
    case 'run': {
      const jobId = str(ev.jobId);
      const slot = str(ev.slot);
      return jobId ? { label: 'Open the run', view: 'runs', param: jobId, query: slot ? { slot } : {} } : null;
    }
    case 'task': {
      const role = str(ev.role);
      return { label: 'Open the task', view: 'queues', param: role, query: { task: id } };
    }
    case 'job': {
      // A failure item opens its newest failed slot in the ledger.
      const slot = str(entriesOf(item)[0]?.slot);
      return { label: 'Open the slot ledger', view: 'runs', param: id, query: slot ? { slot } : {} };
    }
    case 'role':
      return { label: `Open the ${id} queue`, view: 'queues', param: id, query: {} };
    case 'instance':
      return { label: 'Open instances', view: 'instances', param: null, query: {} };
    case 'managed':
      return { label: 'Open the agent', view: 'managed', param: str(ev.name), query: {} };
    case 'webhook':
      return { label: 'Open notifications', view: 'inbox', param: null, query: { tab: 'notifications' } };
    default:
      return null;
  }
}

/** Open or snoozed: it still needs the operator (acknowledged and resolved items are done). */
export function isLive(item: Pick<InboxItem, 'state'>): boolean {
  return item.state === 'open' || item.state === 'snoozed';
}

/** The run "Retry now" retries: the newest failed run of a live failure item of a job. */
export interface RetryTarget {
  id: string;
  jobId: string;
  job: string;
  slot: string;
}

export function retryTarget(item: Pick<InboxItem, 'kind' | 'subject' | 'state' | 'evidence'>): RetryTarget | null {
  if (!isLive(item) || (item.kind !== 'run_failed' && item.kind !== 'repeated_failures') || !item.subject.startsWith('job:')) return null;
  const newest = entriesOf(item)[0];
  const id = str(newest?.runId);
  if (!id) return null;
  const jobId = item.subject.slice('job:'.length);
  return { id, jobId, job: str(item.evidence.job) ?? jobId, slot: str(newest?.slot) ?? '' };
}

/**
 * What the operator can decide from an open item: a held run (needs a human, an error, its spend
 * cap passed) is approved or rejected; a blocked task (the agent asked, or its spend cap passed)
 * is unblocked or cancelled. Null for everything else, and once the item is acknowledged.
 */
export function itemDecision(item: Pick<InboxItem, 'kind' | 'subject' | 'state'>): 'run' | 'task' | null {
  if (!isLive(item)) return null;
  if (item.subject.startsWith('run:') && (item.kind === 'needs_human' || item.kind === 'held' || item.kind === 'budget')) return 'run';
  if (item.subject.startsWith('task:') && (item.kind === 'needs_human' || item.kind === 'budget')) return 'task';
  return null;
}

export interface SnoozePreset {
  label: string;
  until: string;
}

/** 1 hour, 4 hours, tomorrow 09:00 and next Monday 09:00 (the operator's local time). */
export function snoozePresets(now: number): SnoozePreset[] {
  const at9 = (days: number) => {
    const d = new Date(now);
    d.setDate(d.getDate() + days);
    d.setHours(9, 0, 0, 0);
    return d;
  };
  const monday = ((8 - new Date(now).getDay()) % 7) || 7;
  return [
    { label: '1 hour', until: new Date(now + 3600_000).toISOString() },
    { label: '4 hours', until: new Date(now + 4 * 3600_000).toISOString() },
    { label: 'Tomorrow 09:00', until: at9(1).toISOString() },
    { label: 'Monday 09:00', until: at9(monday).toISOString() },
  ];
}

/** A `<input type="datetime-local">` value for an instant (local time, minutes). */
export function toLocalInput(ms: number): string {
  const d = new Date(ms);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}

/** The instant of a `datetime-local` value, or null when it is not one. */
export function fromLocalInput(v: string): number | null {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/.test(v)) return null;
  const t = new Date(v).getTime();
  return Number.isFinite(t) ? t : null;
}

/** Words for an occurrence's facts, newest first, without ids the operator cannot use. */
const FACT_LABELS: Record<string, string> = {
  slot: 'Slot',
  reason: 'Why',
  error: 'Agent said',
  note: 'Agent said',
  attempt: 'Attempt',
  streak: 'Failures in a row',
  ready: 'Ready tasks',
  waitedS: 'Waited',
  lastSeen: 'Last instance seen',
  why: 'Why',
  message: 'What happened',
  attempts: 'Attempts',
  by: 'Reported by',
  disposition: 'Ended as',
  latestStart: 'Latest start',
};

export interface Fact {
  label: string;
  value: string;
}

export function occurrenceFacts(entry: Record<string, unknown>): Fact[] {
  const out: Fact[] = [];
  for (const [k, label] of Object.entries(FACT_LABELS)) {
    const v = entry[k];
    if (v === null || v === undefined || v === '') continue;
    if (k === 'waitedS' && typeof v === 'number') out.push({ label, value: formatWait(v) });
    else if (typeof v === 'string' || typeof v === 'number') out.push({ label, value: String(v) });
  }
  if (Array.isArray(entry.locks)) {
    out.push({ label: 'Tasks it held', value: (entry.locks as Array<{ taskId?: unknown; title?: unknown }>).map((l) => `#${String(l.taskId)} ${String(l.title ?? '')}`.trim()).join(', ') });
  }
  return out;
}

/** The entries of an item, newest first. */
export function entriesOf(item: Pick<InboxItem, 'evidence'>): Array<Record<string, unknown>> {
  const e = item.evidence.entries;
  return Array.isArray(e) ? [...(e as Array<Record<string, unknown>>)].reverse() : [];
}

/** The agent's output attached to the newest occurrence, if any. */
export function latestOutput(item: Pick<InboxItem, 'evidence'>): unknown {
  const [first] = entriesOf(item);
  return first?.output ?? null;
}

export function kindLabel(k: InboxKind): string {
  return INBOX_KIND_LABELS[k];
}

export const SEVERITY_TONE: Record<InboxItem['severity'], string> = { critical: 'failed', warning: 'blocked', info: 'neutral' };

/** The state tabs of the list, in the order an item moves through them. */
export const STATE_TABS: Array<{ id: InboxStateFilter; label: string }> = [
  { id: 'open', label: 'Open' },
  { id: 'snoozed', label: 'Snoozed' },
  { id: 'acked', label: 'Acknowledged' },
  { id: 'resolved', label: 'Resolved' },
];

/** What an empty list of each state says. */
export function emptyWords(state: InboxStateFilter): { title: string; body: string } {
  switch (state) {
    case 'open':
      return {
        title: 'Nothing needs you',
        body: 'Failed runs and tasks, held runs, blocked tasks, crash-looping agents, missed slots, stuck queues, lost instances, undelivered notifications and slots that did not start show up here as they happen.',
      };
    case 'snoozed':
      return { title: 'Nothing is snoozed', body: 'A snoozed item comes back to Open at the time you chose.' };
    case 'acked':
      return { title: 'Nothing acknowledged yet', body: 'Acknowledged items stay here, with who acknowledged them and their note.' };
    case 'resolved':
      return {
        title: 'Nothing resolved itself yet',
        body: 'An item whose cause went away moves here by itself, with why: the job’s next run succeeded or the failed slot ran again, the task moved on, the agent runs again, the queue got an instance.',
      };
  }
}

/** The item a deep link names (`#/inbox?item=<id>`), or null. */
export function focusParam(query: Record<string, string>): number | null {
  const v = query.item;
  if (!v || !/^[1-9]\d{0,14}$/.test(v)) return null;
  return Number(v);
}

/** "12 min", "2 h 5 min", "3 d 4 h". */
export function formatWait(seconds: number): string {
  const m = Math.max(0, Math.round(seconds / 60));
  if (m < 120) return `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h} h${m % 60 ? ` ${m % 60} min` : ''}`;
  return `${Math.floor(h / 24)} d${h % 24 ? ` ${h % 24} h` : ''}`;
}

/**
 * How long the item's wait has lasted by `now`: the wait measured at its latest occurrence
 * (`waitedS`, at `lastAt`), grown with the time since while the item is live, up to when it was
 * acknowledged or resolved after. Null when the item measures no wait.
 */
export function liveWaitS(item: Pick<InboxItem, 'state' | 'lastAt' | 'ackedAt' | 'resolvedAt' | 'evidence'>, now: number): number | null {
  const w = entriesOf(item)[0]?.waitedS;
  if (typeof w !== 'number') return null;
  const end = item.state === 'acked' ? item.ackedAt : item.state === 'resolved' ? item.resolvedAt : null;
  const until = end ? Date.parse(end) : now;
  return w + Math.max(0, (until - Date.parse(item.lastAt)) / 1000);
}

/** The item's detail with its "waited N min" kept live (the server words it at the occurrence). */
export function liveDetail(item: Pick<InboxItem, 'detail' | 'state' | 'lastAt' | 'ackedAt' | 'resolvedAt' | 'evidence'>, now: number): string {
  const w = liveWaitS(item, now);
  if (w === null) return item.detail;
  return item.detail.replace(/\bwaited \d+ min\b/, `waited ${formatWait(w)}`);
}

/** The fact rows of an occurrence, with the newest one's wait kept live. */
export function liveFacts(item: Pick<InboxItem, 'state' | 'lastAt' | 'ackedAt' | 'resolvedAt' | 'evidence'>, entry: Record<string, unknown>, newest: boolean, now: number): Fact[] {
  const facts = occurrenceFacts(entry);
  const w = newest ? liveWaitS(item, now) : null;
  return w === null ? facts : facts.map((f) => (f.label === FACT_LABELS.waitedS ? { ...f, value: formatWait(w) } : f));
}

/** The list as shown under a focused item: without that item (it is shown once, on top). */
export function withoutFocused(items: readonly InboxItem[], focusedId: number | null): InboxItem[] {
  return focusedId === null ? [...items] : items.filter((i) => i.id !== focusedId);
}

/** A state in words, for the focused item's header ("open", "resolved", …). */
export const STATE_WORDS: Record<InboxState, string> = { open: 'open', snoozed: 'snoozed', acked: 'acknowledged', resolved: 'resolved' };
