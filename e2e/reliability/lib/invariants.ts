/**
 * The reliability suite's invariant checker: `checkInvariants` (core/tests/invariants.ts — one
 * live holder per task, no two holders over time, fences +1, audit hash chain intact, legal task
 * edges, one run per job + slot, legal run edges in audit order) extended with checks that compare
 * the state tables against the audit log, and against a client-side ledger ("no committed write
 * lost").
 *
 * Every check reads the database only. An empty list means every promise held.
 */
import fs from 'node:fs';
import type { Db } from '../../../src-main/core/db/open';
import { integrityCheck, openDatabase } from '../../../src-main/core/db/open';
import { checkInvariants } from '../../../src-main/core/tests/invariants';
import type { RunStatus } from '../../../src-main/common/job-schema';

/** What clients were told was committed. Filled by the scenarios as acknowledgements arrive. */
export interface Ledger {
  /** Idempotency key → the task id and title the creation acknowledged. */
  creates: Map<string, { taskId: number; title: string }>;
  /** Acknowledged claims. */
  claims: Array<{ taskId: number; fence: number; instanceId: string }>;
  /** Acknowledged reports (including harmless repeats). */
  reports: Array<{ taskId: number; fence: number; status: string; instanceId: string }>;
}

export function newLedger(): Ledger {
  return { creates: new Map(), claims: [], reports: [] };
}

interface AuditRow {
  id: number;
  at: number;
  type: string;
  actor: string;
  subject: string;
  detail: string;
}

const TASK_TO: Record<string, string | undefined> = {
  'task.create': 'backlog',
  'lock.claim': 'in_progress',
  'lock.expire': 'backlog',
  'operator.force_release': 'backlog',
};

/** Audit types whose detail carries the task's new status as `to`. */
const TO_FROM_DETAIL = new Set(['lock.release', 'operator.cancel', 'operator.retry', 'operator.unblock']);

/** Audit types that change a run's status (the same set checkInvariants replays as run edges). */
const RUN_STATUS_TYPES = new Set(['run.claim', 'run.start', 'run.succeed', 'run.fail', 'run.skip']);

/**
 * Extra invariants, beyond checkInvariants: the state tables
 * (tasks, locks, lock_expiries, runs) agree with where the audit log leaves them.
 */
