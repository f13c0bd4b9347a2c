/** The Managed agents view's store, bound to React (one per console; made on first use). */
import { useEffect } from 'react';
import { useStore } from 'zustand';
import { getConsoleApi } from '../../transport';
import { createManagedStore, type ManagedActions, type ManagedState, type ManagedStore } from './managed-slice';

let instance: ManagedStore | undefined;

function managedStore(): ManagedStore {
  return (instance ??= createManagedStore(getConsoleApi()));
}

export function useManaged<T>(selector: (s: ManagedState) => T): T {
  return useStore(managedStore().store, selector);
}

export function useManagedActions(): ManagedActions {
  return managedStore().actions;
}

/** Keeps the data loaded and live while the view is mounted. */
export function useManagedLive(): void {
  useEffect(() => managedStore().actions.start(), []);
}
