/**
 * The backfill status machine, written down once (docs/jobs.md §5).
 *
 *   (none) ──enqueue──▶ queued ──dispatch──▶ dispatched ──done──▶ done
 *   (none) ──enqueue──▶ held                     │ └──────fail──▶ failed
 *                                                └───requeue───▶ queued   (a lost or retryable attempt with attempts left)
 *   queued | held | failed ──run_now──▶ queued   (the operator's "run now"; dispatched at once)
 *   queued | held | failed ──cancel───▶ cancelled
 *   queued | held | failed ──mark_done▶ done     (the operator did it by hand)
 *
 * Invariants:
 * 1. No other edges; `done` and `cancelled` are final, `failed` waits for the operator.
 * 2. Every edge is applied by `BackfillQueue.transition` (engine/backfill-queue.ts) and audited as
 *    `backfill.<cause>` with from/to; an edge outside this table is refused with `invalid_transition`.
 */
import { GafferError } from '../../common/errors';
import type { BackfillStatus } from '../../common/job-schema';

export type BackfillCause = 'enqueue' | 'dispatch' | 'done' | 'fail' | 'requeue' | 'run_now' | 'cancel' | 'mark_done';

const OPERATOR_FROM: readonly BackfillStatus[] = ['queued', 'held', 'failed'];

const EDGES: Record<BackfillCause, ReadonlyArray<readonly [BackfillStatus | null, BackfillStatus]>> = {
  enqueue: [
    [null, 'queued'],
    [null, 'held'],
  ],
  dispatch: [['queued', 'dispatched']],
  done: [['dispatched', 'done']],
  fail: [['dispatched', 'failed']],
  requeue: [['dispatched', 'queued']],
  run_now: OPERATOR_FROM.map((f) => [f, 'queued'] as const),
  cancel: OPERATOR_FROM.map((f) => [f, 'cancelled'] as const),
  mark_done: OPERATOR_FROM.map((f) => [f, 'done'] as const),
};

export function isBackfillEdge(cause: BackfillCause, from: BackfillStatus | null, to: BackfillStatus): boolean {
  return EDGES[cause].some(([f, t]) => f === from && t === to);
}

export function assertBackfillEdge(cause: BackfillCause, from: BackfillStatus | null, to: BackfillStatus): void {
  if (!isBackfillEdge(cause, from, to)) {
    throw new GafferError('invalid_transition', `a backfill cannot go from ${from ?? '(none)'} to ${to} by ${cause}`, { from, to, cause });
  }
}

/** The statuses an operator action (`run_now`, `cancel`, `mark_done`) starts from. */
export function operatorMayAct(from: BackfillStatus): boolean {
  return OPERATOR_FROM.includes(from);
}

export function allBackfillEdges(): Array<{ cause: BackfillCause; from: BackfillStatus | null; to: BackfillStatus }> {
  return (Object.keys(EDGES) as BackfillCause[]).flatMap((cause) => EDGES[cause].map(([from, to]) => ({ cause, from, to })));
}
