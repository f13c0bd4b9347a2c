#!/usr/bin/env node
/**
 * `npm start`: the desktop app where Electron can run, the headless console where it cannot.
 *
 *   node scripts/start.mjs [--headless] [gaffer options…]   (see `--help`)
 *
 * Falls back to headless — with ONE line saying why, never a stack trace — when:
 *   - `--headless` is given (then no line: it is what was asked for);
 *   - the Electron binary is missing (its npm package downloads it lazily; some machines cannot);
 *   - Linux has no display (no DISPLAY / WAYLAND_DISPLAY);
 *   - better-sqlite3 has no build for Electron's ABI and `scripts/build-electron-native.mjs`
 *     cannot make one (it needs the network once);
 *   - Electron exits with an error within a few seconds of launch (missing system libraries…).
 * Headless: builds the renderer if `out/renderer` is missing or older than its sources, and the
 * server (`src-main/headless/main.ts` bundled by esbuild to `out/headless/main.mjs`, dependencies
 * left in node_modules) if it is, then runs the server IN THIS PROCESS with the remaining
 * arguments: one resident Node process, no TypeScript compiled at start (`npm run bench -- startup`
 * measures it). Desktop: `electron-vite build` when out/ is stale, then `electron .` as a child
 * whose signals and exit code are forwarded.
 *
 * First of all the operator token leaves this process's environment (PROTOCOL §17,
 * lib/process-secrets.mjs) — before a build, esbuild or Electron is started with it. Electron
 * gets it on a pipe (GAFFER_OPERATOR_TOKEN_FD); the headless server, in this process, finds it
 * already taken.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { secretPipes, secretWarnings, takeProcessSecrets } from './lib/process-secrets.mjs';

const secrets = takeProcessSecrets();

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const wantsHeadless = argv.includes('--headless');
const passthrough = argv.filter((a) => a !== '--headless');
const EARLY_EXIT_MS = 5000;

// ---------------------------------------------------------------------------------------------
// Can Electron start here?

/** The Electron executable, found the way `require('electron')` does, without its download side effect. */
function electronBinary() {
  const pkgDir = path.join(root, 'node_modules', 'electron');
  if (!fs.existsSync(path.join(pkgDir, 'package.json'))) return { path: pkgDir, why: 'the electron package is not installed' };
  const pathFile = path.join(pkgDir, 'path.txt');
  const exe = fs.existsSync(pathFile) ? fs.readFileSync(pathFile, 'utf8').trim() : null;
  const dist = process.env.ELECTRON_OVERRIDE_DIST_PATH || path.join(pkgDir, 'dist');
  const full = path.join(dist, exe ?? (process.platform === 'win32' ? 'electron.exe' : process.platform === 'darwin' ? 'Electron.app/Contents/MacOS/Electron' : 'electron'));
  if (!exe && !process.env.ELECTRON_OVERRIDE_DIST_PATH) return { path: full, why: 'its binary was not downloaded' };
  if (!fs.existsSync(full)) return { path: full, why: `its binary is missing at ${path.relative(root, full)}` };
  return { path: full, why: null };
}

function displayProblem() {
  if (process.platform !== 'linux') return null;
  return process.env.DISPLAY || process.env.WAYLAND_DISPLAY ? null : 'no display: DISPLAY and WAYLAND_DISPLAY are unset';
}

const OS_KEY = { darwin: 'mac', win32: 'win' }[process.platform] ?? 'linux';
/** Same layout as src-main/electron/native.ts. */
function nativeBinding() {
  if (process.env.GAFFER_NATIVE_BINDING) return path.resolve(process.env.GAFFER_NATIVE_BINDING);
  return path.join(root, 'native', 'electron', `${OS_KEY}-${process.arch}`, 'better_sqlite3.node');
}

// ---------------------------------------------------------------------------------------------
// Building

