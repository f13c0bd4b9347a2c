/**
 * The typed run phase, and the promise behind it: the engine decides by the run row (`runPhase`,
 * `waiting_on`, `overrides_preconditions`), never by reading its own explanation (`checks`) back.
 * Each end-to-end case wipes the checks' evidence while a run waits and shows the decision stands.
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../common/clock';
import { createCore } from '../create-core';
import { MIGRATIONS } from '../db/migrations';
import { tempDir } from '../testing/test-core';
import { assertInvariants, BASE_CONFIG, hang, startJobsHarness, succeed, until, type JobsHarness } from './jobs.testkit';
import { runPhase, type PhaseColumns, type RunPhase } from './run-phase';

let h: JobsHarness | undefined;

/** The explanation says nothing any more: every check's evidence of the job is an empty object. */
function wipeEvidence(jobId: string) {
  h!.core.db.prepare(`UPDATE checks SET evidence = '{}' WHERE job_id = ?`).run(jobId);
}

function row(jobId: string, slot: string) {
  return h!.core.db.prepare('SELECT status, waiting_on, overrides_preconditions FROM runs WHERE job_id = ? AND slot = ?').get(jobId, slot) as {
    status: string;
    waiting_on: string | null;
    overrides_preconditions: number;
  };
}

describe('runPhase', () => {
  const cases: Array<[PhaseColumns, RunPhase]> = [
    [{ status: 'pending', dispatched_at: null, instance_id: null, attempt: 0, disposition: 'waiting' }, 'checking'],
    [{ status: 'pending', dispatched_at: null, instance_id: null, attempt: 1, disposition: 'retry_scheduled' }, 'undelivered'],
    [{ status: 'running', dispatched_at: null, instance_id: null, attempt: 2, disposition: 'retry_scheduled' }, 'retrying'],
    [{ status: 'pending', dispatched_at: 5, instance_id: null, attempt: 1, disposition: 'dispatched' }, 'offered'],
    [{ status: 'running', dispatched_at: 5, instance_id: null, attempt: 2, disposition: 'dispatched' }, 'offered'],
    [{ status: 'running', dispatched_at: 5, instance_id: 'inst_a', attempt: 2, disposition: 'running' }, 'started'],
    [{ status: 'running', dispatched_at: 5, instance_id: null, attempt: 2, disposition: 'verifying' }, 'verifying'],
    [{ status: 'running', dispatched_at: null, instance_id: null, attempt: 2, disposition: 'verifying' }, 'verifying'],
    [{ status: 'success', dispatched_at: null, instance_id: 'inst_a', attempt: 1, disposition: 'ran' }, 'finished'],
    [{ status: 'failed', dispatched_at: null, instance_id: null, attempt: 3, disposition: 'failed' }, 'finished'],
    [{ status: 'skipped', dispatched_at: null, instance_id: null, attempt: 0, disposition: 'skipped_calendar' }, 'finished'],
  ];
  it.each(cases)('%o is %s', (columns, phase) => {
    expect(runPhase(columns)).toBe(phase);
  });
});

