/** Read models over `runs` and `role_pauses` for the console: runs in progress per instance, the role pauses as stored, a run's owner. Read-only. */
import type { Db } from '../db/open';

export type RunReads = ReturnType<typeof prepareRunReads>;

export function prepareRunReads(db: Db) {
  const q = {
    // Walks the partial index runs_instance (status = 'running').
    running: db.prepare<[], { id: string; job_id: string; job_name: string; slot: string; instance_id: string }>(
      `SELECT id, job_id, job_name, slot, instance_id FROM runs WHERE status = 'running' AND instance_id IS NOT NULL ORDER BY slot_at`,
    ),
    rolePauses: db.prepare<[], { role: string; at: number; by: string; reason: string; until: number | null }>('SELECT role, at, by, reason, until FROM role_pauses'),
    owner: db.prepare<[string], { jobId: string; job: string; slot: string }>('SELECT job_id AS jobId, job_name AS job, slot FROM runs WHERE id = ?'),
  };
  return {
    runningWithInstance: () => q.running.all(),
    rolePauses: () => q.rolePauses.all(),
    /** A run's job and slot (who may read its log lines), or undefined. */
    owner: (runId: string) => q.owner.get(runId),
  };
}