function newestMtime(target) {
  let newest = 0;
  const walk = (p) => {
    let st;
    try {
      st = fs.statSync(p);
    } catch {
      return;
    }
    if (st.isDirectory()) {
      for (const e of fs.readdirSync(p)) if (e !== 'node_modules' && !e.startsWith('.')) walk(path.join(p, e));
    } else if (!/\.(test|e2e)\.tsx?$/.test(p)) newest = Math.max(newest, st.mtimeMs);
  };
  walk(target);
  return newest;
}

function isStale(output, sources) {
  if (!fs.existsSync(output)) return true;
  const built = fs.statSync(output).mtimeMs;
  return sources.some((s) => newestMtime(path.join(root, s)) > built);
}

const RENDERER_SOURCES = ['src-renderer', 'src-main/common', 'electron.vite.config.ts'];
const SERVER_SOURCES = ['src-main', 'scripts/start.mjs'];
const SERVER_BUNDLE = path.join(root, 'out', 'headless', 'main.mjs');
// The log store's worker thread, found next to the server bundle (core/logs/worker-engine.ts).
const WORKER_BUNDLE = path.join(root, 'out', 'headless', 'logs-worker.js');
// The audit export's worker thread, likewise (core/audit/export-thread.ts).
const EXPORT_WORKER_BUNDLE = path.join(root, 'out', 'headless', 'audit-export-worker.js');
const ALL_SOURCES = ['src-renderer', 'src-main', 'src-preload', 'electron.vite.config.ts'];

/** Runs `electron-vite build` quietly; on failure shows its output and exits. */
function build(what) {
  console.log(`gaffer: building the ${what}…`);
  const cli = path.join(root, 'node_modules', 'electron-vite', 'bin', 'electron-vite.js');
  const r = spawnSync(process.execPath, [cli, 'build'], { cwd: root, encoding: 'utf8', env: { ...process.env, NODE_ENV: 'production' } });
  if (r.status !== 0) {
    process.stderr.write(`${r.stdout ?? ''}${r.stderr ?? ''}`);
    console.error(`gaffer: the build failed (electron-vite build exited ${r.status ?? r.signal}).`);
    process.exit(1);
  }
}

// ---------------------------------------------------------------------------------------------
// Running children with signals forwarded

function forwardSignals(child) {
  const forward = (sig) => () => {
    if (child.exitCode === null && child.signalCode === null) child.kill(sig);
  };
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(sig, forward(sig));
}

function exitLike(code, signal) {
  if (signal) {
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code ?? 1);
}

/** Bundles the headless server (one ES module; node_modules stay imports). Quiet unless it fails. */
async function buildServer() {
  let esbuild;
  try {
    esbuild = await import('esbuild');
  } catch (e) {
    console.error(`gaffer: cannot build the headless server: esbuild is not installed (${e.message}); run npm install.`);
    process.exit(1);
  }
  const common = { bundle: true, platform: 'node', format: 'esm', target: 'node20', packages: 'external', sourcemap: 'linked', logLevel: 'silent' };
  try {
    await esbuild.build({ ...common, entryPoints: [path.join(root, 'src-main', 'headless', 'main.ts')], outfile: SERVER_BUNDLE });
    await esbuild.build({ ...common, entryPoints: [path.join(root, 'src-main', 'core', 'logs', 'worker.ts')], outfile: WORKER_BUNDLE });
    await esbuild.build({ ...common, entryPoints: [path.join(root, 'src-main', 'core', 'audit', 'export-worker.ts')], outfile: EXPORT_WORKER_BUNDLE });
  } catch (e) {
    console.error(`gaffer: the headless server build failed:\n${(e.errors ?? []).map((m) => `  ${m.text}${m.location ? ` (${m.location.file}:${m.location.line})` : ''}`).join('\n') || e.message}`);
    process.exit(1);
  } finally {
    await esbuild.stop?.(); // its service process must not stay beside the server
  }
}

