/**
 * `UPDATE <table> SET <the given columns> WHERE <key> = ?`, prepared once per set of columns. The
 * jobs repositories (the only users) patch rows with a handful of column sets over and over; a cached statement per
 * set keeps the hot path free of SQL compilation.
 */
import type { Db } from './open';

type Statement = ReturnType<Db['prepare']>;

/** Write only while the row's `column` still holds `value` (a compare-and-set). */
export interface PatchGuard {
  column: string;
  value: unknown;
}

export class RowPatcher {
  private readonly cache = new Map<string, Statement>();

  constructor(
    private readonly db: Db,
    private readonly table: string,
    private readonly keyColumn: string,
  ) {}

  /** Writes the defined fields of `fields` (undefined ones are left alone). Returns how many rows changed (0 or 1). */
  patch(key: string | number, fields: Record<string, unknown>, only?: PatchGuard): number {
    const call = this.call(key, fields, only, false);
    return call ? call.stmt.run(call.params).changes : 0;
  }

  /** Like `patch`, and returns the row as written: undefined when no row changed (or no field was given). */
  patchReturning<Row>(key: string | number, fields: Record<string, unknown>, only?: PatchGuard): Row | undefined {
    const call = this.call(key, fields, only, true);
    return call ? (call.stmt.get(call.params) as Row | undefined) : undefined;
  }

  private call(key: string | number, fields: Record<string, unknown>, only: PatchGuard | undefined, returning: boolean): { stmt: Statement; params: Record<string, unknown> } | undefined {
    const cols = Object.keys(fields).filter((k) => fields[k] !== undefined);
    if (cols.length === 0) return undefined;
    const sig = `${cols.join(',')}|${only?.column ?? ''}|${returning ? 'r' : ''}`;
    let stmt = this.cache.get(sig);
    if (!stmt) {
      const guard = only ? ` AND ${only.column} = @__only` : '';
      stmt = this.db.prepare(`UPDATE ${this.table} SET ${cols.map((c) => `${c} = @${c}`).join(', ')} WHERE ${this.keyColumn} = @__key${guard}${returning ? ' RETURNING *' : ''}`);
      this.cache.set(sig, stmt);
    }
    const params: Record<string, unknown> = { __key: key };
    if (only) params.__only = only.value;
    for (const c of cols) params[c] = fields[c];
    return { stmt, params };
  }
}
