/**
 * The Electron shell: a thin adapter around the same core and local server the headless shell
 * runs. It owns the window, menu, tray, notifications, power events and native dialogs; all
 * scheduling lives in the core, and the console API is the same method table the headless
 * server uses, reached over allow-listed IPC instead of HTTP.
 *
 * Start-up order: the operator token out of the environment (PROTOCOL §17; started with it in
 * the environment, the app starts itself again without it: relaunch.ts) and umask 077 →
 * single-instance lock → CLI → app ready → native binding → core (its secrets key in the OS
 * keychain where there is one: secrets-key.ts) → local server (agents + HTTP API on 127.0.0.1; the
 * desktop console does not need the HTTP console) → IPC → managed agents → window. Shutdown:
 * managed agents (while the server still takes what they hand back), server, then core (its
 * database last).
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { app, dialog, Menu, Notification, powerMonitor, safeStorage, shell, type BrowserWindow } from 'electron';
import { secretWarnings, takeProcessSecrets } from '../../scripts/lib/process-secrets.mjs';
import { tightenUmask } from '../../scripts/lib/umask.mjs';
import { CONSOLE_IPC, type ConsoleView } from '../common/console-api';
import { consoleLogger } from '../common/logger';
import { createCore, type Core } from '../core/create-core';
import { parseCli, splitKnownArgs, type CliOptions } from '../server/cli';
import { ConsoleEventHub } from '../server/console/events';
import { createConsoleMethods } from '../server/console/methods';
import { startManagedAgents } from '../server/managed';
import { launchPaths } from '../server/managed/launch';
import { startServer, type RunningServer } from '../server/server';
import { tuneServerHeap } from '../server/v8-heap';
import { DESKTOP_ACTOR, registerConsoleIpc } from './ipc';
import { buildAppMenu } from './menu';
import { resolveNativeBinding } from './native';
import { desktopAlerts, machineZone } from './inbox-notify';
import { NotifyGate } from './notify-gate';
import { createPowerHandler, type PowerHandler } from './power';
import { relaunchWithoutTokens } from './relaunch';
import { desktopSecretsKey } from './secrets-key';
import { APP_ORIGIN, originOf } from './sender';
import { createTray, type GafferTray } from './tray';
import { createMainWindow, drawIcon, hardenSessions, registerAppScheme, rendererDirFrom, serveRenderer } from './window';

const secrets = takeProcessSecrets();
const userUmask = tightenUmask();
// The main process serves agents: the same heap tuning as the headless server (server/v8-heap.ts).
tuneServerHeap();
const mainDir = path.dirname(fileURLToPath(import.meta.url));
const isDev = !app.isPackaged;
const devServerUrl = isDev && process.env.ELECTRON_RENDERER_URL ? process.env.ELECTRON_RENDERER_URL : null;

app.enableSandbox();
registerAppScheme();

function fail(title: string, message: string, code = 1): void {
  console.error(`gaffer: ${title}: ${message}`);
  try {
    dialog.showErrorBox(title, message);
  } catch {
    /* no display for a dialog: the console line above says it */
  }
  app.exit(code);
}

function parseArgs(): CliOptions | null {
  // argv: [electron, app path | ., ...Chromium switches and ours]; keep only ours.
  const { known } = splitKnownArgs(process.argv.slice(1));
  try {
    return parseCli(known, { ...process.env, ...secrets.tokens });
  } catch (e) {
    console.error((e as Error).message);
    app.exit(2);
    return null;
  }
}

