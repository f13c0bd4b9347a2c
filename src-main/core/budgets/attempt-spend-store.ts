/**
 * A read model for the console's task and run panes: the latest attempt of a subject against the
 * cap that applies to it, the same cap and the same sum `budgets.ts` stops the attempt by
 * (invariants 6 and 7 there: a run's own cap before its job's; tokens are input + output). Read
 * only; prepared once.
 */
import type { AttemptSpend } from '../../common/prices';
import type { Db } from '../db/open';
import type { SpendSource } from './spend';

export interface AttemptSpendReads {
  /** Null when the task or run does not exist. */
  of(subject: string): AttemptSpend | null;
}

type Cap = NonNullable<AttemptSpend['cap']>;

export function prepareAttemptSpendReads(db: Db, spend: Pick<SpendSource, 'ofAttempt'>): AttemptSpendReads {
  const task = db.prepare<[number], { attempt: number; max_cost_usd: number | null; max_tokens: number | null }>(
    'SELECT t.attempt, b.max_cost_usd, b.max_tokens FROM tasks t LEFT JOIN task_budgets b ON b.task_id = t.id WHERE t.id = ?',
  );
  const run = db.prepare<[string], { attempt: number; own: string | null; job: string | null }>(
    `SELECT r.attempt, r.budget AS own, json_extract(j.spec, '$.budget') AS job FROM runs r LEFT JOIN jobs j ON j.id = r.job_id WHERE r.id = ?`,
  );
  const capOf = (json: string | null): Cap | null => {
    const c = json ? (JSON.parse(json) as Cap) : null;
    return c && (c.maxCostUsdPerRun !== undefined || c.maxTokensPerRun !== undefined) ? c : null;
  };
  return {
    of(subject) {
      if (subject.startsWith('task:')) {
        const r = task.get(Number(subject.slice(5)));
        if (!r) return null;
        const cap: Cap = { ...(r.max_cost_usd !== null ? { maxCostUsdPerRun: r.max_cost_usd } : {}), ...(r.max_tokens !== null ? { maxTokensPerRun: r.max_tokens } : {}) };
        const has = Object.keys(cap).length > 0;
        return { subject, attempt: r.attempt, cap: has ? cap : null, capFrom: has ? 'task' : null, spent: spend.ofAttempt(subject, r.attempt) };
      }
      const r = run.get(subject.slice(4));
      if (!r) return null;
      const own = capOf(r.own);
      const job = capOf(r.job);
      return { subject, attempt: r.attempt, cap: own ?? job, capFrom: own ? 'run' : job ? 'job' : null, spent: spend.ofAttempt(subject, r.attempt) };
    },
  };
}
