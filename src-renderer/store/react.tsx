/** Thin React binding over the vanilla console store. */
import { createContext, useContext, useEffect, type ReactNode } from 'react';
import { useStore } from 'zustand';
import { useShallow } from 'zustand/react/shallow';
import type { ConsoleActions, ConsoleStore } from './console-store';
import type { Topic } from './live';
import type { ConsoleState } from './types';

const Ctx = createContext<ConsoleStore | null>(null);

export function ConsoleStoreProvider({ value, children }: { value: ConsoleStore; children: ReactNode }) {
  return <Ctx.Provider value={value}>{children}</Ctx.Provider>;
}

function useCtx(): ConsoleStore {
  const c = useContext(Ctx);
  if (!c) throw new Error('ConsoleStoreProvider is missing');
  return c;
}

/** Reads a slice of state; re-renders only when the selected value changes (Object.is). */
export function useConsole<T>(selector: (s: ConsoleState) => T): T {
  return useStore(useCtx().store, selector);
}

/** Like useConsole, for selectors that build a new object/array each time (shallow compare). */
export function useConsoleShallow<T>(selector: (s: ConsoleState) => T): T {
  return useStore(useCtx().store, useShallow(selector));
}

export function useActions(): ConsoleActions {
  return useCtx().actions;
}

/** Keeps the given topics loaded and live while the component is mounted. */
export function useWatch(...topics: Topic[]): void {
  const { actions } = useCtx();
  const key = topics.join(',');
  useEffect(() => {
    const offs = key.split(',').filter(Boolean).map((t) => actions.watch(t as Topic));
    return () => offs.forEach((off) => off());
  }, [actions, key]);
}
