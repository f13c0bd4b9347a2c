import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { jsRowGetter } from './js-rows';

describe('jsRowGetter', () => {
  it('returns the row better-sqlite3 would (same keys, order, values), then the extra fields as null', () => {
    const db = new Database(':memory:');
    db.exec(`CREATE TABLE t (id INTEGER PRIMARY KEY, "we""ird" TEXT, n REAL, b BLOB, z TEXT); INSERT INTO t VALUES (1, 'a', 1.5, x'00ff', NULL)`);
    const sql = 'SELECT id, "we""ird", n, b, z AS alias FROM t WHERE id = ?';
    const plain = db.prepare(sql).get(1) as Record<string, unknown>;
    const fast = jsRowGetter<[number], Record<string, unknown>>(db, sql, ['l_x']).get(1)!;
    expect(Object.keys(fast)).toEqual([...Object.keys(plain), 'l_x']);
    expect(fast).toEqual({ ...plain, l_x: null });
    expect(jsRowGetter(db, sql).get(2)).toBeUndefined();
    db.close();
  });
});
