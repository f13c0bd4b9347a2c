/**
 * The renderer's one way to reach the scheduler: `getConsoleApi()`. In Electron the sandboxed
 * preload has put a bridge on `window.gaffer` (IPC); otherwise this page was served by the
 * headless server and talks to it over HTTP + WebSocket.
 *
 * Call `getConsoleApi()` early at start-up (before a router reads the URL fragment): in the
 * browser it takes the operator token out of `#token=…` and removes it from the address bar.
 */
import type { ConsoleApi, GafferBridge } from '../../src-main/common/console-api';
import { createBrowserConsoleApi } from './browser';
import { createElectronConsoleApi } from './electron-ipc';

declare global {
  interface Window {
    /** Set by the Electron preload (contextBridge); absent in a browser. */
    gaffer?: GafferBridge;
  }
}

let api: ConsoleApi | undefined;

export function getConsoleApi(): ConsoleApi {
  if (!api) {
    const bridge = typeof window !== 'undefined' ? window.gaffer : undefined;
    api = bridge && bridge.shell === 'electron' ? createElectronConsoleApi(bridge) : createBrowserConsoleApi();
  }
  return api;
}

/** Replaces the API (tests, storybook-like harnesses). Pass undefined to reset. */
export function setConsoleApi(next: ConsoleApi | undefined): void {
  api = next;
}

export { ConsoleCallError } from '../../src-main/common/console-api';
export type { ConsoleApi } from '../../src-main/common/console-api';
export { createBrowserConsoleApi, adoptTokenFromFragment, TOKEN_STORAGE_KEY } from './browser';
export { createElectronConsoleApi } from './electron-ipc';
