/** The dashboard slice: the counts and charts of the Dashboard, also read by the shell's header and rail. */
import type { BudgetsInput } from '../../../src-main/common/attention';
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
  };
  return { actions, topics: { dashboard: loaderTopic(loader) }, dispose: () => loader.dispose() };
}
