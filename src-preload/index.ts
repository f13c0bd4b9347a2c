/**
 * The sandboxed preload: exposes `window.gaffer` (a `GafferBridge`) to the renderer over
 * allow-listed IPC. The renderer's `transport/electron-ipc.ts` turns it into a `ConsoleApi`.
 *
 * 1. `ipcRenderer` itself is never exposed, nor any function that takes a channel name: the
 *    channels are the fixed constants in `CONSOLE_IPC`.
 * 2. Only console methods on the allow-list (`isConsoleMethod`) are forwarded; anything else is
 *    answered `bad_request` here. The main process validates the method, the arguments and the
 *    sender frame again (this file is a convenience, not the trust boundary).
 * 3. Event listeners are attached to IPC only while the renderer has subscribers, and removed
 *    when the last one unsubscribes; one listener's exception cannot starve the others.
 * Runs with `sandbox: true`: only `electron`'s renderer modules are available, no Node.
 */
import { contextBridge, ipcRenderer, type IpcRendererEvent } from 'electron';
import {
  CONSOLE_IPC,
  CONSOLE_VIEWS,
  isConsoleMethod,
  type AuditExportArgs,
  type ConsoleEvent,
  type ConsoleReply,
  type ConsoleView,
  type ExportProgress,
  type GafferBridge,
} from '../src-main/common/console-api';

const refused = (message: string): ConsoleReply<never> => ({ ok: false, error: { code: 'bad_request', status: 400, message } });
const unavailable = (e: unknown): ConsoleReply<never> => ({
  ok: false,
  error: { code: 'unavailable', status: 503, message: `the Gaffer main process did not answer: ${e instanceof Error ? e.message : String(e)}` },
});

// ---- live events (invariant 3) ----

const eventListeners = new Set<(event: ConsoleEvent) => void>();

function onEventBatch(_e: IpcRendererEvent, batch: unknown): void {
  if (!Array.isArray(batch)) return;
  for (const event of batch as ConsoleEvent[]) {
    for (const listener of [...eventListeners]) {
      try {
        listener(event);
      } catch (err) {
        console.error('gaffer: console event listener failed', err);
      }
    }
  }
}

function subscribe(listener: (event: ConsoleEvent) => void): () => void {
  if (typeof listener !== 'function') throw new TypeError('subscribe(listener): listener must be a function');
  if (eventListeners.size === 0) ipcRenderer.on(CONSOLE_IPC.events, onEventBatch);
  eventListeners.add(listener);
  let active = true;
  return () => {
    if (!active) return;
    active = false;
    eventListeners.delete(listener);
    if (eventListeners.size === 0) ipcRenderer.removeListener(CONSOLE_IPC.events, onEventBatch);
  };
}

// ---- calls (invariant 2) ----

async function call(method: unknown, args: unknown): Promise<ConsoleReply<unknown>> {
  if (!isConsoleMethod(method)) return refused(`unknown console method ${JSON.stringify(String(method)).slice(0, 120)}`);
  try {
    return (await ipcRenderer.invoke(CONSOLE_IPC.call, { method, args: args ?? {} })) as ConsoleReply<unknown>;
  } catch (e) {
    return unavailable(e);
  }
}

// ---- export with progress ----

let exportSeq = 0;

async function exportAudit(args: AuditExportArgs, onProgress: (p: ExportProgress) => void): Promise<ConsoleReply<{ file: string; rows: number } | null>> {
  const id = `exp-${Date.now().toString(36)}-${++exportSeq}`;
  const onMessage = (_e: IpcRendererEvent, msg: unknown) => {
    const m = msg as { id?: unknown; progress?: ExportProgress } | null;
    if (!m || m.id !== id || !m.progress) return;
    try {
      onProgress?.(m.progress);
    } catch (err) {
      console.error('gaffer: export progress listener failed', err);
    }
  };
  ipcRenderer.on(CONSOLE_IPC.exportProgress, onMessage);
  try {
    return (await ipcRenderer.invoke(CONSOLE_IPC.exportAudit, { id, args })) as ConsoleReply<{ file: string; rows: number } | null>;
  } catch (e) {
    return unavailable(e);
  } finally {
    ipcRenderer.removeListener(CONSOLE_IPC.exportProgress, onMessage);
  }
}

// ---- navigation requests from the menu ----

function onNavigate(listener: (view: ConsoleView) => void): () => void {
  if (typeof listener !== 'function') throw new TypeError('onNavigate(listener): listener must be a function');
  const handler = (_e: IpcRendererEvent, view: unknown) => {
    if (typeof view === 'string' && (CONSOLE_VIEWS as readonly string[]).includes(view)) listener(view as ConsoleView);
  };
  ipcRenderer.on(CONSOLE_IPC.navigate, handler);
  return () => ipcRenderer.removeListener(CONSOLE_IPC.navigate, handler);
}

const bridge: GafferBridge = {
  shell: 'electron',
  call: (method, args) => call(method, args),
  subscribe,
  exportAudit,
  onNavigate,
};

contextBridge.exposeInMainWorld('gaffer', Object.freeze(bridge));
