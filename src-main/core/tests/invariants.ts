/**
 * The invariant checker: reads a Gaffer database and lists every broken promise. Used by the
 * race, crash and reliability tests. An empty list means:
 * 1. one live holder per task: a lock row ⇔ status in_progress, with the task's current fence;
 * 2. no two holders over time: per task, audit CLAIMs alternate with RELEASE/EXPIRE, fences grow by one;
 * 3. the audit hash chain is intact from genesis (no committed row lost or altered): every bad row
 *    is listed, and the other checks go on reading the rows after it;
 * 4. every status transition in the audit is an edge of the state machine;
 * 5. one run per job + slot (once the jobs tables exist), and every run status change in the audit is
 *    an edge of the run state machine starting from the run's previous status;
 * 6. audit time goes down only at a recorded backward clock step (AuditLog invariant 6), which is
 *    what lets a time range become one id range per time segment.
 * 7. likewise every backfill and instance status change audited with from/to is an edge of its machine.
 * 8. every run phase change in the audit (`phaseFrom` / `phaseTo`) is an edge of the run phase machine
 *    (jobs/run-phase-transitions.ts) from the phase the run was in, and the last one is the phase the
 *    run's row says now: a phase written behind the writer's back (`JobRepo.movePhase`) shows here.
 */
import type { Db } from '../db/open';
import { ChainVerifier, GENESIS_HASH } from '../audit/hash-chain';
import { auditRowToChainRow, CLOCK_STEP_TYPE, type AuditRow } from '../audit/audit-store';
import { auditRowsAsWritten } from '../audit/stored-text';
import { isAllowed, type TransitionCause } from '../tasks/transitions';
import type { InstanceStatus, TaskStatus } from '../../common/model';
import type { BackfillStatus, RunStatus } from '../../common/job-schema';
import { isRunEdge, type RunCause } from '../jobs/run-transitions';
import { isPhaseEdge, phaseCauseOfAuditType } from '../jobs/run-phase-transitions';
import { runPhase, type PhaseColumns, type RunPhase } from '../jobs/run-phase';
import { isBackfillEdge, type BackfillCause } from '../jobs/backfill-transitions';
import { isInstanceEdge, type InstanceCause } from '../instances/transitions';

const RELEASING = new Set(['lock.release', 'lock.expire', 'lock.budget', 'operator.force_release', 'operator.cancel']);

