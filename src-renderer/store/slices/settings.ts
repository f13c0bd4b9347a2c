/** The settings slice: timings and where Gaffer runs, and the kill switch. */
import type { ConsoleSettings } from '../../../src-main/common/console-api';
import { guarded } from '../../lib/errors';
import { emptyResource, type Resource } from '../resource';
import { keyCell, resourceLoader, loaderTopic, type Slice, type SliceContext } from '../slice';

export interface SettingsState {
  settings: Resource<ConsoleSettings>;
}

export const initialSettingsState = (): SettingsState => ({ settings: emptyResource() });

export interface SettingsActions {
  setKillSwitch(on: boolean, reason: string): Promise<void>;
  /** "Require a reason for actions" on or off (audited; no reason needed). */
  setRequireReason(on: boolean): Promise<void>;
}

export function createSettingsSlice(ctx: SliceContext<SettingsState>): Slice<SettingsActions> {
  const loader = resourceLoader(ctx, keyCell(ctx, 'settings'), () => ctx.call('settings.get', {}), 0);
  const actions: SettingsActions = {
    setKillSwitch(on, reason) {
      return guarded(ctx.toast, 'change the kill switch', async () => {
        const s = await ctx.call('settings.setKillSwitch', { on, reason });
        ctx.set({ settings: { data: s, loading: false, error: null, loadedAt: ctx.now() } });
        ctx.toast(on ? 'warning' : 'success', on ? 'Kill switch ON: nothing new is triggered' : 'Kill switch off: triggering resumes', reason ? `Reason: ${reason}` : undefined);
        void ctx.refresh('dashboard');
      });
    },
    setRequireReason(on) {
      return guarded(ctx.toast, 'change whether actions need a reason', async () => {
        const s = await ctx.call('settings.setRequireReason', { on });
        ctx.set({ settings: { data: s, loading: false, error: null, loadedAt: ctx.now() } });
      });
    },
  };
  return { actions, topics: { settings: loaderTopic(loader) }, dispose: () => loader.dispose() };
}