export function extraInvariants(db: Db): string[] {
  const problems: string[] = [];
  const status = new Map<number, string>();
  const claims = new Map<number, { n: number; fence: number; actor: string }>();
  const expiries = new Map<number, number>();
  const runStatus = new Map<string, RunStatus>();
  for (const r of db.prepare('SELECT id, at, type, actor, subject, detail FROM audit ORDER BY id').iterate() as IterableIterator<AuditRow>) {
    if (r.subject.startsWith('task:')) {
      const id = Number(r.subject.slice(5));
      const d = JSON.parse(r.detail) as { to?: string; fence?: number };
      if (r.type === 'task.create' && status.has(id)) problems.push(`task ${id}: created twice in the audit (audit ${r.id})`);
      const to = TASK_TO[r.type] ?? (TO_FROM_DETAIL.has(r.type) ? d.to : undefined);
      if (to !== undefined) status.set(id, to);
      if (r.type === 'lock.claim') {
        const c = claims.get(id) ?? { n: 0, fence: 0, actor: '' };
        claims.set(id, { n: c.n + 1, fence: d.fence ?? -1, actor: r.actor });
      }
      if (r.type === 'lock.expire' || r.type === 'operator.force_release') expiries.set(id, (expiries.get(id) ?? 0) + 1);
    } else if (RUN_STATUS_TYPES.has(r.type) && r.subject.startsWith('run:')) {
      // Only where each run's trail ends: checkInvariants already replays these rows as edges of the
      // run state machine (legal edge, "from" = where the run was) and reports any bad one.
      const d = JSON.parse(r.detail) as { to?: RunStatus };
      if (d.to !== undefined) runStatus.set(r.subject.slice(4), d.to);
    }
  }

  const tasks = db.prepare('SELECT id, status, fence, attempt FROM tasks').all() as Array<{ id: number; status: string; fence: number; attempt: number }>;
  for (const t of tasks) {
    const audited = status.get(t.id);
    if (audited === undefined) problems.push(`task ${t.id} exists without a task.create audit row`);
    else if (audited !== t.status) problems.push(`task ${t.id} is ${t.status} but its audit trail ends in ${audited}`);
    const c = claims.get(t.id);
    if ((c?.fence ?? 0) !== t.fence) problems.push(`task ${t.id}: fence ${t.fence} but the last audited claim has fence ${c?.fence ?? 0}`);
    if ((c?.n ?? 0) !== t.attempt) problems.push(`task ${t.id}: attempt ${t.attempt} but ${c?.n ?? 0} claims are audited`);
  }
  if (status.size !== tasks.length) problems.push(`${status.size} tasks in the audit, ${tasks.length} in the tasks table`);

  const locks = db.prepare('SELECT task_id, instance_id, fence FROM locks').all() as Array<{ task_id: number; instance_id: string; fence: number }>;
  for (const l of locks) {
    const c = claims.get(l.task_id);
    if (!c || c.fence !== l.fence || c.actor !== l.instance_id) {
      problems.push(`lock on task ${l.task_id} (${l.instance_id}, fence ${l.fence}) does not match its last audited claim (${c?.actor}, fence ${c?.fence})`);
    }
  }
  const exp = db.prepare('SELECT task_id, count(*) AS n FROM lock_expiries GROUP BY task_id').all() as Array<{ task_id: number; n: number }>;
  for (const e of exp) {
    if ((expiries.get(e.task_id) ?? 0) !== e.n) problems.push(`task ${e.task_id}: ${e.n} lock_expiries rows, ${expiries.get(e.task_id) ?? 0} audited expiries`);
  }

  const hasRuns = db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'runs'`).get();
  if (hasRuns) {
    for (const r of db.prepare('SELECT id, status FROM runs').all() as Array<{ id: string; status: RunStatus }>) {
      const audited = runStatus.get(r.id);
      if (audited !== r.status) problems.push(`run ${r.id} is ${r.status} but its audit trail ends in ${audited ?? '(nothing)'}`);
    }
  }
  return problems;
}

/** Everything a client was told was committed is in the database. */
export function lostWrites(db: Db, ledger: Ledger): string[] {
  const problems: string[] = [];
  const task = db.prepare<[number], { id: number; title: string }>('SELECT id, title FROM tasks WHERE id = ?');
  for (const [key, c] of ledger.creates) {
    const t = task.get(c.taskId);
    if (!t) problems.push(`create ${key}: acknowledged as task ${c.taskId}, which is not in the database`);
    else if (t.title !== c.title) problems.push(`create ${key}: task ${c.taskId} has title "${t.title}", expected "${c.title}"`);
  }
  const titles = new Set([...ledger.creates.values()].map((c) => c.title));
  if (titles.size > 0) {
    const dupes = db.prepare('SELECT title, count(*) AS n FROM tasks GROUP BY title HAVING n > 1').all() as Array<{ title: string; n: number }>;
    for (const d of dupes) if (titles.has(d.title)) problems.push(`task "${d.title}" exists ${d.n} times (created twice despite its idempotency key)`);
  }
  const claim = db.prepare<[string, string], { detail: string }>(`SELECT detail FROM audit WHERE type = 'lock.claim' AND subject = ? AND actor = ?`);
  for (const c of ledger.claims) {
    const ok = claim.all(`task:${c.taskId}`, c.instanceId).some((r) => (JSON.parse(r.detail) as { fence: number }).fence === c.fence);
    if (!ok) problems.push(`claim of task ${c.taskId} (fence ${c.fence}) by ${c.instanceId} was acknowledged but is not in the audit`);
  }
  const release = db.prepare<[string, string], { detail: string }>(`SELECT detail FROM audit WHERE type = 'lock.release' AND subject = ? AND actor = ?`);
  for (const r of ledger.reports) {
    const ok = release.all(`task:${r.taskId}`, r.instanceId).some((row) => {
      const d = JSON.parse(row.detail) as { fence: number; to: string };
      return d.fence === r.fence && d.to === r.status;
    });
    if (!ok) problems.push(`report ${r.status} of task ${r.taskId} (fence ${r.fence}) by ${r.instanceId} was acknowledged but is not in the audit`);
  }
  return problems;
}

/** Every invariant, plus the ledger if given. */
export function allInvariants(db: Db, ledger?: Ledger): string[] {
  return [...checkInvariants(db), ...extraInvariants(db), ...(ledger ? lostWrites(db, ledger) : [])];
}

/**
 * Opens the database file of a stopped (or killed) server read-only, runs SQLite's quick_check
 * (`integrityCheck`: a damaged file fails here) and every invariant.
 */
export function checkDatabaseFile(dbPath: string, ledger?: Ledger): { problems: string[]; tasks: Record<string, number>; auditRows: number } {
  if (!fs.existsSync(dbPath)) return { problems: [`no database at ${dbPath}`], tasks: {}, auditRows: 0 };
  const db = openDatabase(dbPath, { readonly: true });
  try {
    integrityCheck(db);
    const tasks = Object.fromEntries(
      (db.prepare('SELECT status, count(*) AS n FROM tasks GROUP BY status').all() as Array<{ status: string; n: number }>).map((r) => [r.status, r.n]),
    );
    const auditRows = (db.prepare('SELECT count(*) AS n FROM audit').get() as { n: number }).n;
    return { problems: allInvariants(db, ledger), tasks, auditRows };
  } finally {
    db.close();
  }
}

export function assertNoProblems(problems: string[], context: string): void {
  if (problems.length > 0) throw new Error(`${context}: ${problems.length} invariant(s) broken:\n${problems.slice(0, 30).join('\n')}`);
}
