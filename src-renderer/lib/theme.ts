/**
 * Theme choice (system / dark / light), kept in localStorage. The resolved theme is always applied
 * as `data-theme` on <html> ("system" follows the OS setting live), so the stylesheet declares each
 * palette once.
 */
import { useCallback, useSyncExternalStore } from 'react';

export type ThemeChoice = 'system' | 'dark' | 'light';
const KEY = 'gaffer.theme';
const listeners = new Set<() => void>();

function read(): ThemeChoice {
  try {
    const v = localStorage.getItem(KEY);
    return v === 'dark' || v === 'light' ? v : 'system';
  } catch {
    return 'system';
  }
}

const systemLight = typeof matchMedia === 'function' ? matchMedia('(prefers-color-scheme: light)') : null;
systemLight?.addEventListener('change', () => {
  if (read() === 'system') applyTheme('system');
});

export function applyTheme(choice: ThemeChoice = read()): void {
  const resolved = choice === 'system' ? (systemLight?.matches ? 'light' : 'dark') : choice;
  document.documentElement.setAttribute('data-theme', resolved);
}

export function useTheme(): [ThemeChoice, (t: ThemeChoice) => void] {
  const v = useSyncExternalStore(
    (cb) => {
      listeners.add(cb);
      return () => listeners.delete(cb);
    },
    read,
    () => 'system' as ThemeChoice,
  );
  const set = useCallback((t: ThemeChoice) => {
    try {
      localStorage.setItem(KEY, t);
    } catch {
      // storage unavailable: the choice lasts for this page only
      void 0;
    }
    applyTheme(t);
    listeners.forEach((l) => l());
  }, []);
  return [v, set];
}
