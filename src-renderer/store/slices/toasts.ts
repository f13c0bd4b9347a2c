/** The toasts slice: outcomes of operator actions and live alerts, at most three at a time. */
import type { SliceContext, ToastLink, ToastTone } from '../slice';

export interface Toast {
  id: number;
  tone: ToastTone;
  title: string;
  body?: string;
  code?: string;
  /** Where the outcome can be seen (the toast offers to open it). */
  link?: ToastLink;
}

export interface ToastsState {
  toasts: Toast[];
}

export const initialToastsState = (): ToastsState => ({ toasts: [] });

export interface ToastsActions {
  toast(tone: ToastTone, title: string, body?: string, code?: string, link?: ToastLink): void;
  dismissToast(id: number): void;
}

/** `toastMs`: how long a toast stays (errors and toasts with a link 10 s, others 5 s by default). */
export function createToastsSlice(ctx: SliceContext<ToastsState>, toastMs?: number): { actions: ToastsActions; dispose(): void } {
  let seq = 0;
  const actions: ToastsActions = {
    toast(tone, title, body, code, link) {
      const id = ++seq;
      const t: Toast = { id, tone, title, ...(body ? { body } : {}), ...(code ? { code } : {}), ...(link ? { link } : {}) };
      ctx.set({ toasts: [...ctx.get().toasts.slice(-2), t] });
      // A toast that offers a place to open stays long enough to reach its link.
      ctx.timers.setTimeout(() => actions.dismissToast(id), toastMs ?? (tone === 'error' || link ? 10_000 : 5000));
    },
    dismissToast(id) {
      ctx.set({ toasts: ctx.get().toasts.filter((t) => t.id !== id) });
    },
  };
  return { actions, dispose() {} };
}
