/**
 * Storage of the backfill queue. Writes run inside the caller's `store.write`; nothing here audits
 * (the engine's backfill queue does, per edge).
 *
 * Invariants:
 * 1. At most one open (queued, held or dispatched) backfill per run: callers look with `openOfRun`
 *    before they `insert`, in the same transaction.
 * 2. The status changes only through `setStatus`, a compare-and-set on the status it was read with.
 */
import { GafferError } from '../../common/errors';
import type { BackfillStatus } from '../../common/job-schema';
import type { Db } from '../db/open';
import { SqlWhere } from '../sql-where';
import { onOldTimeline, type ClockGap } from '../time/gap-detector';
import { RowPatcher } from '../db/row-patcher';
import type { BackfillRow } from './rows';

/** Every field of a backfill row but its identity and its status. */
export type BackfillPatch = Partial<Omit<BackfillRow, 'id' | 'job_id' | 'slot' | 'run_id' | 'created_at' | 'status'>>;

export class BackfillRepo {
  private readonly q;
  private readonly patcher: RowPatcher;

  constructor(private readonly db: Db) {
    this.patcher = new RowPatcher(db, 'backfills', 'id');
    this.q = {
      insert: db.prepare(
        `INSERT INTO backfills (job_id, slot, slot_at, run_id, reason, status, actor, note, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      byId: db.prepare<[number], BackfillRow>('SELECT * FROM backfills WHERE id = ?'),
      setStatus: db.prepare('UPDATE backfills SET status = ?, updated_at = ? WHERE id = ? AND status = ?'),
      openOfRun: db.prepare<[string], BackfillRow>(`SELECT * FROM backfills WHERE run_id = ? AND status IN ('queued','held','dispatched')`),
      dispatchedOfRun: db.prepare<[string], BackfillRow>(`SELECT * FROM backfills WHERE run_id = ? AND status = 'dispatched'`),
      ofRun: db.prepare<[string], BackfillRow>('SELECT * FROM backfills WHERE run_id = ? ORDER BY id'),
      queuedOfJob: db.prepare<[string, number], BackfillRow>(`SELECT * FROM backfills WHERE job_id = ? AND status = 'queued' ORDER BY slot_at, id LIMIT ?`),
      openOfJob: db.prepare<[string], BackfillRow>(`SELECT * FROM backfills WHERE job_id = ? AND status IN ('queued','held','dispatched') ORDER BY slot_at, id`),
      dispatchedOfJob: db.prepare<[string], BackfillRow>(`SELECT * FROM backfills WHERE job_id = ? AND status = 'dispatched'`),
      allDispatched: db.prepare<[], BackfillRow>(`SELECT * FROM backfills WHERE status = 'dispatched'`),
      // A dispatched backfill is due at its deadline, or when the offer of its attempt (on its run's row) is due an ack.
      due: db.prepare<[number, number], BackfillRow>(
        `SELECT b.* FROM backfills b JOIN runs r ON r.id = b.run_id
         WHERE b.status = 'dispatched' AND (b.deadline <= ? OR (b.instance_id IS NULL AND r.offer_to IS NOT NULL AND r.ack_due_at <= ?))`,
      ),
      nextDue: db.prepare<[], { t: number | null }>(
        `SELECT min(CASE WHEN b.instance_id IS NULL AND r.offer_to IS NOT NULL THEN min(b.deadline, r.ack_due_at) ELSE b.deadline END) AS t
         FROM backfills b JOIN runs r ON r.id = b.run_id WHERE b.status = 'dispatched'`,
      ),
      openCountOfJob: db.prepare<[string], { n: number }>(`SELECT count(*) AS n FROM backfills WHERE job_id = ? AND status IN ('queued','held','dispatched')`),
      // Once per pass: through the open backfills' partial index (its own WHERE term, so SQLite may use it; held
      // ones left out after). Without it SQLite scanned `backfills_job`, every backfill there ever was, whenever
      // none is open (the usual case).
      anyQueuedOrDispatched: db.prepare<[], { n: number }>(
        `SELECT count(*) AS n FROM (SELECT 1 FROM backfills INDEXED BY backfills_open WHERE status IN ('queued','held','dispatched') AND status <> 'held' LIMIT 1)`,
      ),
      needingAttention: db.prepare<[], { n: number }>(`SELECT count(*) AS n FROM backfills WHERE status IN ('held','failed','queued')`),
      inRange: db.prepare<[string, number, number], BackfillRow>('SELECT * FROM backfills WHERE job_id = ? AND slot_at >= ? AND slot_at < ? ORDER BY id'),
      shiftDeadlines: db.prepare(`UPDATE backfills SET deadline = deadline + @gap WHERE status = 'dispatched' AND deadline > @from AND ${onOldTimeline('dispatched_at')}`),
    };
  }

  get(id: number): BackfillRow {
    const r = this.q.byId.get(id);
    if (!r) throw new GafferError('not_found', `unknown backfill ${id}`);
    return r;
  }

  insert(b: { jobId: string; slot: string; slotAt: number; runId: string; reason: string; status: BackfillStatus; actor: string; note: string | null }, now: number): BackfillRow {
    const id = Number(this.q.insert.run(b.jobId, b.slot, b.slotAt, b.runId, b.reason, b.status, b.actor, b.note, now, now).lastInsertRowid);
    return this.get(id);
  }

  patch(id: number, fields: BackfillPatch, now: number): BackfillRow {
    this.patcher.patch(id, { ...fields, updated_at: now });
    return this.get(id);
  }

  /** Moves the status from `from` to `to` (and writes `fields`); a row that moved meanwhile is a conflict. */
  setStatus(b: BackfillRow, to: BackfillStatus, fields: BackfillPatch, now: number): BackfillRow {
    if (this.q.setStatus.run(to, now, b.id, b.status).changes !== 1) throw new GafferError('conflict', `backfill ${b.id} changed underneath (expected ${b.status})`);
    return this.patch(b.id, fields, now);
  }

  openOfRun(runId: string): BackfillRow | undefined {
    return this.q.openOfRun.get(runId);
  }

  dispatchedOfRun(runId: string): BackfillRow | undefined {
    return this.q.dispatchedOfRun.get(runId);
  }

  ofRun(runId: string): BackfillRow[] {
    return this.q.ofRun.all(runId);
  }

  /** Queued backfills of the job, oldest slot first. */
  queuedOfJob(jobId: string, limit: number): BackfillRow[] {
    return this.q.queuedOfJob.all(jobId, limit);
  }

  openOfJob(jobId: string): BackfillRow[] {
    return this.q.openOfJob.all(jobId);
  }

  dispatchedOfJob(jobId: string): BackfillRow[] {
    return this.q.dispatchedOfJob.all(jobId);
  }

  allDispatched(): BackfillRow[] {
    return this.q.allDispatched.all();
  }

  /** Dispatched backfills whose deadline, or the ack of whose offer, is due at `now`. */
  due(now: number): BackfillRow[] {
    return this.q.due.all(now, now);
  }

  /** The earliest instant a dispatched backfill is due (its deadline, or its offer's ack). */
  nextDue(): number | null {
    return this.q.nextDue.get()?.t ?? null;
  }

  openCountOfJob(jobId: string): number {
    return this.q.openCountOfJob.get(jobId)!.n;
  }

  anyQueuedOrDispatched(): boolean {
    return this.q.anyQueuedOrDispatched.get()!.n > 0;
  }

  /** Backfills the operator must act on: held or failed, plus queued ones. */
  needingAttention(): number {
    return this.q.needingAttention.get()!.n;
  }

  inRange(jobId: string, from: number, to: number): BackfillRow[] {
    return this.q.inRange.all(jobId, from, to);
  }

  /** A page of backfills by id, with their job's name; `limit + 1` rows tell whether there is more. */
  list(f: { jobId?: string; status?: BackfillStatus; after?: number }, limit: number): Array<BackfillRow & { job_name: string }> {
    const where = new SqlWhere();
    if (f.jobId !== undefined) where.and('b.job_id = ?', f.jobId);
    if (f.status !== undefined) where.and('b.status = ?', f.status);
    if (f.after !== undefined) where.and('b.id > ?', f.after);
    return this.db
      .prepare<unknown[], BackfillRow & { job_name: string }>(`SELECT b.*, j.name AS job_name FROM backfills b JOIN jobs j ON j.id = b.job_id ${where.sql} ORDER BY b.id LIMIT ?`)
      .all(...where.params, limit + 1);
  }

  /** Deadlines of backfills dispatched on the old timeline move by the gap (nobody lived it). */
  shiftDeadlines(gap: ClockGap): number {
    return this.q.shiftDeadlines.run({ gap: gap.gapMs, newFrom: gap.newFrom, to: gap.to, from: Math.min(gap.from, gap.to) }).changes;
  }
}
