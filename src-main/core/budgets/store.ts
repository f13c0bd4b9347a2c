/**
 * The budgets' SQL (caps per task and per run, the spend read from the usage ledger, forecasts, the
 * loop breaker's error streaks, the price table's reset). SQL only, no rules. Every statement is
 * prepared once, when its service is built, except the price reset (prepared when it runs, as before).
 */
import type { Db } from '../db/open';

export interface CappedTaskRow {
  id: number;
  attempt: number;
  title: string;
  role: string;
  max_cost_usd: number | null;
  max_tokens: number | null;
}

/** The caps: runs and tasks under a cap now, and a task cap's stop mark. */
export function prepareBudgetStatements(db: Db) {
  return {
    capped: db.prepare<[], { id: string; attempt: number; job_id: string; job_name: string; slot: string; budget: string }>(
      `SELECT r.id, r.attempt, r.job_id, r.job_name, r.slot, COALESCE(r.budget, json_extract(j.spec, '$.budget')) AS budget FROM runs r JOIN jobs j ON j.id = r.job_id
       WHERE COALESCE(r.budget, json_extract(j.spec, '$.budget')) IS NOT NULL
         AND (r.status = 'running' OR r.id IN (SELECT run_id FROM backfills WHERE status = 'dispatched' AND instance_id IS NOT NULL))`,
    ),
    cappedRun: db.prepare<[string], { id: string; attempt: number; job_id: string; job_name: string; slot: string; budget: string }>(
      `SELECT r.id, r.attempt, r.job_id, r.job_name, r.slot, COALESCE(r.budget, json_extract(j.spec, '$.budget')) AS budget FROM runs r JOIN jobs j ON j.id = r.job_id
       WHERE r.id = ? AND COALESCE(r.budget, json_extract(j.spec, '$.budget')) IS NOT NULL
         AND (r.status = 'running' OR r.id IN (SELECT run_id FROM backfills WHERE status = 'dispatched' AND instance_id IS NOT NULL))`,
    ),
    cappedTasks: db.prepare<[number | null, number | null], CappedTaskRow>(
      `SELECT t.id, t.attempt, t.title, t.role, b.max_cost_usd, b.max_tokens FROM task_budgets b JOIN tasks t ON t.id = b.task_id JOIN locks l ON l.task_id = t.id
       WHERE (? IS NULL OR b.task_id = ?) AND (b.stopped_attempt IS NULL OR b.stopped_attempt <> t.attempt)`,
    ),
    markStopped: db.prepare('UPDATE task_budgets SET stopped_attempt = ? WHERE task_id = ?'),
  };
}

/** A job's cost per recent run (the forecast). */
export function prepareForecastStatements(db: Db) {
  return {
    perRun: db.prepare<[string, number], { c: number }>(
      `SELECT sum(cost_nusd) AS c FROM usage WHERE job_id = ? AND subject LIKE 'run:%' GROUP BY subject ORDER BY max(at) DESC LIMIT ?`,
    ),
  };
}

/** The loop breaker's error streaks. */
export function prepareLoopBreakerStatements(db: Db) {
  return {
    get: db.prepare<[string], { signature: string; count: number }>('SELECT signature, count FROM error_streaks WHERE subject = ?'),
    put: db.prepare(
      'INSERT INTO error_streaks (subject, signature, count, last_error, updated_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (subject) DO UPDATE SET signature = excluded.signature, count = excluded.count, last_error = excluded.last_error, updated_at = excluded.updated_at',
    ),
    clear: db.prepare('DELETE FROM error_streaks WHERE subject = ?'),
    count: db.prepare<[], number>('SELECT count(*) FROM error_streaks').pluck(),
  };
}

/** The spend the usage ledger holds (spend.ts reads it). */
export function prepareUsageSpendStatements(db: Db) {
  return {
    any: db.prepare<[], { n: number }>('SELECT count(*) AS n FROM (SELECT 1 FROM usage LIMIT 1)'),
    // One keyed row: the attempt's totals, kept with each usage row (migration 027), not a SUM of its rows.
    attempt: db.prepare<[string, number], { c: number | null; t: number | null }>('SELECT cost_nusd AS c, input_tokens + output_tokens AS t FROM usage_attempts WHERE subject = ? AND attempt = ?'),
    sums: db.prepare<[number, number, string | null, string | null], { c: number | null; t: number | null }>(
      'SELECT sum(cost_nusd) AS c, sum(input_tokens + output_tokens) AS t FROM usage WHERE at >= ? AND at < ? AND (? IS NULL OR role = ?)',
    ),
    // Whole quarter hours [from, to) of usage_quarters (migration 027), of one role or of all.
    quarters: db.prepare<[number, number, string | null, string | null], { c: number | null; t: number | null }>(
      'SELECT sum(cost_nusd) AS c, sum(tokens) AS t FROM usage_quarters WHERE quarter >= ? AND quarter < ? AND (? IS NULL OR role = ?)',
    ),
    rows: db.prepare<[number, number, string | null, string | null], { at: number; nano: number; tokens: number }>(
      'SELECT at, cost_nusd AS nano, input_tokens + output_tokens AS tokens FROM usage WHERE at >= ? AND at < ? AND (? IS NULL OR role = ?) ORDER BY at',
    ),
  };
}

/** Deletes one `settings` row (the price table's reset to the built-in prices). */
export function deleteSetting(db: Db, key: string): void {
  db.prepare('DELETE FROM settings WHERE key = ?').run(key);
}
