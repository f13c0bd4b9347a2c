/**
 * The backfill queue's rows: enqueue, the one function that moves a backfill along its status
 * machine (backfill-transitions.ts), and the audit + event every change carries. The dispatching of
 * backfills is backfills.ts's.
 *
 * Invariants:
 * 1. Every status change goes through `transition`: the edge is checked, written as a
 *    compare-and-set, audited as `backfill.<cause>` with from/to and announced (`backfill.changed`).
 * 2. One open backfill per run: `enqueue` returns the open one if there is one.
 */
import type { BackfillStatus } from '../../../common/job-schema';
import type { BackfillPatch } from '../backfill-repo';
import { assertBackfillEdge, type BackfillCause } from '../backfill-transitions';
import { toBackfill, type BackfillRow, type RunRow } from '../rows';
import type { EngineContext } from './context';

/** Audits a backfill change as `type` and announces it. */
export function auditBackfill(e: EngineContext, b: BackfillRow, type: string, actor: string, detail: Record<string, unknown> = {}): void {
  const job = e.repo.maybeJobRow(b.job_id);
  const run = e.repo.maybeRun(b.run_id);
  e.ctx.audit.append({ type, actor, subject: `backfill:${b.id}`, detail: { jobId: b.job_id, slot: b.slot, runId: b.run_id, status: b.status, ...detail }, traceId: run?.trace_id ?? null });
  e.ctx.store.emit({ type: 'backfill.changed', backfill: toBackfill(b, job?.name ?? b.job_id), action: type });
}

/** Moves `b` along one edge of the backfill machine, writes `fields`, audits `backfill.<cause>`. */
export function transitionBackfill(e: EngineContext, b: BackfillRow, cause: BackfillCause, to: BackfillStatus, fields: BackfillPatch, actor: string, detail: Record<string, unknown> = {}): BackfillRow {
  assertBackfillEdge(cause, b.status, to);
  const row = e.backfillRows.setStatus(b, to, fields, e.now());
  if (to === 'queued') e.backfillQueued();
  auditBackfill(e, row, `backfill.${cause}`, actor, { from: b.status, to, ...detail });
  return row;
}

/** Puts the slot of `run` in the queue (edge none → queued | held); the open one if there is one. */
export function enqueueBackfill(e: EngineContext, run: RunRow, reason: string, status: 'queued' | 'held', actor: string, note: string | null): BackfillRow {
  const open = e.backfillRows.openOfRun(run.id);
  if (open) return open;
  assertBackfillEdge('enqueue', null, status);
  const row = e.backfillRows.insert({ jobId: run.job_id, slot: run.slot, slotAt: run.slot_at, runId: run.id, reason, status, actor, note }, e.now());
  e.backfillQueued();
  auditBackfill(e, row, 'backfill.enqueue', actor, { reason, status, note, from: null, to: status });
  return row;
}
