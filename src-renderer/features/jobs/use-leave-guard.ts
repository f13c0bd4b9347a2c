/**
 * Leaving a view with unsaved work asks first. While `dirty`:
 *
 * 1. In-app navigation (`navigate()`: buttons, shortcuts, the desktop Go menu) is held before the
 *    hash changes (`holdNavigation`).
 * 2. Clicks on `#/…` links (the navigation rail) are stopped in the capture phase.
 * 3. Back/forward (and any other hash change) cannot be stopped, only undone: `popstate` arrives
 *    before `hashchange` — before the app's router hears of it and React re-renders another view —
 *    and puts this view's hash back (a new entry; `hashchange` then finds the hash unchanged).
 * 4. In a browser tab, closing or reloading gets the browser's own "leave site?" prompt. (The
 *    desktop shell does not get one: an Electron window would silently refuse to close.)
 *
 * `pending` is where the operator wanted to go; `leave()` goes there, `stay()` forgets it, and
 * `release()` lets the next navigation through unasked (after a save).
 */
import { useCallback, useEffect, useRef, useState } from 'react';
import { holdNavigation } from '../../lib/navigation';

export interface LeaveGuard {
  pending: string | null;
  stay: () => void;
  leave: () => void;
  release: () => void;
}

export function useLeaveGuard(dirty: boolean, shell: 'electron' | 'browser'): LeaveGuard {
  const [pending, setPending] = useState<string | null>(null);
  const released = useRef(false);
  const own = useRef(window.location.hash);
  const active = dirty && !released.current;

  useEffect(() => {
    if (!active) return;
    const ask = (hash: string): boolean => {
      if (released.current || hash === own.current) return true;
      setPending(hash);
      return false;
    };
    const releaseHold = holdNavigation(ask);
    const onClick = (e: MouseEvent) => {
      const a = e.target instanceof Element ? e.target.closest('a[href^="#"]') : null;
      const href = a?.getAttribute('href');
      if (!href || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
      if (!ask(href)) e.preventDefault();
    };
    const onMoved = () => {
      const to = window.location.hash;
      if (to === own.current || released.current) return;
      history.pushState(null, '', own.current);
      setPending(to);
    };
    const onUnload = (e: BeforeUnloadEvent) => {
      e.preventDefault();
      e.returnValue = '';
    };
    document.addEventListener('click', onClick, true);
    window.addEventListener('popstate', onMoved);
    window.addEventListener('hashchange', onMoved);
    if (shell === 'browser') window.addEventListener('beforeunload', onUnload);
    return () => {
      releaseHold();
      document.removeEventListener('click', onClick, true);
      window.removeEventListener('popstate', onMoved);
      window.removeEventListener('hashchange', onMoved);
      window.removeEventListener('beforeunload', onUnload);
    };
  }, [active, shell]);

  const stay = useCallback(() => setPending(null), []);
  const release = useCallback(() => {
    released.current = true;
  }, []);
  const leave = useCallback(() => {
    released.current = true;
    const to = pending;
    setPending(null);
    if (to !== null) window.location.hash = to;
  }, [pending]);
  return { pending, stay, leave, release };
}
