/**
 * The job editor's "Spend" section: the cap of one run as typed (the form's `budgetUsd` and
 * `budgetTokens`, checked and saved with the rest of the spec), and for a saved job the forecast
 * (`budgets.jobForecast`) next to the daily cap of its role, in one line.
 *
 * The forecast is of the job as saved (its schedule and its recent runs), so it is loaded for the
 * saved version and again after a save; an unsaved job has none.
 */
import { useEffect, useState } from 'react';
import type { BudgetsView } from '../../../src-main/common/attention';
import type { JobForecast } from '../../../src-main/common/prices';
import { toUiError } from '../../lib/errors';
import { forecastLine } from '../../lib/spend-words';
import type { DashboardActions } from '../../store/slices/dashboard';

export interface JobSpend {
  /** The forecast in words; null while loading or for a job not saved yet. */
  line: string | null;
  forecast: JobForecast | null;
  error: string | null;
}

export function useJobSpend(jobId: string | null, version: number | null, a: Pick<DashboardActions, 'jobForecast' | 'budgetsNow'>): JobSpend {
  const [state, setState] = useState<{ forecast: JobForecast; budgets: BudgetsView | null } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const { jobForecast, budgetsNow } = a;
  useEffect(() => {
    if (!jobId) return;
    let live = true;
    setError(null);
    Promise.all([jobForecast(jobId), budgetsNow().catch(() => null)]).then(
      ([forecast, budgets]) => live && setState({ forecast, budgets }),
      (e: unknown) => live && setError(`No forecast: ${toUiError(e).message}`),
    );
    return () => {
      live = false;
    };
  }, [jobId, version, jobForecast, budgetsNow]);
  if (!jobId || !state) return { line: null, forecast: null, error };
  return { line: forecastLine(state.forecast, state.budgets?.settings ?? null), forecast: state.forecast, error };
}
