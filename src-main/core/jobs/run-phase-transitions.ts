/**
 * The run attempt's phase machine, written down once (run-phase.ts says how a row is decoded into
 * its phase). Every phase change is applied by `JobRepo.movePhase`, which checks it here first.
 *
 *   (none)                           ──claim──▶ checking
 *   checking, undelivered, retrying  ──dispatch──▶ offered
 *   offered   ──start (the first attempt: pending → running) / attempt_start (a later one)──▶ started
 *   offered   ──retry──▶ undelivered (a first attempt nobody took) or retrying (a later attempt)
 *   started   ──retry──▶ retrying          verifying ──retry──▶ retrying
 *   started   ──verify──▶ verifying        retrying  ──verify──▶ verifying
 *   started, verifying                ──succeed──▶ finished
 *   checking, undelivered             ──skip──▶ finished
 *   every phase but finished          ──fail──▶ finished
 *   finished  ──backfill──▶ finished   (a backfill's attempt is counted on its run's row)
 *
 * `verifying` (PROTOCOL §13) is Gaffer checking the work itself after the agent reported success
 * (from `started`), or before a later attempt is handed out (from `retrying`). The verification
 * engine drives it; this table only says where it may go.
 *
 * Invariants:
 * 1. No other edges: a phase change outside this table is refused with `invalid_transition`, and
 *    nothing is written.
 * 2. A cause that is also a run status edge (claim, start, succeed, fail, skip: run-transitions.ts)
 *    changes the status by that edge; every other cause keeps the status.
 * 3. Every change is audited as `run.<cause>` with `phaseFrom` / `phaseTo` — except `backfill`,
 *    whose audit row is the backfill's own (`backfill.dispatch`) — and the invariant checker
 *    replays those rows per run (testing/invariants.ts): each is an edge from the phase the run was
 *    in, and the last one is the phase its row says now.
 */
import { GafferError } from '../../common/errors';
import type { RunStatus } from '../../common/job-schema';
import type { RunPhase } from './run-phase';
import type { RunCause } from './run-transitions';

export type PhaseCause = 'claim' | 'dispatch' | 'start' | 'attempt_start' | 'verify' | 'retry' | 'succeed' | 'fail' | 'skip' | 'backfill';

const OPEN: readonly RunPhase[] = ['checking', 'undelivered', 'retrying', 'offered', 'started', 'verifying'];

const EDGES: Record<PhaseCause, ReadonlyArray<readonly [RunPhase | null, RunPhase]>> = {
  claim: [[null, 'checking']],
  dispatch: [
    ['checking', 'offered'],
    ['undelivered', 'offered'],
    ['retrying', 'offered'],
  ],
  // The first attempt's acknowledgement starts the run (pending → running); a later attempt's
  // acknowledgement finds it running already.
  start: [['offered', 'started']],
  attempt_start: [['offered', 'started']],
  verify: [
    ['started', 'verifying'],
    ['retrying', 'verifying'],
  ],
  // The attempt failed (or nobody took it) and a next one is due later.
  retry: [
    ['offered', 'undelivered'],
    ['offered', 'retrying'],
    ['started', 'retrying'],
    ['verifying', 'retrying'],
  ],
  succeed: [
    ['started', 'finished'],
    ['verifying', 'finished'],
  ],
  fail: OPEN.map((p) => [p, 'finished'] as const),
  skip: [
    ['checking', 'finished'],
    ['undelivered', 'finished'],
  ],
  backfill: [['finished', 'finished']],
};

/** The status a cause moves the run to, for causes that are also status edges (invariant 2). */
const STATUS_OF: Partial<Record<PhaseCause, RunStatus>> = { claim: 'pending', start: 'running', succeed: 'success', fail: 'failed', skip: 'skipped' };

/** Causes audited elsewhere (invariant 3). */
const AUDITED_ELSEWHERE: ReadonlySet<PhaseCause> = new Set(['backfill']);

export const PHASE_CAUSES = Object.keys(EDGES) as PhaseCause[];

export function isPhaseEdge(cause: PhaseCause, from: RunPhase | null, to: RunPhase): boolean {
  return (EDGES[cause] ?? []).some(([f, t]) => f === from && t === to);
}

export function assertPhaseEdge(cause: PhaseCause, from: RunPhase | null, to: RunPhase): void {
  if (!isPhaseEdge(cause, from, to)) {
    throw new GafferError('invalid_transition', `a run attempt cannot go from ${from ?? '(none)'} to ${to} by ${cause.replace('_', ' ')}`, { from, to, cause });
  }
}

/** The status edge a cause is (invariant 2), or undefined when the cause keeps the status. */
export function statusEdgeOf(cause: PhaseCause): { cause: RunCause; to: RunStatus } | undefined {
  const to = STATUS_OF[cause];
  return to === undefined ? undefined : { cause: cause as RunCause, to };
}

export function isAuditedOnRun(cause: PhaseCause): boolean {
  return !AUDITED_ELSEWHERE.has(cause);
}

/** The cause named by an audit row type (`run.<cause>`), if it is one. */
export function phaseCauseOfAuditType(type: string): PhaseCause | undefined {
  const c = type.startsWith('run.') ? type.slice(4) : '';
  return (PHASE_CAUSES as string[]).includes(c) ? (c as PhaseCause) : undefined;
}

export function allPhaseEdges(): Array<{ cause: PhaseCause; from: RunPhase | null; to: RunPhase }> {
  return PHASE_CAUSES.flatMap((cause) => EDGES[cause].map(([from, to]) => ({ cause, from, to })));
}
