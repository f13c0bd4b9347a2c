/**
 * `precheck` pushes and their `precheck_result` answers.
 *
 * Invariants:
 * 1. A precheck is asked of exactly one instance of the role; only that instance's answer counts.
 * 2. Every request settles exactly once: answered, timed out (core clock), its instance gone, or
 *    the hub closed. `request` never rejects.
 */
import type { TimerHandle } from '../../common/clock';
import { GafferError } from '../../common/errors';
import type { AgentRequestOf } from '../../common/protocol';
import { newId } from '../ids';
import type { HubEnv, Peer, PeerPicker } from './host';
import type { PrecheckVerdict } from './ports';

interface PendingPrecheck {
  peer: Peer;
  timer: TimerHandle;
  resolve: (v: PrecheckVerdict) => void;
}

export class Prechecks {
  private readonly pending = new Map<string, PendingPrecheck>();

  constructor(
    private readonly env: HubEnv,
    private readonly peers: PeerPicker,
  ) {}

  request(role: string, check: string, slot: string, timeoutMs: number): Promise<PrecheckVerdict> {
    const peer = this.peers.isClosed() ? undefined : this.peers.pick(role, new Set());
    if (!peer) return Promise.resolve({ status: 'no_instance', ready: false, reason: `no online instance of role ${role}` });
    const instanceId = peer.instanceId!;
    const requestId = newId('pchk');
    return new Promise<PrecheckVerdict>((resolve) => {
      const timer = this.env.clock.setTimeout(() => {
        if (!this.pending.delete(requestId)) return;
        resolve({ status: 'timeout', instanceId, ready: false, reason: `no precheck_result within ${timeoutMs} ms` });
      }, timeoutMs);
      this.pending.set(requestId, { peer, timer, resolve });
      peer.push({ type: 'precheck', requestId, check, slot });
    });
  }

  /** `precheck_result` from `peer`. Throws `not_found` unless this very peer was asked. */
  answer(peer: Peer, req: AgentRequestOf<'precheck_result'>): void {
    const p = this.pending.get(req.requestId);
    if (!p || p.peer !== peer) throw new GafferError('not_found', `no precheck ${req.requestId} is waiting for this instance`);
    this.pending.delete(req.requestId);
    p.timer.cancel();
    const verdict: PrecheckVerdict = { status: 'answered', instanceId: peer.instanceId!, ready: req.ready };
    if (req.reason !== undefined) verdict.reason = req.reason;
    if (req.evidence !== undefined) verdict.evidence = req.evidence;
    p.resolve(verdict);
  }

  sessionGone(peer: Peer): void {
    for (const [id, p] of [...this.pending]) {
      if (p.peer !== peer) continue;
      this.pending.delete(id);
      p.timer.cancel();
      p.resolve({ status: 'disconnected', instanceId: peer.instanceId!, ready: false, reason: 'the instance disconnected before answering' });
    }
  }

  close(): void {
    for (const p of this.pending.values()) {
      p.timer.cancel();
      p.resolve({ status: 'disconnected', instanceId: p.peer.instanceId!, ready: false, reason: 'the hub closed' });
    }
    this.pending.clear();
  }
}