/**
 * The headless server, in this process (no second resident Node): it reads `process.argv`. With
 * GAFFER_RENDERER_DIR the console is served from there, so out/renderer is not built.
 */
async function runHeadless(reason, { skipBuild = false } = {}) {
  if (reason) console.log(`Electron can't start here (${reason}); serving the console headless instead.`);
  const ownRenderer = !process.env.GAFFER_RENDERER_DIR;
  if (!skipBuild && ownRenderer && isStale(path.join(root, 'out', 'renderer', 'index.html'), RENDERER_SOURCES)) build('console (out/renderer)');
  if (isStale(SERVER_BUNDLE, SERVER_SOURCES) || isStale(WORKER_BUNDLE, SERVER_SOURCES) || isStale(EXPORT_WORKER_BUNDLE, SERVER_SOURCES)) await buildServer();
  process.env.GAFFER_RENDERER_DIR ??= path.join(root, 'out', 'renderer');
  process.argv = [process.argv[0], SERVER_BUNDLE, ...passthrough];
  await import(pathToFileURL(SERVER_BUNDLE).href);
}

function ensureNative() {
  const file = nativeBinding();
  if (fs.existsSync(file)) return null;
  console.log('gaffer: building better-sqlite3 for Electron (once)…');
  const r = spawnSync(process.execPath, [path.join(root, 'scripts', 'build-electron-native.mjs'), '--quiet'], { cwd: root, encoding: 'utf8' });
  if (r.status === 0 && fs.existsSync(file)) return null;
  const last = `${r.stderr ?? ''}`.trim().split('\n').filter(Boolean).pop() ?? 'the build failed';
  return `better-sqlite3 has no build for Electron's ABI and none could be made: ${last}`;
}

function runDesktop(binary) {
  if (isStale(path.join(root, 'out', 'main', 'index.js'), ALL_SOURCES) || isStale(path.join(root, 'out', 'renderer', 'index.html'), RENDERER_SOURCES)) build('app (out/)');
  for (const w of secretWarnings(secrets)) console.error(`gaffer: warning: ${w}`);
  const pipes = secretPipes({ GAFFER_OPERATOR_TOKEN: secrets.tokens.GAFFER_OPERATOR_TOKEN }, ['inherit', 'inherit', 'pipe'], process.env);
  const child = spawn(binary, ['.', ...passthrough], { cwd: root, stdio: pipes.stdio, env: pipes.env });
  void pipes.send(child);
  const started = Date.now();
  // Hold stderr for the first seconds: if Electron dies at launch, fall back instead of dumping it.
  let held = '';
  let holding = true;
  const release = setTimeout(() => {
    holding = false;
    if (held) process.stderr.write(held);
    held = '';
  }, EARLY_EXIT_MS);
  child.stderr.on('data', (d) => {
    if (holding) held += d;
    else process.stderr.write(d);
  });
  forwardSignals(child);
  child.on('error', () => {
    clearTimeout(release);
    void runHeadless('the Electron binary could not be executed');
  });
  child.on('exit', (code, signal) => {
    clearTimeout(release);
    if (holding && code !== 0 && signal === null && Date.now() - started < EARLY_EXIT_MS) {
      const first = held.split('\n').map((l) => l.trim()).find((l) => l && !/^\[\d+:/.test(l)) ?? `exit code ${code}`;
      void runHeadless(`it exited at launch: ${first.slice(0, 160)}`);
      return;
    }
    if (held) process.stderr.write(held);
    exitLike(code, signal);
  });
}

// ---------------------------------------------------------------------------------------------

if (passthrough.includes('--help') || passthrough.includes('-h')) {
  await runHeadless(null, { skipBuild: true }); // the headless entry prints the usage
} else if (wantsHeadless) {
  await runHeadless(null);
} else {
  const bin = electronBinary();
  const why = bin.why ?? displayProblem() ?? ensureNative();
  if (why) await runHeadless(why);
  else runDesktop(bin.path);
}
