/**
 * The inbox: everything that needs the operator, as rows with a lifecycle (PROTOCOL §8).
 *
 * Invariants:
 * 1. Exactly once per occurrence: an occurrence has a key (`hold:run:<id>:<attempt>`,
 *    `slot:<job>:<slot>`, …) stored in `inbox_occurrences`; raising a key that exists is a no-op, so
 *    an event seen twice or a restart's reconcile never raises a second item.
 * 2. No storm: at most one live (open or snoozed) item per kind and subject (a unique partial
 *    index); a later occurrence folds into it (`count`, newest evidence, words recomputed). After
 *    the item is acknowledged the next occurrence opens a new one.
 * 3. States: open → acked; open → snoozed → open (at `snoozed_until`) or acked; open or snoozed →
 *    resolved (Gaffer saw the cause go away: `resolvedAt`, `resolution`). acked and resolved are
 *    final. Every change is audited (subject `inbox:<id>`) in its transaction, with an
 *    `inbox.changed` event after the commit.
 * 4. A new item is handed to `on.raised` inside the transaction that raised it (the webhook outbox),
 *    so a delivery is queued if and only if the item exists.
 */
import { GafferError } from '../../common/errors';
import { INBOX_SEVERITY, inboxAckInput, inboxAckManyInput, inboxListInput, inboxSnoozeInput, type InboxCounts, type InboxItem, type InboxKind, type InboxState } from '../../common/attention';
import type { Page } from '../../common/model';
import { actorName } from '../../common/schemas';
import { parseOrThrow } from '../../common/validate';
import type { CoreContext } from '../context';
import { Where } from '../db/where';
import { describe, type Facts } from './words';
import { itemRows, prepareInboxStatements, type ItemRow } from './store';
import type { Needed } from '../wiring';

/** Occurrences kept in an item's evidence (the count keeps counting). */
export const MAX_ENTRIES = 50;
/** The actor of items the inbox raises and wakes itself. */
export const INBOX_ACTOR = 'inbox';

export interface Occurrence {
  /** Unique per occurrence, forever (invariant 1). */
  key: string;
  kind: InboxKind;
  subject: string;
  /** Facts about the subject (job name, role, …), kept on the item; a later occurrence may update them. */
  about: Facts;
  /** This occurrence's own facts (slot, error, output, …). */
  entry: Facts;
}

interface Evidence {
  about: Facts;
  entries: Facts[];
}

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

function toItem(r: ItemRow): InboxItem {
  const ev = JSON.parse(r.evidence) as Evidence;
  return {
    id: r.id,
    kind: r.kind,
    severity: r.severity,
    subject: r.subject,
    title: r.title,
    detail: r.detail,
    at: iso(r.first_at)!,
    lastAt: iso(r.last_at)!,
    count: r.count,
    state: r.state,
    snoozedUntil: iso(r.snoozed_until),
    ackedAt: iso(r.acked_at),
    ackedBy: r.acked_by,
    note: r.note,
    resolvedAt: iso(r.resolved_at),
    resolution: r.resolution,
    evidence: { ...ev.about, entries: ev.entries },
    updatedAt: iso(r.updated_at)!,
  };
}

const withActor = { actor: actorName };
const ackOpts = inboxAckInput.extend(withActor);
const ackManyOpts = inboxAckManyInput.extend(withActor);
const snoozeOpts = inboxSnoozeInput.extend(withActor);

export class Inbox {
  private readonly q;
  constructor(
    private readonly ctx: CoreContext,
    private readonly on: {
      /** Called inside the raising transaction for every new item (invariant 4): the webhook outbox. */
      raised: (item: InboxItem) => void;
      /** Called after a snooze changed the earliest wake-up: the checks, built on the inbox, re-arm their timer (core/wiring.ts). */
      snoozed: Needed<() => void>;
    },
  ) {
    this.q = prepareInboxStatements(ctx.db);
  }

  private get now(): number {
    return this.ctx.clock.now();
  }

  /** True when the occurrence was raised before (invariant 1). */
  seen(key: string): boolean {
    return this.q.occurrence.get(key) !== undefined;
  }

