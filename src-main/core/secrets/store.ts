/** The SQL of secrets at rest (index.ts holds the rules): the key check's row, the sealed-value probe, the pragmas of sealing. */
import type { Db } from '../db/open';

/** Whether anything in the database holds `marker` (the sealed prefix): a managed agent's env or the notification settings. */
export function holdsMarker(db: Db, marker: string): boolean {
  const like = `%${marker}%`;
  return (
    db.prepare<[string], { n: number }>('SELECT count(*) AS n FROM managed_agents WHERE env LIKE ?').get(like)!.n > 0 ||
    db.prepare<[string], { n: number }>("SELECT count(*) AS n FROM settings WHERE key = 'notifications' AND value LIKE ?").get(like)!.n > 0
  );
}

/** Writes the key check only if none is stored (the first of racing processes stands). */
export function insertKeyCheckIfAbsent(db: Db, json: string): void {
  db.prepare("INSERT OR IGNORE INTO settings (key, value) VALUES ('secrets', ?)").run(json);
}

/** Runs `f` with `secure_delete` on (freed pages are zeroed), then puts the setting back. */
export function withSecureDelete<T>(db: Db, f: () => T): T {
  const before = db.pragma('secure_delete', { simple: true }) as number;
  db.pragma('secure_delete = ON');
  try {
    return f();
  } finally {
    db.pragma(`secure_delete = ${before}`);
  }
}

/** Checkpoints the WAL and truncates it, so the old pages leave the WAL file too. */
export function truncateWal(db: Db): void {
  db.pragma('wal_checkpoint(TRUNCATE)');
}
