/**
 * The operator's decision on a held run (PROTOCOL §8): approve it — it is dispatched again and its
 * `job_trigger` carries `approval: {decision, note, by, at}` — or reject it: it stays `failed`,
 * with disposition `rejected`.
 *
 * Invariants:
 * 1. Only a run waiting for a decision is decided: one held for review (fatal, needs a human, a
 *    spend cap) with its `held` backfill open, or one whose last re-run ended the same way (its
 *    backfill `failed` with a fatal or needs-human error). Anything else is `invalid_transition`.
 * 2. A run's status never goes back (run-transitions.ts): the approved re-run is the run's backfill,
 *    the mechanism that re-runs finished slots. The approval is stored on the backfill, so every
 *    re-offer of that dispatch (an undelivered trigger, a lost instance) carries it again.
 * 3. Deciding is audited (`operator.approve` / `operator.reject`, subject `run:<id>`) with the note,
 *    and acknowledges the inbox items about the run, in the same transaction.
 * 4. The kill switch refuses an approval (nothing is dispatched while it is on); a rejection is
 *    always possible.
 */
import { GafferError } from '../../common/errors';
import { runDecisionInput, type Run, type RunApproval } from '../../common/job-schema';
import { parseOrThrow } from '../../common/validate';
import type { CoreContext } from '../context';
import { toRun, type BackfillRow, type JobRepo, type RunRow } from './repo';
import type { JobRunner } from './runner';

/** What deciding a run also closes: the inbox items about it (core/inbox, wired by createCore). */
export interface DecisionListener {
  decided(subject: string, actor: string, note: string, decision: 'approved' | 'rejected'): void;
}

const DECIDABLE_ERRORS = new Set(['needs_human', 'fatal', 'budget']);

export class Approvals {
  listener: DecisionListener | undefined;

  constructor(
    private readonly ctx: CoreContext,
    private readonly repo: JobRepo,
    private readonly runner: JobRunner,
  ) {}

  /** The backfill a decision acts on (invariant 1), or a typed refusal. */
  private waiting(run: RunRow): BackfillRow {
    if (run.status !== 'failed') throw new GafferError('invalid_transition', `run ${run.id} is ${run.status}; only a run held for review is approved or rejected`);
    const all = this.repo.q.backfillsOfRun.all(run.id);
    const open = all.find((b) => b.status === 'queued' || b.status === 'held' || b.status === 'dispatched');
    if (open?.status === 'held') return open;
    if (open) throw new GafferError('invalid_transition', `run ${run.id} is already being run again (backfill ${open.id} is ${open.status})`);
    const last = all[all.length - 1];
    if (last && last.status === 'failed' && last.error_class !== null && DECIDABLE_ERRORS.has(last.error_class) && run.disposition !== 'rejected' && run.disposition !== 'backfilled') return last;
    throw new GafferError('invalid_transition', `run ${run.id} is not held for review (disposition ${run.disposition})`);
  }

  approve(runId: string, input: unknown): Run {
    const { note, actor } = parseOrThrow(runDecisionInput, input, 'approval');
    const out = this.ctx.store.write(() => {
      const run = this.repo.run(runId);
      const b = this.waiting(run);
      const settings = this.repo.settings();
      if (settings.killSwitch.on) throw new GafferError('conflict', `the kill switch is on (by ${settings.killSwitch.by}: ${settings.killSwitch.reason}); nothing is dispatched, so the approved run could not start`);
      const job = this.repo.jobRow(run.job_id);
      const approval: RunApproval = { decision: 'approved', note, by: actor, at: new Date(this.ctx.clock.now()).toISOString() };
      const next = this.repo.update(run, { held: 0 }, 'operator.approve', actor, { note, backfillId: b.id, errorClass: run.error_class });
      const queued = this.repo.patchBackfill(b.id, { status: 'queued', approval: JSON.stringify(approval), note });
      this.runner.dispatchBackfill(queued, job, this.ctx.clock.now(), actor);
      this.listener?.decided(`run:${run.id}`, actor, note, 'approved');
      return toRun(this.repo.run(next.id));
    });
    // The trigger leaves after the commit (runner invariant 1).
    this.runner.tick();
    return out;
  }

  reject(runId: string, input: unknown): Run {
    const { note, actor } = parseOrThrow(runDecisionInput, input, 'rejection');
    return this.ctx.store.write(() => {
      const run = this.repo.run(runId);
      const b = this.waiting(run);
      if (b.status === 'held') {
        const row = this.repo.patchBackfill(b.id, { status: 'cancelled', note, finished_at: this.ctx.clock.now() });
        this.runner.auditBackfill(row, 'backfill.cancel', actor, { reason: note, from: 'held', rejected: true });
      }
      const next = this.repo.update(run, { held: 0, disposition: 'rejected' }, 'operator.reject', actor, { note, previous: run.disposition, backfillId: b.id, errorClass: run.error_class });
      this.listener?.decided(`run:${run.id}`, actor, note, 'rejected');
      return toRun(next);
    });
  }
}
