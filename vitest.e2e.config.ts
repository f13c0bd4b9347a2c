import { defineConfig } from 'vitest/config';

// Console e2e: Playwright (playwright-core) in Debian's Chromium against a real headless Gaffer.
// Each spec starts its own server (on a free port), data directory and browser, so two specs run
// side by side (the suite is half waiting on servers and pages). The performance spec runs alone,
// after the others: it seeds a million rows and prints frame times that a neighbour would skew.
const shared = { environment: 'node', testTimeout: 180_000, hookTimeout: 300_000, pool: 'forks' } as const;
const ALONE = ['e2e/perf.e2e.ts'];

export default defineConfig({
  test: {
    reporters: ['default'],
    projects: [
      { test: { ...shared, name: 'e2e', include: ['e2e/**/*.e2e.ts'], exclude: ALONE, maxWorkers: 2, sequence: { groupOrder: 0 } } },
      { test: { ...shared, name: 'e2e-alone', include: ALONE, maxWorkers: 1, sequence: { groupOrder: 1 } } },
    ],
  },
});
