/** The expired-locks slice: today's expired-lock cards. */
import type { ExpiredLockCard } from '../../../src-main/common/console-api';
import { emptyResource, type Resource } from '../resource';
import { keyCell, resourceLoader, loaderTopic, type Slice, type SliceContext } from '../slice';

export interface LocksState {
  expiredLocks: Resource<ExpiredLockCard[]>;
}

export const initialLocksState = (): LocksState => ({ expiredLocks: emptyResource() });

export function createLocksSlice(ctx: SliceContext<LocksState>): Slice<Record<never, never>> {
  const loader = resourceLoader(ctx, keyCell(ctx, 'expiredLocks'), () => ctx.call('locks.expiredToday', {}));
  return { actions: {}, topics: { expiredLocks: loaderTopic(loader) }, dispose: () => loader.dispose() };
}
