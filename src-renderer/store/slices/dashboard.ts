/** The dashboard slice: the counts and charts of the Dashboard, also read by the shell's header and rail. */
import type { Dashboard } from '../../../src-main/common/console-api';
import { emptyResource, type Resource } from '../resource';
import { keyCell, resourceLoader, loaderTopic, type Slice, type SliceContext } from '../slice';

export interface DashboardState {
  dashboard: Resource<Dashboard>;
}

export const initialDashboardState = (): DashboardState => ({ dashboard: emptyResource() });

export function createDashboardSlice(ctx: SliceContext<DashboardState>): Slice<Record<never, never>> {
  const loader = resourceLoader(ctx, keyCell(ctx, 'dashboard'), () => ctx.call('dashboard.get', {}));
  return { actions: {}, topics: { dashboard: loaderTopic(loader) }, dispose: () => loader.dispose() };
}
