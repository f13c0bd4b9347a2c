/** Central jobs: schedules, calendars, trigger layers, runs, retries, backfill, explainer. */
import type { Logger } from '../../common/logger';
import type { CoreContext } from '../context';
import type { Hub } from '../hub/hub';
import type { InstanceRegistry } from '../instances/registry';
import type { Signals } from '../signals/signals';
import { Approvals } from './approvals';
import { Pauses } from './pauses';
import { JobRepo } from './repo';
import { JobRunner, type BudgetGate } from './runner';
import { JobService } from './service';

export { JobService, type ActorOpts } from './service';
export { Approvals, type DecisionListener } from './approvals';
export { Pauses, PAUSE_TIMER_ACTOR } from './pauses';
export { JobRunner, maintenanceAt } from './runner';
export { JobRepo } from './repo';
export { JobPlan, firstLook, missedOutcome, resolvePlaceholders, slotDates } from './plan';
export { validateJobInput } from './validate-job';
export { allRunEdges, isRunEdge, runCauseOf } from './run-transitions';

export interface JobsDeps {
  /** Daily spend caps, a layer-3 condition (core/budgets). */
  budgets?: BudgetGate;
  ctx: CoreContext;
  hub: Hub;
  signals: Signals;
  instances: InstanceRegistry;
  logger: Logger;
}

/** Builds the jobs module (called once by createCore). `start()` arms its timers. */
export function createJobs(deps: JobsDeps): JobService {
  const repo = new JobRepo(deps.ctx);
  const runner = new JobRunner({ ctx: deps.ctx, repo, hub: deps.hub, signals: deps.signals, instances: deps.instances, logger: deps.logger, ...(deps.budgets ? { budgets: deps.budgets } : {}) });
  const pauses = new Pauses(deps.ctx, repo, deps.logger, () => runner.tick());
  return new JobService(deps.ctx, repo, runner, deps.hub, deps.signals, new Approvals(deps.ctx, repo, runner), pauses);
}
