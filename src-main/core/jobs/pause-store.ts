/** The `role_pauses` table, and the jobs' pause columns as the pause timer reads them. SQL only, no rules: `pauses.ts` holds them. */
import type { Db } from '../db/open';
import type { JobRow } from './rows';

export interface RolePauseRow {
  role: string;
  at: number;
  by: string;
  reason: string;
  until: number | null;
}

/** Prepared once, when the pauses are built. */
export function preparePauseStatements(db: Db) {
  return {
    rolePause: db.prepare<[string], RolePauseRow>('SELECT * FROM role_pauses WHERE role = ?'),
    rolePauses: db.prepare<[], RolePauseRow>('SELECT * FROM role_pauses ORDER BY role'),
    putRolePause: db.prepare('INSERT INTO role_pauses (role, at, by, reason, until) VALUES (@role, @at, @by, @reason, @until)'),
    deleteRolePause: db.prepare('DELETE FROM role_pauses WHERE role = ?'),
    jobsOfRole: db.prepare<[string], JobRow>('SELECT * FROM jobs WHERE role = ? ORDER BY name'),
    nextUntil: db.prepare<[], { t: number | null }>('SELECT min(t) AS t FROM (SELECT min(paused_until) AS t FROM jobs WHERE paused_until IS NOT NULL UNION ALL SELECT min(until) FROM role_pauses)'),
    dueJobs: db.prepare<[number], JobRow>(`SELECT * FROM jobs WHERE paused_until IS NOT NULL AND paused_until <= ? AND (pause_scope IS NULL OR pause_scope <> 'role')`),
    dueRoles: db.prepare<[number], RolePauseRow>('SELECT * FROM role_pauses WHERE until IS NOT NULL AND until <= ?'),
  };
}
