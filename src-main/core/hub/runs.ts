/**
 * Where `run_*` requests go: the job runner's `RunSink`, behind one gate that also takes attempts
 * away (`run_cancelled`, PROTOCOL §4).
 *
 * Invariants:
 * 1. Without a sink every run request is `not_found` and changes nothing.
 * 2. The sink is called inside a group commit, so its reply goes out only once its writes are durable.
 * 3. After `cancel(runId, instanceId)`, that instance's `run_started`/`run_step`/`run_result` for the
 *    run are refused with `not_holder` until the run is offered again (a new attempt). The caller
 *    records the cancellation durably; this gate closes the window until its write lands.
 * 4. Every `not_holder` / `invalid_transition` refusal of a run request is audited (`run.reject`),
 *    like the claim lock's `lock.reject`.
 */
import { GafferError } from '../../common/errors';
import type { AgentRequestOf, RunCancelReason } from '../../common/protocol';
import type { Journal, Peer } from './host';
import type { RunSink } from './ports';

export type RunRequest = AgentRequestOf<'run_started' | 'run_step' | 'run_result'>;

const REJECT_CODES = new Set(['not_holder', 'invalid_transition']);

/** How many cancelled attempts are remembered (the oldest go first). */
const CANCELLED_MAX = 1000;

export class RunGate {
  private sink: RunSink | undefined;
  private readonly cancelled = new Map<string, { instanceId: string; reason: string }>();

  constructor(
    private readonly journal: Journal,
    /** The live session bound to an instance. */
    private readonly bound: (instanceId: string) => Peer | undefined,
    /** The run's trace id, when the hub still knows its trigger. */
    private readonly traceOf: (runId: string) => string | undefined,
  ) {}

  /** Registers (or, with `undefined`, removes) the sink. */
  attach(sink: RunSink | undefined): void {
    this.sink = sink;
  }

  get attached(): boolean {
    return this.sink !== undefined;
  }

  /** Hands one run request to the sink. */
  call(op: (sink: RunSink) => object | Promise<object>): Promise<object> {
    const sink = this.sink;
    if (!sink) return Promise.reject(new GafferError('not_found', 'unknown run (no job runner is attached)'));
    return this.journal.commit(() => op(sink));
  }

  /** Runs `handle` for `req` from `instanceId` unless its attempt was cancelled; refusals are audited. */
  async guarded<T>(instanceId: string, req: RunRequest, handle: () => Promise<T>): Promise<T> {
    try {
      const c = this.cancelled.get(req.runId);
      if (c?.instanceId === instanceId) {
        throw new GafferError('not_holder', `run ${req.runId} was cancelled (${c.reason}); stop: nothing more is recorded for this attempt`);
      }
      return await handle();
    } catch (e) {
      if (e instanceof GafferError && REJECT_CODES.has(e.code)) {
        this.journal.audit('run.reject', `run:${req.runId}`, { op: req.type, code: e.code, message: e.message }, this.traceOf(req.runId), instanceId);
      }
      throw e;
    }
  }

  /**
   * Takes the attempt `instanceId` acknowledged away: pushes `run_cancelled` if the instance has a
   * live session, and refuses its later run requests (invariant 3). True when the push went out.
   */
  cancel(runId: string, instanceId: string, reason: RunCancelReason): boolean {
    this.cancelled.delete(runId);
    this.cancelled.set(runId, { instanceId, reason });
    if (this.cancelled.size > CANCELLED_MAX) this.cancelled.delete(this.cancelled.keys().next().value!);
    const peer = this.bound(instanceId);
    const delivered = peer?.state === 'ready';
    if (delivered) peer.push({ type: 'run_cancelled', runId, reason });
    this.journal.audit('trigger.cancel', `run:${runId}`, { instanceId, reason, delivered }, this.traceOf(runId));
    return delivered;
  }

  /** The run is offered again (a new attempt): whoever gets it may report it. */
  reoffered(runId: string): void {
    this.cancelled.delete(runId);
  }
}
