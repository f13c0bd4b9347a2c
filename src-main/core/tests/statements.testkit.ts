/**
 * Statements counted in tests: every prepared statement of a better-sqlite3 database shares one
 * prototype, so spying on its run / get / all / iterate sees each statement that runs, whichever
 * module prepared it. Undone by `vi.restoreAllMocks()`.
 */
import { vi } from 'vitest';
import type { Db } from '../db/open';

/** Calls `seen` with the source of every statement run on `db` (whitespace collapsed) from now on. */
export function spyStatements(db: Db, seen: (source: string) => void): void {
  const proto = Object.getPrototypeOf(db.prepare('SELECT 1')) as Record<'run' | 'get' | 'all' | 'iterate', (...a: unknown[]) => unknown>;
  for (const m of ['run', 'get', 'all', 'iterate'] as const) {
    const orig = proto[m];
    vi.spyOn(proto, m).mockImplementation(function (this: { source: string }, ...a: unknown[]) {
      seen(this.source.replace(/\s+/g, ' ').trim());
      return orig.apply(this, a);
    });
  }
}
