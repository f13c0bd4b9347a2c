/** Prepared statements and row mapping for tasks. No business rules here. */
import type { Task, TaskStatus } from '../../common/model';
import type { Db } from '../db/open';
import { jsRowGetter } from '../db/js-rows';
import { isoTime } from '../../common/iso-time';

export interface TaskRow {
  id: number;
  title: string;
  role: string;
  status: TaskStatus;
  priority: number;
  payload: string;
  depends_on: string;
  trace_id: string | null;
  unmet_deps: number;
  attempt: number;
  previously_expired: number;
  fence: number;
  last_holder: string | null;
  note: string | null;
  output: string | null;
  answer: string | null;
  /** PROTOCOL §16: the CLI session the answered attempt resumes (migration 026). */
  resume_session: string | null;
  created_at: number;
  updated_at: number;
  verify: string | null;
  previous_error: string | null;
  prechecked_attempt: number;
  disposition: string | null;
  attempt_started_at: number | null;
  l_instance: string | null;
  l_fence: number | null;
  l_claimed: number | null;
  l_expires: number | null;
}

export interface LockRow {
  task_id: number;
  instance_id: string;
  fence: number;
  claimed_at: number;
  expires_at: number;
}

/**
 * Room a new task row reserves for its first claim, which grows the row by 21 bytes (see
 * migration 008): the claim frees these 24 bytes as it fills in the holder, so the row does not
 * grow and its page does not split. As SQL, for every statement that inserts tasks.
 */
export const CLAIM_RESERVE_SQL = 'zeroblob(24)';

/** The task columns a TaskRow carries (not `claim_reserve`: padding, never read). */
export const TASK_COLUMNS = `id, title, role, status, priority, payload, depends_on, trace_id, unmet_deps, attempt,
  previously_expired, fence, last_holder, note, output, answer, resume_session, created_at, updated_at, verify, previous_error, prechecked_attempt, disposition, attempt_started_at`;

/** The TaskRow select over `source` (the tasks table, or a subquery of its rows with every task column) as `t`. */
export function taskSelectFrom(source: string): string {
  return `SELECT ${TASK_COLUMNS.replace(/(\w+)/g, 't.$1')}, l.instance_id AS l_instance, l.fence AS l_fence, l.claimed_at AS l_claimed,
  l.expires_at AS l_expires FROM ${source} t LEFT JOIN locks l ON l.task_id = t.id`;
}

export const TASK_SELECT = taskSelectFrom('tasks');

export function rowToTask(r: TaskRow): Task {
  return {
    id: r.id,
    title: r.title,
    role: r.role,
    status: r.status,
    priority: r.priority,
    payload: JSON.parse(r.payload),
    dependsOn: JSON.parse(r.depends_on),
    attempt: r.attempt,
    previouslyExpired: r.previously_expired === 1,
    fence: r.fence,
    unmetDependencies: r.unmet_deps,
    note: r.note,
    output: r.output === null ? null : JSON.parse(r.output),
    createdAt: isoTime(r.created_at),
    updatedAt: isoTime(r.updated_at),
    traceId: r.trace_id,
    ...(r.verify !== null ? { verify: JSON.parse(r.verify) } : {}),
    ...(r.previous_error !== null ? { previousError: r.previous_error } : {}),
    ...(r.disposition === 'already_done' ? { disposition: 'already_done' as const } : {}),
    ...(r.answer !== null ? { answer: r.answer } : {}),
    ...(r.answer !== null && r.resume_session !== null ? { resumeSession: r.resume_session } : {}),
    lock:
      r.l_instance === null
        ? null
        : {
            instanceId: r.l_instance,
            fence: r.l_fence!,
            claimedAt: isoTime(r.l_claimed!),
            expiresAt: isoTime(r.l_expires!),
          },
  };
}

export type TaskRepo = ReturnType<typeof prepareTaskRepo>;

