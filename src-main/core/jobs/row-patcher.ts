/**
 * `UPDATE <table> SET <the given columns> WHERE <key> = ?`, prepared once per set of columns. The
 * jobs repositories patch rows with a handful of column sets over and over; a cached statement per
 * set keeps the hot path free of SQL compilation.
 */
import type { Db } from '../db/open';

type Statement = ReturnType<Db['prepare']>;

export class RowPatcher {
  private readonly cache = new Map<string, Statement>();

  constructor(
    private readonly db: Db,
    private readonly table: string,
    private readonly keyColumn: string,
  ) {}

  /**
   * Writes the defined fields of `fields` (undefined ones are left alone); with `only`, only while
   * the row's `only.column` still holds `only.value`. Returns how many rows changed (0 or 1).
   */
  patch(key: string | number, fields: Record<string, unknown>, only?: { column: string; value: unknown }): number {
    const cols = Object.keys(fields).filter((k) => fields[k] !== undefined);
    if (cols.length === 0) return 0;
    const sig = only ? `${cols.join(',')}|${only.column}` : cols.join(',');
    let stmt = this.cache.get(sig);
    if (!stmt) {
      const guard = only ? ` AND ${only.column} = @__only` : '';
      stmt = this.db.prepare(`UPDATE ${this.table} SET ${cols.map((c) => `${c} = @${c}`).join(', ')} WHERE ${this.keyColumn} = @__key${guard}`);
      this.cache.set(sig, stmt);
    }
    const params: Record<string, unknown> = { __key: key };
    if (only) params.__only = only.value;
    for (const c of cols) params[c] = fields[c];
    return stmt.run(params).changes;
  }
}
