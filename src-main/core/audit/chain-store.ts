/**
 * The reads and the trigger repair of the chain checks (`integrity.ts`, `audit-export.ts`,
 * `stored-text.ts` hold the rules). SQL only. Each statement is prepared when its check runs,
 * as before: the checks run at start, at export and on demand, never on a hot path.
 */
import type { Db } from '../db/open';
import type { AuditRow } from './audit-row';

/** The newest row's id (0 for an empty log). */
export function maxAuditId(db: Db): number {
  return db.prepare<[], number | null>('SELECT max(id) FROM audit').pluck().get() ?? 0;
}

/** The stored hash of row `id`, or undefined when it is missing. */
export function auditHashAt(db: Db, id: number): string | undefined {
  return db.prepare<[number], string>('SELECT hash FROM audit WHERE id = ?').pluck().get(id);
}

/** Looks up stored hashes by id (one statement for many look-ups). */
export function prepareAuditHashOf(db: Db) {
  return db.prepare<[number], string>('SELECT hash FROM audit WHERE id = ?').pluck();
}

/** Rows from `from` on, in id order, streamed. */
export function auditRowsFrom(db: Db, from: number): IterableIterator<AuditRow> {
  return db.prepare<[number], AuditRow>('SELECT * FROM audit WHERE id >= ? ORDER BY id').iterate(from);
}

/** Rows with ids in [lo, hi], in id order. */
export function prepareAuditBetween(db: Db) {
  return db.prepare<[number, number], AuditRow>('SELECT * FROM audit WHERE id BETWEEN ? AND ? ORDER BY id');
}

/** At most `limit` rows with ids in [lo, hi], in id order (a chunk of a long check). */
export function prepareAuditChunk(db: Db) {
  return db.prepare<[number, number, number], AuditRow>('SELECT * FROM audit WHERE id BETWEEN ? AND ? ORDER BY id LIMIT ?');
}

/** The triggers in the schema, with their SQL as SQLite keeps it. */
export function schemaTriggers(db: Db): Array<{ name: string; sql: string | null }> {
  return db.prepare<[], { name: string; sql: string | null }>(`SELECT name, sql FROM sqlite_master WHERE type = 'trigger'`).all();
}

/** Drops trigger `name` and creates it again from `sql` (inside the caller's write). */
export function recreateTrigger(db: Db, name: string, sql: string): void {
  db.exec(`DROP TRIGGER IF EXISTS ${name}`);
  db.exec(sql);
}

/** Reads a row's text columns as the bytes stored (`columns`: the column names). */
export function prepareStoredBytes(db: Db, columns: readonly string[]): { get(id: number): unknown } {
  return db.prepare(`SELECT ${columns.map((col) => `CAST(${col} AS BLOB) AS ${col}`).join(', ')} FROM audit WHERE id = ?`);
}
