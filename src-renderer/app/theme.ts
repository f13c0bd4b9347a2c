/** Theme choice (system / dark / light), kept in localStorage and applied as `data-theme` on <html>. */
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

export function applyTheme(choice: ThemeChoice = read()): void {
  const el = document.documentElement;
  if (choice === 'system') el.removeAttribute('data-theme');
  else el.setAttribute('data-theme', choice);
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
