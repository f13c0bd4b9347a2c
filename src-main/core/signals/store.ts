/** The `signals` table. SQL only, no rules: `signals.ts` holds them. */
import type { Db } from '../db/open';
import type { SqlWhere } from '../sql-where';

export interface SignalRow {
  name: string;
  key: string;
  value: string | null;
  actor: string;
  set_at: number;
}

/** A page of signals matching `where` (the filter is the caller's; built per call, as before). */
export function signalRows(db: Db, where: SqlWhere, limit: number): SignalRow[] {
  return db.prepare<unknown[], SignalRow>(`SELECT * FROM signals ${where.sql} ORDER BY name, key LIMIT ?`).all(...where.params, limit);
}

/** Prepared once, when the signals service is built. */
export function prepareSignalStatements(db: Db) {
  return {
    get: db.prepare<[string, string], SignalRow>('SELECT * FROM signals WHERE name = ? AND key = ?'),
    upsert: db.prepare(
      `INSERT INTO signals (name, key, value, actor, set_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (name, key) DO UPDATE SET value = excluded.value, actor = excluded.actor, set_at = excluded.set_at`,
    ),
    delete: db.prepare('DELETE FROM signals WHERE name = ? AND key = ?'),
  };
}
