/**
 * Pushes: `job_trigger` (with its acknowledgement rule) and agent `precheck` requests.
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
import { newId } from '../context';
import type { HubInternals } from './hub';
import type { JobTrigger, PrecheckVerdict, TriggerOptions, TriggerOutcome } from './ports';
import type { Session } from './session';

interface PendingTrigger {
  runId: string;
  role: string;
  trigger: JobTrigger;
  ackTimeoutMs: number;
  exclude: ReadonlySet<string>;
  offeredTo: string[];
  current: Session | null;
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
  private readonly recent = new Map<string, TriggerOutcome>();
  private seq = 0;

  constructor(private readonly hub: HubInternals) {}

  /** Unacknowledged offers currently held by `s` (part of its load). */
  unacked(s: Session): number {
    let n = 0;
    for (const p of this.pending.values()) if (p.current === s) n++;
    return n;
  }

  push(role: string, trigger: JobTrigger, opts: TriggerOptions = {}): Promise<TriggerOutcome> {
    const existing = this.pending.get(trigger.runId);
    if (existing) return existing.promise;
    if (this.hub.isClosed()) {
      return Promise.resolve({ status: 'undeliverable', runId: trigger.runId, reason: 'hub_closed', offeredTo: [] });
    }
    this.recent.delete(trigger.runId);
    let resolve!: (o: TriggerOutcome) => void;
    const promise = new Promise<TriggerOutcome>((r) => (resolve = r));
    const p: PendingTrigger = {
      runId: trigger.runId,
      role,
      trigger,
      ackTimeoutMs: opts.ackTimeoutMs ?? this.hub.config.triggerAckTimeoutS * 1000,
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

  /** `run_started` from `s`: checks the offer, hands the start to the run sink, then acknowledges. */
  runStarted(s: Session, req: AgentRequestOf<'run_started'>): Promise<object> {
    const instanceId = s.instanceId!;
    const p = this.pending.get(req.runId);
    if (p && p.current !== s) {
      throw new GafferError('not_holder', `run ${req.runId} is offered to another instance; do not start it`);
    }
    if (!p) {
      const past = this.recent.get(req.runId);
      if (past?.status === 'acknowledged' && past.instanceId !== instanceId) {
        throw new GafferError('not_holder', `run ${req.runId} was started by another instance; do not start it`);
      }
      if (past?.status === 'undeliverable') {
        throw new GafferError('not_holder', `the trigger for run ${req.runId} expired; do not start it`);
      }
    }
    if (!this.hub.sink()) throw new GafferError('not_found', `unknown run ${req.runId} (no job runner is attached)`);
    if (p) {
      p.acking = true; // invariant 3
      p.timer?.cancel();
      p.timer = undefined;
    }
    return this.hub.toSink(instanceId, (sink) => sink.runStarted(instanceId, req)).then(
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
          else this.armTimer(p, s, Math.max(0, p.deadline - this.hub.clock.now()));
        }
        throw e;
      },
    );
  }

  /** The session is gone: whatever was offered to it (and not being acknowledged) moves on. */
  sessionGone(s: Session): void {
    for (const p of [...this.pending.values()]) {
      if (p.current === s && !p.acking && !p.done) {
        this.hub.audit('trigger.lost', `run:${p.runId}`, { instanceId: s.instanceId, why: 'session closed' }, p.trigger.traceId);
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
    const s = this.hub.pickSession(p.role, excluded);
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
    p.deadline = this.hub.clock.now() + p.ackTimeoutMs;
    this.armTimer(p, s, p.ackTimeoutMs);
    const offer = p.offeredTo.length;
    this.hub.audit(
      'trigger.offer',
      `run:${p.runId}`,
      { jobId: p.trigger.jobId, job: p.trigger.job, slot: p.trigger.slot, attempt: p.trigger.attempt, role: p.role, instanceId, offer },
      p.trigger.traceId,
    );
    this.hub.core.events.emit({ type: 'trigger.offered', runId: p.runId, role: p.role, instanceId, offer });
    // Last: sending may cut a slow session off, which re-enters `sessionGone` for this trigger.
    s.send(JSON.stringify({ type: 'job_trigger', ...p.trigger }));
  }

  private armTimer(p: PendingTrigger, s: Session, ms: number): void {
    p.timer?.cancel();
    p.timer = this.hub.clock.setTimeout(() => {
      p.timer = undefined;
      if (p.done || p.current !== s || p.acking) return;
      try {
        this.hub.audit('trigger.timeout', `run:${p.runId}`, { instanceId: s.instanceId, ackTimeoutMs: p.ackTimeoutMs }, p.trigger.traceId);
        this.offerNext(p);
      } catch (e) {
        // A timer must never take the process down; the run is reported, not lost.
        this.hub.logger.error('hub: re-offering a trigger failed', { runId: p.runId, error: String(e) });
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
    this.recent.set(p.runId, outcome);
    if (this.recent.size > RECENT_MAX) this.recent.delete(this.recent.keys().next().value!);
    const events = this.hub.core.events;
    if (outcome.status === 'acknowledged') {
      this.hub.audit('trigger.ack', `run:${p.runId}`, { instanceId: outcome.instanceId, offers: outcome.offeredTo.length }, p.trigger.traceId);
      events.emit({ type: 'trigger.acknowledged', runId: p.runId, role: p.role, instanceId: outcome.instanceId, offers: outcome.offeredTo.length });
    } else {
      this.hub.audit('trigger.undeliverable', `run:${p.runId}`, { reason: outcome.reason, offeredTo: outcome.offeredTo, role: p.role }, p.trigger.traceId);
      events.emit({ type: 'trigger.undeliverable', runId: p.runId, role: p.role, reason: outcome.reason, offeredTo: outcome.offeredTo });
    }
    p.resolve(outcome);
  }
}

interface PendingPrecheck {
  session: Session;
  timer: TimerHandle;
  resolve: (v: PrecheckVerdict) => void;
}

/** `precheck` pushes and their `precheck_result` answers. */
export class Prechecks {
  private readonly pending = new Map<string, PendingPrecheck>();

  constructor(private readonly hub: HubInternals) {}

  request(role: string, check: string, slot: string, timeoutMs: number): Promise<PrecheckVerdict> {
    const s = this.hub.isClosed() ? undefined : this.hub.pickSession(role, new Set());
    if (!s) return Promise.resolve({ status: 'no_instance', ready: false, reason: `no online instance of role ${role}` });
    const instanceId = s.instanceId!;
    const requestId = newId('pchk');
    return new Promise<PrecheckVerdict>((resolve) => {
      const timer = this.hub.clock.setTimeout(() => {
        if (!this.pending.delete(requestId)) return;
        resolve({ status: 'timeout', instanceId, ready: false, reason: `no precheck_result within ${timeoutMs} ms` });
      }, timeoutMs);
      this.pending.set(requestId, { session: s, timer, resolve });
      s.send(JSON.stringify({ type: 'precheck', requestId, check, slot }));
    });
  }

  answer(s: Session, req: AgentRequestOf<'precheck_result'>): object {
    const p = this.pending.get(req.requestId);
    if (!p || p.session !== s) throw new GafferError('not_found', `no precheck ${req.requestId} is waiting for this instance`);
    this.pending.delete(req.requestId);
    p.timer.cancel();
    const verdict: PrecheckVerdict = { status: 'answered', instanceId: s.instanceId!, ready: req.ready };
    if (req.reason !== undefined) verdict.reason = req.reason;
    if (req.evidence !== undefined) verdict.evidence = req.evidence;
    p.resolve(verdict);
    return {};
  }

  sessionGone(s: Session): void {
    for (const [id, p] of [...this.pending]) {
      if (p.session !== s) continue;
      this.pending.delete(id);
      p.timer.cancel();
      p.resolve({ status: 'disconnected', instanceId: s.instanceId!, ready: false, reason: 'the instance disconnected before answering' });
    }
  }

  close(): void {
    for (const p of this.pending.values()) {
      p.timer.cancel();
      p.resolve({ status: 'disconnected', instanceId: p.session.instanceId!, ready: false, reason: 'the hub closed' });
    }
    this.pending.clear();
  }
}
