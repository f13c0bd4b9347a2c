/**
 * The Electron main process, run in Node against a fake `electron` module (the real binary cannot
 * be downloaded here). It boots the real core, server, method table and event hub, and checks the
 * glue: secure window preferences, the app:// protocol, CSP headers, permission and navigation
 * refusals, IPC sender validation, live events to the window, the menu, native-dialog export and
 * graceful shutdown. The real-binary check is e2e/electron.smoke.ts.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CONSOLE_IPC, type ConsoleEvent, type ConsoleReply } from '../common/console-api';
import { verifyExport } from '../core/audit/audit-export';
import { tempDir } from '../core/tests/test-core';

type Fn = (...args: any[]) => any;

const fake = vi.hoisted(() => {
  const emitter = () => {
    const handlers = new Map<string, Fn[]>();
    return {
      on(evt: string, fn: Fn) {
        handlers.set(evt, [...(handlers.get(evt) ?? []), fn]);
        return this;
      },
      once(evt: string, fn: Fn) {
        return this.on(evt, fn);
      },
      emit(evt: string, ...args: unknown[]) {
        for (const fn of handlers.get(evt) ?? []) fn(...args);
      },
      handlers,
    };
  };
  const state = {
    privileged: [] as unknown[],
    protocolHandlers: new Map<string, Fn>(),
    ipc: new Map<string, Fn>(),
    windows: [] as any[],
    sent: [] as Array<{ channel: string; args: unknown[] }>,
    menu: null as null | { template: any[] },
    permissionRequest: null as Fn | null,
    permissionCheck: null as Fn | null,
    headersReceived: null as Fn | null,
    errors: [] as string[],
    exitCode: null as number | null,
    saveTo: '' as string,
    notifications: [] as unknown[],
    quits: 0,
    app: emitter(),
    power: emitter(),
  };
  let nextId = 1;
  class BrowserWindow {
    opts: any;
    ev = emitter();
    webContents: any;
    loaded = '';
    constructor(opts: unknown) {
      this.opts = opts;
      const id = nextId++;
      this.webContents = {
        id,
        mainFrame: { url: '' },
        isDestroyed: () => false,
        send: (channel: string, ...args: unknown[]) => state.sent.push({ channel, args }),
      };
      state.windows.push(this);
    }
    once(e: string, fn: Fn) {
      this.ev.on(e, fn);
    }
    on(e: string, fn: Fn) {
      this.ev.on(e, fn);
    }
    async loadURL(url: string) {
      this.loaded = url;
      this.webContents.mainFrame.url = url;
    }
    isDestroyed() {
      return false;
    }
    isMinimized() {
      return false;
    }
    restore() {}
    show() {}
    focus() {}
    static getFocusedWindow() {
      return null;
    }
  }
  class Tray {
    tooltip = '';
    constructor(_icon: unknown) {}
    setToolTip(t: string) {
      this.tooltip = t;
    }
    setTitle() {}
    setContextMenu() {}
    on() {}
    destroy() {}
  }
  class Notification {
    constructor(readonly o: unknown) {}
    static isSupported() {
      return true;
    }
    on() {}
    show() {
      state.notifications.push(this.o);
    }
  }
  const module = {
    app: {
      enableSandbox() {},
      requestSingleInstanceLock: () => true,
      whenReady: () => Promise.resolve(),
      isPackaged: false,
      getAppPath: () => process.cwd(),
      getVersion: () => '0.0.0-fake',
      getPath: () => process.cwd(),
      on: (e: string, fn: Fn) => state.app.on(e, fn),
      quit() {
        const ev = { prevented: false, preventDefault() {
          this.prevented = true;
        } };
        state.app.emit('before-quit', ev);
        if (!ev.prevented) state.quits++;
      },
      exit(code: number) {
        state.exitCode = code;
      },
    },
    protocol: {
      registerSchemesAsPrivileged: (list: unknown[]) => state.privileged.push(...list),
      handle: (scheme: string, fn: Fn) => state.protocolHandlers.set(scheme, fn),
    },
    session: {
      defaultSession: {
        setPermissionRequestHandler: (fn: Fn) => (state.permissionRequest = fn),
        setPermissionCheckHandler: (fn: Fn) => (state.permissionCheck = fn),
        setDevicePermissionHandler: () => {},
        webRequest: { onHeadersReceived: (fn: Fn) => (state.headersReceived = fn) },
      },
    },
    BrowserWindow,
    Tray,
    Notification,
    nativeImage: { createFromBitmap: () => ({}) },
    Menu: { buildFromTemplate: (template: unknown[]) => ({ template }), setApplicationMenu: (m: { template: unknown[] }) => (state.menu = m) },
    dialog: {
      showErrorBox: (t: string, m: string) => state.errors.push(`${t}: ${m}`),
      showSaveDialog: async () => ({ canceled: false, filePath: state.saveTo }),
      showMessageBox: async () => ({ response: 1 }),
    },
    ipcMain: {
      handle: (ch: string, fn: Fn) => state.ipc.set(ch, fn),
      removeHandler: (ch: string) => state.ipc.delete(ch),
    },
    powerMonitor: { on: (e: string, fn: Fn) => state.power.on(e, fn) },
    // A stand-in for the OS keychain: what it wraps is not the key in clear.
    safeStorage: {
      isEncryptionAvailable: () => true,
      getSelectedStorageBackend: () => 'gnome_libsecret',
      encryptString: (s: string) => Buffer.from(`keychain:${Buffer.from(s).toString('hex')}`),
      decryptString: (b: Buffer) => Buffer.from(b.toString().replace(/^keychain:/, ''), 'hex').toString(),
    },
    shell: { openPath: async () => '', openExternal: async () => {} },
  };
  return { state, module };
});

vi.mock('electron', () => ({ ...fake.module, default: fake.module }));

const S = fake.state;
const TOKEN = 'gfo_fake_electron_token';
let dataDir: string;
let rendererDir: string;
let win: any;
let apiPort = 0;
const logs: string[] = [];

function trustedEvent() {
  return { sender: win.webContents, senderFrame: win.webContents.mainFrame };
}

async function ipc<T>(channel: string, msg: unknown, event: unknown = trustedEvent()): Promise<ConsoleReply<T>> {
  return S.ipc.get(channel)!(event, msg);
}

beforeAll(async () => {
  dataDir = tempDir('gaffer-fake-electron-');
  rendererDir = tempDir('gaffer-fake-renderer-');
  fs.mkdirSync(path.join(rendererDir, 'assets'));
  fs.writeFileSync(path.join(rendererDir, 'index.html'), '<!doctype html><html><head><meta http-equiv="Content-Security-Policy" content="default-src \'self\'"><title>Gaffer</title></head><body><div id="root"></div></body></html>');
  fs.writeFileSync(path.join(rendererDir, 'assets', 'a.js'), 'export {}');
  process.env.GAFFER_NATIVE_BINDING = path.resolve('node_modules/better-sqlite3/build/Release/better_sqlite3.node');
  process.env.GAFFER_RENDERER_DIR = rendererDir;
  process.env.GAFFER_OPERATOR_TOKEN = TOKEN;
  const argv = process.argv;
  process.argv = ['electron', '.', '--remote-debugging-port=0', '--port', '0', '--data-dir', dataDir, '--no-sandbox'];
  const log = vi.spyOn(console, 'log').mockImplementation((m: unknown) => void logs.push(String(m)));
  try {
    await import('./main');
    for (let i = 0; i < 200 && S.windows.length === 0 && S.exitCode === null; i++) await new Promise((r) => setTimeout(r, 10));
  } finally {
    process.argv = argv;
  }
  log.mockRestore();
  expect(S.errors).toEqual([]);
  expect(S.exitCode).toBeNull();
  win = S.windows[0];
  apiPort = Number(/agents connect to ws:\/\/127\.0\.0\.1:(\d+)/.exec(logs.join('\n'))?.[1]);
});

afterAll(() => {
  if (S.quits === 0) fake.module.app.quit();
});

describe('Electron main (fake electron module)', () => {
  it('boots the core and the local server on 127.0.0.1', async () => {
    expect(apiPort).toBeGreaterThan(0);
    const res = await fetch(`http://127.0.0.1:${apiPort}/api/v1/status`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
    // The desktop console uses IPC: the HTTP console is not served by the Electron shell.
    expect((await fetch(`http://127.0.0.1:${apiPort}/`)).status).toBe(404);
  });

  it('one window with secure web preferences, loading app://gaffer/', () => {
    expect(S.windows).toHaveLength(1);
    expect(win.opts.webPreferences).toMatchObject({ contextIsolation: true, sandbox: true, nodeIntegration: false, webSecurity: true, webviewTag: false });
    expect(win.opts.webPreferences.preload).toMatch(/preload[\\/]index\.cjs$/);
    expect(win.loaded).toBe('app://gaffer/index.html');
    expect(S.privileged).toEqual([expect.objectContaining({ scheme: 'app', privileges: expect.objectContaining({ standard: true, secure: true }) })]);
  });

  it('the app:// handler serves the renderer with CSP and refuses everything else', async () => {
    const handle = S.protocolHandlers.get('app')!;
    const index: Response = await handle(new Request('app://gaffer/index.html'));
    expect(index.status).toBe(200);
    expect(index.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(index.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    const html = await index.text();
    expect(html).toContain('<base href="/" />');
    expect(html).toContain("form-action 'none'");
    expect((await handle(new Request('app://gaffer/assets/a.js'))).headers.get('content-type')).toContain('javascript');
    expect((await handle(new Request('app://gaffer/jobs/deep/route'))).status).toBe(200);
    expect((await handle(new Request('app://gaffer/assets/nope.js'))).status).toBe(404);
    expect((await handle(new Request('app://elsewhere/index.html'))).status).toBe(404);
    expect((await handle(new Request('app://gaffer/%2e%2e%2f%2e%2e%2fetc%2fpasswd'))).status).not.toBe(500);
  });

  it('permissions are denied; CSP headers are added for our origin only', () => {
    let granted: boolean | undefined;
    S.permissionRequest!({}, 'notifications', (g: boolean) => (granted = g));
    expect(granted).toBe(false);
    expect(S.permissionCheck!()).toBe(false);
    let out: any;
    S.headersReceived!({ url: 'app://gaffer/index.html', responseHeaders: { 'content-security-policy': ['x'] } }, (r: unknown) => (out = r));
    expect(out.responseHeaders['Content-Security-Policy'][0]).toContain("default-src 'self'");
    expect(out.responseHeaders['content-security-policy']).toBeUndefined();
    S.headersReceived!({ url: 'https://example.com/', responseHeaders: {} }, (r: unknown) => (out = r));
    expect(out).toEqual({});
  });

  it('navigation away and new windows are blocked', () => {
    const contents = { ev: new Map<string, Fn>(), on(e: string, fn: Fn) { this.ev.set(e, fn); }, openHandler: null as Fn | null, setWindowOpenHandler(fn: Fn) { this.openHandler = fn; } };
    S.app.emit('web-contents-created', {}, contents);
    const nav = (url: string) => {
      let prevented = false;
      contents.ev.get('will-navigate')!({ preventDefault: () => (prevented = true) }, url);
      return prevented;
    };
    expect(nav('https://evil.example/')).toBe(true);
    expect(nav('file:///etc/passwd')).toBe(true);
    expect(nav('app://gaffer/index.html#/jobs')).toBe(false);
    expect(contents.openHandler!({ url: 'https://example.com/' })).toEqual({ action: 'deny' });
    let webview = false;
    contents.ev.get('will-attach-webview')!({ preventDefault: () => (webview = true) });
    expect(webview).toBe(true);
  });

  it('IPC: the trusted window calls the method table; other senders are refused', async () => {
    const ok = await ipc<{ onlineInstances: number }>(CONSOLE_IPC.call, { method: 'dashboard.get', args: {} });
    expect(ok).toMatchObject({ ok: true, value: { onlineInstances: 0 } });
    const other = { sender: { id: 999, mainFrame: {} }, senderFrame: { url: 'app://gaffer/index.html' } };
    other.sender.mainFrame = other.senderFrame;
    expect(await ipc(CONSOLE_IPC.call, { method: 'dashboard.get', args: {} }, other)).toMatchObject({ ok: false, error: { code: 'forbidden' } });
    const evilFrame = { url: 'https://evil.example/' };
    expect(await ipc(CONSOLE_IPC.call, { method: 'dashboard.get' }, { sender: { ...win.webContents, mainFrame: evilFrame }, senderFrame: evilFrame })).toMatchObject({ ok: false, error: { code: 'forbidden' } });
    const subFrame = { url: 'app://gaffer/index.html' };
    expect(await ipc(CONSOLE_IPC.call, { method: 'dashboard.get' }, { sender: win.webContents, senderFrame: subFrame })).toMatchObject({ ok: false, error: { code: 'forbidden' } });
    expect(await ipc(CONSOLE_IPC.call, { method: 'shell.exec', args: {} })).toMatchObject({ ok: false, error: { code: 'bad_request' } });
    expect(await ipc(CONSOLE_IPC.call, 'garbage')).toMatchObject({ ok: false, error: { code: 'bad_request' } });
  });

  it('operator actions are audited as operator:desktop and live events reach the window', async () => {
    S.sent.length = 0;
    const created = await ipc<{ task: { id: number } }>(CONSOLE_IPC.call, { method: 'tasks.create', args: { title: 'from the desktop', role: 'dev' } });
    expect(created.ok).toBe(true);
    const page = await ipc<{ items: Array<{ actor: string; type: string }> }>(CONSOLE_IPC.call, { method: 'audit.query', args: { type: 'task.create', order: 'desc', limit: 1 } });
    expect(page.ok && page.value.items[0]).toMatchObject({ type: 'task.create', actor: 'operator:desktop' });
    for (let i = 0; i < 100 && !S.sent.some((s) => s.channel === CONSOLE_IPC.events); i++) await new Promise((r) => setTimeout(r, 10));
    const batch = S.sent.find((s) => s.channel === CONSOLE_IPC.events)!.args[0] as ConsoleEvent[];
    expect(batch).toContainEqual(expect.objectContaining({ type: 'task.changed', role: 'dev', status: 'backlog' }));
  });

  it('the Go menu binds Ctrl/Cmd+1…9 to views and tells the renderer', () => {
    const go = S.menu!.template.find((m: { label?: string }) => m.label === 'Go');
    expect(go.submenu.slice(0, 9).map((i: { accelerator: string }) => i.accelerator)).toEqual(Array.from({ length: 9 }, (_, i) => `CmdOrCtrl+${i + 1}`));
    S.sent.length = 0;
    go.submenu.find((i: { label: string }) => i.label === 'Jobs').click();
    expect(S.sent).toContainEqual({ channel: CONSOLE_IPC.navigate, args: ['jobs'] });
    const view = S.menu!.template.find((m: { label?: string }) => m.label === 'View');
    expect(view.submenu.some((i: { role?: string }) => i.role === 'toggleDevTools')).toBe(true); // dev build
  });

  it('export: native save dialog target, streamed with progress; the file verifies', async () => {
    S.saveTo = path.join(dataDir, 'export.jsonl');
    S.sent.length = 0;
    const r = await ipc<{ file: string; rows: number }>(CONSOLE_IPC.exportAudit, { id: 'exp-1', args: { format: 'jsonl' } });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value.file).toBe(S.saveTo);
    expect(r.value.rows).toBeGreaterThan(0);
    const v = await verifyExport(fs.createReadStream(S.saveTo), 'jsonl', { expectContiguous: true });
    expect(v).toMatchObject({ ok: true, rows: r.value.rows, anchoredAtGenesis: true });
    expect(S.sent.filter((s) => s.channel === CONSOLE_IPC.exportProgress).at(-1)!.args[0]).toMatchObject({ id: 'exp-1', progress: { done: true, rows: r.value.rows } });
    expect(await ipc(CONSOLE_IPC.exportAudit, { id: 'exp-2', args: { format: 'pdf' } })).toMatchObject({ ok: false, error: { code: 'bad_request' } });
    expect(await ipc(CONSOLE_IPC.exportAudit, { args: { format: 'csv' } })).toMatchObject({ ok: false, error: { code: 'bad_request' } });
  });

  it('the data directory is private, and the secrets key is kept by the OS keychain, never in clear on disk', () => {
    expect(fs.statSync(dataDir).mode & 0o777).toBe(0o700);
    expect(fs.existsSync(path.join(dataDir, 'secrets.key'))).toBe(false);
    const wrapped = fs.readFileSync(path.join(dataDir, 'secrets.key.keychain'));
    expect(wrapped.toString()).toMatch(/^keychain:/);
    expect(fs.statSync(path.join(dataDir, 'secrets.key.keychain')).mode & 0o777).toBe(0o600);
    // The operator token left the environment before anything was started (PROTOCOL §17).
    expect(process.env.GAFFER_OPERATOR_TOKEN).toBeUndefined();
  });

  it('quits gracefully: server closed, core closed, handlers removed', async () => {
    fake.module.app.quit();
    for (let i = 0; i < 200 && S.quits === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(S.quits).toBe(1);
    await expect(fetch(`http://127.0.0.1:${apiPort}/api/v1/status`)).rejects.toThrow();
    expect(S.ipc.size).toBe(0);
    // The data directory's writer lock was released: another core can open it — with the key the
    // desktop app keeps in the OS keychain; a headless core (the key file) is told where it is.
    const { createCore } = await import('../core/create-core');
    const { desktopSecretsKey } = await import('./secrets-key');
    expect(() => createCore({ dataDir })).toThrow(/kept in the desktop app's OS keychain/);
    const again = createCore({ dataDir, secretsKey: desktopSecretsKey(dataDir, fake.module.safeStorage, 'linux', { toFile: false }) });
    again.close();
  });
});
