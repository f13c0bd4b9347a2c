/**
 * The operator's decision on a held run (PROTOCOL §8): approve it — it is dispatched again and its
 * `job_trigger` carries `approval: {decision, note, by, at}` — or reject it: it stays `failed`,
 * with disposition `rejected`. The engine decides which runs wait for a decision and how they run
 * again (engine/decisions.ts); this is the operator's door to it.
 *
 * Invariants:
 * 1. The note is required and validated before anything changes; deciding is audited
 *    (`operator.approve` / `operator.reject`, subject `run:<id>`) with it.
 * 2. The kill switch refuses an approval (nothing is dispatched while it is on); a rejection is
 *    always possible.
 * 3. A decision acknowledges the inbox items about the run, in the decision's transaction.
 */
import { runApprovalInput, runDecisionInput, type Run } from '../../common/job-schema';
import { isoTime } from '../../common/iso-time';
import { parseOrThrow } from '../../common/validate';
import type { Needed } from '../wiring';
import type { CoreContext } from '../context';
import type { JobEngine } from './engine';
import { toRun } from './rows';

/** What deciding a run also closes: the inbox items about it (core/inbox, handed to the jobs module by createCore). */
export interface DecisionListener {
  decided(subject: string, actor: string, note: string, decision: 'approved' | 'rejected'): void;
}

export class Approvals {
  constructor(
    private readonly ctx: CoreContext,
    private readonly engine: JobEngine,
    private readonly listener: DecisionListener,
    /** PROTOCOL §16: the CLI session the held attempt reported (the logs module's store; core/wiring.ts). */
    private readonly sessionOf?: Needed<(subject: string) => string | undefined>,
  ) {}

  approve(runId: string, input: unknown): Run {
    const { note, actor, budget } = parseOrThrow(runApprovalInput, input, 'approval');
    return this.engine.write(() => {
      // The trigger carries the conversation to continue with the answer: the stored session, so a restarted agent has it too.
      const session = this.sessionOf?.get()(`run:${runId}`);
      const run = this.engine.approveRun(runId, { decision: 'approved', note, by: actor, at: isoTime(this.ctx.clock.now()), ...(session ? { session } : {}) });
      if (budget) {
        // PROTOCOL §14: the cap of the attempts from now on (core/budgets reads it before the job's).
        this.engine.setRunBudget(run.id, budget);
        this.ctx.audit.append({ type: 'run.budget', actor, subject: `run:${run.id}`, detail: { budget, note } });
      }
      this.listener.decided(`run:${run.id}`, actor, note, 'approved');
      return toRun(run);
    });
  }

  reject(runId: string, input: unknown): Run {
    const { note, actor } = parseOrThrow(runDecisionInput, input, 'rejection');
    return this.engine.write(() => {
      const run = this.engine.rejectRun(runId, note, actor);
      this.listener.decided(`run:${run.id}`, actor, note, 'rejected');
      return toRun(run);
    });
  }
}
