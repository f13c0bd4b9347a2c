/**
 * The agent's side of a run: `run_started`, `run_step` and `run_result`, as the hub hands them over
 * (inside its group commit; the reply leaves once these writes are durable).
 *
 * Invariants:
 * 1. Only the holder speaks: an attempt is started by the instance it is offered to (offers.ts), and
 *    only that instance may report steps and the result. A late message of an instance that no
 *    longer holds the attempt (its offer lapsed, the attempt was taken away) is `not_holder`.
 * 2. A repeated `run_started` of the holder is the same start; a repeated result of a run it
 *    finished is answered `replayed: true` when it says the same, and refused otherwise. A result
 *    for an attempt that was taken away (lost, cancelled) is `not_holder` (PROTOCOL §4).
 * 3. While a backfill of a finished run is dispatched, the messages are about that backfill.
 * 4. Every `not_holder` / `invalid_transition` refusal is audited (`run.reject`, with the run's trace
 *    id), kept although the refused request's own writes are rolled back.
 */
import { GafferError } from '../../../common/errors';
import { ERROR_CLASSES, type AgentRequestOf } from '../../../common/protocol';
import { writeOrAuditRefusal } from '../../audit/refusals';
import type { RunSink } from '../../hub';
import { isWaiting, runPhase } from '../run-phase';
import { specOf, toBackfill, toRun, type BackfillRow, type RunRow } from '../rows';
import { auditBackfill } from './backfill-queue';
import type { EngineContext } from './context';
import { assertOfferedTo } from './offers';
import { attemptFailed, backfillAttemptFailed, backfillSucceeded, held, NO_OFFER, started, succeeded, verifying } from './outcomes';

type RunRequest = AgentRequestOf<'run_started' | 'run_step' | 'run_result'>;


export class EngineRunSink implements RunSink {
  constructor(private readonly e: EngineContext) {}

  runStarted(instanceId: string, req: AgentRequestOf<'run_started'>): object {
    const e = this.e;
    return this.write(instanceId, req, () => {
      const run = e.repo.run(req.runId);
      const phase = runPhase(run);
      if (phase === 'finished') {
        const b = e.backfillRows.dispatchedOfRun(run.id);
        if (!b) throw new GafferError('not_holder', `run ${run.id} is ${run.status} and no backfill of it is dispatched`);
        if (b.instance_id !== null) {
          if (b.instance_id !== instanceId) throw new GafferError('not_holder', `backfill of run ${run.id} was started by another instance`);
          return {}; // a repeated run_started
        }
        assertOfferedTo(run, instanceId);
        e.repo.patchRun(run.id, NO_OFFER);
        const row = e.backfillRows.patch(b.id, { instance_id: instanceId, started_at: e.now() }, e.now());
        auditBackfill(e, row, 'backfill.start', instanceId, { instanceId, attempt: run.attempt });
        return {};
      }
      if (isWaiting(phase)) throw new GafferError('not_holder', `no trigger of run ${run.id} is out (it is waiting for its next attempt)`);
      if (phase === 'started') {
        if (run.instance_id !== instanceId) throw new GafferError('not_holder', `run ${run.id} was started by another instance`);
        return {}; // a repeated run_started
      }
      assertOfferedTo(run, instanceId);
      started(e, run, instanceId);
      return {};
    });
  }

  /**
   * Who may act for the run now: the instance that acknowledged its dispatched attempt (or the
   * dispatched backfill's), else null. `run_step`, logs and usage all follow this one rule.
   */
  runHolder(runId: string): { instanceId: string | null; attempt: number; jobId: string; role: string } {
    const e = this.e;
    const run = e.repo.run(runId);
    const b = e.backfillRows.dispatchedOfRun(run.id);
    const instanceId = b ? b.instance_id : runPhase(run) === 'started' ? run.instance_id : null;
    return { instanceId, attempt: run.attempt, jobId: run.job_id, role: e.repo.jobRow(run.job_id).role };
  }

