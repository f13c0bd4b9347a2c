/**
 * The managed-agents slice: the agent processes Gaffer starts and keeps running, and the one the
 * operator looks at (its processes with their recent output).
 *
 * 1. One topic, `managed`, refreshes the list and the selected agent; `managed.changed` events
 *    invalidate it (store/live.ts). Output lines arrive without events: the view refreshes the
 *    topic on a timer while an agent is shown.
 * 2. An answer for an agent that is no longer selected is dropped.
 * 3. Actions toast a failure and rethrow it (the dialog that started them stays open), and show
 *    the agent as the server answered.
 */
import type { ManagedAction, ManagedAgent, ManagedAgentInput, ManagedAgentPatch } from '../../../src-main/common/managed-agents';
import { guarded } from '../../lib/errors';
import { emptyResource, type Resource } from '../resource';
import { keyCell, resourceLoader, type Slice, type SliceContext } from '../slice';

export interface ManagedState {
  managedAgents: Resource<ManagedAgent[]>;
  managedSelected: string | null;
  managedDetail: Resource<ManagedAgent>;
}

export const initialManagedState = (): ManagedState => ({ managedAgents: emptyResource(), managedSelected: null, managedDetail: emptyResource() });

export interface ManagedActions {
  selectManagedAgent(id: string | null): void;
  createManagedAgent(definition: Omit<ManagedAgentInput, 'reason'>, reason: string): Promise<ManagedAgent>;
  updateManagedAgent(id: string, patch: Omit<ManagedAgentPatch, 'reason'>, reason: string): Promise<ManagedAgent>;
  deleteManagedAgent(id: string, reason: string): Promise<void>;
  controlManagedAgent(id: string, action: ManagedAction, reason: string, instance?: number): Promise<ManagedAgent>;
}

export function createManagedSlice(ctx: SliceContext<ManagedState>): Slice<ManagedActions> {
  const list = resourceLoader(ctx, keyCell(ctx, 'managedAgents'), () => ctx.call('managedAgents.list', {}));
  let asked: string | null = null;
  const detailCell = {
    get: () => ctx.get().managedDetail,
    // Invariant 2: only the answer for the agent still selected is kept.
    set: (r: Resource<ManagedAgent>) => {
      if (asked === ctx.get().managedSelected) ctx.set({ managedDetail: r });
    },
  };
  const detail = resourceLoader(ctx, detailCell, () => {
    asked = ctx.get().managedSelected;
    return asked ? ctx.call('managedAgents.get', { id: asked }) : Promise.reject(new Error('no managed agent is selected'));
  });
  const selected = () => ctx.get().managedSelected;

  const shown = (a: ManagedAgent): ManagedAgent => {
    void list.refresh();
    if (selected() === a.id) ctx.set({ managedDetail: { data: a, loading: false, error: null, loadedAt: ctx.now() } });
    return a;
  };

  const actions: ManagedActions = {
    selectManagedAgent(id) {
      if (selected() === id) return;
      ctx.set({ managedSelected: id, managedDetail: emptyResource() });
      if (id) void detail.refresh();
    },
    createManagedAgent: (definition, reason) => guarded(ctx.toast, 'create the managed agent', async () => shown(await ctx.call('managedAgents.create', { definition, reason }))),
    updateManagedAgent: (id, patch, reason) => guarded(ctx.toast, 'save the managed agent', async () => shown(await ctx.call('managedAgents.update', { id, patch, reason }))),
    deleteManagedAgent: (id, reason) =>
      guarded(ctx.toast, 'delete the managed agent', async () => {
        await ctx.call('managedAgents.delete', { id, reason });
        if (selected() === id) actions.selectManagedAgent(null);
        await list.refresh();
      }),
    controlManagedAgent: (id, action, reason, instance) =>
      guarded(ctx.toast, `${action} the managed agent`, async () => shown(await ctx.call('managedAgents.control', { id, action, reason, ...(instance !== undefined ? { instance } : {}) }))),
  };

  return {
    actions,
    topics: {
      managed: {
        refresh: async () => {
          await Promise.all([list.refresh(), selected() ? detail.refresh() : Promise.resolve()]);
        },
        invalidate: () => {
          list.invalidate();
          if (selected()) detail.invalidate();
        },
      },
    },
    dispose() {
      list.dispose();
      detail.dispose();
    },
  };
}
