/**
 * An instance's load for the next offer counts its offers out up to OFFER_LOAD_CAP: the count no
 * longer grows with a burst (every pick counted every offer out before), and instances with that
 * many out are equally loaded, so the offers go round them in turn.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { CalendarRepo } from './calendar-repo';
import { startJobsHarness, type JobsHarness } from '../tests/jobs.testkit';
import { JobRepo, OFFER_LOAD_CAP } from './repo';

let h: JobsHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('offers out, counted for the load', () => {
  it('are counted exactly below the cap and as the cap above it', async () => {
    h = await startJobsHarness({ startCore: false });
    const core = h.core;
    const jobId = h.createJob({ name: 'load' });
    const insert = core.db.prepare(
      `INSERT INTO runs (id, job_id, job_name, slot, slot_at, status, disposition, trigger, max_retry, opens_at, version, trace_id, idempotency_key, created_at, updated_at, offer_to)
       VALUES (?, ?, 'load', ?, ?, 'pending', 'dispatched', 'schedule', 0, 0, 1, 't', ?, 0, 0, ?)`,
    );
    const offer = (to: string, n: number) => {
      for (let i = 0; i < n; i++) insert.run(`${to}-${i}`, jobId, `${to}-${i}`, i, `${to}-${i}`, to);
    };
    offer('busy', OFFER_LOAD_CAP + 40);
    offer('at-cap', OFFER_LOAD_CAP);
    offer('light', 3);
    const repo = new JobRepo(core, new CalendarRepo(core.db));
    expect(repo.offersOutTo('light')).toBe(3);
    expect(repo.offersOutTo('at-cap')).toBe(OFFER_LOAD_CAP);
    expect(repo.offersOutTo('busy')).toBe(OFFER_LOAD_CAP);
    expect(repo.offersOutTo('nobody')).toBe(0);
  });
});
