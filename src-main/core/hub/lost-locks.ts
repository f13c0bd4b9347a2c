/**
 * Taking work away from a live holder (PROTOCOL §4): when the core removes a lock by anything but
 * the holder's own report, the holder's session is sent `lock_lost` at once, and the operator sees
 * the instance as having "lost its lock" until it disconnects or reports that task.
 *
 * Invariants:
 * 1. `lock_lost` goes only to the ready session bound to the lock's instance; an instance without
 *    one learns it on resume (the lock is missing from `hello.locks`).
 * 2. An entry is dropped when its instance's session ends, when it reports the task (the report
 *    itself is refused, `not_holder`), or when it claims the same task again.
 * 3. At most MAX_PER_INSTANCE entries are kept per instance (the oldest go first).
 */
import type { LockLostReason } from '../../common/protocol';
import type { HubEnv, Peer } from './host';
import type { Presence } from './presence';

/** A lock the instance was told it lost and has not reported since. */
export interface LostLock {
  taskId: number;
  fence: number;
  reason: LockLostReason;
  /** When the loss was pushed (core clock, ms). */
  at: number;
}

const MAX_PER_INSTANCE = 50;

export class LostLocks {
  private readonly byInstance = new Map<string, { sessionId: string; locks: Map<number, LostLock> }>();

  constructor(
    private readonly env: HubEnv,
    private readonly presence: Pick<Presence, 'bound'>,
  ) {}

  /** The core took `instanceId`'s lock on `taskId` away. */
  lost(instanceId: string, taskId: number, fence: number, reason: LockLostReason): void {
    const peer = this.presence.bound(instanceId);
    if (!peer || peer.state !== 'ready') return;
    peer.push({ type: 'lock_lost', taskId, fence, reason });
    let entry = this.byInstance.get(instanceId);
    if (!entry || entry.sessionId !== peer.sessionId) this.byInstance.set(instanceId, (entry = { sessionId: peer.sessionId, locks: new Map() }));
    entry.locks.delete(taskId);
    entry.locks.set(taskId, { taskId, fence, reason, at: this.env.clock.now() });
    if (entry.locks.size > MAX_PER_INSTANCE) entry.locks.delete(entry.locks.keys().next().value!);
    this.changed(instanceId, entry);
  }

  /** The instance reported (or claimed) `taskId` again: it knows. */
  settled(instanceId: string, taskId: number): void {
    const entry = this.byInstance.get(instanceId);
    if (!entry?.locks.delete(taskId)) return;
    if (entry.locks.size === 0) this.byInstance.delete(instanceId);
    this.changed(instanceId, entry);
  }

  sessionGone(peer: Peer): void {
    const id = peer.instanceId;
    if (id !== null && this.byInstance.get(id)?.sessionId === peer.sessionId) this.byInstance.delete(id);
  }

  /** The instance's lost locks, oldest first. */
  of(instanceId: string): LostLock[] {
    return [...(this.byInstance.get(instanceId)?.locks.values() ?? [])];
  }

  private changed(instanceId: string, entry: { sessionId: string; locks: Map<number, LostLock> }): void {
    this.env.emit({ type: 'session.lost_locks', sessionId: entry.sessionId, instanceId, taskIds: [...entry.locks.keys()] });
  }
}
