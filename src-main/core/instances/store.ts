/** The `instances` table. SQL only, no rules: `registry.ts` holds them (read models: `read-store.ts`). */
import type { Db } from '../db/open';
import type { InstanceStatus } from '../../common/model';
import { onOldTimeline } from '../time/gap-detector';

export interface InstanceRow {
  id: string;
  role: string;
  name: string;
  version: string | null;
  status: InstanceStatus;
  token_id: string | null;
  connected_at: number;
  last_heartbeat_at: number;
  disconnected_at: number | null;
}

/** Prepared once, when the registry is built. */
export function prepareInstanceStatements(db: Db) {
  return {
    get: db.prepare<[string], InstanceRow>('SELECT * FROM instances WHERE id = ?'),
    all: db.prepare<[], InstanceRow>(`SELECT * FROM instances ORDER BY status = 'online' DESC, role, name, id`),
    held: db.prepare<[string], { task_id: number }>('SELECT task_id FROM locks WHERE instance_id = ? ORDER BY task_id'),
    insert: db.prepare(
      `INSERT INTO instances (id, role, name, version, status, token_id, connected_at, last_heartbeat_at)
       VALUES (?, ?, ?, ?, 'online', ?, ?, ?)`,
    ),
    resume: db.prepare(
      `UPDATE instances SET status = 'online', disconnected_at = NULL, last_heartbeat_at = ?, connected_at = ?, version = ? WHERE id = ?`,
    ),
    heartbeat: db.prepare(`UPDATE instances SET last_heartbeat_at = ? WHERE id = ? AND status = 'online'`),
    disconnect: db.prepare(`UPDATE instances SET status = 'disconnected', disconnected_at = ? WHERE id = ? AND status = 'online'`),
    offline: db.prepare(`UPDATE instances SET status = 'offline' WHERE id = ?`),
    silent: db.prepare<[number, number], { id: string }>(
      `SELECT id FROM instances WHERE status = 'online' AND last_heartbeat_at <= ? ORDER BY last_heartbeat_at LIMIT ?`,
    ),
    graceOver: db.prepare<[number, number], { id: string }>(
      `SELECT id FROM instances WHERE status = 'disconnected' AND disconnected_at <= ? ORDER BY disconnected_at LIMIT ?`,
    ),
    // Instances still within their heartbeat timeout when the gap began get a fresh window.
    forgiveSilence: db.prepare(`UPDATE instances SET last_heartbeat_at = ? WHERE status = 'online' AND last_heartbeat_at < ? AND last_heartbeat_at > ?`),
    // Times recorded on the old timeline move with the gap.
    shiftGrace: db.prepare(`UPDATE instances SET disconnected_at = disconnected_at + @gap WHERE status = 'disconnected' AND ${onOldTimeline('disconnected_at')}`),
    shiftHeartbeatsBack: db.prepare(`UPDATE instances SET last_heartbeat_at = last_heartbeat_at + @gap WHERE status = 'online' AND ${onOldTimeline('last_heartbeat_at')}`),
    countOnline: db.prepare<[], { n: number }>(`SELECT count(*) AS n FROM instances WHERE status = 'online'`),
  };
}

/** The instances marked online (start-up only: prepared per call, as before). */
export function onlineInstanceIds(db: Db): Array<{ id: string }> {
  return db.prepare<[], { id: string }>(`SELECT id FROM instances WHERE status = 'online'`).all();
}
