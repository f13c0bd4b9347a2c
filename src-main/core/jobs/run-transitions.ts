/**
 * The run status machine, written down once (SPEC §6, the source's task_run_record).
 *
 *   (none) ──claim──▶ pending ──start──▶ running ──succeed──▶ success
 *                        │                  └──────fail─────▶ failed
 *                        ├──skip──▶ skipped   (calendar, dst, overlap, not ready / paused / kill
 *                        │                     switch / maintenance / quota at window close, missed)
 *                        └──fail──▶ failed    (missed with a failing policy, undeliverable)
 *
 * Invariants:
 * 1. No other edges. Retries are counted (`retry_count`, `next_attempt_at`), never a status flip:
 *    a retryable failure keeps a running run `running`, an undelivered trigger keeps it `pending`.
 * 2. success, failed and skipped are final for the status. A later backfill changes only the
 *    disposition (`failed` → `backfilled`), so the ledger reads "failed → backfilled".
 * 3. Every edge is applied by `applyRunTransition` and audited as `run.<cause>` with from/to.
 */
import { GafferError } from '../../common/errors';
import type { RunStatus } from '../../common/job-schema';

export type RunCause = 'claim' | 'start' | 'succeed' | 'fail' | 'skip';

const EDGES: Record<RunCause, ReadonlyArray<readonly [RunStatus | null, RunStatus]>> = {
  claim: [[null, 'pending']],
  start: [['pending', 'running']],
  succeed: [['running', 'success']],
  fail: [
    ['running', 'failed'],
    ['pending', 'failed'],
  ],
  skip: [['pending', 'skipped']],
};

export const FINAL_RUN_STATUSES: ReadonlySet<RunStatus> = new Set(['success', 'failed', 'skipped']);

export function isRunEdge(cause: RunCause, from: RunStatus | null, to: RunStatus): boolean {
  return EDGES[cause].some(([f, t]) => f === from && t === to);
}

export function assertRunEdge(cause: RunCause, from: RunStatus | null, to: RunStatus): void {
  if (!isRunEdge(cause, from, to)) {
    throw new GafferError('invalid_transition', `a run cannot go from ${from ?? '(none)'} to ${to} by ${cause}`, { from, to, cause });
  }
}

/** The cause whose edge leads from `from` to `to`, if any (for the invariant checker). */
export function runCauseOf(from: RunStatus | null, to: RunStatus): RunCause | undefined {
  return (Object.keys(EDGES) as RunCause[]).find((c) => isRunEdge(c, from, to));
}

export function allRunEdges(): Array<{ cause: RunCause; from: RunStatus | null; to: RunStatus }> {
  return (Object.keys(EDGES) as RunCause[]).flatMap((cause) => EDGES[cause].map(([from, to]) => ({ cause, from, to })));
}