async function boot(opts: CliOptions): Promise<void> {
  await app.whenReady();
  for (const w of secretWarnings(secrets)) console.error(`gaffer: warning: ${w}`);
  const origins = [APP_ORIGIN, ...(devServerUrl ? [originOf(devServerUrl)!] : [])];
  hardenSessions({ origins, devServerUrl });
  // GAFFER_RENDERER_DIR: development only (tests, a renderer built elsewhere).
  serveRenderer(isDev && process.env.GAFFER_RENDERER_DIR ? path.resolve(process.env.GAFFER_RENDERER_DIR) : rendererDirFrom(mainDir));

  const native = resolveNativeBinding({
    env: process.env,
    isPackaged: app.isPackaged,
    appPath: app.getAppPath(),
    resourcesPath: process.resourcesPath,
    platform: process.platform,
    arch: process.arch,
    exists: (f) => fs.existsSync(f),
  });
  if (!native.ok) {
    return fail(
      'Gaffer cannot open its database',
      `better-sqlite3 has not been built for Electron ${process.versions.electron} (${process.platform}-${process.arch}).\n` +
        `Run: node scripts/build-electron-native.mjs\nLooked for:\n  ${native.looked.join('\n  ')}`,
    );
  }

  let core: Core;
  try {
    core = createCore({
      dataDir: opts.dataDir,
      config: opts.config,
      logger: consoleLogger,
      nativeBinding: native.path,
      // Notifications link to the console at the address it is served on (a setting may override it).
      ...(opts.port > 0 ? { webhooks: { consoleUrl: `http://${opts.host}:${opts.port}/` } } : {}),
      secretsKey: desktopSecretsKey(opts.dataDir, safeStorage, process.platform, { toFile: opts.secretsKeyFile }),
    });
  } catch (e) {
    return fail('Gaffer could not start', (e as Error).message);
  }
  try {
    core.start();
  } catch (e) {
    core.close();
    return fail('Gaffer could not start', (e as Error).message);
  }

  const operatorToken = opts.operatorToken ?? `gfo_${randomBytes(32).toString('base64url')}`;
  let server: RunningServer | null = null;
  try {
    server = await startServer(core, { host: opts.host, port: opts.port, operatorToken, version: app.getVersion() });
    console.log(`gaffer: data in ${opts.dataDir}`);
    console.log(`gaffer: agents connect to ${server.agentUrl}`);
    console.log(`gaffer: HTTP API at ${server.url}/api/v1 (operator token ${opts.operatorToken ? 'from GAFFER_OPERATOR_TOKEN' : operatorToken})`);
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    const why = err.code === 'EADDRINUSE' ? `port ${opts.port} is in use (start with --port to pick another)` : err.message;
    console.error(`gaffer: agents cannot connect: ${why}`);
    dialog.showErrorBox('Agents cannot connect', `The local server did not start: ${why}.\nThe console still shows the scheduler's state.`);
  }

  // Managed agents run under Node, not Electron: the Node that started us (npm start), else `node` on PATH.
  let managed: { stop(): Promise<void> } | undefined;
  if (server) {
    try {
      managed = await startManagedAgents(core, server, { paths: launchPaths(app.getAppPath(), process.env.npm_node_execpath ?? 'node'), userUmask });
    } catch (e) {
      console.error(`gaffer: managed agents not started: ${(e as Error).message}`);
    }
  }

  const version = app.getVersion();
  const methods = createConsoleMethods(core, { actor: DESKTOP_ACTOR, port: server?.port ?? null, dataDir: opts.dataDir, version });
  const hub = new ConsoleEventHub(core.events, { logger: core.logger });
  let win: BrowserWindow | null = null;
  const getWindow = () => (win && !win.isDestroyed() ? win : null);
  const showWindow = () => {
    const w = getWindow() ?? openWindow();
    if (w.isMinimized()) w.restore();
    w.show();
    w.focus();
  };
  const icon = drawIcon(32);
  const openWindow = (): BrowserWindow => {
    win = createMainWindow({ preload: path.join(mainDir, '..', 'preload', 'index.cjs'), devServerUrl, devTools: isDev, icon });
    win.on('closed', () => (win = null));
    return win;
  };
  const disposeIpc = registerConsoleIpc({ core, methods, window: getWindow, origins });

  // OS notifications for new inbox items of the kinds the operator chose, outside quiet hours
  // (rate-limited by the gate). The settings are re-read when they change.
  const notes = new Set<Notification>();
  const gate = new NotifyGate({
    now: () => Date.now(),
    setTimeout: (fn, ms) => setTimeout(fn, ms),
    show: (n) => {
      if (!Notification.isSupported()) return;
      const note = new Notification({ title: n.title, body: n.body, urgency: n.critical ? 'critical' : 'normal' });
      notes.add(note); // keep a reference until it is gone, or clicks are lost to GC
      note.on('click', showWindow);
      note.on('close', () => notes.delete(note));
      note.show();
      setTimeout(() => notes.delete(note), 10 * 60_000).unref();
    },
  });

  let desktop = core.attention.notifications.view().desktop;
  let tray: GafferTray | null = null;
  const events = hub.subscribe((batch) => {
    const w = getWindow();
    if (w) w.webContents.send(CONSOLE_IPC.events, batch);
    if (batch.some((e) => e.type === 'settings.changed')) desktop = core.attention.notifications.view().desktop;
    gate.push(desktopAlerts(batch, desktop, Date.now(), machineZone()));
    tray?.invalidate();
  });

  const navigate = (view: ConsoleView) => {
    showWindow();
    getWindow()?.webContents.send(CONSOLE_IPC.navigate, view);
  };
  const docsDir = app.isPackaged ? path.join(process.resourcesPath, 'docs') : path.join(app.getAppPath(), 'docs');
  Menu.setApplicationMenu(
    buildAppMenu({
      isDev,
      navigate,
      openDocs: () => void shell.openPath(docsDir),
      openDataDir: () => void shell.openPath(opts.dataDir),
      quit: () => app.quit(),
    }),
  );
  tray = createTray({ icon: drawIcon(process.platform === 'darwin' ? 18 : 22), load: () => methods.call('dashboard.get', {}), showWindow, openInbox: () => navigate('inbox'), quit: () => app.quit() });

  const power: PowerHandler = createPowerHandler(core);
  powerMonitor.on('suspend', () => power.suspend());
  powerMonitor.on('resume', () => power.resume());

  app.on('second-instance', showWindow);
  app.on('activate', showWindow);
  app.on('window-all-closed', () => {
    if (process.platform !== 'darwin') app.quit();
  });

  let stopped = false;
  let stopping: Promise<void> | null = null;
  const stop = async () => {
    events.dispose();
    hub.dispose();
    tray?.destroy();
    power.dispose();
    disposeIpc();
    try {
      await managed?.stop();
    } catch (e) {
      core.logger.error('stopping managed agents failed', { error: String(e) });
    }
    try {
      await server?.close();
    } catch (e) {
      core.logger.error('server close failed', { error: String(e) });
    }
    core.close();
  };
  app.on('before-quit', (e) => {
    if (stopped) return;
    e.preventDefault();
    stopping ??= stop().finally(() => {
      stopped = true;
      app.quit();
    });
  });
  for (const sig of ['SIGINT', 'SIGTERM'] as const) process.on(sig, () => app.quit());

  openWindow();
}

// Only a real Electron has started helper processes with this environment (relaunch.ts).
const relaunched =
  process.versions.electron !== undefined &&
  relaunchWithoutTokens(secrets, { execPath: process.execPath, args: process.argv.slice(1), env: process.env, platform: process.platform, spawn, exit: (code) => app.exit(code) });
if (relaunched) {
  // This process only hands the token to its successor, then exits.
} else if (!app.requestSingleInstanceLock()) {
  // Another Gaffer window is open: it gets focus (second-instance) and this process leaves.
  app.quit();
} else {
  const opts = parseArgs();
  if (opts) {
    boot(opts).catch((e) => fail('Gaffer failed to start', e instanceof Error ? (e.stack ?? e.message) : String(e)));
  }
}
