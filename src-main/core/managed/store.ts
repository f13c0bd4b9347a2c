/** The `managed_agents` and `managed_processes` tables. SQL only, no rules: `definitions.ts` holds them. */
import type { Db } from '../db/open';

/** A `managed_agents` row. */
export interface ManagedRow {
  id: string;
  name: string;
  role: string;
  command: string;
  mode: 'per_task' | 'long_running';
  instances: number;
  cwd: string | null;
  env: string;
  timeout_s: number | null;
  shell: number;
  parse: string | null;
  workspace: string | null;
  desired: 'running' | 'stopped';
  token_id: string | null;
  version: number;
  created_at: number;
  updated_at: number;
  updated_by: string;
}

/** Prepared once, when the definitions store is built. */
export function prepareManagedStatements(db: Db) {
  return {
    all: db.prepare<[], ManagedRow>('SELECT * FROM managed_agents ORDER BY name'),
    byId: db.prepare<[string], ManagedRow>('SELECT * FROM managed_agents WHERE id = ?'),
    byName: db.prepare<[string], ManagedRow>('SELECT * FROM managed_agents WHERE name = ?'),
    insert: db.prepare(
      `INSERT INTO managed_agents (id, name, role, command, mode, instances, cwd, env, timeout_s, shell, parse, workspace, desired, token_id, version, created_at, updated_at, updated_by)
       VALUES (@id, @name, @role, @command, @mode, @instances, @cwd, @env, @timeout_s, @shell, @parse, @workspace, 'running', NULL, 1, @now, @now, @actor)`,
    ),
    update: db.prepare(
      `UPDATE managed_agents SET role = @role, command = @command, mode = @mode, instances = @instances, cwd = @cwd, env = @env, timeout_s = @timeout_s,
         shell = @shell, parse = @parse, workspace = @workspace, version = version + 1, updated_at = @now, updated_by = @actor WHERE id = @id`,
    ),
    desired: db.prepare('UPDATE managed_agents SET desired = ?, updated_at = ?, updated_by = ? WHERE id = ?'),
    token: db.prepare('UPDATE managed_agents SET token_id = ? WHERE id = ?'),
    remove: db.prepare('DELETE FROM managed_agents WHERE id = ?'),
    recordProcess: db.prepare('INSERT OR REPLACE INTO managed_processes (pgid, managed_id, instance, marker, start_ticks, started_at) VALUES (?, ?, ?, ?, ?, ?)'),
    forgetProcess: db.prepare('DELETE FROM managed_processes WHERE pgid = ?'),
    processes: db.prepare<[], { pgid: number; managed_id: string; instance: number; marker: string; start_ticks: string | null; started_at: number }>('SELECT * FROM managed_processes ORDER BY pgid'),
    envs: db.prepare<[], { id: string; env: string }>('SELECT id, env FROM managed_agents'),
    sealEnv: db.prepare('UPDATE managed_agents SET env = ? WHERE id = ?'),
  };
}
