/** The toasts slice: outcomes of operator actions and live alerts, at most three at a time. */
import type { SliceContext, ToastTone } from '../slice';

export interface Toast {
  id: number;
  tone: ToastTone;
  title: string;
  body?: string;
  code?: string;
}

export interface ToastsState {
  toasts: Toast[];
}

export const initialToastsState = (): ToastsState => ({ toasts: [] });

export interface ToastsActions {
  toast(tone: ToastTone, title: string, body?: string, code?: string): void;
  dismissToast(id: number): void;
}

/** `toastMs`: how long a toast stays (errors 10 s, others 5 s by default). */
export function createToastsSlice(ctx: SliceContext<ToastsState>, toastMs?: number): { actions: ToastsActions; dispose(): void } {
  let seq = 0;
  const actions: ToastsActions = {
    toast(tone, title, body, code) {
      const id = ++seq;
      const t: Toast = { id, tone, title, ...(body ? { body } : {}), ...(code ? { code } : {}) };
      ctx.set({ toasts: [...ctx.get().toasts.slice(-2), t] });
      ctx.timers.setTimeout(() => actions.dismissToast(id), toastMs ?? (tone === 'error' ? 10_000 : 5000));
    },
    dismissToast(id) {
      ctx.set({ toasts: ctx.get().toasts.filter((t) => t.id !== id) });
    },
  };
  return { actions, dispose() {} };
}