/**
 * Whether `task_deps` holds any row, exact within one store epoch (a rollback or another writer's
 * commit starts a new one): its rows are only ever inserted, by `addDependency`, which forgets what
 * was known. Per database, whichever repo wrote. Most schedulers declare no dependency at all; then
 * a done report runs no dependents probe.
 */
const anyDependency = new WeakMap<Db, { epoch: number; any: boolean }>();

export function prepareTaskRepo(db: Db) {
  // The two wide reads of every claim and report: rows built in JavaScript (core/db/js-rows.ts).
  const byId = jsRowGetter<[number], TaskRow>(db, `${TASK_SELECT} WHERE t.id = ?`);
  const hasDependents = db.prepare<[number], number>('SELECT 1 FROM task_deps WHERE depends_on = ? LIMIT 1').pluck();
  const releaseDependents = db.prepare('UPDATE tasks SET unmet_deps = unmet_deps - 1 WHERE id IN (SELECT task_id FROM task_deps WHERE depends_on = ?)');
  const anyDependencyRow = db.prepare<[], number>('SELECT 1 FROM task_deps LIMIT 1').pluck();
  const insertDep = db.prepare('INSERT INTO task_deps (task_id, depends_on) VALUES (?, ?)');
  return {
    get(id: number): Task | undefined {
      const r = byId.get(id);
      return r && rowToTask(r);
    },
    status: db.prepare<[number], { status: TaskStatus; fence: number; last_holder: string | null; trace_id: string | null }>(
      'SELECT status, fence, last_holder, trace_id FROM tasks WHERE id = ?',
    ),
    row: byId,
    lock: db.prepare<[number], LockRow>('SELECT * FROM locks WHERE task_id = ?'),
    /** The row (without lock columns: a claimable task has no lock) of the best claimable task. */
    nextClaimable: jsRowGetter<[string], TaskRow>(
      db,
      `SELECT ${TASK_COLUMNS} FROM tasks WHERE role = ? AND status = 'backlog' AND unmet_deps = 0 ORDER BY priority DESC, id LIMIT 1`,
      // No lock (a claimable task has none): the claim fills these in place (claim-locks.ts).
      ['l_instance', 'l_fence', 'l_claimed', 'l_expires'],
    ),
    insertLock: db.prepare('INSERT INTO locks (task_id, instance_id, fence, claimed_at, expires_at) VALUES (?,?,?,?,?)'),
    deleteLock: db.prepare('DELETE FROM locks WHERE task_id = ?'),
    extendLock: db.prepare('UPDATE locks SET expires_at = ? WHERE task_id = ?'),
    markClaimed: db.prepare(
      `UPDATE tasks SET status = 'in_progress', fence = ?, attempt = attempt + 1, last_holder = ?, updated_at = ?, attempt_started_at = ?, claim_reserve = NULL WHERE id = ?`,
    ),
    setPrechecking: db.prepare(`UPDATE tasks SET status = 'verifying', updated_at = ? WHERE id = ?`),
    /** The outcome of a verification (core/verify/task-verifier.ts). */
    setVerified: db.prepare(
      `UPDATE tasks SET status = @status, note = coalesce(@note, note), previous_error = @previousError, prechecked_attempt = @prechecked,
       disposition = @disposition, updated_at = @now WHERE id = @id`,
    ),
    setStatus: db.prepare('UPDATE tasks SET status = ?, updated_at = ? WHERE id = ?'),
    // A report answers for the attempt that had the operator's answer (PROTOCOL §16): it is cleared.
    setReported: db.prepare('UPDATE tasks SET status = ?, note = ?, output = ?, answer = NULL, resume_session = NULL, updated_at = ? WHERE id = ?'),
    setAnswer: db.prepare<[string | null, string | null, number]>('UPDATE tasks SET answer = ?, resume_session = ? WHERE id = ?'),
    setBlocked: db.prepare(`UPDATE tasks SET status = 'blocked', note = ?, updated_at = ? WHERE id = ?`),
    setExpired: db.prepare(`UPDATE tasks SET status = 'backlog', previously_expired = 1, updated_at = ? WHERE id = ?`),
    setPriority: db.prepare('UPDATE tasks SET priority = ?, updated_at = ? WHERE id = ?'),
    setPayload: db.prepare('UPDATE tasks SET payload = ?, updated_at = ? WHERE id = ?'),
    /**
     * `taskId` is done: each task waiting on it waits for one dependency fewer. `epoch`: the store's
     * (see `anyDependency`). Probes first (most tasks have no dependents), and not even that while
     * no task declares a dependency.
     */
    releaseDependentsOf(taskId: number, epoch: number): void {
      let known = anyDependency.get(db);
      if (known === undefined || known.epoch !== epoch) anyDependency.set(db, (known = { epoch, any: anyDependencyRow.get() !== undefined }));
      if (known.any && hasDependents.get(taskId) !== undefined) releaseDependents.run(taskId);
    },
    insertTask: db.prepare(
      `INSERT INTO tasks (title, role, status, priority, payload, depends_on, unmet_deps, trace_id, created_at, updated_at, verify, claim_reserve)
       VALUES (?, ?, 'backlog', ?, ?, ?, ?, ?, ?, ?, ?, ${CLAIM_RESERVE_SQL})`,
    ),
    addDependency(taskId: number, dependsOn: number): void {
      insertDep.run(taskId, dependsOn);
      anyDependency.delete(db);
    },
    insertExpiry: db.prepare(
      'INSERT INTO lock_expiries (task_id, instance_id, fence, reason, expired_at) VALUES (?,?,?,?,?)',
    ),
    markReclaimed: db.prepare(
      `UPDATE lock_expiries SET reclaimed_by = ?, reclaimed_at = ?
       WHERE id = (SELECT max(id) FROM lock_expiries WHERE task_id = ?) AND reclaimed_by IS NULL`,
    ),
  };
}