  runStep(instanceId: string, req: AgentRequestOf<'run_step'>): object {
    const e = this.e;
    return this.write(instanceId, req, () => {
      const run = e.repo.run(req.runId);
      if (this.runHolder(run.id).instanceId !== instanceId) throw new GafferError('not_holder', `instance ${instanceId} does not hold run ${run.id}`);
      if (e.repo.addStep(run.id, req.step, req.ref ?? null, run.attempt, instanceId)) {
        e.ctx.audit.append({ type: 'run.step', actor: instanceId, subject: `run:${run.id}`, detail: { jobId: run.job_id, slot: run.slot, step: req.step, ref: req.ref ?? null, attempt: run.attempt }, traceId: run.trace_id });
      }
      return {};
    });
  }

  runResult(instanceId: string, req: AgentRequestOf<'run_result'>): object {
    const e = this.e;
    const out = this.write(instanceId, req, () => {
      const run = e.repo.run(req.runId);
      const b = e.backfillRows.dispatchedOfRun(run.id);
      if (b) return this.backfillResult(run, b, instanceId, req);
      if (runPhase(run) === 'finished') {
        // Only a result that took effect can be repeated. A run that failed with `lost` (deadline,
        // instance gone) ended without one: its holder's attempt was taken away (PROTOCOL §4).
        const byResult = run.status === 'success' || (run.status === 'failed' && (ERROR_CLASSES as readonly string[]).includes(run.error_class ?? ''));
        if (run.instance_id === instanceId && !byResult) {
          throw new GafferError('not_holder', `attempt ${run.attempt} of run ${run.id} was taken away (${run.error_class ?? run.status}); this result is not recorded`);
        }
        const same =
          run.instance_id === instanceId &&
          ((req.outcome === 'success' && run.status === 'success') || (req.outcome === 'failed' && run.status === 'failed' && run.error_class === (req.errorClass ?? 'retryable')));
        if (same) return { run: toRun(run), replayed: true };
        throw new GafferError('invalid_transition', `run ${run.id} is already ${run.status}`);
      }
      if (runPhase(run) !== 'started' || run.instance_id !== instanceId) {
        throw new GafferError('not_holder', `instance ${instanceId} does not hold run ${run.id} (attempt ${run.attempt})`);
      }
      const output = req.output === undefined ? null : JSON.stringify(req.output);
      let next: RunRow;
      if (req.outcome === 'success') {
        // PROTOCOL §13: a job with checks is verifying until they pass (core/verify).
        const job = e.verify ? e.repo.maybeJobRow(run.job_id) : undefined;
        next = job && specOf(job).verify ? verifying(e, run, instanceId, output) : succeeded(e, run, instanceId, output);
      } else {
        const cls = req.errorClass ?? 'retryable';
        const msg = req.error ?? `the agent reported ${cls} failure`;
        if (output !== null) e.repo.patchRun(run.id, { output });
        const fresh = e.repo.run(run.id);
        next = cls === 'retryable' ? attemptFailed(e, fresh, 'retryable', msg, instanceId) : held(e, fresh, cls, msg, instanceId);
      }
      return { run: toRun(next) };
    });
    e.soon();
    return out;
  }

  /** One transaction for `req`; a refusal is audited after its writes rolled back (invariant 4). */
  private write<T>(instanceId: string, req: RunRequest, fn: () => T): T {
    const e = this.e;
    return writeOrAuditRefusal(e.ctx, fn, (err) => ({
      type: 'run.reject',
      actor: instanceId,
      subject: `run:${req.runId}`,
      detail: { op: req.type, code: err.code, message: err.message },
      traceId: e.repo.maybeRun(req.runId)?.trace_id ?? null,
    }));
  }


  private backfillResult(run: RunRow, b: BackfillRow, instanceId: string, req: AgentRequestOf<'run_result'>): object {
    const e = this.e;
    if (b.instance_id !== instanceId) throw new GafferError('not_holder', `instance ${instanceId} does not hold the backfill of run ${run.id}`);
    if (req.outcome === 'success') {
      const done = backfillSucceeded(e, run, b, instanceId, req.output !== undefined ? JSON.stringify(req.output) : undefined);
      return { run: toRun(done.run), backfill: toBackfill(done.backfill, run.job_name) };
    }
    const cls = req.errorClass ?? 'retryable';
    const row = backfillAttemptFailed(e, b, cls, req.error ?? `the agent reported ${cls} failure`);
    return { run: toRun(e.repo.run(run.id)), backfill: toBackfill(row, run.job_name) };
  }
}