  /**
   * Raises one occurrence: a new item, or one more occurrence of the live item of its kind and
   * subject. Returns the item, or null when the occurrence was raised before.
   */
  raise(occ: Occurrence): InboxItem | null {
    return this.ctx.store.write(() => {
      if (this.seen(occ.key)) return null;
      const now = this.now;
      const live = this.q.live.get(occ.kind, occ.subject);
      let row: ItemRow;
      if (live) {
        const ev = JSON.parse(live.evidence) as Evidence;
        const next: Evidence = { about: { ...ev.about, ...occ.about }, entries: [...ev.entries, occ.entry].slice(-MAX_ENTRIES) };
        const words = describe(occ.kind, next.about, next.entries, live.count + 1);
        this.q.fold.run({ id: live.id, ...words, evidence: JSON.stringify(next), now });
        row = this.q.get.get(live.id)!;
        this.ctx.audit.append({ type: 'inbox.repeat', actor: INBOX_ACTOR, subject: `inbox:${row.id}`, detail: { kind: row.kind, about: row.subject, count: row.count, occurrence: occ.key } });
        this.q.addOccurrence.run(occ.key, row.id, now);
        const item = toItem(row);
        this.ctx.store.emit({ type: 'inbox.changed', item, action: 'repeated' });
        return item;
      }
      const ev: Evidence = { about: occ.about, entries: [occ.entry] };
      const words = describe(occ.kind, ev.about, ev.entries, 1);
      const id = Number(this.q.insert.run({ kind: occ.kind, severity: INBOX_SEVERITY[occ.kind], subject: occ.subject, ...words, evidence: JSON.stringify(ev), now }).lastInsertRowid);
      row = this.q.get.get(id)!;
      this.q.addOccurrence.run(occ.key, id, now);
      this.ctx.audit.append({ type: 'inbox.raise', actor: INBOX_ACTOR, subject: `inbox:${id}`, detail: { kind: row.kind, severity: row.severity, about: row.subject, title: row.title, occurrence: occ.key } });
      const item = toItem(row);
      this.on.raised(item);
      this.ctx.store.emit({ type: 'inbox.changed', item, action: 'raised' });
      return item;
    });
  }

  /** The live (open or snoozed) item of `kind` about `subject`, if any (invariant 2: at most one). */
  live(kind: InboxKind, subject: string): InboxItem | undefined {
    const r = this.q.live.get(kind, subject);
    return r ? toItem(r) : undefined;
  }

  get(id: number): InboxItem {
    return toItem(this.row(id));
  }

  private row(id: number): ItemRow {
    const r = this.q.get.get(id);
    if (!r) throw new GafferError('not_found', `unknown inbox item ${id}`);
    return r;
  }

  /** Items, latest occurrence first; `next` continues after the last one. */
  list(input: unknown = {}): Page<InboxItem> {
    const f = parseOrThrow(inboxListInput, input, 'inbox filter');
    const limit = f.limit ?? 100;
    const state = f.state ?? 'open';
    const where = new Where().equals('state', state === 'all' ? undefined : state).equals('kind', f.kind).equals('subject', f.subject);
    if (f.after !== undefined) {
      const m = /^(\d{1,16})\.(\d{1,16})$/.exec(f.after);
      if (!m) throw new GafferError('bad_request', 'invalid inbox cursor "after"');
      where.and('(last_at < ? OR (last_at = ? AND id < ?))', Number(m[1]), Number(m[1]), Number(m[2]));
    }
    const rows = itemRows(this.ctx.db, where, limit + 1);
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return { items: page.map(toItem), next: rows.length > limit && last ? `${last.last_at}.${last.id}` : null };
  }

  counts(): InboxCounts {
    const c: InboxCounts = { open: 0, snoozed: 0, critical: 0, byKind: {} };
    for (const r of this.q.counts.all()) {
      if (r.state === 'snoozed') {
        c.snoozed += r.n;
        continue;
      }
      c.open += r.n;
      if (r.severity === 'critical') c.critical += r.n;
      c.byKind[r.kind] = (c.byKind[r.kind] ?? 0) + r.n;
    }
    return c;
  }

  /** Acknowledges one live item (with an optional note). */
  ack(id: number, input: unknown): InboxItem {
    const { note, actor } = parseOrThrow(ackOpts, input, 'acknowledgement');
    return this.ctx.store.write(() => {
      const r = this.row(id);
      if (r.state === 'acked') throw new GafferError('invalid_transition', `inbox item ${id} was already acknowledged by ${r.acked_by} at ${iso(r.acked_at)}`);
      if (r.state === 'resolved') throw new GafferError('invalid_transition', `inbox item ${id} resolved itself at ${iso(r.resolved_at)}: ${r.resolution}`);
      return this.setState(r, 'acked', actor, note ?? null, null, 'inbox.ack');
    });
  }

  /**
   * Acknowledges several items at once. Unknown ids refuse the whole call (nothing changes); items
   * someone acknowledged meanwhile are left as they are and reported in `skipped`.
   */
  ackMany(input: unknown): { acked: InboxItem[]; skipped: number[] } {
    const { ids, note, actor } = parseOrThrow(ackManyOpts, input, 'acknowledgement');
    return this.ctx.store.write(() => {
      const rows = [...new Set(ids)].map((id) => this.row(id));
      const acked: InboxItem[] = [];
      const skipped: number[] = [];
      for (const r of rows) {
        if (r.state === 'acked' || r.state === 'resolved') skipped.push(r.id);
        else acked.push(this.setState(r, 'acked', actor, note ?? null, null, 'inbox.ack', { bulk: rows.length }));
      }
      return { acked, skipped };
    });
  }

