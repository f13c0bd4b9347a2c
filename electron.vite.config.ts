/**
 * Build for the three Electron targets (electron-vite):
 *   main     src-main/electron/main.ts → out/main/index.js (ESM; dependencies stay external:
 *            better-sqlite3 is a native module, ws/zod/luxon/croner load from node_modules)
 *   preload  src-preload/index.ts      → out/preload/index.cjs (CommonJS, fully bundled: a
 *            sandboxed preload cannot load ESM or anything from node_modules)
 *   renderer src-renderer/index.html   → out/renderer (React; `base: './'` so it also works from
 *            a file; served by Electron's app:// handler and by the headless server)
 */
import { resolve } from 'node:path';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'electron-vite';
import type { Plugin } from 'vite';

/**
 * Dev only: React Refresh injects an inline preamble and Vite injects styles, which the strict
 * CSP meta tag would block. `electron-vite dev` relaxes it for the dev server; builds keep it.
 */
function devCsp(): Plugin {
  return {
    name: 'gaffer:dev-csp',
    apply: 'serve',
    transformIndexHtml(html) {
      return html.replace(
        /(<meta\s+http-equiv="Content-Security-Policy"\s+content=")[^"]*(")/i,
        `$1default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; font-src 'self' data:; connect-src 'self' ws://localhost:* ws://127.0.0.1:*; object-src 'none'; base-uri 'self'$2`,
      );
    },
  };
}

export default defineConfig({
  main: {
    build: {
      outDir: 'out/main',
      externalizeDeps: true,
      rolldownOptions: {
        // The worker threads (core/logs/worker-engine.ts, core/audit/export-thread.ts find them next to the main bundle).
        input: {
          index: resolve(__dirname, 'src-main/electron/main.ts'),
          'logs-worker': resolve(__dirname, 'src-main/core/logs/worker.ts'),
          'audit-export-worker': resolve(__dirname, 'src-main/core/audit/export-worker.ts'),
        },
        external: ['better-sqlite3', 'ws', 'bufferutil', 'utf-8-validate'],
      },
    },
  },
  preload: {
    build: {
      outDir: 'out/preload',
      externalizeDeps: false,
      rolldownOptions: {
        input: { index: resolve(__dirname, 'src-preload/index.ts') },
        external: ['electron'],
        output: { format: 'cjs', entryFileNames: '[name].cjs' },
      },
    },
  },
  renderer: {
    root: resolve(__dirname, 'src-renderer'),
    base: './',
    plugins: [react(), devCsp()],
    build: {
      outDir: resolve(__dirname, 'out/renderer'),
      emptyOutDir: true,
      chunkSizeWarningLimit: 2000,
      rolldownOptions: { input: resolve(__dirname, 'src-renderer/index.html') },
    },
  },
});
