#!/usr/bin/env node
/**
 * Console e2e: builds the renderer when needed, then runs the Playwright specs (vitest +
 * playwright-core, Chromium from Debian) against a real headless Gaffer.
 *
 *   node scripts/e2e.mjs [--build] [--no-perf] [vitest args…]
 *
 * --build    rebuild the renderer even if out/renderer looks current
 * --no-perf  skip the performance spec (1 000 000 audit rows, 50 000 tasks, 50 agents)
 * Env: CHROMIUM_PATH (default /usr/bin/chromium); GAFFER_E2E_PERF=0 (same as --no-perf);
 *      GAFFER_E2E_AUDIT_ROWS / GAFFER_E2E_TASKS / GAFFER_E2E_AGENTS to scale the perf spec.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const force = args.includes('--build');
const noPerf = args.includes('--no-perf') || process.env.GAFFER_E2E_PERF === '0';
const rest = args.filter((a) => a !== '--build' && a !== '--no-perf');
const outDir = path.join(root, 'out', 'renderer');

function newestMtime(dir) {
  let newest = 0;
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (!/\.test\.tsx?$/.test(e.name)) newest = Math.max(newest, fs.statSync(p).mtimeMs);
    }
  };
  walk(dir);
  return newest;
}

function rendererIsCurrent() {
  const index = path.join(outDir, 'index.html');
  if (!fs.existsSync(index)) return false;
  const built = fs.statSync(index).mtimeMs;
  const src = Math.max(newestMtime(path.join(root, 'src-renderer')), newestMtime(path.join(root, 'src-main', 'common')));
  return built >= src;
}

async function buildRenderer() {
  const t0 = Date.now();
  if (fs.existsSync(path.join(root, 'electron.vite.config.ts'))) {
    console.log('e2e: building with electron-vite (electron.vite.config.ts)…');
    const r = spawnSync('npx', ['electron-vite', 'build'], { cwd: root, stdio: 'inherit' });
    if (r.status !== 0) process.exit(r.status ?? 1);
  } else {
    // The shell's build config is not there yet: build the renderer alone with Vite.
    console.log('e2e: electron.vite.config.ts not found; building the renderer with Vite…');
    const { build } = await import('vite');
    const react = (await import('@vitejs/plugin-react')).default;
    let htmlRoot = path.join(root, 'src-renderer');
    if (!fs.existsSync(path.join(htmlRoot, 'index.html'))) {
      htmlRoot = path.join(root, '.scratch', 'renderer-root');
      fs.mkdirSync(htmlRoot, { recursive: true });
      fs.writeFileSync(
        path.join(htmlRoot, 'index.html'),
        `<!doctype html><html lang="en"><head><meta charset="UTF-8" /><meta name="viewport" content="width=device-width, initial-scale=1" /><meta http-equiv="Content-Security-Policy" content="default-src 'self'" /><title>Gaffer</title></head><body><div id="root"></div><script type="module" src="../../src-renderer/main.tsx"></script></body></html>`,
      );
    }
    await build({ root: htmlRoot, base: './', plugins: [react()], logLevel: 'warn', build: { outDir, emptyOutDir: true, sourcemap: false, chunkSizeWarningLimit: 2000 } });
  }
  console.log(`e2e: renderer built in ${((Date.now() - t0) / 1000).toFixed(1)} s → ${path.relative(root, outDir)}`);
}

if (force || !rendererIsCurrent()) await buildRenderer();
else console.log(`e2e: renderer in ${path.relative(root, outDir)} is current (pass --build to rebuild)`);

const env = { ...process.env, GAFFER_RENDERER_DIR: outDir, ...(noPerf ? { GAFFER_E2E_PERF: '0' } : {}) };
const r = spawnSync('npx', ['vitest', 'run', '--config', 'vitest.e2e.config.ts', ...rest], { cwd: root, stdio: 'inherit', env });
console.log(`e2e: screenshots in ${path.join(root, 'e2e', 'screenshots')}`);
process.exit(r.status ?? 1);
