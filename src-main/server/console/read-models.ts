/**
 * Read models for the console: the SQL behind the dashboard, role summaries, expired-lock cards
 * and instances' held locks. Statements are prepared once per core.
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

// ---- Rows. ----

interface RoleRow {
  role: string;
  ready: number;
  waiting: number;
  in_progress: number;
  blocked: number;
  failed: number;
  done: number;
  oldest_ready: number | null;
}

interface ExpiryRow {
  id: number;
  task_id: number;
  title: string;
  role: string;
  instance_id: string;
  holder_name: string | null;
  fence: number;
  reason: string;
  expired_at: number;
  reclaimed_by: string | null;
  reclaimed_name: string | null;
  reclaimed_at: number | null;
}

export interface HeldLock {
  taskId: number;
  title: string;
  expiresAt: string;
}

const THROUGHPUT_DAYS = 7;

export type ReadModels = ReturnType<typeof prepareReadModels>;

export function prepareReadModels(core: Pick<Core, 'db' | 'store' | 'audit' | 'clock'>) {
  const db = core.db;
  const q = {
    online: db.prepare<[], { n: number }>(`SELECT count(*) AS n FROM instances WHERE status = 'online'`),
    expiredSince: db.prepare<[number], { n: number }>('SELECT count(*) AS n FROM lock_expiries WHERE expired_at >= ?'),
    roles: db.prepare<[], RoleRow>(
      `SELECT role,
         sum(status = 'backlog' AND unmet_deps = 0) AS ready,
         sum(status = 'backlog' AND unmet_deps > 0) AS waiting,
         sum(status = 'in_progress') AS in_progress,
         sum(status = 'blocked') AS blocked,
         sum(status = 'failed') AS failed,
         sum(status = 'done') AS done,
         min(CASE WHEN status = 'backlog' AND unmet_deps = 0 THEN created_at END) AS oldest_ready
       FROM tasks GROUP BY role`,
    ),
    onlineByRole: db.prepare<[], { role: string; n: number }>(
      `SELECT role, count(*) AS n FROM instances WHERE status = 'online' GROUP BY role`,
    ),
    // One pass over the finished tasks of the window, bucketed by local day (bounds bound as params).
    finishedByDay: db.prepare<Record<string, number>, { status: 'done' | 'failed'; b: number; n: number }>(
      `SELECT status, CASE ${Array.from({ length: THROUGHPUT_DAYS - 1 }, (_, i) => `WHEN updated_at < @b${i + 1} THEN ${i}`).join(' ')}
         ELSE ${THROUGHPUT_DAYS - 1} END AS b, count(*) AS n
       FROM tasks WHERE status IN ('done', 'failed') AND updated_at >= @b0 AND updated_at < @end
       GROUP BY status, b`,
    ),
    expiredByDay: db.prepare<Record<string, number>, { b: number; n: number }>(
      `SELECT CASE ${Array.from({ length: THROUGHPUT_DAYS - 1 }, (_, i) => `WHEN expired_at < @b${i + 1} THEN ${i}`).join(' ')}
         ELSE ${THROUGHPUT_DAYS - 1} END AS b, count(*) AS n
       FROM lock_expiries WHERE expired_at >= @b0 AND expired_at < @end GROUP BY b`,
    ),
    expiredCards: db.prepare<[number, number], ExpiryRow>(
      `SELECT e.id, e.task_id, t.title, t.role, e.instance_id, i.name AS holder_name, e.fence, e.reason, e.expired_at,
              e.reclaimed_by, r.name AS reclaimed_name, e.reclaimed_at
       FROM lock_expiries AS e
       JOIN tasks AS t ON t.id = e.task_id
       LEFT JOIN instances AS i ON i.id = e.instance_id
       LEFT JOIN instances AS r ON r.id = e.reclaimed_by
       WHERE e.expired_at >= ? ORDER BY e.expired_at DESC, e.id DESC LIMIT ?`,
    ),
    // Walks the partial index runs_instance (status = 'running').
    running: db.prepare<[], { id: string; job_id: string; job_name: string; slot: string; instance_id: string }>(
      `SELECT id, job_id, job_name, slot, instance_id FROM runs WHERE status = 'running' AND instance_id IS NOT NULL ORDER BY slot_at`,
    ),
    held: db.prepare<[], { task_id: number; instance_id: string; expires_at: number; title: string }>(
      `SELECT l.task_id, l.instance_id, l.expires_at, t.title FROM locks AS l JOIN tasks AS t ON t.id = l.task_id ORDER BY l.task_id`,
    ),
    rolePauses: db.prepare<[], { role: string; at: number; by: string; reason: string; until: number | null }>('SELECT role, at, by, reason, until FROM role_pauses'),
  };

  return {
    onlineInstances: (): number => q.online.get()!.n,
    expiredSince: (ms: number): number => q.expiredSince.get(ms)!.n,

    roleSummaries(now: number): RoleSummary[] {
      const online = new Map(q.onlineByRole.all().map((r) => [r.role, r.n]));
      const byRole = new Map<string, RoleSummary>();
      for (const r of q.roles.all()) {
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
      for (const p of q.rolePauses.all()) {
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
      for (const r of q.finishedByDay.all(params)) points[r.b]![r.status] += r.n;
      for (const r of q.expiredByDay.all(params)) points[r.b]!.expired += r.n;
      return points;
    },

    expiredCards(since: number, limit = MAX_EXPIRED_CARDS): ExpiredLockCard[] {
      return q.expiredCards.all(since, limit).map((r) => ({
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
      for (const r of q.held.all()) {
        let list = out.get(r.instance_id);
        if (!list) out.set(r.instance_id, (list = []));
        list.push({ taskId: r.task_id, title: r.title, expiresAt: isoTime(r.expires_at) });
      }
      return out;
    },

    /** Job runs in progress grouped by the instance running them. */
    runsByInstance(): Map<string, InstanceView['currentRuns']> {
      const out = new Map<string, InstanceView['currentRuns']>();
      for (const r of q.running.all()) {
        let list = out.get(r.instance_id);
        if (!list) out.set(r.instance_id, (list = []));
        list.push({ runId: r.id, jobId: r.job_id, job: r.job_name, slot: r.slot });
      }
      return out;
    },
  };
}