  /** Hides a live item until `until` (in the future), when it opens again. */
  snooze(id: number, input: unknown): InboxItem {
    const { until, note, actor } = parseOrThrow(snoozeOpts, input, 'snooze');
    const at = Date.parse(until);
    if (!(at > this.now)) throw new GafferError('bad_request', 'invalid snooze at "until": it must be in the future');
    if (at - this.now > 366 * 86_400_000) throw new GafferError('bad_request', 'invalid snooze at "until": at most a year ahead');
    const item = this.ctx.store.write(() => {
      const r = this.row(id);
      if (r.state === 'acked' || r.state === 'resolved') throw new GafferError('invalid_transition', `inbox item ${id} was ${r.state === 'acked' ? 'acknowledged' : 'resolved'}; there is nothing to snooze`);
      return this.setState(r, 'snoozed', actor, note ?? null, at, 'inbox.snooze');
    });
    this.on.snoozed.get()();
    return item;
  }

  /**
   * Acknowledges every live item about `subject` because the operator decided it elsewhere
   * (approved or rejected the run, unblocked or cancelled the task), in the caller's transaction.
   */
  resolveSubject(subject: string, actor: string, note: string, decision: string): InboxItem[] {
    return this.ctx.store.write(() => this.q.liveOfSubject.all(subject).map((r) => this.setState(r, 'acked', actor, note, null, 'inbox.ack', { decision })));
  }

  /**
   * Gaffer saw the cause of the live item of `kind` about `subject` go away (the job's next run
   * succeeded, the agent runs again, …): it leaves the open list as `resolved`, with `resolution`
   * in words. `still` (optional) looks at the live item first and keeps it when it returns false.
   * Returns the resolved item, or null when there was none to resolve. In the caller's transaction.
   */
  resolve(kind: InboxKind, subject: string, resolution: string, still?: (item: InboxItem) => boolean): InboxItem | null {
    return this.resolveAny([kind], subject, resolution, still)[0] ?? null;
  }

  /** `resolve` for each of `kinds` about `subject`, with one read to find them. Returns the resolved items. */
  resolveAny(kinds: readonly InboxKind[], subject: string, resolution: string, still?: (item: InboxItem) => boolean): InboxItem[] {
    // Nothing live to resolve is the common case (every run that succeeds asks for four kinds): no
    // transaction is opened for it. One connection, one thread: the answer holds until the write.
    const live = this.q.liveAmong(kinds).all(...kinds, subject);
    if (live.length === 0) return [];
    live.sort((a, b) => kinds.indexOf(a.kind as InboxKind) - kinds.indexOf(b.kind as InboxKind)); // in the order asked
    return this.ctx.store.write(() => {
      const done: InboxItem[] = [];
      for (const r of live) {
        if (still && !still(toItem(r))) continue;
        const now = this.now;
        this.q.resolve.run({ id: r.id, resolution, now });
        this.ctx.audit.append({ type: 'inbox.resolve', actor: INBOX_ACTOR, subject: `inbox:${r.id}`, detail: { kind: r.kind, about: r.subject, from: r.state, to: 'resolved', resolution } });
        const item = toItem(this.q.get.get(r.id)!);
        this.ctx.store.emit({ type: 'inbox.changed', item, action: 'resolved' });
        done.push(item);
      }
      return done;
    });
  }

  /** Opens every snoozed item whose time has come; returns how many. */
  wakeDue(): number {
    const now = this.now;
    const due = this.q.dueSnoozed.all(now);
    if (due.length === 0) return 0;
    this.ctx.store.write(() => {
      for (const r of due) {
        const cur = this.q.get.get(r.id)!;
        if (cur.state === 'snoozed' && cur.snoozed_until !== null && cur.snoozed_until <= now) this.setState(cur, 'open', INBOX_ACTOR, null, null, 'inbox.reopen', { snoozedUntil: iso(cur.snoozed_until) });
      }
    });
    return due.length;
  }

  /** The earliest snoozed item's wake-up instant, if any. */
  nextWake(): number | null {
    return this.q.nextSnooze.get()?.t ?? null;
  }

  private setState(r: ItemRow, state: InboxState, actor: string, note: string | null, until: number | null, type: string, extra: Record<string, unknown> = {}): InboxItem {
    const now = this.now;
    const acked = state === 'acked';
    this.q.setState.run({ id: r.id, state, until, ackedAt: acked ? now : null, ackedBy: acked ? actor : null, note, now });
    this.ctx.audit.append({
      type,
      actor,
      subject: `inbox:${r.id}`,
      detail: { kind: r.kind, about: r.subject, from: r.state, to: state, ...(note ? { note } : {}), ...(until !== null ? { until: iso(until) } : {}), ...extra },
    });
    const item = toItem(this.q.get.get(r.id)!);
    this.ctx.store.emit({ type: 'inbox.changed', item, action: state === 'acked' ? 'acked' : state === 'snoozed' ? 'snoozed' : 'reopened' });
    return item;
  }
}
