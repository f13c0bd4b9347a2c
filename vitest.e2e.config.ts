import { defineConfig } from 'vitest/config';

// Console e2e: Playwright (playwright-core) in Debian's Chromium against a real headless Gaffer.
// One file at a time: each spec starts its own server and browser.
export default defineConfig({
  test: {
    include: ['e2e/**/*.e2e.ts'],
    environment: 'node',
    testTimeout: 180_000,
    hookTimeout: 300_000,
    fileParallelism: false,
    pool: 'forks',
    reporters: ['default'],
  },
});
