/**
 * The facts the layers decide by: layer 3's read at one instant (the settings, the job's other runs
 * and backfills, the quotas' counts, who is online) and layer 2's preconditions. Nothing here writes;
 * the verdicts are verdicts.ts's.
 */
import type { JobSpec } from '../../../common/job-schema';
import type { CheckOutcome } from '../preconditions';
import { isInProgress, runPhase } from '../run-phase';
import type { JobRow, RunRow } from '../rows';
import type { EngineContext } from './context';
import { localDay } from '../time-util';
import type { ExecutionFacts, ExecutionMode } from './verdicts';

export function executionFacts(e: EngineContext, run: RunRow, job: JobRow, spec: JobSpec, now: number, mode: ExecutionMode): ExecutionFacts {
  const settings = e.settings();
  const online = e.hub.runTakers(job.role).length;
  const f: ExecutionFacts = { mode, now, settings, job, spec, online, onlineNoRuns: e.hub.connectedInstances(job.role).length - online };
  if (mode === 'slot') {
    // Ordering: backfills and catch-up runs of older slots go first.
    const before: string[] = [];
    if (e.anyBackfill()) {
      for (const b of e.backfillRows.dispatchedOfJob(job.id)) if (b.run_id !== run.id) before.push(`backfill of ${b.slot}`);
      for (const b of e.backfillRows.openOfJob(job.id)) if (b.tick_run_id === run.id && e.checkingBackfills.has(b.id)) before.push(`backfill of ${b.slot} (being checked)`);
    }
    const open = e.repo.openRunFactsOfJob(job.id).filter((r) => r.id !== run.id);
    for (const r of open) if (r.trigger === 'catch_up' && r.slot_at < run.slot_at) before.push(`catch-up run of ${r.slot}`);
    // Slots due at the same instant (a DST shift onto the next hour, weekend slots moved to the
    // next workday) open together: they run one after another in slot order, never overlap-skipped.
    for (const r of open) if (r.slot_at === run.slot_at && r.slot < run.slot) before.push(`${r.slot} (due at the same instant)`);
    f.before = before;
    f.inProgress = open.filter((r) => r.trigger !== 'catch_up' && r.slot_at !== run.slot_at && isInProgress(runPhase(r))).map((r) => ({ slot: r.slot, status: r.status }));
    f.waitingBefore = open.filter((r) => runPhase(r) === 'checking' && r.slot_at < run.slot_at).map((r) => r.slot);
  }
  if (mode !== 'manual') {
    if (spec.executionConditions.maxConcurrentPerRole !== undefined) f.roleInFlight = e.repo.inFlightCountOfRole(job.role);
    if (settings.globalConcurrency !== null) f.globalInFlight = e.repo.inFlightCount();
    const budget = e.budgetVerdict(job.role, now);
    if (budget) f.budget = budget;
    if (spec.maxAttemptsPerDay !== undefined) {
      const zone = spec.schedule.timezone ?? 'UTC';
      const { day, nextDayAt } = localDay(now, zone);
      f.attemptsToday = { n: e.repo.attemptsOnDay(job.id, day), limit: spec.maxAttemptsPerDay, day, zone, nextDayAt };
    }
  }
  return f;
}

/**
 * Layer 2's facts: every precondition of the job evaluated for `slot`. Synchronous checks answer at
 * once; when any calls out (http, command, agent) the answer is a promise, to be continued outside
 * the transaction.
 */
export function preconditionFacts(e: EngineContext, job: JobRow, spec: JobSpec, slot: string, slotAt: number): CheckOutcome[] | Promise<CheckOutcome[]> {
  const ctx = { slot, slotAt, zone: spec.schedule.timezone ?? 'UTC', role: job.role };
  const outs = spec.preconditions.map((p, i) => e.checkPrecondition(p, i, ctx));
  return outs.some((o) => o instanceof Promise) ? Promise.all(outs) : (outs as CheckOutcome[]);
}