describe('decisions read the run row, never the explanation', () => {
  it('a run waiting for an instance is dispatched at the hello, even with its checks wiped', async () => {
    h = await startJobsHarness();
    const jobId = h.createJob({ name: 'r', window: { start: '09:00', end: '10:00', recheckEveryS: 300 } });
    await h.advanceTo('2026-11-30T01:07:00.000Z');
    expect(row(jobId, '2026-11-30')).toMatchObject({ status: 'pending', waiting_on: 'instance' });
    wipeEvidence(jobId);
    const agent = await h.agent('reporter', succeed());
    await until(() => h!.run(jobId, '2026-11-30')?.status === 'success', 'ran on hello');
    expect(agent.triggers[0]!.receivedAt).toBe(Date.parse('2026-11-30T01:07:00.000Z'));
  });

  it("queue_one: the queued slot still waits past its window with its checks wiped", async () => {
    h = await startJobsHarness({ start: '2026-11-30T00:00:30.000Z' });
    const agent = await h.agent('ops', hang);
    const jobId = h.createJob({ name: 'long', role: 'ops', schedule: { everyS: 300, timezone: 'UTC' }, overlap: 'queue_one', runTimeoutS: 3600 });
    await h.advanceTo('2026-11-30T00:12:00.000Z');
    expect(row(jobId, '2026-11-30T00:10')).toMatchObject({ status: 'pending', waiting_on: 'overlap' });
    wipeEvidence(jobId);
    await h.advanceTo('2026-11-30T00:16:00.000Z');
    expect(h.run(jobId, '2026-11-30T00:10')).toMatchObject({ status: 'pending', disposition: 'waiting' });
    agent.behavior = succeed();
    await agent.result(agent.triggers[0]!, 'success');
    await until(() => h!.run(jobId, '2026-11-30T00:10')?.status === 'success', 'the queued slot runs');
    assertInvariants(h.core);
  });

  it('a run by hand waiting for an instance keeps skipping its preconditions with its checks gone', async () => {
    h = await startJobsHarness();
    const jobId = h.createJob({ name: 'r', window: { start: '09:00', end: '10:00', recheckEveryS: 300 }, preconditions: [{ kind: 'signal', name: 'data-ready' }] });
    const res = h.core.jobs.triggerNow(jobId, { reason: 'urgent', actor: 'alice', slot: '2026-11-30' });
    expect(res).toMatchObject({ created: true, dispatched: false });
    expect(row(jobId, '2026-11-30')).toMatchObject({ waiting_on: 'instance', overrides_preconditions: 1 });
    h.core.db.prepare('DELETE FROM checks WHERE job_id = ?').run(jobId);
    const agent = await h.agent('reporter', succeed());
    await until(() => h!.run(jobId, '2026-11-30')?.status === 'success', 'ran by hand on hello');
    expect(agent.triggers).toHaveLength(1);
  });
});

describe('the runs_waiting_on migration reads the facts of open runs from their checks once', () => {
  it('an existing database keeps a run waiting for an instance, and a run by hand keeps its override', async () => {
    const dir = tempDir('gaffer-m-waiting-on-');
    const clock = new ManualClock('2026-11-30T00:30:00.000Z');
    let core = createCore({ clock, dataDir: dir, config: BASE_CONFIG });
    core.start();
    const waiting = core.jobs.create({ name: 'w', role: 'reporter', schedule: { cron: '0 9 * * *', timezone: 'Asia/Shanghai' }, window: { start: '09:00', end: '10:00', recheckEveryS: 300 } }, { actor: 'test' }).job.id;
    const byHand = core.jobs.create({ name: 'm', role: 'reporter', schedule: { cron: '0 9 * * *', timezone: 'Asia/Shanghai' } }, { actor: 'test' }).job.id;
    clock.advanceTo(Date.parse('2026-11-30T01:02:00.000Z'));
    await core.jobs.settled();
    core.jobs.triggerNow(byHand, { reason: 'urgent', actor: 'alice', slot: '2026-11-30' });
    core.close();
    // The database as the version before the runs_waiting_on migration left it: no columns, the
    // facts only in the checks (and none of the later migrations' columns either).
    const raw = new Database(path.join(dir, 'gaffer.db'));
    raw.exec('DROP INDEX runs_offer_to');
    for (const c of ['offer_to', 'offered_at', 'ack_due_at', 'offered', 'waiting_on', 'overrides_preconditions']) raw.exec(`ALTER TABLE runs DROP COLUMN ${c}`);
    raw.pragma(`user_version = ${MIGRATIONS.findIndex((m) => m.name.endsWith('_runs_waiting_on'))}`);
    raw.close();
    core = createCore({ clock, dataDir: dir, config: BASE_CONFIG });
    const facts = core.db.prepare('SELECT job_id, waiting_on, overrides_preconditions FROM runs ORDER BY job_id').all() as Array<{ job_id: string; waiting_on: string; overrides_preconditions: number }>;
    expect(facts.find((f) => f.job_id === waiting)).toMatchObject({ waiting_on: 'instance', overrides_preconditions: 0 });
    expect(facts.find((f) => f.job_id === byHand)).toMatchObject({ waiting_on: 'instance', overrides_preconditions: 1 });
    core.close();
  });
});
