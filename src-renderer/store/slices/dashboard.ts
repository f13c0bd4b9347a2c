/** The dashboard slice: the counts and charts of the Dashboard, also read by the shell's header and rail. */
import type { BudgetsInput, BudgetsView } from '../../../src-main/common/attention';
import type { AttemptSpend, JobForecast, ModelPrice, PricesView, UsageForecastRow } from '../../../src-main/common/prices';
import type { Dashboard } from '../../../src-main/common/console-api';
import { guarded } from '../../lib/errors';
import { emptyResource, type Resource } from '../resource';
import { keyCell, resourceLoader, loaderTopic, type Slice, type SliceContext } from '../slice';

export interface DashboardState {
  dashboard: Resource<Dashboard>;
}

export const initialDashboardState = (): DashboardState => ({ dashboard: emptyResource() });

export interface DashboardActions {
  /** Daily spend caps (the dashboard shows today's spend against them). */
  saveBudgets(input: BudgetsInput, reason: string): Promise<void>;
  /** Today's caps and the spend windows now (for a view that shows one cap next to something else). */
  budgetsNow(): Promise<BudgetsView>;
  /** What a job will spend in the next 24 hours and 30 days. */
  jobForecast(jobId: string): Promise<JobForecast>;
  /** Every enabled job's forecast, per role. */
  usageForecast(): Promise<UsageForecastRow[]>;
  /** The latest attempt of a task or run (`task:<id>`, `run:<id>`) against its spend cap. */
  attemptSpend(subject: string): Promise<AttemptSpend>;
  /** The price table tokens are priced with. */
  prices(): Promise<PricesView>;
  /** Replaces the price table (or restores the shipped one); a refusal is thrown for the form to show. */
  savePrices(models: Record<string, ModelPrice> | 'reset', reason?: string): Promise<PricesView>;
}

export function createDashboardSlice(ctx: SliceContext<DashboardState>): Slice<DashboardActions> {
  const loader = resourceLoader(ctx, keyCell(ctx, 'dashboard'), () => ctx.call('dashboard.get', {}));
  const actions: DashboardActions = {
    saveBudgets(input, reason) {
      return guarded(ctx.toast, 'save the spend caps', async () => {
        await ctx.call('budgets.put', { ...input, reason });
        ctx.toast('success', 'Spend caps saved', `Reason: ${reason}`);
        await loader.refresh();
      });
    },
    budgetsNow: () => ctx.call('budgets.get', {}),
    jobForecast: (jobId) => ctx.call('budgets.jobForecast', { jobId }),
    usageForecast: async () => (await ctx.call('budgets.forecast', { by: 'role' })).items,
    attemptSpend: (subject) => ctx.call('budgets.attemptSpend', { subject }),
    prices: () => ctx.call('budgets.prices', {}),
    async savePrices(models, reason) {
      const v = await ctx.call('budgets.putPrices', { ...(models === 'reset' ? { reset: true as const } : { models }), ...(reason ? { reason } : {}) });
      ctx.toast('success', models === 'reset' ? 'Prices back to the shipped table' : 'Prices saved', reason ? `Reason: ${reason}` : undefined);
      return v;
    },
  };
  return { actions, topics: { dashboard: loaderTopic(loader) }, dispose: () => loader.dispose() };
}
