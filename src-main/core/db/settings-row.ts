/**
 * One JSON document under a key of the `settings` table (job settings, notifications, budgets,
 * log settings). It only runs the statements: a write belongs inside the caller's `store.write`,
 * with the audit row of the change.
 */
import type { Db } from './open';

export interface SettingsRow<T> {
  /** The stored document (fields written by an older version may be missing), or undefined when none is. */
  read(): Partial<T> | undefined;
  write(value: T): void;
}

export function settingsRow<T>(db: Db, key: string): SettingsRow<T> {
  const get = db.prepare<[string], { value: string }>('SELECT value FROM settings WHERE key = ?');
  const put = db.prepare<[string, string]>('INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value');
  return {
    read() {
      const row = get.get(key);
      return row ? (JSON.parse(row.value) as Partial<T>) : undefined;
    },
    write(value) {
      put.run(key, JSON.stringify(value));
    },
  };
}
