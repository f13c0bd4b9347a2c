import os from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src-main/**/*.test.ts', 'src-renderer/**/*.test.{ts,tsx}', 'examples/**/*.test.ts', 'sdk/typescript/**/*.test.ts'],
    environment: 'node',
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Vitest's default is one worker fewer than the cores: a single worker on a 2-core CI machine. Much of
    // this suite waits on child processes, sockets and timers, so a worker per core (at least two) keeps
    // both cores busy.
    maxWorkers: Math.max(2, os.availableParallelism()),
  },
});
