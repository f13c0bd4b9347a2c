/** Hash navigation shared by the app shell and the views. */
import { useSyncExternalStore } from 'react';
import { formatHash, parseHash, type Route, type ViewId } from './routes';

function subscribe(cb: () => void): () => void {
  window.addEventListener('hashchange', cb);
  return () => window.removeEventListener('hashchange', cb);
}

export function useHash(): string {
  return useSyncExternalStore(subscribe, () => window.location.hash, () => '');
}

export function useRoute(): Route {
  return parseHash(useHash());
}

export function navigate(view: ViewId, param?: string | null, query?: Record<string, string>): void {
  const h = formatHash({ view, param: param ?? null, query: query ?? {} });
  if (window.location.hash !== h) window.location.hash = h;
}

/** Replaces the current entry (no history step), e.g. when a view picks its default role. */
export function replaceRoute(view: ViewId, param?: string | null, query?: Record<string, string>): void {
  const h = formatHash({ view, param: param ?? null, query: query ?? {} });
  if (window.location.hash !== h) {
    history.replaceState(null, '', h);
    window.dispatchEvent(new HashChangeEvent('hashchange'));
  }
}
