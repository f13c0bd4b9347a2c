/**
 * `job_trigger` offers and their acknowledgement rule (PROTOCOL §1, docs/protocol.md §8).
 *
 * Invariants:
 * 1. A run is offered to exactly one instance at a time, and to each instance at most once.
 *    Every offer carries the same `runId`: a re-offer is the same run, never a second one.
 * 2. An offer ends by `run_started` from that instance (acknowledged), by its ack timeout, or by
 *    its session going away; the last two move the run to the next instance (least loaded first).
 *    When nobody is left, the outcome is `undeliverable` and the caller decides what that means.
 * 3. Once a `run_started` from the current instance is being committed, the offer is frozen: no
 *    timeout or disconnect can hand the run to someone else while its start may be durable.
 * 4. A `run_started` for a run that is offered to (or was acknowledged by, or expired for) another
 *    instance is refused with `not_holder`: an agent whose offer lapsed must not run it.
 * 5. The timers run on the core clock; `close()` settles every pending promise.
 */
import type { TimerHandle } from '../../common/clock';
import { GafferError } from '../../common/errors';
import type { AgentRequestOf } from '../../common/protocol';
import type { HubEnv, Journal, Peer, PeerPicker } from './host';
import type { JobTrigger, TriggerOptions, TriggerOutcome } from './ports';
import type { RunGate } from './runs';

/** What the dispatcher needs: clock and events, the journal, a peer picker and the run gate. */
export interface OfferHost {
  readonly env: HubEnv;
  readonly journal: Journal;
  readonly peers: PeerPicker;
  readonly runs: Pick<RunGate, 'attached' | 'call' | 'reoffered'>;
}

interface PendingTrigger {
  runId: string;
  role: string;
  trigger: JobTrigger;
  ackTimeoutMs: number;
  exclude: ReadonlySet<string>;
  offeredTo: string[];
  current: Peer | null;
  acking: boolean;
  deadline: number;
  timer: TimerHandle | undefined;
  done: boolean;
  promise: Promise<TriggerOutcome>;
  resolve: (o: TriggerOutcome) => void;
}

/** How many finished triggers are remembered to refuse late `run_started` from others. */
const RECENT_MAX = 1000;

export class TriggerDispatcher {
  private readonly pending = new Map<string, PendingTrigger>();
  private readonly recent = new Map<string, { outcome: TriggerOutcome; traceId: string }>();
  private seq = 0;

  constructor(private readonly host: OfferHost) {}

  /** Unacknowledged offers currently held by `s` (part of its load). */
  unacked(s: Peer): number {
    let n = 0;
    for (const p of this.pending.values()) if (p.current === s) n++;
    return n;
  }

  push(role: string, trigger: JobTrigger, opts: TriggerOptions = {}): Promise<TriggerOutcome> {
    const existing = this.pending.get(trigger.runId);
    if (existing) return existing.promise;
    if (this.host.peers.isClosed()) {
      return Promise.resolve({ status: 'undeliverable', runId: trigger.runId, reason: 'hub_closed', offeredTo: [] });
    }
    this.recent.delete(trigger.runId);
    this.host.runs.reoffered(trigger.runId);
    let resolve!: (o: TriggerOutcome) => void;
    const promise = new Promise<TriggerOutcome>((r) => (resolve = r));
    const p: PendingTrigger = {
      runId: trigger.runId,
      role,
      trigger,
      ackTimeoutMs: opts.ackTimeoutMs ?? this.host.env.config.triggerAckTimeoutS * 1000,
      exclude: new Set(opts.exclude ?? []),
      offeredTo: [],
      current: null,
      acking: false,
      deadline: 0,
      timer: undefined,
      done: false,
      promise,
      resolve,
    };
    this.pending.set(p.runId, p);
    this.offerNext(p);
    return promise;
  }

  /** The trace id of a pending or recently finished offer. */
  traceOf(runId: string): string | undefined {
    return this.pending.get(runId)?.trigger.traceId ?? this.recent.get(runId)?.traceId;
  }

  /** `run_started` from `s`: checks the offer, hands the start to the run sink, then acknowledges. */
  runStarted(s: Peer, req: AgentRequestOf<'run_started'>): Promise<object> {
    const instanceId = s.instanceId!;
    const p = this.pending.get(req.runId);
    if (p && p.current !== s) {
      throw new GafferError('not_holder', `run ${req.runId} is offered to another instance; do not start it`);
    }
    if (!p) {
      const past = this.recent.get(req.runId)?.outcome;
      if (past?.status === 'acknowledged' && past.instanceId !== instanceId) {
        throw new GafferError('not_holder', `run ${req.runId} was started by another instance; do not start it`);
      }
      if (past?.status === 'undeliverable') {
        throw new GafferError('not_holder', `the trigger for run ${req.runId} expired; do not start it`);
      }
    }
    if (!this.host.runs.attached) throw new GafferError('not_found', `unknown run ${req.runId} (no job runner is attached)`);
    if (p) {
      p.acking = true; // invariant 3
      p.timer?.cancel();
      p.timer = undefined;
    }
    return this.host.runs.call((sink) => sink.runStarted(instanceId, req)).then(
      (result) => {
        if (p && !p.done && p.current === s) {
          this.finish(p, { status: 'acknowledged', runId: p.runId, instanceId, offeredTo: [...p.offeredTo] });
        }
        return result;
      },
      (e: unknown) => {
        if (p && !p.done && p.current === s) {
          p.acking = false;
          if (s.state === 'closed') this.offerNext(p);
          else this.armTimer(p, s, Math.max(0, p.deadline - this.host.env.clock.now()));
        }
        throw e;
      },
    );
  }

