/** Central jobs: schedules, calendars, trigger layers, runs, retries, backfill, explainer. */
import type { Logger } from '../../common/logger';
import { oldestAbout } from '../audit/query-store';
import type { CoreContext } from '../context';
import type { InstanceRegistry } from '../instances';
import type { Signals } from '../signals';
import type { Needed } from '../wiring';
import { Approvals, type DecisionListener } from './approvals';
import { BackfillRepo } from './backfill-repo';
import { CalendarRepo } from './calendar-repo';
import { JobEngine, type BudgetGate, type EngineHub } from './engine';
import type { RunLoopBreaker, RunVerifyHooks } from './engine/context';
import { Pauses } from './pauses';
import type { PreconditionEvaluator } from './preconditions';
import { JobRepo } from './repo';
import { JobService } from './service';
import { JobSettingsStore } from './settings';

export { JobService, type ActorOpts } from './service';
export { Approvals, type DecisionListener } from './approvals';
export { Pauses, PAUSE_TIMER_ACTOR } from './pauses';
export { JobEngine, maintenanceAt } from './engine';
export { JobPlan, firstLook, missedOutcome, resolvePlaceholders, slotDates } from './plan';
export { validateJobInput } from './validate-job';
export { allRunEdges, isRunEdge, runCauseOf } from './run-transitions';
export { allBackfillEdges, isBackfillEdge } from './backfill-transitions';
export { runPhase, type RunPhase, type WaitingOn } from './run-phase';
export { prepareRunReads, type RunReads } from './read-store';

export interface JobsDeps {
  /** Daily spend caps, a layer-3 condition (core/budgets); null, said outright, where none apply (a rehearsal). */
  budgets: BudgetGate | null;
  /** What a decision on a held run also closes (the inbox items about it; a rehearsal has none to close). */
  decisions: DecisionListener;
  ctx: CoreContext;
  hub: EngineHub;
  signals: Signals;
  instances: Pick<InstanceRegistry, 'get'>;
  logger: Logger;
  /** Scripted precondition outcomes (a rehearsal); live jobs check for real. */
  preconditions?: PreconditionEvaluator;
  /** Done means verified (core/verify): where a run attempt's verification is opened. */
  verify?: RunVerifyHooks;
  /** PROTOCOL §16: the CLI session an attempt of `run:<id>` reported last (the logs module, built later). */
  sessionOf?: Needed<(subject: string) => string | undefined>;
  /** The loop breaker (core/budgets/loop-breaker.ts): the same error again and again holds the run. */
  breaker?: RunLoopBreaker;
}

/** Builds the jobs module (called once by createCore). `start()` arms its timers. */
export function createJobs(deps: JobsDeps): JobService {
  const { ctx, hub, signals } = deps;
  const calendars = new CalendarRepo(ctx.db);
  const repo = new JobRepo(ctx, calendars);
  const backfillRows = new BackfillRepo(ctx.db);
  const settings = new JobSettingsStore(ctx);
  const engine = new JobEngine({ ctx, repo, backfillRows, settings, hub, signals, instances: deps.instances, logger: deps.logger, ...(deps.budgets ? { budgets: deps.budgets } : {}), ...(deps.preconditions ? { preconditions: deps.preconditions } : {}), ...(deps.verify ? { verify: deps.verify } : {}), ...(deps.breaker ? { breaker: deps.breaker } : {}) });
  return new JobService({
    ctx,
    repo,
    backfillRows,
    calendars,
    engine,
    insight: {
      repo,
      backfillRows,
      calendars,
      signals,
      settings: () => settings.read(),
      online: (role) => {
        const takers = hub.runTakers(role).length;
        return { takers, noRuns: hub.connectedInstances(role).length - takers };
      },
      trail: (subjects, limit) => oldestAbout(ctx.db, subjects, limit),
    },
    approvals: new Approvals(ctx, engine, deps.decisions, deps.sessionOf),
    pauses: new Pauses({ ctx, repo, logger: deps.logger, write: (fn) => engine.write(fn), wakeWaiting: (jobId) => engine.jobResumed(jobId) }),
  });
}
