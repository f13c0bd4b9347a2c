/**
 * The instance status machine, written down once.
 *
 *   (none) ──hello──▶ online ──disconnect──▶ disconnected ──resume──▶ online
 *                        │  └──resume (a second hello with the same token while online)──▶ online
 *                        └──offline (heartbeat timeout)──▶ offline ◀──offline (grace over)── disconnected
 *
 * Invariants:
 * 1. No other edges: `offline` is final (a returning process says hello as a new instance).
 * 2. Every edge is applied by `InstanceRegistry.transition` and audited as `instance.<cause>` with
 *    from/to; an edge outside this table is refused with `invalid_transition`.
 */
import { GafferError } from '../../common/errors';
import type { InstanceStatus } from '../../common/model';

export type InstanceCause = 'hello' | 'resume' | 'disconnect' | 'offline';

const EDGES: Record<InstanceCause, ReadonlyArray<readonly [InstanceStatus | null, InstanceStatus]>> = {
  hello: [[null, 'online']],
  resume: [
    ['disconnected', 'online'],
    ['online', 'online'],
  ],
  disconnect: [['online', 'disconnected']],
  offline: [
    ['online', 'offline'],
    ['disconnected', 'offline'],
  ],
};

export function isInstanceEdge(cause: InstanceCause, from: InstanceStatus | null, to: InstanceStatus): boolean {
  return EDGES[cause].some(([f, t]) => f === from && t === to);
}

export function assertInstanceEdge(cause: InstanceCause, from: InstanceStatus | null, to: InstanceStatus): void {
  if (!isInstanceEdge(cause, from, to)) {
    throw new GafferError('invalid_transition', `an instance cannot go from ${from ?? '(none)'} to ${to} by ${cause}`, { from, to, cause });
  }
}

export function allInstanceEdges(): Array<{ cause: InstanceCause; from: InstanceStatus | null; to: InstanceStatus }> {
  return (Object.keys(EDGES) as InstanceCause[]).flatMap((cause) => EDGES[cause].map(([from, to]) => ({ cause, from, to })));
}