  /** The session is gone: whatever was offered to it (and not being acknowledged) moves on. */
  sessionGone(s: Peer): void {
    for (const p of [...this.pending.values()]) {
      if (p.current === s && !p.acking && !p.done) {
        this.host.journal.audit('trigger.lost', `run:${p.runId}`, { instanceId: s.instanceId, why: 'session closed' }, p.trigger.traceId);
        this.offerNext(p);
      }
    }
  }

  close(): void {
    for (const p of [...this.pending.values()]) {
      this.finish(p, { status: 'undeliverable', runId: p.runId, reason: 'hub_closed', offeredTo: [...p.offeredTo] });
    }
  }

  private offerNext(p: PendingTrigger): void {
    p.timer?.cancel();
    p.timer = undefined;
    p.current = null;
    if (p.done) return;
    const excluded = new Set([...p.exclude, ...p.offeredTo]);
    const s = this.host.peers.pick(p.role, excluded);
    if (!s) {
      this.finish(p, {
        status: 'undeliverable',
        runId: p.runId,
        reason: p.offeredTo.length === 0 ? 'no_instance' : 'not_acknowledged',
        offeredTo: [...p.offeredTo],
      });
      return;
    }
    const instanceId = s.instanceId!;
    p.current = s;
    p.offeredTo.push(instanceId);
    s.lastTriggerSeq = ++this.seq;
    p.deadline = this.host.env.clock.now() + p.ackTimeoutMs;
    this.armTimer(p, s, p.ackTimeoutMs);
    const offer = p.offeredTo.length;
    this.host.journal.audit(
      'trigger.offer',
      `run:${p.runId}`,
      { jobId: p.trigger.jobId, job: p.trigger.job, slot: p.trigger.slot, attempt: p.trigger.attempt, role: p.role, instanceId, offer },
      p.trigger.traceId,
    );
    this.host.env.emit({ type: 'trigger.offered', runId: p.runId, role: p.role, instanceId, offer });
    // Last: sending may cut a slow session off, which re-enters `sessionGone` for this trigger.
    s.push({ type: 'job_trigger', ...p.trigger });
  }

  private armTimer(p: PendingTrigger, s: Peer, ms: number): void {
    p.timer?.cancel();
    p.timer = this.host.env.clock.setTimeout(() => {
      p.timer = undefined;
      if (p.done || p.current !== s || p.acking) return;
      try {
        this.host.journal.audit('trigger.timeout', `run:${p.runId}`, { instanceId: s.instanceId, ackTimeoutMs: p.ackTimeoutMs }, p.trigger.traceId);
        this.offerNext(p);
      } catch (e) {
        // A timer must never take the process down; the run is reported, not lost.
        this.host.env.logger.error('hub: re-offering a trigger failed', { runId: p.runId, error: String(e) });
        this.finish(p, { status: 'undeliverable', runId: p.runId, reason: 'not_acknowledged', offeredTo: [...p.offeredTo] });
      }
    }, ms);
  }

  private finish(p: PendingTrigger, outcome: TriggerOutcome): void {
    if (p.done) return;
    p.done = true;
    p.timer?.cancel();
    p.timer = undefined;
    p.current = null;
    this.pending.delete(p.runId);
    this.recent.set(p.runId, { outcome, traceId: p.trigger.traceId });
    if (this.recent.size > RECENT_MAX) this.recent.delete(this.recent.keys().next().value!);
    const env = this.host.env;
    if (outcome.status === 'acknowledged') {
      this.host.journal.audit('trigger.ack', `run:${p.runId}`, { instanceId: outcome.instanceId, offers: outcome.offeredTo.length }, p.trigger.traceId);
      env.emit({ type: 'trigger.acknowledged', runId: p.runId, role: p.role, instanceId: outcome.instanceId, offers: outcome.offeredTo.length });
    } else {
      this.host.journal.audit('trigger.undeliverable', `run:${p.runId}`, { reason: outcome.reason, offeredTo: outcome.offeredTo, role: p.role }, p.trigger.traceId);
      env.emit({ type: 'trigger.undeliverable', runId: p.runId, role: p.role, reason: outcome.reason, offeredTo: outcome.offeredTo });
    }
    p.resolve(outcome);
  }
}
