/**
 * Where a failed run stands for the operator (run-settlement.ts): the run lists' `settled` filter
 * against every way a run can fail, be held, decided and run again — and the decision's own rule
 * (`awaitsDecision`, used by approve / reject) agrees with the SQL on each of them.
 */
import { describe, expect, it } from 'vitest';
import type { BackfillRow, RunRow } from './rows';
import { awaitsDecision } from './run-settlement';
import { assertInvariants, fail, hang, OPERATOR, startJobsHarness, succeed, until, type JobsHarness } from '../tests/jobs.testkit';

const JOB = { window: { start: '09:00', end: '12:00', recheckEveryS: 300 }, runTimeoutS: 600, retry: { maxAttempts: 1 }, missedWindow: 'skip_and_alert' as const };
const DUE = '2026-11-30T01:00:00.000Z';

/** One job (and one agent) per role, so each run gets its own story. */
async function failing(h: JobsHarness, role: string, behavior: Parameters<JobsHarness['agent']>[1], spec: Record<string, unknown> = {}) {
  const agent = await h.agent(role, behavior, role);
  const jobId = h.createJob({ ...JOB, name: role, role, ...spec });
  return { agent, jobId, run: () => h.run(jobId, '2026-11-30')! };
}

const ids = (h: JobsHarness, settled: 'failed' | 'awaiting_decision') =>
  h.core.jobs
    .listRuns({ settled, limit: 1000 })
    .items.map((r) => r.job)
    .sort();

describe('settled: failed for good, or awaiting a decision', () => {
  it('a run that succeeded after approval is neither; a re-run that needs a human again awaits a decision again; decisions follow the same rule', async () => {
    const h = await startJobsHarness();
    const held = await failing(h, 'held', fail('needs_human', 'refund 4 200 EUR?'));
    const approvedOk = await failing(h, 'approved-ok', fail('needs_human', 'send the invoice?'));
    const approvedAgain = await failing(h, 'approved-again', fail('needs_human', 'rotate the key?'));
    const rerunning = await failing(h, 'rerunning', fail('fatal', 'bad input'));
    const rejected = await failing(h, 'rejected', fail('fatal', 'schema mismatch'));
    await failing(h, 'plain-failed', fail('retryable', 'upstream 503'));
    await failing(h, 'requeued', fail('retryable', 'upstream 503'), { missedWindow: 'run_now', toleranceS: 7200 });
    await failing(h, 'ok', succeed());
    await h.advanceTo(DUE);
    await h.settle();

    approvedOk.agent.behavior = succeed();
    h.core.jobs.approvals.approve(approvedOk.run().id, { note: 'yes, send it', ...OPERATOR });
    approvedAgain.agent.behavior = fail('needs_human', 'the new key is refused: which vault?');
    h.core.jobs.approvals.approve(approvedAgain.run().id, { note: 'yes', ...OPERATOR });
    rerunning.agent.behavior = hang;
    h.core.jobs.approvals.approve(rerunning.run().id, { note: 'fixed the input', ...OPERATOR });
    h.core.jobs.approvals.reject(rejected.run().id, { note: 'not worth it', ...OPERATOR });
    await until(() => approvedOk.run().disposition === 'backfilled', 'the approved re-run to succeed');
    await until(() => approvedAgain.agent.triggers.length === 2 && h.audit('backfill.fail').length === 1, 'the approved re-run to need a human again');
    await h.settle();

    // Every run here but "ok" has status failed: the status never goes back.
    expect(h.core.jobs.listRuns({ status: 'failed', limit: 1000 }).items).toHaveLength(7);
    expect(held.run()).toMatchObject({ status: 'failed', disposition: 'held', held: true, lastError: 'refund 4 200 EUR?' });
    expect(approvedOk.run()).toMatchObject({ status: 'failed', disposition: 'backfilled' });
    expect(ids(h, 'awaiting_decision')).toEqual(['approved-again', 'held']);
    expect(ids(h, 'failed')).toEqual(['plain-failed', 'rejected']);

    // The decision's rule (JS) and the lists' (SQL) agree on every run.
    const rows = h.core.db.prepare<[], RunRow>('SELECT * FROM runs').all();
    const latest = h.core.db.prepare<[string], BackfillRow>('SELECT * FROM backfills WHERE run_id = ? ORDER BY id DESC LIMIT 1');
    const awaiting = new Set(h.core.jobs.listRuns({ settled: 'awaiting_decision', limit: 1000 }).items.map((r) => r.id));
    for (const r of rows) expect(awaitsDecision(r, latest.get(r.id)), r.job_name).toBe(awaiting.has(r.id));

    // And so do the decisions: a run awaiting one is decided, a settled one is refused.
    expect(() => h.core.jobs.approvals.approve(approvedOk.run().id, { note: 'again?', ...OPERATOR })).toThrow(/not held for review/);
    expect(() => h.core.jobs.approvals.reject(rejected.run().id, { note: 'again?', ...OPERATOR })).toThrow(/not held for review/);
    h.core.jobs.approvals.reject(approvedAgain.run().id, { note: 'leave the old key', ...OPERATOR });
    expect(ids(h, 'awaiting_decision')).toEqual(['held']);
    expect(ids(h, 'failed')).toEqual(['approved-again', 'plain-failed', 'rejected']);
    assertInvariants(h.core);
  });

  it('is refused when it is not one of its values, and combines with the other filters', async () => {
    const h = await startJobsHarness();
    expect(() => h.core.jobs.listRuns({ settled: 'held' })).toThrow(expect.objectContaining({ code: 'bad_request' }));
    const { jobId } = await failing(h, 'plain-failed', fail('retryable', 'upstream 503'));
    await h.advanceTo(DUE);
    await h.settle();
    expect(h.core.jobs.listRuns({ settled: 'failed', job: jobId }).items).toHaveLength(1);
    expect(h.core.jobs.listRuns({ settled: 'failed', status: 'success' }).items).toEqual([]);
  });
});
