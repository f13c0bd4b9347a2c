/**
 * The signals slice: readiness signals (a name set for a business key, e.g. `data-ready` for
 * `2026-12-01`) as the Signals view lists them, and setting and clearing them by hand.
 *
 * 1. The list is the first `SIGNALS_MAX` signals by name and key; `more` says there are others
 *    (the view then asks for one name at a time).
 * 2. Setting or clearing one refreshes the list now, and the jobs (a "why didn't it run?" answer
 *    that waited on the signal changes with it).
 */
import type { Signal } from '../../../src-main/common/model';
import { guarded } from '../../lib/errors';
import { emptyResource, type Resource } from '../resource';
import { loaderTopic, resourceLoader, type Slice, type SliceContext } from '../slice';

export const SIGNALS_MAX = 1000;

export interface SignalsState {
  signals: {
    list: Resource<{ items: Signal[]; more: boolean }>;
    /** Only this signal name (null: every name). */
    name: string | null;
  };
}

export interface SignalsActions {
  selectSignalName(name: string | null): void;
  setSignal(input: { name: string; key: string; reason: string; value?: unknown }): Promise<Signal>;
  clearSignal(input: { name: string; key: string; reason: string }): Promise<Signal>;
}

export const initialSignalsState = (): SignalsState => ({ signals: { list: emptyResource(), name: null } });

export function createSignalsSlice(ctx: SliceContext<SignalsState>): Slice<SignalsActions> {
  const { call } = ctx;
  const state = () => ctx.get().signals;
  const setState = (patch: Partial<SignalsState['signals']>) => ctx.set({ signals: { ...state(), ...patch } });

  const list = resourceLoader(ctx, { get: () => state().list, set: (l) => setState({ list: l }) }, async () => {
    const name = state().name;
    const page = await call('signals.list', { limit: SIGNALS_MAX, ...(name ? { name } : {}) });
    return { items: page.items, more: page.next !== null };
  });

  const changed = () => {
    void list.refresh();
    ctx.invalidate('jobs');
    ctx.invalidate('audit');
  };

  const actions: SignalsActions = {
    selectSignalName(name) {
      if (state().name === name) return;
      setState({ name, list: emptyResource() });
      void list.refresh();
    },

    setSignal(input) {
      return guarded(ctx.toast, `set ${input.name} for ${input.key}`, async () => {
        const r = await call('signals.set', input);
        ctx.toast('success', `${r.created ? 'Set' : 'Set again'}: ${r.signal.name} for ${r.signal.key}`, `Reason: ${input.reason}`);
        changed();
        return r.signal;
      });
    },

    clearSignal(input) {
      return guarded(ctx.toast, `clear ${input.name} for ${input.key}`, async () => {
        const s = await call('signals.clear', input);
        ctx.toast('success', `Cleared: ${s.name} for ${s.key}`, `Reason: ${input.reason}`);
        changed();
        return s;
      });
    },
  };

  return {
    actions,
    topics: { signals: loaderTopic(list) },
    dispose() {
      list.dispose();
    },
  };
}
