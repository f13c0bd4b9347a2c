/**
 * The task status machine, written down once. Every status change in the core goes through
 * `assertTransition`; an edge not listed here is refused with `invalid_transition`.
 *
 *   backlog ──claim──▶ in_progress ──holder report──▶ done | failed | blocked | backlog
 *   in_progress ──watchdog expiry / operator force-release──▶ backlog
 *   in_progress ──its spend cap per attempt passed (core/budgets)──▶ blocked
 *   failed ──operator retry──▶ backlog        blocked ──operator unblock──▶ backlog
 *   backlog | blocked | failed | in_progress | verifying ──operator cancel──▶ cancelled
 *   Done means verified (PROTOCOL §13, core/verify), for a task that declares checks:
 *   in_progress ──holder reports done──▶ verifying (lock released; Gaffer runs the checks)
 *   verifying ──verify: all pass──▶ done; one fails: onFail retry ▶ backlog, needs_human ▶ blocked, fail ▶ failed
 *   backlog ──precheck (before: true, a later attempt is about to be handed out)──▶ verifying
 *   done and cancelled are final.
 */
import { GafferError } from '../../common/errors';
import type { TaskStatus } from '../../common/model';

export type TransitionCause = 'claim' | 'report' | 'expire' | 'force_release' | 'budget' | 'retry' | 'unblock' | 'cancel' | 'verify' | 'precheck';

const EDGES: Record<TransitionCause, ReadonlyArray<readonly [TaskStatus, TaskStatus]>> = {
  claim: [['backlog', 'in_progress']],
  report: [
    ['in_progress', 'done'],
    ['in_progress', 'failed'],
    ['in_progress', 'blocked'],
    ['in_progress', 'backlog'],
    ['in_progress', 'verifying'],
  ],
  verify: [
    ['verifying', 'done'],
    ['verifying', 'backlog'],
    ['verifying', 'blocked'],
    ['verifying', 'failed'],
  ],
  precheck: [['backlog', 'verifying']],
  expire: [['in_progress', 'backlog']],
  force_release: [['in_progress', 'backlog']],
  budget: [['in_progress', 'blocked']],
  retry: [['failed', 'backlog']],
  unblock: [['blocked', 'backlog']],
  cancel: [
    ['backlog', 'cancelled'],
    ['blocked', 'cancelled'],
    ['failed', 'cancelled'],
    ['in_progress', 'cancelled'],
    ['verifying', 'cancelled'],
  ],
};

export function isAllowed(cause: TransitionCause, from: TaskStatus, to: TaskStatus): boolean {
  return EDGES[cause].some(([f, t]) => f === from && t === to);
}

export function assertTransition(cause: TransitionCause, from: TaskStatus, to: TaskStatus): void {
  if (!isAllowed(cause, from, to)) {
    throw new GafferError('invalid_transition', `a task cannot go from ${from} to ${to} by ${cause.replace('_', '-')}`, {
      from,
      to,
      cause,
    });
  }
}

/** All edges, for docs and for the invariant checker. */
export function allEdges(): Array<{ cause: TransitionCause; from: TaskStatus; to: TaskStatus }> {
  return (Object.keys(EDGES) as TransitionCause[]).flatMap((cause) => EDGES[cause].map(([from, to]) => ({ cause, from, to })));
}
