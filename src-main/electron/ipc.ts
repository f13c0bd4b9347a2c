/**
 * IPC handlers for the console: the Electron end of "one console API, two transports".
 *
 * 1. Only the fixed channels in `CONSOLE_IPC` are handled, with `ipcMain.handle` (request/reply).
 * 2. Every message's sender is checked first (sender.ts): the main window's webContents, its
 *    top frame, our origin. Anything else is refused with `forbidden` and logged.
 * 3. Calls are dispatched to the SAME method table as the headless HTTP route, which validates the
 *    method name and arguments (the trust boundary); the actor is `operator:desktop`.
 * 4. Export: the filter is validated before the save dialog opens; the file is streamed with
 *    progress events to the requesting webContents only.
 */
import path from 'node:path';
import { app, dialog, ipcMain, type BrowserWindow, type IpcMainInvokeEvent } from 'electron';
import { CONSOLE_IPC, type ConsoleReply } from '../common/console-api';
import { isGafferError, toErrorBody } from '../common/errors';
import type { Core } from '../core/create-core';
import { startConsoleExport } from '../server/console/export';
import type { ConsoleMethods } from '../server/console/methods';
import { writeExportFile } from './export-file';
import { trustedSender } from './sender';

export const DESKTOP_ACTOR = 'operator:desktop';

export interface IpcDeps {
  core: Core;
  methods: ConsoleMethods;
  window(): BrowserWindow | null;
  origins: readonly string[];
}

const FORBIDDEN: ConsoleReply<never> = { ok: false, error: { code: 'forbidden', status: 403, message: 'IPC from an untrusted frame' } };

export function registerConsoleIpc(d: IpcDeps): () => void {
  const trusted = (event: IpcMainInvokeEvent): boolean => {
    const win = d.window();
    const frame = event.senderFrame;
    const ok = trustedSender(
      {
        webContentsId: event.sender.id,
        frameUrl: frame?.url ?? null,
        isMainFrame: frame !== null && frame === event.sender.mainFrame,
      },
      { windowWebContentsId: win && !win.isDestroyed() ? win.webContents.id : null, origins: d.origins },
    );
    if (!ok) d.core.logger.warn('refused IPC from an untrusted sender', { url: String(frame?.url ?? '').slice(0, 200) });
    return ok;
  };

  ipcMain.handle(CONSOLE_IPC.call, async (event, msg: unknown) => {
    if (!trusted(event)) return FORBIDDEN;
    const m = (typeof msg === 'object' && msg !== null ? msg : {}) as { method?: unknown; args?: unknown };
    return d.methods.dispatch(m.method, m.args);
  });

  ipcMain.handle(CONSOLE_IPC.exportAudit, async (event, msg: unknown): Promise<ConsoleReply<{ file: string; rows: number } | null>> => {
    if (!trusted(event)) return FORBIDDEN;
    const m = (typeof msg === 'object' && msg !== null ? msg : {}) as { id?: unknown; args?: unknown };
    const id = typeof m.id === 'string' && m.id.length <= 100 ? m.id : null;
    if (id === null) return { ok: false, error: { code: 'bad_request', status: 400, message: 'export id missing' } };
    try {
      const exp = startConsoleExport(d.core, m.args); // validates before any dialog
      const win = d.window();
      const options = {
        title: 'Export audit log',
        defaultPath: path.join(app.getPath('downloads'), exp.filename),
        filters: [exp.format === 'csv' ? { name: 'CSV', extensions: ['csv'] } : { name: 'JSON Lines', extensions: ['jsonl'] }],
        properties: ['createDirectory', 'showOverwriteConfirmation'] as Array<'createDirectory' | 'showOverwriteConfirmation'>,
      };
      const choice = win ? await dialog.showSaveDialog(win, options) : await dialog.showSaveDialog(options);
      if (choice.canceled || !choice.filePath) {
        await exp.chunks.return(undefined);
        return { ok: true, value: null };
      }
      const sender = event.sender;
      const result = await writeExportFile(exp, choice.filePath, {
        onProgress: (progress) => {
          if (!sender.isDestroyed()) sender.send(CONSOLE_IPC.exportProgress, { id, progress });
        },
        cancelled: () => sender.isDestroyed(),
      });
      return { ok: true, value: result };
    } catch (e) {
      if (isGafferError(e)) return { ok: false, error: toErrorBody(e) };
      d.core.logger.error('audit export failed', { error: e instanceof Error ? e.stack : String(e) });
      return { ok: false, error: { code: 'internal', status: 500, message: `export failed: ${e instanceof Error ? e.message : String(e)}` } };
    }
  });

  return () => {
    ipcMain.removeHandler(CONSOLE_IPC.call);
    ipcMain.removeHandler(CONSOLE_IPC.exportAudit);
  };
}
