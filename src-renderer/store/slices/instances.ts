/** The instances slice: connected agents and the agent tokens (created once, revoked with a reason). */
import type { InstanceView, TokenView } from '../../../src-main/common/console-api';
import { guarded } from '../../lib/errors';
import { emptyResource, type Resource } from '../resource';
import { keyCell, resourceLoader, loaderTopic, type Slice, type SliceContext } from '../slice';

export interface InstancesState {
  instances: Resource<InstanceView[]>;
  tokens: Resource<TokenView[]>;
}

export const initialInstancesState = (): InstancesState => ({ instances: emptyResource(), tokens: emptyResource() });

export interface InstancesActions {
  /** The secret is in the answer only: it is never stored. */
  createToken(name: string, role: string | null): Promise<{ id: string; token: string }>;
  revokeToken(id: string, reason: string): Promise<void>;
}

export function createInstancesSlice(ctx: SliceContext<InstancesState>): Slice<InstancesActions> {
  const instances = resourceLoader(ctx, keyCell(ctx, 'instances'), () => ctx.call('instances.list', {}));
  const tokens = resourceLoader(ctx, keyCell(ctx, 'tokens'), () => ctx.call('tokens.list', {}), 0);
  const actions: InstancesActions = {
    createToken(name, role) {
      return guarded(ctx.toast, 'create the token', async () => {
        const r = await ctx.call('tokens.create', { name, role });
        void tokens.refresh();
        return r;
      });
    },
    revokeToken(id, reason) {
      return guarded(ctx.toast, 'revoke the token', async () => {
        const t = await ctx.call('tokens.revoke', { id, reason });
        ctx.toast('success', `Revoked token “${t.name}”`, 'Agents using it are refused from now on.');
        void tokens.refresh();
      });
    },
  };
  return {
    actions,
    topics: { instances: loaderTopic(instances), tokens: loaderTopic(tokens) },
    dispose() {
      instances.dispose();
      tokens.dispose();
    },
  };
}
