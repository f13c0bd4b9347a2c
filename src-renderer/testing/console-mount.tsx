/**
 * A view mounted over the real console (console-kit.ts): the store over the kit, started, and a
 * wrapper that provides it. Test code only.
 */
import { act } from '@testing-library/react';
import type { ReactNode } from 'react';
import { createConsoleStore, type ConsoleStore } from '../store/console-store';
import { ConsoleStoreProvider } from '../store/react';
import { ConsoleKit, type ConsoleKitOptions } from './console-kit';

export interface MountedConsole {
  kit: ConsoleKit;
  cs: ConsoleStore;
  wrapper: (p: { children: ReactNode }) => ReactNode;
  /** Lets the shared clock run `ms` (the hub's and the store's batches) and the answers arrive. */
  pass(ms?: number): Promise<void>;
  dispose(): void;
}

export function mountConsole(opts: ConsoleKitOptions = {}): MountedConsole {
  const kit = new ConsoleKit(opts);
  const cs = createConsoleStore(kit, { timers: kit.timers, now: kit.timers.now, liveIntervalMs: 250, refreshIntervalMs: 1000, safetyRefreshMs: 600_000 });
  cs.actions.start();
  return {
    kit,
    cs,
    wrapper: ({ children }) => <ConsoleStoreProvider value={cs}>{children}</ConsoleStoreProvider>,
    pass: (ms = 0) =>
      act(async () => {
        kit.timers.advance(ms);
        for (let i = 0; i < 10; i++) await new Promise<void>((r) => setImmediate(r));
      }),
    dispose() {
      cs.dispose();
      kit.dispose();
    },
  };
}
