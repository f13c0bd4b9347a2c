/**
 * The append-only audit log.
 *
 * Invariants:
 * 1. Rows are only ever inserted (UPDATE/DELETE are refused by triggers in the schema).
 * 2. Ids are dense (1, 2, 3, …) and each row's hash covers the previous row's hash; the tail is
 *    read inside the caller's IMMEDIATE transaction, so two processes cannot fork the chain.
 * 3. An append happens in the same transaction as the state change it describes: both commit, or
 *    neither does.
 * 4. The tail this process appended last is kept in memory and trusted only within the store's
 *    epoch (no rollback, no other writer since), which saves reading it back on every append.
 * 5. Subjects are indexed in bulk: every row with id <= `audit_subjects_progress.indexed_to` is in
 *    `audit_subjects`, and at most SUBJECT_INDEX_LAG rows are past it after any append (the append
 *    that reaches the lag indexes them, in its own transaction). See migration 007. A database
 *    whose rows were written around AuditLog catches up SUBJECT_INDEX_CHUNK rows per append, so no
 *    single write stalls on it.
 * 6. Time: `at` is the wall clock at the append, but never earlier than the previous row's — except
 *    at a clock-step row (`clock.jump` with a negative gap, appended with `clockStep`), which
 *    carries the new, earlier wall time. So `at` is non-decreasing along ids within each *time
 *    segment*, and segments start exactly at the rows where `at` went down (AuditQuery turns a
 *    time range into one id range per segment). Why not keep `at` non-decreasing everywhere?
 *    After a step back of an hour, a non-decreasing stamp can only reach true time by standing
 *    still for that hour: every row of the hour would carry the same frozen instant. Instead the
 *    rows written between the step and its detection (at most one pulse of the gap detector,
 *    about a second) keep the last instant, the step is recorded as its own hash-chained event,
 *    and every row after it carries true time.
 * 7. A row is hashed over exactly what is stored: its text columns are made well-formed first
 *    (an unpaired surrogate, which UTF-8 cannot hold, becomes U+FFFD in both), so no input can
 *    make a row unverifiable even if it slipped past the boundary checks (common/text.ts).
 * 8. With `keepHead`, the head record outside the database (head-record.ts) is rewritten after
 *    every commit that appended rows, naming the newest committed row; never before the commit.
 */
import type { AuditEvent } from '../../common/model';
import type { Clock } from '../../common/clock';
import { isoTime } from '../../common/iso-time';
import { toWellFormedText } from '../../common/text';
import type { Db } from '../db/open';
import type { Store } from '../db/store';
import { GENESIS_HASH, rowHash, ChainVerifier, type ChainCheck, type ChainRow } from './hash-chain';
import type { AuditHeadFile } from './head-record';
import { auditRowsAsWritten } from './stored-text';
import type { AuditRow } from './audit-row';

/** Rows appended before the subject index catches up (AuditQuery scans at most this many). */
export const SUBJECT_INDEX_LAG = 1024;
/** Most rows one append indexes (a catch-up is spread over several appends). */
export const SUBJECT_INDEX_CHUNK = 16 * SUBJECT_INDEX_LAG;

export interface AuditInput {
  type: string;
  actor: string;
  subject: string;
  detail?: unknown;
  traceId?: string | null;
  /** Only for the gap detector's `clock.jump` row of a backward step: `at` may go down here (invariant 6). */
  clockStep?: boolean;
}

/** The audit type whose rows may start a new time segment (invariant 6). */
export const CLOCK_STEP_TYPE = 'clock.jump';

export type { AuditRow } from './audit-row';

export function auditRowToEvent(r: AuditRow): AuditEvent {
  return {
    id: r.id,
    at: isoTime(r.at),
    type: r.type,
    actor: r.actor,
    subject: r.subject,
    detail: JSON.parse(r.detail),
    traceId: r.trace_id,
    prevHash: r.prev_hash,
    hash: r.hash,
  };
}

export function auditRowToChainRow(r: AuditRow): ChainRow {
  return {
    id: r.id,
    at: r.at,
    type: r.type,
    actor: r.actor,
    subject: r.subject,
    detail: r.detail,
    traceId: r.trace_id,
    prevHash: r.prev_hash,
    hash: r.hash,
  };
}

export class AuditLog {
  private readonly tail;
  private readonly insert;
  private cachedTail: { id: number; hash: string; at: number; epoch: number } | undefined;
  private readonly indexedToStmt;
  private readonly indexSubjects;
  private readonly setIndexedTo;
  private indexedTo: { id: number; epoch: number } | undefined;
  /** Invariant 8: rows were appended since the head record was last written. */
  private headBehind = false;
  private headFile: AuditHeadFile | undefined;