export function checkInvariants(db: Db): string[] {
  const problems: string[] = [];

  const orphanLocks = db
    .prepare(`SELECT l.task_id, t.status FROM locks l LEFT JOIN tasks t ON t.id = l.task_id WHERE t.status IS NOT 'in_progress'`)
    .all() as Array<{ task_id: number; status: string | null }>;
  for (const o of orphanLocks) problems.push(`task ${o.task_id} has a lock but status ${o.status}`);
  const unlocked = db
    .prepare(`SELECT t.id FROM tasks t LEFT JOIN locks l ON l.task_id = t.id WHERE t.status = 'in_progress' AND l.task_id IS NULL`)
    .all() as Array<{ id: number }>;
  for (const u of unlocked) problems.push(`task ${u.id} is in_progress without a lock`);
  const fenceMismatch = db.prepare(`SELECT l.task_id FROM locks l JOIN tasks t ON t.id = l.task_id WHERE l.fence != t.fence`).all() as Array<{
    task_id: number;
  }>;
  for (const f of fenceMismatch) problems.push(`task ${f.task_id}: lock fence differs from the task's fence`);

  const verifier = new ChainVerifier(GENESIS_HASH, {
    firstId: 1,
    asWritten: auditRowsAsWritten(db),
    onProblem: (p) => problems.push(`audit chain broken at row ${p.id}: ${p.reason}`),
  });
  const holder = new Map<string, { fence: number } | null>();
  const lastFence = new Map<string, number>();
  const status = new Map<string, TaskStatus>();
  for (const row of db.prepare('SELECT * FROM audit ORDER BY id').iterate() as IterableIterator<AuditRow>) {
    verifier.push(auditRowToChainRow(row));
    if (!row.subject.startsWith('task:')) continue;
    const d = JSON.parse(row.detail) as { fence?: number; from?: TaskStatus; to?: TaskStatus };
    const t = row.subject;
    if (row.type === 'task.create') status.set(t, 'backlog');
    if (row.type === 'lock.claim') {
      if (holder.get(t)) problems.push(`${t}: claimed (fence ${d.fence}) while fence ${holder.get(t)!.fence} was live (audit ${row.id})`);
      const expected = (lastFence.get(t) ?? 0) + 1;
      if (d.fence !== expected) problems.push(`${t}: claim fence ${d.fence}, expected ${expected} (audit ${row.id})`);
      holder.set(t, { fence: d.fence! });
      lastFence.set(t, d.fence!);
      checkEdge(problems, row.id, t, 'claim', status.get(t), 'in_progress');
      status.set(t, 'in_progress');
    } else if (RELEASING.has(row.type) && holder.get(t)) {
      holder.set(t, null);
    }
    const cause = causeOf(row.type);
    if (cause && d.to) {
      checkEdge(problems, row.id, t, cause, d.from ?? status.get(t), d.to);
      status.set(t, d.to);
    } else if (row.type === 'lock.expire' || row.type === 'operator.force_release') {
      checkEdge(problems, row.id, t, row.type === 'lock.expire' ? 'expire' : 'force_release', status.get(t), 'backlog');
      status.set(t, 'backlog');
    }
  }
  const backwards = db.prepare(
    `SELECT a.id, a.at, p.at AS prev FROM audit a JOIN audit p ON p.id = a.id - 1
     WHERE a.at < p.at AND NOT (a.type = '${CLOCK_STEP_TYPE}' AND json_extract(a.detail, '$.gapMs') < 0) ORDER BY a.id`,
  );
  for (const b of backwards.all() as Array<{ id: number; at: number; prev: number }>) {
    problems.push(`audit ${b.id}: time goes backwards (${b.at} < ${b.prev}) without a recorded clock step`);
  }

  const hasRuns = db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'runs'`).get();
  if (hasRuns) {
    const dupes = db.prepare('SELECT job_id, slot, count(*) AS n FROM runs GROUP BY job_id, slot HAVING n > 1').all() as Array<{
      job_id: string;
      slot: string;
      n: number;
    }>;
    for (const d of dupes) problems.push(`job ${d.job_id} slot ${d.slot} has ${d.n} runs`);
    // Every run status change in the audit is an edge of the run state machine, in order.
    const runStatus = new Map<string, string>();
    for (const row of db.prepare(`SELECT id, subject, type, detail FROM audit WHERE subject LIKE 'run:%' AND type IN ('run.claim','run.start','run.succeed','run.fail','run.skip') ORDER BY id`).iterate() as IterableIterator<{ id: number; subject: string; type: string; detail: string }>) {
      const d = JSON.parse(row.detail) as { from?: RunStatus | null; to?: RunStatus };
      const cause = row.type.slice(4) as RunCause;
      const known = runStatus.get(row.subject);
      if (d.to === undefined || !isRunEdge(cause, d.from ?? null, d.to)) problems.push(`${row.subject}: illegal run ${cause} ${d.from} → ${d.to} (audit ${row.id})`);
      else if ((known ?? null) !== (d.from ?? null)) problems.push(`${row.subject}: run ${cause} from ${d.from} but it was ${known ?? '(none)'} (audit ${row.id})`);
      if (d.to !== undefined) runStatus.set(row.subject, d.to);
    }
    replayRunPhases(db, problems);
    replayEdges(db, problems, 'backfill', (cause, from, to) => isBackfillEdge(cause as BackfillCause, from as BackfillStatus | null, to as BackfillStatus));
  }
  replayEdges(db, problems, 'instance', (cause, from, to) => isInstanceEdge(cause as InstanceCause, from as InstanceStatus | null, to as InstanceStatus));
  return problems;
}

/** Invariant 8: the audited phase changes of every run, in id order, against the table and the rows. */
function replayRunPhases(db: Db, problems: string[]) {
  const phase = new Map<string, RunPhase>();
  const rows = db.prepare(`SELECT id, subject, type, detail FROM audit WHERE subject LIKE 'run:%' AND json_extract(detail, '$.phaseTo') IS NOT NULL ORDER BY id`);
  for (const row of rows.iterate() as IterableIterator<{ id: number; subject: string; type: string; detail: string }>) {
    const d = JSON.parse(row.detail) as { phaseFrom?: RunPhase | null; phaseTo: RunPhase };
    const cause = phaseCauseOfAuditType(row.type);
    const from = d.phaseFrom ?? null;
    if (!cause || !isPhaseEdge(cause, from, d.phaseTo)) problems.push(`${row.subject}: illegal run phase change ${cause ?? row.type} ${from} → ${d.phaseTo} (audit ${row.id})`);
    else if (phase.has(row.subject) && phase.get(row.subject) !== from) problems.push(`${row.subject}: run phase ${cause} from ${from} but it was ${phase.get(row.subject)} (audit ${row.id})`);
    phase.set(row.subject, d.phaseTo);
  }
  if (phase.size === 0) return;
  const current = db.prepare(`SELECT id, status, dispatched_at, instance_id, attempt, disposition FROM runs`);
  for (const r of current.iterate() as IterableIterator<PhaseColumns & { id: string }>) {
    const audited = phase.get(`run:${r.id}`);
    const now = runPhase(r);
    if (audited !== undefined && audited !== now) problems.push(`run:${r.id}: its row says ${now}, but its audited phase changes end at ${audited}`);
  }
}

/** Replays the audited edges (`<kind>.<cause>` rows with from/to) of every `<kind>:` subject, in id order. */
function replayEdges(db: Db, problems: string[], kind: string, isEdge: (cause: string, from: string | null, to: string) => boolean) {
  const status = new Map<string, string | null>();
  const rows = db.prepare(`SELECT id, subject, type, detail FROM audit WHERE subject LIKE ? AND json_extract(detail, '$.to') IS NOT NULL ORDER BY id`);
  for (const row of rows.iterate(`${kind}:%`) as IterableIterator<{ id: number; subject: string; type: string; detail: string }>) {
    const d = JSON.parse(row.detail) as { from?: string | null; to: string };
    const cause = row.type.slice(kind.length + 1);
    const from = d.from ?? null;
    if (!isEdge(cause, from, d.to)) problems.push(`${row.subject}: illegal ${kind} ${cause} ${from} → ${d.to} (audit ${row.id})`);
    else if (status.has(row.subject) && status.get(row.subject) !== from) problems.push(`${row.subject}: ${kind} ${cause} from ${from} but it was ${status.get(row.subject)} (audit ${row.id})`);
    status.set(row.subject, d.to);
  }
}

function causeOf(type: string): TransitionCause | undefined {
  switch (type) {
    case 'lock.release':
      return 'report';
    case 'lock.budget':
      return 'budget';
    case 'operator.cancel':
      return 'cancel';
    case 'operator.retry':
      return 'retry';
    case 'operator.unblock':
      return 'unblock';
    // core/verify: the checks' outcome moves a verifying task on; "already done?" checks start from backlog.
    case 'task.verified':
      return 'verify';
    case 'task.precheck':
      return 'precheck';
    default:
      return undefined;
  }
}

function checkEdge(problems: string[], id: number, t: string, cause: TransitionCause, from: TaskStatus | undefined, to: TaskStatus) {
  if (from === undefined) return; // task created before the audited range
  if (!isAllowed(cause, from, to)) problems.push(`${t}: illegal ${cause} ${from} → ${to} (audit ${id})`);
}
