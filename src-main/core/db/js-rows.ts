/**
 * Row objects built in JavaScript for wide rows read on the hot path (issue 32).
 *
 * better-sqlite3 (on Node before 22) builds each row object from C++, one property at a time: a
 * name look-up and a store across the boundary per column. For the 28-column task row that was a
 * third of the read's cost. A raw (array) statement and an object literal compiled once from the
 * statement's own column names give the same object — same keys, same order, same values — for
 * about half the cost of the read.
 */
import type { Db } from './open';

export interface RowGetter<P extends unknown[], R> {
  get(...params: P): R | undefined;
}

/**
 * `db.prepare(sql).get(...)`, with the row built by a compiled literal. `extra` names fields every
 * row gets after the columns (`null`), so a caller that fills them in later keeps one object shape.
 */
export function jsRowGetter<P extends unknown[], R>(db: Db, sql: string, extra: readonly string[] = []): RowGetter<P, R> {
  const stmt = db.prepare<P, unknown[]>(sql).raw(true);
  const fields = [...stmt.columns().map((c, i) => `${JSON.stringify(c.name)}: a[${i}]`), ...extra.map((n) => `${JSON.stringify(n)}: null`)];
  // The names are the statement's own columns (JSON-quoted), never input: one literal, one shape.
  const toRow = new Function('a', `return { ${fields.join(', ')} };`) as (a: unknown[]) => R;
  return {
    get(...params: P): R | undefined {
      const a = stmt.get(...params);
      return a === undefined ? undefined : toRow(a);
    },
  };
}
