/**
 * The forecast (PROTOCOL §14, `GET /jobs/{id}/forecast`, `GET /usage/forecast`): what a job will
 * spend, as its cost per run (p50 / p90 over its recent runs, from the usage ledger) times the runs
 * its schedule and calendar make in the next 24 hours and 30 days (the same slot plan the runner
 * and the preview use: calendar skips, moved workdays and DST applied).
 *
 * Invariants:
 * 1. Bounded: at most `RECENT_RUNS` runs are read per job and at most `MAX_SLOTS` slots walked; a
 *    schedule with more slots in 30 days (an every-second job) is extrapolated from the rate of the
 *    slots walked, and says so (`extrapolated`).
 * 2. Only the runs' usage counts (all their attempts: a retry costs too); a job whose runs reported
 *    nothing forecasts $0 with `runs: 0`, not a guess.
 * 3. Read only; nothing is stored.
 */
import type { Job } from '../../common/job-schema';
import type { JobForecast, UsageForecastRow } from '../../common/prices';
import type { Db } from '../db/open';
import type { JobPlan } from '../jobs';
import { NANO } from './spend';
import { prepareForecastStatements } from './store';

export const RECENT_RUNS = 50;
/** Slots walked at most: exact for a job that runs at most every 44 minutes, extrapolated above. */
const MAX_SLOTS = 1000;
const DAY = 86_400_000;

/** The `q`-quantile of sorted values, nearest rank. */
function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

export class Forecasts {
  private readonly q;

  constructor(
    db: Db,
    private readonly deps: { now: () => number; job: (id: string) => Job; jobs: () => Job[]; planOf: (job: Job) => JobPlan },
  ) {
    this.q = prepareForecastStatements(db);
  }

  job(id: string): JobForecast {
    return this.of(this.deps.job(id));
  }

  /** Every enabled job's forecast summed by its role or per job. */
  usage(by: 'role' | 'job'): { items: UsageForecastRow[] } {
    const sums = new Map<string, UsageForecastRow>();
    for (const j of this.deps.jobs()) {
      if (j.enabled === false) continue;
      const f = this.of(j);
      const key = by === 'role' ? f.role : f.job;
      const s = sums.get(key) ?? { key, next24h: { runs: 0, costUsd: 0 }, next30d: { runs: 0, costUsd: 0 } };
      s.next24h.runs += f.next24h.runs;
      s.next24h.costUsd += f.next24h.costUsd;
      s.next30d.runs += f.next30d.runs;
      s.next30d.costUsd += f.next30d.costUsd;
      sums.set(key, s);
    }
    return { items: [...sums.values()].sort((a, b) => b.next30d.costUsd - a.next30d.costUsd || a.key.localeCompare(b.key)) };
  }

  private of(job: Job): JobForecast {
    const costs = this.q.perRun.all(job.id, RECENT_RUNS).map((r) => r.c / NANO).sort((a, b) => a - b);
    const p50 = quantile(costs, 0.5);
    const p90 = quantile(costs, 0.9);
    const now = this.deps.now();
    const { in24h, in30d, extrapolated } = this.runsAhead(this.deps.planOf(job), now);
    return {
      jobId: job.id,
      job: job.name,
      role: job.role,
      perRun: { runs: costs.length, p50CostUsd: p50, p90CostUsd: p90 },
      // The typical run (p50) times the runs to come: "about $4.10 a day".
      next24h: { runs: in24h, costUsd: in24h * p50 },
      next30d: { runs: in30d, costUsd: in30d * p50 },
      extrapolated,
    };
  }

  /** Due slots in (now, now + 24 h] and (now, now + 30 d] (invariant 1). */
  private runsAhead(plan: JobPlan, now: number): { in24h: number; in30d: number; extrapolated: boolean } {
    const u = plan.upcoming(now, MAX_SLOTS, MAX_SLOTS * 4);
    let in24h = 0;
    let in30d = 0;
    let last = now;
    for (const o of u.entries) {
      if (o.at > now + 30 * DAY) break;
      last = o.at;
      if (o.disposition !== 'due') continue;
      in30d++;
      if (o.at <= now + DAY) in24h++;
    }
    if (in30d >= MAX_SLOTS && last > now && last < now + 30 * DAY) {
      // More slots than walked: the rate of those walked, over the whole 30 days.
      return { in24h: last >= now + DAY ? in24h : Math.round((in30d * DAY) / (last - now)), in30d: Math.round((in30d * 30 * DAY) / (last - now)), extrapolated: true };
    }
    return { in24h, in30d, extrapolated: false };
  }
}
