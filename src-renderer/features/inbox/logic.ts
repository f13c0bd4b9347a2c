/** Pure rules of the Inbox view: where an item links to, snooze presets, the facts worth showing. */
import { INBOX_KIND_LABELS, type InboxItem, type InboxKind } from '../../../src-main/common/attention';
import type { ViewId } from '../../lib/routes';

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
    case 'job':
      return { label: 'Open the slot ledger', view: 'runs', param: id, query: {} };
    case 'role':
      return { label: `Open the ${id} queue`, view: 'queues', param: id, query: {} };
    case 'instance':
      return { label: 'Open instances', view: 'instances', param: null, query: {} };
    default:
      return null;
  }
}

/**
 * What the operator can decide from an open item: a held run (needs a human, an error, its spend
 * cap passed) is approved or rejected; a blocked task (the agent asked, or its spend cap passed)
 * is unblocked or cancelled. Null for everything else, and once the item is acknowledged.
 */
export function itemDecision(item: Pick<InboxItem, 'kind' | 'subject' | 'state'>): 'run' | 'task' | null {
  if (item.state === 'acked') return null;
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
    if (k === 'waitedS' && typeof v === 'number') out.push({ label, value: `${Math.round(v / 60)} min` });
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
