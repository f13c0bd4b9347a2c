/** Hash navigation shared by the app shell and the views. */
import { useRef, useSyncExternalStore } from 'react';
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

/**
 * The route as one view sees it. The hash changes before its `hashchange` event arrives, so a
 * view being left can render once more with the NEXT view's route (under a busy event stream it
 * does). Acting on that — "no role in the URL: pick one" — would send the operator straight back.
 * So a view only ever sees its own routes: while another view's route is current, it keeps its last.
 */
export function useViewRoute(view: ViewId): Route {
  const route = useRoute();
  const last = useRef(route);
  if (route.view !== view) return last.current;
  last.current = route;
  return route;
}

/** The guard of a view with unsaved work (at most one view holds navigation at a time). */
let hold: ((hash: string) => boolean) | null = null;

/**
 * Lets a view with unsaved work stop `navigate()` before the hash changes: `guard(hash)` returns
 * true to go, false to stay (the view then asks the operator and goes itself). Returns the release.
 */
export function holdNavigation(guard: (hash: string) => boolean): () => void {
  hold = guard;
  return () => {
    if (hold === guard) hold = null;
  };
}

export function navigate(view: ViewId, param?: string | null, query?: Record<string, string>): void {
  const h = formatHash({ view, param: param ?? null, query: query ?? {} });
  if (window.location.hash !== h && (!hold || hold(h))) window.location.hash = h;
}

/** Replaces the current entry (no history step), e.g. when a view picks its default role. */
export function replaceRoute(view: ViewId, param?: string | null, query?: Record<string, string>): void {
  const h = formatHash({ view, param: param ?? null, query: query ?? {} });
  if (window.location.hash !== h) {
    history.replaceState(null, '', h);
    window.dispatchEvent(new HashChangeEvent('hashchange'));
  }
}
