import { it } from 'vitest';
import { startJobsHarness, succeed } from './jobs.testkit';
it('dbg', async () => {
  const h = await startJobsHarness();
  await h.agent('reporter', succeed());
  const jobId = h.createJob({ name: 'x', window: { start: '09:00', end: '10:00', recheckEveryS: 300 } });
  console.log(h.core.db.prepare('SELECT id, cursor, next_check_at, enabled FROM jobs').all(), h.core.jobs.runner.nextWakeAt, h.core.jobs.runner.isStarted);
  await h.advanceTo('2026-11-30T01:00:00.000Z');
  console.log(h.core.db.prepare('SELECT id, cursor, next_check_at FROM jobs').all(), h.core.jobs.runner.nextWakeAt, new Date(h.clock.now()).toISOString());
  console.log(h.core.db.prepare('SELECT * FROM runs').all());
  await h.close();
});
