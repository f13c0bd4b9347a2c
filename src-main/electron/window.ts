/**
 * The window and everything that makes it safe (Electron's security checklist):
 *
 * 1. The renderer is served from a privileged custom scheme (`app://gaffer/`), not `file://`:
 *    a real origin for CSP `'self'` and for sender checks, and no access to other local files.
 *    The handler resolves paths inside the built renderer only (renderer-files.ts).
 * 2. `contextIsolation`, `sandbox`, no `nodeIntegration`, `webSecurity`, no `<webview>`.
 * 3. Strict CSP as a response header (protocol handler + `onHeadersReceived` for the dev server)
 *    as well as the meta tag in index.html.
 * 4. Navigation away from the app, new windows and permission requests are all refused;
 *    https links may be opened in the operator's browser after a confirmation.
 */
import fs from 'node:fs';
import path from 'node:path';
import { app, BrowserWindow, dialog, nativeImage, protocol, session, shell, type NativeImage } from 'electron';
import {
  cacheControlFor,
  consoleCsp,
  contentTypeFor,
  resolveRendererPath,
  rewriteIndexHtml,
  SECURITY_HEADERS,
} from '../server/console/renderer-files';
import { APP_HOST, APP_INDEX_URL, APP_ORIGIN, APP_SCHEME, externalLinkAllowed, navigationAllowed, originOf } from './sender';

/** Must run before `app` is ready. */
export function registerAppScheme(): void {
  protocol.registerSchemesAsPrivileged([
    { scheme: APP_SCHEME, privileges: { standard: true, secure: true, supportFetchAPI: true, codeCache: true } },
  ]);
}

/** Serves `rendererDir` on `app://gaffer/` (invariant 1). */
export function serveRenderer(rendererDir: string): void {
  const csp = consoleCsp({ header: true });
  const metaCsp = consoleCsp();
  protocol.handle(APP_SCHEME, async (request) => {
    const headers: Record<string, string> = { ...SECURITY_HEADERS, 'content-security-policy': csp };
    let url: URL;
    try {
      url = new URL(request.url);
    } catch {
      return new Response('bad request', { status: 400, headers });
    }
    if (url.host !== APP_HOST || request.method !== 'GET') return new Response('not found', { status: 404, headers });
    const r = resolveRendererPath(rendererDir, url.pathname);
    if (r.kind === 'forbidden') return new Response('forbidden', { status: 403, headers });
    if (r.kind === 'missing') return new Response('not found', { status: 404, headers });
    try {
      if (r.kind === 'index') {
        const html = rewriteIndexHtml(await fs.promises.readFile(r.file, 'utf8'), metaCsp);
        return new Response(html, { status: 200, headers: { ...headers, 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' } });
      }
      const body = await fs.promises.readFile(r.file);
      return new Response(body, {
        status: 200,
        headers: { ...headers, 'content-type': contentTypeFor(r.file), 'cache-control': cacheControlFor(rendererDir, r.file) },
      });
    } catch {
      return new Response('The console has not been built: run `npx electron-vite build`.', { status: 503, headers });
    }
  });
}

export interface Hardening {
  /** Origins the window may show: the app scheme, plus the dev server in development. */
  origins: string[];
  devServerUrl: string | null;
}

/** Invariants 3 and 4 for the default session and every webContents. */
export function hardenSessions(h: Hardening): void {
  const ses = session.defaultSession;
  ses.setPermissionRequestHandler((_wc, _permission, callback) => callback(false));
  ses.setPermissionCheckHandler(() => false);
  ses.setDevicePermissionHandler(() => false);
  const devOrigin = originOf(h.devServerUrl);
  const prodCsp = consoleCsp({ header: true });
  const devCsp = devOrigin ? consoleCsp({ header: true, dev: { origin: devOrigin } }) : prodCsp;
  ses.webRequest.onHeadersReceived((details, callback) => {
    const origin = originOf(details.url);
    if (origin !== APP_ORIGIN && origin !== devOrigin) return callback({});
    const responseHeaders = { ...(details.responseHeaders ?? {}) };
    for (const k of Object.keys(responseHeaders)) if (k.toLowerCase() === 'content-security-policy') delete responseHeaders[k];
    responseHeaders['Content-Security-Policy'] = [origin === devOrigin ? devCsp : prodCsp];
    callback({ responseHeaders });
  });

  app.on('web-contents-created', (_e, contents) => {
    contents.on('will-navigate', (event, url) => {
      if (!navigationAllowed(url, h.origins)) event.preventDefault();
    });
    contents.on('will-redirect', (event, url) => {
      if (!navigationAllowed(url, h.origins)) event.preventDefault();
    });
    contents.on('will-attach-webview', (event) => event.preventDefault());
    contents.setWindowOpenHandler(({ url }) => {
      if (externalLinkAllowed(url)) void confirmOpenExternal(url);
      return { action: 'deny' };
    });
  });
}

async function confirmOpenExternal(url: string): Promise<void> {
  const parent = BrowserWindow.getFocusedWindow();
  const options = {
    type: 'question' as const,
    buttons: ['Open in browser', 'Cancel'],
    defaultId: 1,
    cancelId: 1,
    message: 'Open this link in your browser?',
    detail: url,
  };
  const { response } = parent ? await dialog.showMessageBox(parent, options) : await dialog.showMessageBox(options);
  if (response === 0) await shell.openExternal(url);
}

export interface WindowOptions {
  preload: string;
  devServerUrl: string | null;
  devTools: boolean;
  icon?: NativeImage;
}

export function createMainWindow(o: WindowOptions): BrowserWindow {
  const win = new BrowserWindow({
    width: 1360,
    height: 860,
    minWidth: 960,
    minHeight: 600,
    show: false,
    title: 'Gaffer',
    backgroundColor: '#101318',
    ...(o.icon && process.platform === 'linux' ? { icon: o.icon } : {}),
    webPreferences: {
      preload: o.preload,
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      navigateOnDragDrop: false,
      spellcheck: false,
      safeDialogs: true,
      devTools: o.devTools,
    },
  });
  win.once('ready-to-show', () => win.show());
  void win.loadURL(o.devServerUrl ?? APP_INDEX_URL);
  return win;
}

/** A small round status icon drawn in code (no asset file to ship or lose). */
export function drawIcon(size = 32, rgb: [number, number, number] = [0x3b, 0x82, 0xf6]): NativeImage {
  const buf = Buffer.alloc(size * size * 4);
  const c = (size - 1) / 2;
  const r = size / 2 - 1;
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      const d = Math.hypot(x - c, y - c);
      const alpha = Math.max(0, Math.min(1, r - d + 0.5));
      const ring = d > r - size / 8 ? 1 : 0.75;
      const i = (y * size + x) * 4;
      // BGRA, premultiplied.
      buf[i] = Math.round(rgb[2] * ring * alpha);
      buf[i + 1] = Math.round(rgb[1] * ring * alpha);
      buf[i + 2] = Math.round(rgb[0] * ring * alpha);
      buf[i + 3] = Math.round(255 * alpha);
    }
  }
  return nativeImage.createFromBitmap(buf, { width: size, height: size });
}

/** `out/renderer` next to `out/main` (inside app.asar when packaged: Electron's fs reads it). */
export function rendererDirFrom(mainDir: string): string {
  return path.join(mainDir, '..', 'renderer');
}