/** The board's own statements (dependencies, budgets), prepared once when the board is built. */
export function prepareBoardStatements(db: Db) {
  return {
    depStatus: db.prepare<[number], { status: TaskStatus }>('SELECT status FROM tasks WHERE id = ?'),
    insertBudget: db.prepare('INSERT INTO task_budgets (task_id, max_cost_usd, max_tokens) VALUES (?, ?, ?)'),
    upsertBudget: db.prepare(
      'INSERT INTO task_budgets (task_id, max_cost_usd, max_tokens) VALUES (?, ?, ?) ON CONFLICT (task_id) DO UPDATE SET max_cost_usd = excluded.max_cost_usd, max_tokens = excluded.max_tokens',
    ),
  };
}

/** A page of tasks matching `where`, in id order (built per call, as before). */
export function taskPage(db: Db, where: { sql(): string; params: unknown[] }, desc: boolean, limit: number): TaskRow[] {
  return db.prepare<unknown[], TaskRow>(`${TASK_SELECT} ${where.sql()} ORDER BY t.id ${desc ? 'DESC' : 'ASC'} LIMIT ?`).all(...where.params, limit);
}

/** The claim path's look-ups (an instance's role and status, an expiry at a fence), prepared once. */
export function prepareClaimLockStatements(db: Db) {
  return {
    instanceOf: db.prepare<[string], { role: string; status: string }>('SELECT role, status FROM instances WHERE id = ?'),
    expiredAtFence: db.prepare<[number, number], { id: number }>('SELECT id FROM lock_expiries WHERE task_id = ? AND fence = ? LIMIT 1'),
  };
}

/** The watchdog's sweep (locks past their expiry) and its clock-gap shift, prepared once. */
export function prepareWatchdogStatements(db: Db) {
  return {
    expiredLocks: db.prepare<[number, number], { task_id: number }>('SELECT task_id FROM locks WHERE expires_at <= ? ORDER BY expires_at LIMIT ?'),
    shiftLocks: db.prepare('UPDATE locks SET expires_at = expires_at + ? WHERE expires_at > ? AND task_id NOT IN (SELECT value FROM json_each(?))'),
  };
}
