/**
 * The engine's explanation of itself: each layer's verdict for a slot, written to `checks` (the
 * last verdict per check, with counts and dates) and audited as `check.verdict` when it changes.
 *
 * Invariants:
 * 1. Write-only for the engine. A decision never reads a check back: what a run waits for is the
 *    run's `waiting_on` column (run-phase.ts). Only explain/why read the evidence.
 * 2. The first verdict of a check is audited only when it blocks (an on-time run is already told by
 *    its claim and dispatch rows); every later change of verdict is audited.
 */
import type { CheckLayer } from '../../../common/job-schema';
import type { RunRow } from '../rows';
import { ACTOR, type EngineContext } from './context';
import type { ExecVerdict } from './verdicts';

type CheckSubject = Pick<RunRow, 'job_id' | 'slot' | 'id' | 'trace_id'>;

export function recordCheck(e: EngineContext, run: CheckSubject, layer: CheckLayer, name: string, verdict: 'ready' | 'not_ready' | 'error', reason: string, evidence: unknown): void {
  const change = e.repo.recordCheck(run.job_id, run.slot, layer, name, verdict, reason, evidence);
  if (change === 'changed' || (change === 'new' && verdict !== 'ready')) {
    e.ctx.audit.append({
      type: 'check.verdict',
      actor: ACTOR,
      subject: `run:${run.id}`,
      detail: { jobId: run.job_id, slot: run.slot, layer, name, verdict, reason },
      traceId: run.trace_id,
    });
  }
}

/** The layer-3 verdict as the `execution` check (each condition in its evidence). */
export function recordExecution(e: EngineContext, run: CheckSubject, ex: ExecVerdict): void {
  recordCheck(e, run, 'execution', 'execution', ex.blocker ? 'not_ready' : 'ready', ex.reason, { blocker: ex.blocker, ...ex.evidence });
}
