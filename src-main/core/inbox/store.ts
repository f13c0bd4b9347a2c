/**
 * The inbox's SQL: its tables (`inbox_items`, `inbox_occurrences`, `inbox_watch`) and what its
 * checks and sources read of the other modules' tables. SQL only, no rules: `inbox.ts`,
 * `checks.ts` and `sources.ts` hold them. Every statement is prepared once, when its service is
 * built, except the list page (built per call from its filter, as before).
 */
import type { InboxItem, InboxKind, InboxState } from '../../common/attention';
import type { Db } from '../db/open';
import type { Where } from '../db/where';

export interface ItemRow {
  id: number;
  kind: InboxKind;
  severity: InboxItem['severity'];
  subject: string;
  title: string;
  detail: string;
  evidence: string;
  state: InboxState;
  count: number;
  first_at: number;
  last_at: number;
  snoozed_until: number | null;
  acked_at: number | null;
  acked_by: string | null;
  note: string | null;
  updated_at: number;
  resolved_at: number | null;
  resolution: string | null;
}

export interface JobFacts {
  id: string;
  name: string;
  spec: string;
  cursor: number;
  created_at: number;
}

/** A slot's run as the checks read it. */
export interface SlotRunFacts {
  id: string;
  status: string;
  disposition: string;
  started_at: number | null;
  last_error: string | null;
  /** Set on a row that stands for a range of slots decided at once: the last one's instant. */
  range_last_at: number | null;
}

/** A held run as the sources read it. */
export interface HeldRunFacts {
  id: string;
  job_id: string;
  job_name: string;
  slot: string;
  attempt: number;
  last_error: string | null;
  error_class: string | null;
  output: string | null;
}

/**
 * The live items of one subject among several kinds, in one read (the live index's seeks, one per
 * kind): a run that succeeds settles four kinds of its job's items and usually finds none. One
 * statement per list of kinds, prepared the first time it is asked for.
 */
function liveAmongStatements(db: Db): (kinds: readonly InboxKind[]) => { all(...args: string[]): ItemRow[] } {
  const prepared = new Map<string, { all(...args: string[]): ItemRow[] }>();
  return (kinds) => {
    const key = kinds.join(',');
    let st = prepared.get(key);
    if (!st) {
      st = db.prepare<string[], ItemRow>(`SELECT * FROM inbox_items WHERE kind IN (${kinds.map(() => '?').join(', ')}) AND subject = ? AND state IN ('open','snoozed')`);
      prepared.set(key, st);
    }
    return st;
  };
}

/** The inbox's items and occurrences. */
export function prepareInboxStatements(db: Db) {
  return {
    occurrence: db.prepare<[string], { item_id: number }>('SELECT item_id FROM inbox_occurrences WHERE key = ?'),
    addOccurrence: db.prepare('INSERT INTO inbox_occurrences (key, item_id, at) VALUES (?, ?, ?)'),
    live: db.prepare<[string, string], ItemRow>(`SELECT * FROM inbox_items WHERE kind = ? AND subject = ? AND state IN ('open','snoozed')`),
    get: db.prepare<[number], ItemRow>('SELECT * FROM inbox_items WHERE id = ?'),
    insert: db.prepare(
      `INSERT INTO inbox_items (kind, severity, subject, title, detail, evidence, state, count, first_at, last_at, updated_at)
       VALUES (@kind, @severity, @subject, @title, @detail, @evidence, 'open', 1, @now, @now, @now)`,
    ),
    fold: db.prepare('UPDATE inbox_items SET title = @title, detail = @detail, evidence = @evidence, count = count + 1, last_at = @now, updated_at = @now WHERE id = @id'),
    setState: db.prepare(
      'UPDATE inbox_items SET state = @state, snoozed_until = @until, acked_at = @ackedAt, acked_by = @ackedBy, note = coalesce(@note, note), updated_at = @now WHERE id = @id',
    ),
    dueSnoozed: db.prepare<[number], ItemRow>(`SELECT * FROM inbox_items WHERE state = 'snoozed' AND snoozed_until <= ? ORDER BY snoozed_until LIMIT 500`),
    nextSnooze: db.prepare<[], { t: number | null }>(`SELECT min(snoozed_until) AS t FROM inbox_items WHERE state = 'snoozed'`),
    counts: db.prepare<[], { state: InboxState; kind: InboxKind; severity: string; n: number }>(
      `SELECT state, kind, severity, count(*) AS n FROM inbox_items WHERE state IN ('open','snoozed') GROUP BY state, kind, severity`,
    ),
    liveOfSubject: db.prepare<[string], ItemRow>(`SELECT * FROM inbox_items WHERE subject = ? AND state IN ('open','snoozed')`),
    liveAmong: liveAmongStatements(db),
    resolve: db.prepare(`UPDATE inbox_items SET state = 'resolved', resolved_at = @now, resolution = @resolution, snoozed_until = NULL, updated_at = @now WHERE id = @id`),
  };
}

