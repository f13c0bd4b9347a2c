import { defineConfig } from 'vitest/config';

// Console e2e: Playwright (playwright-core) in Debian's Chromium against a real headless Gaffer.
// Each spec starts its own server (on a free port), data directory and browser, so two specs run
// side by side: the suite is half waiting on servers and pages, and the longest spec (daily) runs
// beside all the others. The frame times the performance spec prints are read with a neighbour
// here; `npm run bench` is where they are measured.
export default defineConfig({
  test: {
    include: ['e2e/**/*.e2e.ts'],
    environment: 'node',
    testTimeout: 180_000,
    hookTimeout: 300_000,
    pool: 'forks',
    maxWorkers: 2,
    reporters: ['default'],
  },
});
