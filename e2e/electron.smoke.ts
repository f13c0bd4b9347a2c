/**
 * Electron smoke test (playwright-core `_electron`): launches the built desktop app against a
 * fresh data directory and checks that it really is the desktop console —
 *   - the window title is "Gaffer" and the page is served from app://gaffer/;
 *   - the dashboard view renders;
 *   - `window.gaffer` (the preload bridge) answers a console call over IPC, and the page has no
 *     Node (`require`, `process`) — sandbox and context isolation are on;
 *   - the main process started the local server (agents + HTTP API) on 127.0.0.1.
 *
 * Where the app cannot run it is SKIPPED with the reason (never failed):
 *   "Electron binary not present: <path>" · "no display (…)" · "better-sqlite3 not built for Electron: …"
 *
 *   node --import tsx e2e/electron.smoke.ts     (standalone; prints the result)
 *   e2e/electron.e2e.ts runs it inside the e2e suite (scripts/e2e.mjs).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { _electron, type ElectronApplication } from 'playwright-core';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const TOKEN = 'gfo_electron_smoke_operator_token_0123';

export interface SmokeResult {
  skipped?: string;
  title?: string;
  url?: string;
  dashboardMs?: number;
  apiPort?: number;
}

/** The Electron executable as `require('electron')` would find it — without its download side effect. */
export function electronExecutable(): { path: string; present: boolean } {
  const pkgDir = path.join(ROOT, 'node_modules', 'electron');
  const pathFile = path.join(pkgDir, 'path.txt');
  const rel = fs.existsSync(pathFile) ? fs.readFileSync(pathFile, 'utf8').trim() : process.platform === 'win32' ? 'electron.exe' : process.platform === 'darwin' ? 'Electron.app/Contents/MacOS/Electron' : 'electron';
  const full = path.join(process.env.ELECTRON_OVERRIDE_DIST_PATH || path.join(pkgDir, 'dist'), rel);
  return { path: full, present: fs.existsSync(full) };
}

function nativeBinding(): string {
  const osKey = process.platform === 'darwin' ? 'mac' : process.platform === 'win32' ? 'win' : 'linux';
  return process.env.GAFFER_NATIVE_BINDING ?? path.join(ROOT, 'native', 'electron', `${osKey}-${process.arch}`, 'better_sqlite3.node');
}

/** Why the smoke cannot run here, or null. */
export function skipReason(): string | null {
  const exe = electronExecutable();
  if (!exe.present) return `Electron binary not present: ${exe.path}`;
  if (process.platform === 'linux' && !process.env.DISPLAY && !process.env.WAYLAND_DISPLAY) return 'no display (DISPLAY and WAYLAND_DISPLAY are unset; try xvfb-run)';
  if (!fs.existsSync(nativeBinding())) return `better-sqlite3 not built for Electron: ${nativeBinding()} is missing (run node scripts/build-electron-native.mjs)`;
  return null;
}

function ensureBuilt(): void {
  const need = ['out/main/index.js', 'out/preload/index.cjs', 'out/renderer/index.html'].some((f) => !fs.existsSync(path.join(ROOT, f)));
  if (!need) return;
  const r = spawnSync(process.execPath, [path.join(ROOT, 'node_modules', 'electron-vite', 'bin', 'electron-vite.js'), 'build'], { cwd: ROOT, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`electron-vite build failed:\n${r.stdout}${r.stderr}`);
}

export async function runElectronSmoke(opts: { timeoutMs?: number } = {}): Promise<SmokeResult> {
  const skip = skipReason();
  if (skip) return { skipped: skip };
  ensureBuilt();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gaffer-electron-smoke-'));
  const timeout = opts.timeoutMs ?? 60_000;
  // Chromium refuses to start as root without --no-sandbox (CI containers); a smoke test may.
  const rootArgs = typeof process.getuid === 'function' && process.getuid() === 0 ? ['--no-sandbox'] : [];
  let app: ElectronApplication | undefined;
  let out = '';
  try {
    app = await _electron.launch({
      executablePath: electronExecutable().path,
      args: [...rootArgs, ROOT, '--port', '0', '--data-dir', dataDir],
      cwd: ROOT,
      env: { ...process.env, GAFFER_OPERATOR_TOKEN: TOKEN, ELECTRON_ENABLE_LOGGING: '0' } as Record<string, string>,
      timeout,
    });
    app.process().stdout?.on('data', (d) => (out += String(d)));
    app.process().stderr?.on('data', (d) => (out += String(d)));
    const page = await app.firstWindow({ timeout });
    await page.waitForLoadState('domcontentloaded', { timeout });
    const t0 = Date.now();
    await page.locator('[data-testid="view-dashboard"]').first().waitFor({ state: 'visible', timeout });
    const dashboardMs = Date.now() - t0;
    const title = await page.title();
    if (title !== 'Gaffer') throw new Error(`window title is ${JSON.stringify(title)}, expected "Gaffer"`);
    const url = page.url();
    if (!url.startsWith('app://gaffer/')) throw new Error(`the console is served from ${url}, expected app://gaffer/`);
    const probe = await page.evaluate(async () => {
      const w = window as unknown as { gaffer?: { shell: string; call(m: string, a: unknown): Promise<{ ok: boolean; value?: { roles?: unknown[] } }> } };
      const reply = await w.gaffer?.call('dashboard.get', {});
      const refused = await w.gaffer?.call('no.such.method', {});
      return {
        shell: w.gaffer?.shell,
        ok: reply?.ok,
        roles: Array.isArray(reply?.value?.roles),
        refused: refused?.ok === false,
        require: typeof (globalThis as { require?: unknown }).require,
        process: typeof (globalThis as { process?: unknown }).process,
      };
    });
    if (probe.shell !== 'electron' || !probe.ok || !probe.roles) throw new Error(`the preload bridge did not answer: ${JSON.stringify(probe)}`);
    if (!probe.refused) throw new Error('the preload bridge forwarded a method outside the allow-list');
    if (probe.require !== 'undefined' || probe.process !== 'undefined') throw new Error(`Node is reachable from the page: ${JSON.stringify(probe)}`);
    const m = /agents connect to ws:\/\/127\.0\.0\.1:(\d+)\/agent/.exec(out);
    let apiPort: number | undefined;
    if (m) {
      apiPort = Number(m[1]);
      const res = await fetch(`http://127.0.0.1:${apiPort}/api/v1/status`, { headers: { authorization: `Bearer ${TOKEN}` } });
      if (!res.ok) throw new Error(`the HTTP API answered ${res.status}`);
    }
    return { title, url, dashboardMs, ...(apiPort ? { apiPort } : {}) };
  } catch (e) {
    throw new Error(`${e instanceof Error ? e.message : String(e)}\n--- app output ---\n${out}`, { cause: e });
  } finally {
    await app?.close().catch(() => {});
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  runElectronSmoke().then(
    (r) => {
      console.log(r.skipped ? `electron smoke: SKIPPED — ${r.skipped}` : `electron smoke: ok ${JSON.stringify(r)}`);
    },
    (e) => {
      console.error(`electron smoke: FAILED — ${e instanceof Error ? e.message : String(e)}`);
      process.exit(1);
    },
  );
}
