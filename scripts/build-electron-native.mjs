#!/usr/bin/env node
/**
 * Builds better-sqlite3 for Electron's ABI into its own folder, leaving node_modules alone:
 *
 *   native/electron/<os>-<arch>/better_sqlite3.node      (os: linux | mac | win, electron-builder's ${os})
 *
 * node_modules/better-sqlite3 keeps its Node-ABI build (tests, headless mode). The Electron main
 * process passes this file as better-sqlite3's `nativeBinding` (src-main/electron/native.ts);
 * packaging ships it through electron-builder `extraResources`. This is why electron-builder's
 * in-place `npmRebuild` is off: it would overwrite node_modules' Node build with Electron's and
 * break the Node test suite and headless mode.
 *
 *   node scripts/build-electron-native.mjs [--platform linux|darwin|win32] [--arch x64|arm64]
 *        [--electron 45.5.0] [--force] [--dry-run] [--quiet]
 *
 * How: copies the better-sqlite3 package (sources, no build) to a temp dir and there runs
 *   1. prebuild-install --runtime electron --target <electron> --platform --arch
 *      (downloads the matching prebuilt binary from better-sqlite3's GitHub release), else
 *   2. node-gyp rebuild --runtime=electron --target=<electron> --dist-url=https://electronjs.org/headers
 *      (compiles against Electron's headers; host platform only; needs a C++ toolchain).
 * Both need the network once (github.com / electronjs.org); on a machine without it the script
 * fails with one clear line and `npm start` serves the console headless instead.
 *
 * Also an electron-builder hook: `beforePack: ./scripts/build-electron-native.mjs` builds for
 * each target platform/arch being packaged.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const OS_KEY = { darwin: 'mac', win32: 'win', linux: 'linux' };
/** builder-util's Arch enum. */
const ARCH_NAMES = { 0: 'ia32', 1: 'x64', 2: 'armv7l', 3: 'arm64' };

function readJson(file) {
  return JSON.parse(fs.readFileSync(file, 'utf8'));
}

export function installedElectronVersion() {
  return readJson(path.join(root, 'node_modules', 'electron', 'package.json')).version;
}

export function nativeTarget(platform, arch, base = root) {
  const key = OS_KEY[platform];
  if (!key) throw new Error(`unsupported platform ${platform}`);
  return path.join(base, 'native', 'electron', `${key}-${arch}`, 'better_sqlite3.node');
}

function run(cmd, args, cwd, quiet) {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', stdio: quiet ? 'pipe' : 'inherit', env: { ...process.env, npm_config_build_from_source: 'false' } });
  return { ok: r.status === 0, output: `${r.stdout ?? ''}${r.stderr ?? ''}`.trim() };
}

/** Builds (or reuses) the binding; returns its path. Throws an Error with a one-line message. */
export function buildElectronNative(opts = {}) {
  const platform = opts.platform ?? process.platform;
  const arch = opts.arch ?? process.arch;
  const electron = opts.electron ?? installedElectronVersion();
  const target = nativeTarget(platform, arch, opts.root ?? root);
  const info = path.join(path.dirname(target), 'build-info.json');
  const log = (m) => {
    if (!opts.quiet) console.log(`build-electron-native: ${m}`);
  };
  if (!opts.force && fs.existsSync(target) && fs.existsSync(info)) {
    const prev = readJson(info);
    if (prev.electron === electron) {
      log(`up to date: ${path.relative(root, target)} (Electron ${electron})`);
      return target;
    }
  }
  const pkgDir = path.join(root, 'node_modules', 'better-sqlite3');
  const pkg = readJson(path.join(pkgDir, 'package.json'));
  const plan = [
    `better-sqlite3 ${pkg.version} for Electron ${electron} (${platform}-${arch})`,
    `→ ${path.relative(root, target)}`,
    `via prebuild-install (GitHub release download), else node-gyp against Electron's headers`,
  ];
  if (opts.dryRun) {
    for (const l of plan) console.log(`build-electron-native (dry run): ${l}`);
    return target;
  }
  log(plan.join(' '));
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gaffer-bsqlite-electron-'));
  try {
    for (const entry of ['package.json', 'binding.gyp', 'src', 'deps', 'lib']) {
      fs.cpSync(path.join(pkgDir, entry), path.join(tmp, entry), { recursive: true });
    }
    const built = path.join(tmp, 'build', 'Release', 'better_sqlite3.node');
    const prebuild = path.join(root, 'node_modules', 'prebuild-install', 'bin.js');
    let method = 'prebuild-install';
    let r = run(process.execPath, [prebuild, '--runtime', 'electron', '--target', electron, '--platform', platform, '--arch', arch, '--verbose'], tmp, opts.quiet);
    if (!r.ok || !fs.existsSync(built)) {
      if (platform !== process.platform) {
        throw new Error(`no prebuilt better-sqlite3 for Electron ${electron} ${platform}-${arch} could be downloaded, and cross-compiling is not supported: ${lastLine(r.output)}`);
      }
      method = 'node-gyp';
      const gyp = path.join(root, 'node_modules', 'node-gyp', 'bin', 'node-gyp.js');
      r = run(process.execPath, [gyp, 'rebuild', '--release', `--target=${electron}`, `--arch=${arch}`, '--dist-url=https://electronjs.org/headers', '--runtime=electron'], tmp, opts.quiet);
      if (!r.ok || !fs.existsSync(built)) throw new Error(`could not download or compile better-sqlite3 for Electron ${electron}: ${lastLine(r.output)}`);
    }
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.copyFileSync(built, `${target}.tmp`);
    fs.renameSync(`${target}.tmp`, target);
    fs.writeFileSync(info, `${JSON.stringify({ electron, platform, arch, betterSqlite3: pkg.version, method, builtAt: new Date().toISOString() }, null, 2)}\n`);
    log(`built with ${method}: ${path.relative(root, target)}`);
    return target;
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

function lastLine(text) {
  return (text || 'no output').split('\n').map((l) => l.trim()).filter(Boolean).pop() ?? 'no output';
}

/** electron-builder `beforePack` hook: the binding for the platform/arch being packaged. */
export async function beforePack(context) {
  const arch = ARCH_NAMES[context.arch];
  if (!arch) throw new Error(`build-electron-native: unsupported arch ${context.arch} (package x64 and arm64 separately)`);
  const electron = context.packager?.config?.electronVersion ?? installedElectronVersion();
  buildElectronNative({ platform: context.electronPlatformName, arch, electron });
}

export default beforePack;

// ---------------------------------------------------------------------------------------------
// CLI

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const args = process.argv.slice(2);
  const value = (flag) => {
    const i = args.indexOf(flag);
    return i >= 0 ? args[i + 1] : undefined;
  };
  try {
    buildElectronNative({
      platform: value('--platform'),
      arch: value('--arch'),
      electron: value('--electron'),
      force: args.includes('--force'),
      dryRun: args.includes('--dry-run'),
      quiet: args.includes('--quiet'),
    });
  } catch (e) {
    console.error(`build-electron-native: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(1);
  }
}
