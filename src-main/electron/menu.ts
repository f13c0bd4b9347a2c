/**
 * The application menu. Go: the console's views with Ctrl/Cmd+1…9 (sent to the renderer, which
 * shows the view). View: reload and devtools in development only. Edit: so copy/paste works in
 * forms on macOS.
 */
import { Menu, type MenuItemConstructorOptions } from 'electron';
import { CONSOLE_VIEWS, type ConsoleView } from '../common/console-api';

const VIEW_LABELS: Record<ConsoleView, string> = {
  dashboard: 'Dashboard',
  queues: 'Role queues',
  'expired-locks': 'Expired locks',
  instances: 'Instances',
  jobs: 'Jobs',
  runs: 'Runs',
  why: "Why didn't it run?",
  audit: 'Audit log',
  settings: 'Settings',
  calendars: 'Calendars',
  'managed-agents': 'Managed agents',
  tasks: 'Tasks',
  signals: 'Signals',
  inbox: 'Inbox',
};

export interface MenuOptions {
  isDev: boolean;
  navigate(view: ConsoleView): void;
  openDocs(): void;
  openDataDir(): void;
  quit(): void;
}

export function buildAppMenu(o: MenuOptions): Menu {
  const mac = process.platform === 'darwin';
  const view: MenuItemConstructorOptions[] = [
    ...(o.isDev
      ? ([{ role: 'reload' }, { role: 'forceReload' }, { role: 'toggleDevTools' }, { type: 'separator' }] as MenuItemConstructorOptions[])
      : []),
    { role: 'resetZoom' },
    { role: 'zoomIn' },
    { role: 'zoomOut' },
    { type: 'separator' },
    { role: 'togglefullscreen' },
  ];
  const go: MenuItemConstructorOptions[] = CONSOLE_VIEWS.map((v, i) => ({
    label: VIEW_LABELS[v],
    ...(i < 9 ? { accelerator: `CmdOrCtrl+${i + 1}` } : {}),
    click: () => o.navigate(v),
  }));
  const template: MenuItemConstructorOptions[] = [
    ...(mac ? [{ role: 'appMenu' } as MenuItemConstructorOptions] : []),
    {
      label: 'File',
      submenu: [
        { label: 'Open data folder', click: () => o.openDataDir() },
        { type: 'separator' },
        mac ? { role: 'close' } : { label: 'Quit', accelerator: 'CmdOrCtrl+Q', click: () => o.quit() },
      ],
    },
    { role: 'editMenu' },
    { label: 'View', submenu: view },
    { label: 'Go', submenu: go },
    { role: 'windowMenu' },
    { role: 'help', submenu: [{ label: 'Gaffer documentation', click: () => o.openDocs() }] },
  ];
  return Menu.buildFromTemplate(template);
}