/** What the checks read: ready tasks by role, a role's instances, enabled jobs and their slots' runs, the watch marks. */
export function prepareCheckStatements(db: Db) {
  return {
    readyByRole: db.prepare<[], { role: string; ready: number; oldest: number }>(
      `SELECT role, count(*) AS ready, min(id) AS oldest FROM tasks WHERE status = 'backlog' AND unmet_deps = 0 GROUP BY role`,
    ),
    taskCreated: db.prepare<[number], { created_at: number }>('SELECT created_at FROM tasks WHERE id = ?'),
    liveStuck: db.prepare<[], { subject: string }>(`SELECT subject FROM inbox_items WHERE kind = 'stuck_queue' AND state IN ('open','snoozed')`),
    roleInstances: db.prepare<[string], { online: number; last_seen: number | null }>(
      `SELECT sum(status = 'online') AS online, max(CASE WHEN status = 'disconnected' THEN disconnected_at ELSE last_heartbeat_at END) AS last_seen
       FROM instances WHERE role = ?`,
    ),
    jobs: db.prepare<[], JobFacts>('SELECT id, name, spec, cursor, created_at FROM jobs WHERE enabled = 1 ORDER BY id'),
    watch: db.prepare<[string], { checked_to: number }>('SELECT checked_to FROM inbox_watch WHERE job_id = ?'),
    putWatch: db.prepare('INSERT INTO inbox_watch (job_id, checked_to) VALUES (?, ?) ON CONFLICT (job_id) DO UPDATE SET checked_to = excluded.checked_to'),
    runBySlot: db.prepare<[string, string], SlotRunFacts>('SELECT id, status, disposition, started_at, last_error, range_last_at FROM runs WHERE job_id = ? AND slot = ?'),
    // The range row (jobs/slot-walk.ts) whose slots span an instant after its own first slot.
    rangeAfterStart: db.prepare<[string, number, number], { range_last_at: number }>(
      'SELECT range_last_at FROM runs WHERE job_id = ? AND range_slots IS NOT NULL AND range_last_at >= ? AND slot_at < ? ORDER BY range_last_at DESC LIMIT 1',
    ),
  };
}

/** What the sources read to describe an occurrence: a job's policy and recent runs, lost locks, an instance, a run, a managed agent, held runs, blocked tasks. */
export function prepareSourceStatements(db: Db) {
  return {
    jobPolicy: db.prepare<[string], { policy: string | null; name: string }>(`SELECT json_extract(spec, '$.missedWindow') AS policy, name FROM jobs WHERE id = ?`),
    recentRuns: db.prepare<[string], { id: string; slot: string; slot_at: number; status: string; disposition: string; last_error: string | null }>(
      `SELECT id, slot, slot_at, status, disposition, last_error FROM runs
       WHERE job_id = ? AND attempt > 0 AND status IN ('success','failed') AND disposition <> 'missed'
       ORDER BY slot_at DESC, id DESC LIMIT 50`,
    ),
    lostLocks: db.prepare<[string, string], { id: number; task_id: number; fence: number; reason: string; expired_at: number; title: string | null }>(
      `SELECT e.id, e.task_id, e.fence, e.reason, e.expired_at, t.title FROM lock_expiries e LEFT JOIN tasks t ON t.id = e.task_id
       WHERE e.instance_id = ? AND e.reason IN ('heartbeat_timeout','disconnected')
         AND e.expired_at = (SELECT max(expired_at) FROM lock_expiries WHERE instance_id = ? AND reason IN ('heartbeat_timeout','disconnected'))
       ORDER BY e.id`,
    ),
    instance: db.prepare<[string], { id: string; role: string; name: string; last_heartbeat_at: number }>('SELECT id, role, name, last_heartbeat_at FROM instances WHERE id = ?'),
    runState: db.prepare<[string], { status: string; disposition: string }>('SELECT status, disposition FROM runs WHERE id = ?'),
    managedName: db.prepare<[string], { name: string }>('SELECT name FROM managed_agents WHERE id = ?'),
    heldRuns: db.prepare<[], HeldRunFacts>(
      `SELECT r.id, r.job_id, r.job_name, r.slot, r.attempt, r.last_error, r.error_class, r.output FROM backfills b JOIN runs r ON r.id = b.run_id
       WHERE b.status = 'held' AND r.error_class IN ('needs_human','fatal')`,
    ),
    blockedTasks: db.prepare<[], { id: number; title: string; role: string; attempt: number; note: string | null; output: string | null }>(
      `SELECT id, title, role, attempt, note, output FROM tasks t WHERE status = 'blocked'
         AND NOT EXISTS (SELECT 1 FROM task_budgets b WHERE b.task_id = t.id AND b.stopped_attempt = t.attempt)`,
    ),
    recentLosses: db.prepare<[number], { instance_id: string }>(
      `SELECT DISTINCT instance_id FROM lock_expiries WHERE expired_at >= ? AND reason IN ('heartbeat_timeout','disconnected')`,
    ),
  };
}

/** A page of items matching `where`, latest occurrence first. */
export function itemRows(db: Db, where: Where, limit: number): ItemRow[] {
  return db.prepare<unknown[], ItemRow>(`SELECT * FROM inbox_items ${where.sql()} ORDER BY last_at DESC, id DESC LIMIT ?`).all(...where.params, limit);
}