  constructor(
    private readonly db: Db,
    private readonly store: Store,
    private readonly clock: Clock,
  ) {
    this.tail = db.prepare<[], { id: number; hash: string; at: number }>('SELECT id, hash, at FROM audit ORDER BY id DESC LIMIT 1');
    this.insert = db.prepare(
      'INSERT INTO audit (id, at, type, actor, subject, detail, trace_id, prev_hash, hash) VALUES (?,?,?,?,?,?,?,?,?)',
    );
    this.indexedToStmt = db.prepare<[], number>('SELECT indexed_to FROM audit_subjects_progress').pluck();
    this.indexSubjects = db.prepare<[number, number]>('INSERT INTO audit_subjects (subject, id) SELECT subject, id FROM audit WHERE id > ? AND id <= ?');
    this.setIndexedTo = db.prepare<[number]>('UPDATE audit_subjects_progress SET indexed_to = ?');
  }

  /** Appends one event and returns its id. Must be called inside `store.write`. */
  append(input: AuditInput): number {
    const cached = this.cachedTail;
    const last = cached !== undefined && cached.epoch === this.store.epoch ? cached : this.tail.get();
    if (input.clockStep && input.type !== CLOCK_STEP_TYPE) throw new Error(`only ${CLOCK_STEP_TYPE} rows may step the audit time back`);
    const now = this.clock.now();
    const row: AuditRow = {
      id: (last?.id ?? 0) + 1,
      // Invariant 6: never before the previous row, except at a recorded clock step.
      at: input.clockStep ? now : Math.max(now, last?.at ?? 0),
      // Invariant 7 (JSON.stringify already escapes an unpaired surrogate in the detail).
      type: toWellFormedText(input.type),
      actor: toWellFormedText(input.actor),
      subject: toWellFormedText(input.subject),
      detail: JSON.stringify(input.detail ?? {}),
      trace_id: input.traceId == null ? null : toWellFormedText(input.traceId),
      prev_hash: last?.hash ?? GENESIS_HASH,
      hash: '',
    };
    row.hash = rowHash(auditRowToChainRow(row));
    this.insert.run(row.id, row.at, row.type, row.actor, row.subject, row.detail, row.trace_id, row.prev_hash, row.hash);
    this.cachedTail = { id: row.id, hash: row.hash, at: row.at, epoch: this.store.epoch };
    this.headBehind = true;
    this.indexSubjectsIfBehind(row.id);
    if (this.store.wants('audit.appended')) {
      const event: AuditEvent = {
        id: row.id,
        at: isoTime(row.at),
        type: row.type,
        actor: row.actor,
        subject: row.subject,
        detail: input.detail ?? {},
        traceId: row.trace_id,
        prevHash: row.prev_hash,
        hash: row.hash,
      };
      this.store.emit({ type: 'audit.appended', event });
    }
    return row.id;
  }

  /** Invariant 8: from now on, `file` names the newest committed row after every commit that appended one. */
  keepHead(file: AuditHeadFile): void {
    if (this.headFile === undefined) this.store.afterCommit(() => this.writeHead());
    this.headFile = file;
  }

  /** The newest committed row (id 0 and the genesis hash for an empty log). */
  head(): { id: number; hash: string } {
    const last = this.tail.get();
    return last ? { id: last.id, hash: last.hash } : { id: 0, hash: GENESIS_HASH };
  }

  private writeHead(): void {
    if (!this.headBehind || !this.headFile) return;
    this.headBehind = false;
    // The cached tail is the committed one unless a rollback (a new epoch) intervened.
    const cached = this.cachedTail;
    const last = cached !== undefined && cached.epoch === this.store.epoch ? cached : this.head();
    try {
      this.headFile.write(last.id, last.hash);
    } catch {
      // The record stays behind (a full disk): that is the state a crash leaves, never an alarm.
    }
  }

  /** Invariant 5: indexes the unindexed tail once it reaches SUBJECT_INDEX_LAG rows. */
  private indexSubjectsIfBehind(lastId: number): void {
    const epoch = this.store.epoch;
    const known = this.indexedTo;
    const indexedTo = known !== undefined && known.epoch === epoch ? known.id : this.indexedToStmt.get()!;
    if (lastId - indexedTo < SUBJECT_INDEX_LAG) {
      this.indexedTo = { id: indexedTo, epoch };
      return;
    }
    const upTo = Math.min(lastId, indexedTo + SUBJECT_INDEX_CHUNK);
    this.indexSubjects.run(indexedTo, upTo);
    this.setIndexedTo.run(upTo);
    this.indexedTo = { id: upTo, epoch };
  }

  /** Appends as its own transaction (for events not tied to another state change); returns its id. */
  record(input: AuditInput): number {
    return this.store.write(() => this.append(input));
  }

  count(): number {
    return (this.db.prepare('SELECT count(*) AS n FROM audit').get() as { n: number }).n;
  }

  /** Verifies the whole chain from genesis, streaming (bounded memory); reports every bad row. */
  verify(): ChainCheck {
    const v = new ChainVerifier(GENESIS_HASH, { firstId: 1, asWritten: auditRowsAsWritten(this.db) });
    for (const r of this.db.prepare<[], AuditRow>('SELECT * FROM audit ORDER BY id').iterate()) v.push(auditRowToChainRow(r));
    return v.result();
  }
}
