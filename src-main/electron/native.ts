/**
 * Where the Electron-ABI build of better-sqlite3 lives. `node_modules/better-sqlite3` is built
 * for Node's ABI (tests, headless) and must stay that way; Electron loads its own build through
 * better-sqlite3's `nativeBinding` option instead:
 *
 *   dev (`electron .`)  <app>/native/electron/<os>-<arch>/better_sqlite3.node
 *                       (made by `node scripts/build-electron-native.mjs`)
 *   packaged            <resources>/native/better_sqlite3.node
 *                       (electron-builder `extraResources`, built by the same script in `beforePack`)
 *   override            GAFFER_NATIVE_BINDING=/path/to/better_sqlite3.node
 *
 * scripts/start.mjs and scripts/build-electron-native.mjs use the same layout.
 * Pure: no electron import, so it is unit-tested in Node.
 */
import path from 'node:path';

export type OsKey = 'mac' | 'win' | 'linux';

/** electron-builder's `${os}` names. */
export function osKey(platform: NodeJS.Platform): OsKey {
  return platform === 'darwin' ? 'mac' : platform === 'win32' ? 'win' : 'linux';
}

export const NATIVE_FILE = 'better_sqlite3.node';

export function devNativeBinding(appPath: string, platform: NodeJS.Platform, arch: string): string {
  return path.join(appPath, 'native', 'electron', `${osKey(platform)}-${arch}`, NATIVE_FILE);
}

export interface NativeLookup {
  env: NodeJS.ProcessEnv;
  isPackaged: boolean;
  appPath: string;
  resourcesPath: string;
  platform: NodeJS.Platform;
  arch: string;
  exists(file: string): boolean;
}

export type NativeResolution = { ok: true; path: string } | { ok: false; looked: string[] };

export function resolveNativeBinding(l: NativeLookup): NativeResolution {
  const candidates: string[] = [];
  if (l.env.GAFFER_NATIVE_BINDING) candidates.push(path.resolve(l.env.GAFFER_NATIVE_BINDING));
  if (l.isPackaged) candidates.push(path.join(l.resourcesPath, 'native', NATIVE_FILE));
  else candidates.push(devNativeBinding(l.appPath, l.platform, l.arch));
  for (const c of candidates) if (l.exists(c)) return { ok: true, path: c };
  return { ok: false, looked: candidates };
}
