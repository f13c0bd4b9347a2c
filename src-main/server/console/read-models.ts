/**
 * Read models for the console: the dashboard, role summaries, expired-lock cards and instances'
 * held locks, shaped from the core modules' read models (`core.reads`; their SQL is in the
 * modules' store files, prepared once per core).
 *
 * 1. Read-only.
 * 2. "Today" and "this week" are the server's local calendar (the operator's machine), computed
 *    in JS and bound as epoch-ms parameters; SQL never calls a clock.
 * 3. The kill switch is not here: it is the jobs module's (`core.jobs`, through the console's
 *    JobsConsolePort), which owns the `jobs.settings` row.
 */
import type { ExpiredLockCard, InstanceView, RoleSummary, ThroughputPoint } from '../../common/console-api';
import { isoTime, isoTimeOrNull } from '../../common/iso-time';
import type { Core } from '../../core/create-core';
import { THROUGHPUT_DAYS } from '../../core/tasks';

/** Most expired-lock cards returned for one day (newest first). */
export const MAX_EXPIRED_CARDS = 1000;

// ---- Local calendar helpers (pure). ----

export function localDayStart(ms: number): number {
  const d = new Date(ms);
  d.setHours(0, 0, 0, 0);
  return d.getTime();
}

/** Monday 00:00 local of the week holding `ms`. */
export function localWeekStart(ms: number): number {
  const d = new Date(localDayStart(ms));
  d.setDate(d.getDate() - ((d.getDay() + 6) % 7));
  return d.getTime();
}

export function localDayKey(ms: number): string {
  const d = new Date(ms);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}`;
}

/** The last `n` local days ending today, oldest first, as [start, end) (DST days are 23/25 h). */
export function lastLocalDays(now: number, n: number): Array<{ day: string; start: number; end: number }> {
  const out: Array<{ day: string; start: number; end: number }> = [];
  const today = new Date(localDayStart(now));
  for (let i = n - 1; i >= 0; i--) {
    const start = new Date(today);
    start.setDate(today.getDate() - i);
    const end = new Date(start);
    end.setDate(start.getDate() + 1);
    out.push({ day: localDayKey(start.getTime()), start: start.getTime(), end: end.getTime() });
  }
  return out;
}

export interface HeldLock {
  taskId: number;
  title: string;
  expiresAt: string;
}

export type ReadModels = ReturnType<typeof prepareReadModels>;

/** The console's views over the modules' read models (core.reads): the SQL lives in their store files. */
export function prepareReadModels(core: Pick<Core, 'reads'>) {
  const { tasks, instances, runs } = core.reads;
  return {
    onlineInstances: (): number => instances.online(),
    expiredSince: (ms: number): number => tasks.expiredSince(ms),

    roleSummaries(now: number): RoleSummary[] {
      const online = new Map(instances.onlineByRole().map((r) => [r.role, r.n]));
      const byRole = new Map<string, RoleSummary>();
      for (const r of tasks.roleCounts()) {
        byRole.set(r.role, {
          role: r.role,
          ready: r.ready,
          waiting: r.waiting,
          inProgress: r.in_progress,
          blocked: r.blocked,
          failed: r.failed,
          done: r.done,
          onlineInstances: online.get(r.role) ?? 0,
          oldestReadyAgeMs: r.oldest_ready === null ? null : Math.max(0, now - r.oldest_ready),
        });
      }
      // Roles with agents online but no task yet still appear (an idle role is information too).
      for (const [role, n] of online) {
        if (!byRole.has(role)) {
          byRole.set(role, { role, ready: 0, waiting: 0, inProgress: 0, blocked: 0, failed: 0, done: 0, onlineInstances: n, oldestReadyAgeMs: null });
        }
      }
      // A paused role shows, tasks or not: the pause is what the operator needs to see.
      for (const p of runs.rolePauses()) {
        const paused = { role: p.role, at: new Date(p.at).toISOString(), by: p.by, reason: p.reason, until: p.until === null ? null : new Date(p.until).toISOString() };
        const r = byRole.get(p.role);
        if (r) r.paused = paused;
        else byRole.set(p.role, { role: p.role, ready: 0, waiting: 0, inProgress: 0, blocked: 0, failed: 0, done: 0, onlineInstances: online.get(p.role) ?? 0, oldestReadyAgeMs: null, paused });
      }
      return [...byRole.values()].sort((a, b) => a.role.localeCompare(b.role));
    },

    throughput(now: number): ThroughputPoint[] {
      const days = lastLocalDays(now, THROUGHPUT_DAYS);
      const params: Record<string, number> = { end: days[days.length - 1]!.end };
      days.forEach((d, i) => (params[`b${i}`] = d.start));
      const points: ThroughputPoint[] = days.map((d) => ({ day: d.day, done: 0, failed: 0, expired: 0 }));
      for (const r of tasks.finishedByDay(params)) points[r.b]![r.status] += r.n;
      for (const r of tasks.expiredByDay(params)) points[r.b]!.expired += r.n;
      return points;
    },

    expiredCards(since: number, limit = MAX_EXPIRED_CARDS): ExpiredLockCard[] {
      return tasks.expiredCards(since, limit).map((r) => ({
        id: r.id,
        taskId: r.task_id,
        title: r.title,
        role: r.role,
        holder: r.instance_id,
        holderName: r.holder_name,
        fence: r.fence,
        reason: r.reason,
        expiredAt: isoTime(r.expired_at),
        reclaimedBy: r.reclaimed_by,
        reclaimedByName: r.reclaimed_name,
        reclaimedAt: isoTimeOrNull(r.reclaimed_at),
      }));
    },

    /** Live locks grouped by holder. */
    heldByInstance(): Map<string, HeldLock[]> {
      const out = new Map<string, HeldLock[]>();
      for (const r of tasks.heldLocks()) {
        let list = out.get(r.instance_id);
        if (!list) out.set(r.instance_id, (list = []));
        list.push({ taskId: r.task_id, title: r.title, expiresAt: isoTime(r.expires_at) });
      }
      return out;
    },

    /** Job runs in progress grouped by the instance running them. */
    runsByInstance(): Map<string, InstanceView['currentRuns']> {
      const out = new Map<string, InstanceView['currentRuns']>();
      for (const r of runs.runningWithInstance()) {
        let list = out.get(r.instance_id);
        if (!list) out.set(r.instance_id, (list = []));
        list.push({ runId: r.id, jobId: r.job_id, job: r.job_name, slot: r.slot });
      }
      return out;
    },
  };
}
