/**
 * A big data directory for the start-up and idle benchmarks: audit rows and tasks seeded straight
 * into the database (e2e/seed.ts), then jobs created through the core as the API would.
 */
import { createCore } from '../src-main/core/create-core';
import { seedDatabase } from '../e2e/seed';

export interface BigData {
  auditRows: number;
  tasks: number;
  jobs: number;
}

/** Daily jobs spread over four hours starting 12 h from now (UTC): none falls due while a benchmark watches. */
export function seedBigData(dir: string, d: BigData): { ms: number } {
  const t0 = performance.now();
  const firstHour = (new Date().getUTCHours() + 12) % 24;
  if (d.auditRows > 0 || d.tasks > 0) seedDatabase(dir, { auditRows: d.auditRows, tasks: d.tasks });
  const core = createCore({ dataDir: dir });
  try {
    core.store.write(() => {
      for (let i = 0; i < d.jobs; i++) {
        core.jobs.create(
          { name: `nightly-${i}`, role: ['dev', 'pm', 'ops', 'data', 'reviewer'][i % 5], schedule: { cron: `${i % 60} ${(firstHour + (i % 4)) % 24} * * *`, timezone: 'UTC' }, payload: { n: i } },
          { actor: 'bench' },
        );
      }
    });
  } finally {
    core.close();
  }
  return { ms: performance.now() - t0 };
}
