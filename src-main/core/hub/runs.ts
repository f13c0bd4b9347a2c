/**
 * Where `run_started`, `run_step` and `run_result` go: the jobs engine's `RunSink`. The hub only
 * forwards them; what they mean (who holds the attempt, its offer, refusals and their audit rows)
 * is the engine's, decided from its rows (core/jobs/engine/run-sink.ts).
 *
 * Invariants:
 * 1. Without a sink every run request is `not_found` and changes nothing.
 * 2. The sink is called inside a group commit, so its reply goes out only once its writes are durable.
 */
import { GafferError } from '../../common/errors';
import type { Journal } from './host';
import type { RunSink } from './ports';

export class RunGate {
  private sink: RunSink | undefined;

  constructor(private readonly journal: Journal) {}

  /** Registers (or, with `undefined`, removes) the sink. */
  attach(sink: RunSink | undefined): void {
    this.sink = sink;
  }

  /** Hands one run request to the sink, inside the next group commit. */
  call(op: (sink: RunSink) => object | Promise<object>): Promise<object> {
    const sink = this.sink;
    if (!sink) return Promise.reject(new GafferError('not_found', 'unknown run (no job runner is attached)'));
    return this.journal.commit(() => op(sink));
  }
}
