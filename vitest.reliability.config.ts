import { defineConfig } from 'vitest/config';

// The reliability suite (e2e/reliability, docs/reliability.md): real headless servers killed with
// SIGKILL, frozen agents, clock jumps, a full disk, protocol fuzzing and security checks.
// One file at a time: scenarios start servers on fixed ports and measure timings.
// Bounded by default (CI, `npm test`); GAFFER_RELIABILITY=full runs more rounds and cases.
const full = process.env.GAFFER_RELIABILITY === 'full';

export default defineConfig({
  test: {
    include: ['e2e/reliability/**/*.test.ts'],
    environment: 'node',
    testTimeout: full ? 1_800_000 : 240_000,
    hookTimeout: 120_000,
    fileParallelism: false,
    pool: 'forks',
    reporters: ['default'],
  },
});
