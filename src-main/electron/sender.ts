/**
 * Which IPC senders the main process answers (VS Code's `validateIPC`, on the main side).
 * A console call is served only when it comes from the main window's own webContents, from its
 * top frame (no iframes), whose URL is the app's origin (`app://gaffer`) or, in development, the
 * electron-vite dev server. Pure: unit-tested without Electron.
 */

export const APP_SCHEME = 'app';
export const APP_HOST = 'gaffer';
export const APP_ORIGIN = `${APP_SCHEME}://${APP_HOST}`;
export const APP_INDEX_URL = `${APP_ORIGIN}/index.html`;

/** `scheme://host[:port]` of a URL (WHATWG `origin` is "null" for custom schemes). */
export function originOf(url: string | null | undefined): string | null {
  if (!url) return null;
  try {
    const u = new URL(url);
    if (!u.host) return null;
    return `${u.protocol}//${u.host}`;
  } catch {
    return null;
  }
}

export interface SenderInfo {
  /** `event.sender.id` */
  webContentsId: number;
  /** `event.senderFrame?.url` (null when the frame is gone). */
  frameUrl: string | null;
  /** `event.senderFrame === event.sender.mainFrame` */
  isMainFrame: boolean;
}

export interface TrustPolicy {
  /** The main window's webContents id (null before it exists or after it closed). */
  windowWebContentsId: number | null;
  /** Allowed origins: APP_ORIGIN, plus the dev server's in development. */
  origins: readonly string[];
}

export function trustedSender(s: SenderInfo, p: TrustPolicy): boolean {
  if (p.windowWebContentsId === null || s.webContentsId !== p.windowWebContentsId) return false;
  if (!s.isMainFrame) return false;
  const origin = originOf(s.frameUrl);
  return origin !== null && p.origins.includes(origin);
}

/** May the window navigate to `url`? Only within the app itself (SPA routes, reload). */
export function navigationAllowed(url: string, origins: readonly string[]): boolean {
  const origin = originOf(url);
  return origin !== null && origins.includes(origin);
}

/** Links the operator may open outside the app (after confirming): https only. */
export function externalLinkAllowed(url: string): boolean {
  try {
    return new URL(url).protocol === 'https:';
  } catch {
    return false;
  }
}
