/**
 * The logs module's SQL on the main database, besides its own tables (`artifact-store.ts`,
 * `usage-store.ts`; the log lines live in segment files: `segment-store.ts`). SQL only, no rules.
 * Every statement is prepared once, when the module is built.
 */
import type { Db } from '../db/open';

/** The log settings' row in `settings` (service.ts parses it). */
export function prepareLogSettingsStatements(db: Db) {
  return {
    get: db.prepare<[string], { value: string }>('SELECT value FROM settings WHERE key = ?'),
    put: db.prepare('INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value'),
  };
}

/** A run's job and slot (a log subject's description). */
export function prepareRunDescriptions(db: Db) {
  return db.prepare<[string], { job: string; slot: string }>('SELECT job_name AS job, slot FROM runs WHERE id = ?');
}

/** An instance's token. */
export function prepareTokenOfInstance(db: Db) {
  return db.prepare<[string], { token_id: string | null }>('SELECT token_id FROM instances WHERE id = ?');
}

/** A task's lock holder and fence, with its attempt and role (holders.ts checks them). */
export function prepareTaskHolder(db: Db) {
  return db.prepare<[number], { instance_id: string | null; fence: number | null; attempt: number; role: string }>(
    'SELECT l.instance_id, l.fence, t.attempt, t.role FROM tasks t LEFT JOIN locks l ON l.task_id = t.id WHERE t.id = ?',
  );
}
