/**
 * Where a run stands, decoded once. A run row says it in four columns — status × dispatched_at ×
 * instance_id × attempt (and, for `verifying` only, its disposition) — and every decision of the
 * engine reads them through `runPhase`, never by testing the columns itself. They are written
 * together by one writer, `JobRepo.movePhase`, along an edge of run-phase-transitions.ts:
 *
 *   phase        status    out (dispatched_at)   holder (instance_id)   attempt
 *   checking     pending   no                    —                      0      the first attempt is not out; the layers decide when it goes
 *   undelivered  pending   no                    —                      ≥ 1    an attempt was offered to nobody (or nobody took it); the next offer waits for its due time
 *   retrying     running   no                    —                      ≥ 1    an attempt failed; the next waits for its due time
 *   offered      any open  yes                   none                   ≥ 1    a trigger is out; no instance has started it yet
 *   started      running   yes                   an instance            ≥ 1    an instance holds the attempt until its result or deadline
 *   verifying    running   kept                  —                      ≥ 1    disposition `verifying`: Gaffer checks the work itself (PROTOCOL §13),
 *                                                                                after the agent's success (the attempt still out) or before a retry
 *   finished     success, failed or skipped                                     final for the status (a backfill may still run the slot again)
 *
 * What a run's next attempt waits for (or, for an `offered` run that nobody acknowledged before a
 * restart, its next offer) is the column `waiting_on` — the first blocker in layer order
 * (preconditions, then the execution conditions), as last evaluated; null once the attempt is out or
 * the run finished. It is a fact the engine decides by; the `checks` rows (and their evidence) are
 * the explanation, written for the operator and read back only by explain/why.
 *
 * Invariants:
 * 1. The phases above are exhaustive and disjoint for every row the engine writes.
 * 2. In SQL (counts and scans that cannot call this function) "in flight" is
 *    `status IN ('pending','running') AND dispatched_at IS NOT NULL`: the phases offered and started,
 *    and a `verifying` that follows the agent's report. A verifying attempt has no holder
 *    (`instance_id` NULL), so the SQL that finds an instance's attempts (`startedBy`) never sees it.
 */
import type { RunDisposition, RunStatus } from '../../common/job-schema';
import { FINAL_RUN_STATUSES } from './run-transitions';

export type RunPhase = 'checking' | 'undelivered' | 'retrying' | 'offered' | 'started' | 'verifying' | 'finished';

/** An execution condition that holds a dispatch back (layer 3, in the order they are checked). */
export type ExecutionBlocker = 'killSwitch' | 'pause' | 'enabled' | 'maintenance' | 'order' | 'overlap' | 'quotaRole' | 'quotaGlobal' | 'budget' | 'attemptCeiling' | 'instance';

/**
 * What a run that is not out waits for: its window to open, its preconditions, or an execution
 * condition. `overlap` is only ever a wait behind a running slot under overlap `queue_one` (the other
 * overlap verdicts skip the slot at once).
 */
export type WaitingOn = 'window' | 'preconditions' | ExecutionBlocker;

export interface PhaseColumns {
  status: RunStatus;
  dispatched_at: number | null;
  instance_id: string | null;
  attempt: number;
  disposition: RunDisposition;
}

export function runPhase(r: PhaseColumns): RunPhase {
  if (FINAL_RUN_STATUSES.has(r.status)) return 'finished';
  if (r.disposition === 'verifying') return 'verifying';
  if (r.dispatched_at !== null) return r.instance_id === null ? 'offered' : 'started';
  if (r.status === 'running') return 'retrying';
  return r.attempt === 0 ? 'checking' : 'undelivered';
}

/** Not out, not finished: the run waits for its next evaluation. */
export function isWaiting(phase: RunPhase): boolean {
  return phase === 'checking' || phase === 'undelivered' || phase === 'retrying';
}

/** An attempt is out (offered or started): it counts against quotas and holds its slot's deadline. */
export function isOut(phase: RunPhase): boolean {
  return phase === 'offered' || phase === 'started';
}

/** In progress for the overlap policy: out, being verified, or started once and waiting for its retry. */
export function isInProgress(phase: RunPhase): boolean {
  return phase === 'retrying' || phase === 'verifying' || isOut(phase);
}
