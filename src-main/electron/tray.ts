/**
 * The tray item: counts (online / stuck / open in the inbox) in the tooltip (and the menu-bar
 * title on macOS), and a small menu. Updated from the console event stream, throttled, plus a slow
 * periodic refresh because ages grow without events.
 */
import { Menu, Tray, type NativeImage } from 'electron';
import type { Dashboard } from '../common/console-api';
import { inboxLine, trayCounts, trayTitle, trayTooltip, type TrayCounts } from './tray-state';

export interface TrayOptions {
  icon: NativeImage;
  load(): Promise<Dashboard>;
  showWindow(): void;
  /** Shows the window on the Inbox view. */
  openInbox(): void;
  quit(): void;
  /** Minimum time between refreshes (default 2 s). */
  minIntervalMs?: number;
}

export interface GafferTray {
  /** Asks for a refresh (coalesced). */
  invalidate(): void;
  destroy(): void;
}

export function createTray(o: TrayOptions): GafferTray | null {
  let tray: Tray;
  try {
    tray = new Tray(o.icon);
  } catch {
    return null; // no system tray on this desktop: the window is enough
  }
  tray.setToolTip('Gaffer');
  tray.on('click', () => o.showWindow());
  const minInterval = o.minIntervalMs ?? 2000;
  let last = 0;
  let timer: NodeJS.Timeout | undefined;
  let inFlight = false;
  let destroyed = false;

  const render = (c: TrayCounts) => {
    if (destroyed) return;
    tray.setToolTip(trayTooltip(c));
    if (process.platform === 'darwin') tray.setTitle(trayTitle(c));
    tray.setContextMenu(
      Menu.buildFromTemplate([
        { label: 'Show Gaffer', click: () => o.showWindow() },
        { type: 'separator' },
        { label: `${c.online} instance${c.online === 1 ? '' : 's'} online`, enabled: false },
        { label: `${c.stuck} role${c.stuck === 1 ? '' : 's'} stuck${c.stuckRoles.length ? `: ${c.stuckRoles.slice(0, 3).join(', ')}` : ''}`, enabled: false },
        { label: inboxLine(c), click: () => o.openInbox() },
        ...(c.killSwitch ? [{ label: 'Kill switch is ON', enabled: false }] : []),
        { type: 'separator' },
        { label: 'Quit Gaffer', click: () => o.quit() },
      ]),
    );
  };

  const refresh = async () => {
    if (destroyed || inFlight) return;
    inFlight = true;
    last = Date.now();
    try {
      render(trayCounts(await o.load()));
    } catch {
      /* the next event or tick tries again */
    } finally {
      inFlight = false;
    }
  };

  const invalidate = () => {
    if (destroyed || timer) return;
    timer = setTimeout(() => {
      timer = undefined;
      void refresh();
    }, Math.max(0, last + minInterval - Date.now()));
  };

  const periodic = setInterval(invalidate, 30_000);
  void refresh();
  return {
    invalidate,
    destroy() {
      destroyed = true;
      clearInterval(periodic);
      if (timer) clearTimeout(timer);
      tray.destroy();
    },
  };
}
