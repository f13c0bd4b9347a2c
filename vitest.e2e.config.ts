import path from 'node:path';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The specs that take longest, longest first (from CI runs: daily ≈ 2 min, perf ≈ 1.7 min, never-silent
 * ≈ 1 min, then jobs, attention, console under a minute each). Vitest's own order on a clean clone (no
 * cache) is by file size, which started perf fourth and left it as the tail on one worker while the
 * other had finished. A spec not listed runs after these, in vitest's order.
 */
const SLOW_FIRST = ['daily', 'perf', 'never-silent', 'jobs', 'attention'].map((n) => `e2e/${n}.e2e.ts`);

class SlowFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (f: TestSpecification) => {
      const i = SLOW_FIRST.indexOf(path.relative(f.project.config.root, f.moduleId).split(path.sep).join('/'));
      return i < 0 ? SLOW_FIRST.length : i;
    };
    const base = await super.sort(files);
    return base.map((f, i) => ({ f, i })).sort((a, b) => rank(a.f) - rank(b.f) || a.i - b.i).map(({ f }) => f);
  }
}

// Console e2e: Playwright (playwright-core) in Debian's Chromium against a real headless Gaffer.
// Each spec starts its own server (on a free port), data directory and browser, so two specs run
// side by side: the suite is half waiting on servers and pages, and the longest specs start first
// (SlowFirst) so the two workers end together. The frame times the performance spec prints are read
// with a neighbour here; `npm run bench` is where they are measured.
export default defineConfig({
  test: {
    include: ['e2e/**/*.e2e.ts'],
    environment: 'node',
    testTimeout: 180_000,
    hookTimeout: 300_000,
    pool: 'forks',
    maxWorkers: 2,
    reporters: ['default'],
    sequence: { sequencer: SlowFirst },
  },
});
