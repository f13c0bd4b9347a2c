/**
 * Every inbox kind raised by a real scenario (real agents over the socket, manual clock): exactly
 * once per occurrence, folded into one item while it is open, cleared by acknowledging it, and
 * never raised again by a restart's reconcile.
 */
import { describe, expect, it } from 'vitest';
import type { InboxItem, InboxKind } from '../../common/attention';
import { EVERY_15_MIN, fail, ignore, startJobsHarness, succeed, until, type JobsHarness } from '../tests/jobs.testkit';
import { TestAgent } from '../tests/ws-agent.testkit';

let h: JobsHarness | undefined;

function items(kind?: InboxKind, state: 'open' | 'all' = 'all'): InboxItem[] {
  return h!.core.inbox.list({ state, limit: 500, ...(kind ? { kind } : {}) }).items;
}

function ack(item: InboxItem, note = 'seen'): void {
  h!.core.inbox.ack(item.id, { note, actor: 'operator:test' });
}

describe('held runs', () => {
  it('needs_human: one item per hold, with the question and the output; acknowledged it stays acked across a restart', async () => {
    h = await startJobsHarness({ start: '2026-11-30T00:00:30.000Z' });
    await h.agent('ops', fail('needs_human', 'approve the refund of 40 EUR?'));
    const jobId = h.createJob({ name: 'refunds', role: 'ops', schedule: EVERY_15_MIN, retry: { maxAttempts: 1 } });
    await h.advanceTo('2026-11-30T00:15:30.000Z');
    await until(() => h!.run(jobId, '2026-11-30T00:15')?.disposition === 'held', 'held');
    const run = h.run(jobId, '2026-11-30T00:15')!;
    const [item, ...more] = items('needs_human');
    expect(more).toEqual([]);
    expect(item).toMatchObject({ kind: 'needs_human', severity: 'critical', subject: `run:${run.id}`, state: 'open', count: 1 });
    expect(item!.title).toBe('refunds 2026-11-30T00:15 needs a human');
    expect(item!.detail).toBe('approve the refund of 40 EUR?');
    expect(h.core.inbox.counts()).toMatchObject({ open: 1, critical: 1 });
    expect(h.audit('inbox.raise').map((e) => e.subject)).toEqual([`inbox:${item!.id}`]);

    ack(item!, 'calling the customer');
    expect(h.core.inbox.counts().open).toBe(0);
    expect(h.core.inbox.get(item!.id)).toMatchObject({ state: 'acked', ackedBy: 'operator:test', note: 'calling the customer' });
    expect(h.audit('inbox.ack')).toHaveLength(1);

    // A restart reconciles held runs from the rows: the acknowledged occurrence is not raised again.
    const { dir, clock } = h;
    await h.stop();
    h = await startJobsHarness({ dir, clock });
    expect(items('needs_human')).toHaveLength(1);
    expect(h.core.inbox.counts().open).toBe(0);
  });

  it('a fatal error: a held item (not needs_human)', async () => {
    h = await startJobsHarness({ start: '2026-11-30T00:00:30.000Z' });
    await h.agent('ops', fail('fatal', 'schema validation failed'));
    const jobId = h.createJob({ name: 'etl', role: 'ops', schedule: EVERY_15_MIN });
    await h.advanceTo('2026-11-30T00:15:30.000Z');
    await until(() => h!.run(jobId, '2026-11-30T00:15')?.disposition === 'held', 'held');
    expect(items()).toEqual([expect.objectContaining({ kind: 'held', severity: 'warning', title: 'etl 2026-11-30T00:15 is held for review', detail: 'schema validation failed' })]);
  });

  it('reconcile raises a hold the events missed (a crash between the commit and the listener)', async () => {
    h = await startJobsHarness({ start: '2026-11-30T00:00:30.000Z' });
    await h.agent('ops', fail('needs_human', 'which account?'));
    const jobId = h.createJob({ name: 'pay', role: 'ops', schedule: EVERY_15_MIN, retry: { maxAttempts: 1 } });
    h.core.attention.sources.stop(); // the listener is gone, as if the process died right after the commit
    await h.advanceTo('2026-11-30T00:15:30.000Z');
    await until(() => h!.run(jobId, '2026-11-30T00:15')?.disposition === 'held', 'held');
    expect(items()).toEqual([]);
    const { dir, clock } = h;
    await h.stop();
    h = await startJobsHarness({ dir, clock });
    expect(items()).toEqual([expect.objectContaining({ kind: 'needs_human', detail: 'which account?' })]);
  });
});

describe('a blocked task', () => {
  it('needs_human about the task, with the agent’s note; once per block, acknowledged by unblocking or cancelling', async () => {
    h = await startJobsHarness();
    const token = h.core.tokens.create({ name: 'dev', role: 'dev', actor: 'test' }).token;
    const a = await TestAgent.hello(h.url, token, 'dev', 'dev-1');
    const { task } = h.core.tasks.create({ title: 'migrate billing', role: 'dev' }, { actor: 'test' });
    const claim = await a.request('claim', {});
    expect(claim.ok).toBe(true);
    const r = await a.request('report', { taskId: task.id, fence: claim.result.lock.fence, status: 'blocked', note: 'need prod DB credentials' });
    expect(r.ok).toBe(true);
    await h.settle();
    expect(items()).toEqual([expect.objectContaining({ kind: 'needs_human', subject: `task:${task.id}`, detail: 'need prod DB credentials', count: 1 })]);
    expect(items()[0]!.title).toContain('migrate billing');
    // Unblocking is the operator's decision: the item is acknowledged with it.
    h.core.tasks.unblock({ taskId: task.id, reason: 'credentials in the vault', actor: 'operator:test' });
    expect(items()).toEqual([expect.objectContaining({ state: 'acked', ackedBy: 'operator:test', note: 'unblocked by operator:test' })]);
    // Claimed again and blocked again: a new occurrence, a new item.
    const again = await a.request('claim', {});
    await a.request('report', { taskId: task.id, fence: again.result.lock.fence, status: 'blocked', note: 'vault is locked' });
    await h.settle();
    expect(items('needs_human', 'open')).toEqual([expect.objectContaining({ count: 1, detail: 'vault is locked' })]);
    h.core.tasks.cancel({ taskId: task.id, reason: 'not needed', actor: 'operator:test' });
    expect(h.core.inbox.counts().open).toBe(0);
    a.close();
  });
});

describe('a one-day sleep with an every-second job', () => {
  it('folds the missed slots into one item in one commit, not a durable commit per slot (claims are not held up)', async () => {
    h = await startJobsHarness({ start: '2026-11-30T00:00:00.500Z' });
    await h.agent('ops', succeed());
    const jobId = h.createJob({ name: 'tick', role: 'ops', schedule: { everyS: 1 }, missedWindow: 'skip_and_alert' });
    await h.advance(3000);
    await h.settle();
    let commits = 0;
    h.core.store.afterCommit(() => commits++);
    const audit0 = h.audit('inbox.raise').length + h.audit('inbox.repeat').length;
    h.clock.jump(86_400_000);
    await h.advance(2000);
    await h.settle();
    const inboxWrites = h.audit('inbox.raise').length + h.audit('inbox.repeat').length - audit0;
    const [item, ...more] = items('skipped_alert');
    expect(more).toEqual([]);
    expect(item!.subject).toBe(`job:${jobId}`);
    expect(item!.count).toBeGreaterThanOrEqual(50);
    expect(inboxWrites).toBe(item!.count);
    // Before: one commit per raise or fold (each an fsync, back to back on the event loop).
    expect(commits).toBeLessThan(inboxWrites / 4);
  });
});

describe('a 3-hour sleep', () => {
  it('one item per job (missed for run_now, skipped for skip_and_alert), saying the slots were missed while asleep', async () => {
    h = await startJobsHarness({ start: '2026-11-30T00:00:30.000Z' });
    await h.agent('ops', succeed());
    const a = h.createJob({ name: 'sync', role: 'ops', schedule: EVERY_15_MIN, missedWindow: 'run_now', toleranceS: 0 });
    const b = h.createJob({ name: 'report', role: 'ops', schedule: EVERY_15_MIN, missedWindow: 'skip_and_alert' });
    await h.advanceTo('2026-11-30T00:15:40.000Z');
    await until(() => h!.run(a, '2026-11-30T00:15')?.status === 'success' && h!.run(b, '2026-11-30T00:15')?.status === 'success', 'before the sleep');
    h.clock.jump(3 * 3600_000);
    await h.advance(60_000);
    await h.settle();
    // run_now queues its missed slots for backfill (three of them already ran again); skip_and_alert skips them.
    const missedA = h.runs(a).filter((r) => r.disposition === 'missed' || r.disposition === 'backfilled');
    const missedB = h.runs(b).filter((r) => r.disposition === 'missed');
    expect(missedA.length).toBe(11);
    expect(missedB.length).toBe(11);
    const all = items();
    expect(all.map((i) => [i.kind, i.subject, i.count]).sort()).toEqual([
      ['missed', `job:${a}`, 11],
      ['skipped_alert', `job:${b}`, 11],
    ]);
    expect(all.find((i) => i.kind === 'missed')!.title).toBe('sync: 11 slots missed while Gaffer was asleep');
    expect(all.find((i) => i.kind === 'skipped_alert')!.title).toBe('report: 11 slots skipped while Gaffer was asleep');
    // Two raises and twenty folded occurrences, not 22 items; the dead-man's switch reports none of them again.
    expect(h.audit('inbox.raise')).toHaveLength(2);
    expect(h.audit('inbox.repeat')).toHaveLength(20);
    await h.advance(5 * 60_000);
    expect(items('dead_man')).toEqual([]);
    // Acknowledging clears them.
    for (const i of all) ack(i);
    expect(h.core.inbox.counts().open).toBe(0);
  });

  it('a slot missed because Gaffer was not running says so', async () => {
    h = await startJobsHarness({ start: '2026-11-30T00:00:30.000Z' });
    await h.agent('ops', succeed());
    const jobId = h.createJob({ name: 'sync', role: 'ops', schedule: EVERY_15_MIN, missedWindow: 'skip_and_alert' });
    await h.advanceTo('2026-11-30T00:15:40.000Z');
    const { dir, clock } = h;
    await h.stop();
    clock.advance(50 * 60_000); // down for 50 minutes: the windows of 00:30 and 00:45 pass unseen
    h = await startJobsHarness({ dir, clock });
    await h.settle();
    expect(h.runs(jobId).filter((r) => r.disposition === 'missed').map((r) => r.slot)).toEqual(['2026-11-30T00:30', '2026-11-30T00:45']);
    expect(items().map((i) => i.title)).toEqual(['sync: 2 slots skipped while Gaffer was not running']);
  });
});

describe('repeated failures of a job', () => {
  it('raised at the third failure in a row, folding later ones; after an acknowledgement the next failure opens a new item', async () => {
    h = await startJobsHarness({ start: '2026-11-30T00:00:30.000Z' });
    await h.agent('ops', fail('retryable', 'upstream 502'));
    const jobId = h.createJob({ name: 'pull', role: 'ops', schedule: EVERY_15_MIN, retry: { maxAttempts: 1 } });
    await h.advanceTo('2026-11-30T00:30:40.000Z');
    await until(() => h!.runs(jobId).filter((r) => r.status === 'failed').length === 2, 'two failures');
    expect(items('repeated_failures')).toEqual([]);
    await h.advanceTo('2026-11-30T00:45:40.000Z');
    await until(() => items('repeated_failures').length === 1, 'third failure');
    expect(items('repeated_failures')[0]).toMatchObject({ count: 3, subject: `job:${jobId}`, title: 'pull failed 3 times in a row', detail: 'Latest: 2026-11-30T00:45: upstream 502; 0 retries used' });
    await h.advanceTo('2026-11-30T01:00:40.000Z');
    await until(() => items('repeated_failures')[0]!.count === 4, 'fourth folded');
    expect(items('repeated_failures')[0]!.title).toBe('pull failed 4 times in a row');
    ack(items('repeated_failures')[0]!);
    await h.advanceTo('2026-11-30T01:15:40.000Z');
    await until(() => items('repeated_failures', 'open').length === 1, 'a new item');
    expect(items('repeated_failures', 'open')[0]).toMatchObject({ count: 1, title: 'pull failed 5 times in a row' });
    expect(items('repeated_failures')).toHaveLength(2);
  });
});

describe('stuck queues and lost instances', () => {
  it('a role with ready tasks and no instance online, for longer than the recovery bound: one item per episode', async () => {
    h = await startJobsHarness({ config: { heartbeatTimeoutS: 120, sweepIntervalS: 60 } });
    h.core.tasks.create({ title: 'write release notes', role: 'docs' }, { actor: 'test' });
    await h.advance(2 * 60_000);
    expect(items('stuck_queue')).toEqual([]); // the bound is 3 min
    await h.advance(3 * 60_000);
    expect(items('stuck_queue')).toEqual([expect.objectContaining({ subject: 'role:docs', count: 1, title: 'Role docs: 1 task ready and no instance online' })]);
    await h.advance(10 * 60_000);
    expect(items('stuck_queue')).toHaveLength(1);
    expect(items('stuck_queue')[0]!.count).toBe(1); // the same episode is one occurrence
    ack(items('stuck_queue')[0]!);
    await h.advance(10 * 60_000);
    expect(items('stuck_queue', 'open')).toEqual([]);
    // An instance comes and goes: a new episode, a new item.
    const a = await h.agent('docs', succeed());
    a.close();
    await until(() => h!.core.instances.get(a.instanceId).status !== 'online', 'gone');
    await h.advance(10 * 60_000);
    expect(items('stuck_queue', 'open')).toHaveLength(1);
    expect(items('stuck_queue', 'open')[0]!.detail).toContain('last seen');
    // The queue has an instance again: the item resolves itself at once.
    const b = await h.agent('docs', succeed(), 'docs-2');
    expect(items('stuck_queue', 'open')).toEqual([]);
    expect(items('stuck_queue').find((i) => i.state === 'resolved')).toMatchObject({ resolution: 'docs-2, an instance of role docs, is online' });
    b.close();
  });

  it('a stuck queue whose tasks are all gone resolves at the next sweep', async () => {
    h = await startJobsHarness({ config: { heartbeatTimeoutS: 120, sweepIntervalS: 60 } });
    const { task } = h.core.tasks.create({ title: 'write release notes', role: 'docs' }, { actor: 'test' });
    await h.advance(5 * 60_000);
    expect(items('stuck_queue', 'open')).toHaveLength(1);
    h.core.tasks.cancel({ taskId: task.id, reason: 'not needed', actor: 'operator:test' });
    await h.advance(60_000);
    expect(items('stuck_queue')).toEqual([expect.objectContaining({ state: 'resolved', resolution: 'no task of role docs waits any more' })]);
  });

  it('an instance lost while holding locks: one item naming its tasks', async () => {
    h = await startJobsHarness({ config: { heartbeatTimeoutS: 120, sweepIntervalS: 60, reconnectGraceS: 10 } });
    const token = h.core.tokens.create({ name: 'dev', role: 'dev', actor: 'test' }).token;
    const a = await TestAgent.hello(h.url, token, 'dev', 'dev-7');
    const t1 = h.core.tasks.create({ title: 'fix login', role: 'dev' }, { actor: 'test' }).task;
    const t2 = h.core.tasks.create({ title: 'fix logout', role: 'dev' }, { actor: 'test' }).task;
    expect((await a.request('claim', {})).ok).toBe(true);
    expect((await a.request('claim', {})).ok).toBe(true);
    a.close();
    await until(() => h!.core.instances.get(a.instanceId).status === 'disconnected', 'disconnected');
    await h.advance(2 * 60_000);
    await until(() => h!.core.instances.get(a.instanceId).status === 'offline', 'offline');
    await h.settle();
    const lost = items('instance_lost');
    expect(lost).toEqual([expect.objectContaining({ subject: `instance:${a.instanceId}`, count: 1, title: 'Instance dev-7 (dev) was lost holding 2 locks' })]);
    expect(lost[0]!.detail).toContain(`${t1.id} “fix login”`);
    expect(lost[0]!.detail).toContain(`${t2.id} “fix logout”`);
    // The reconcile of a restart finds the same occurrence and raises nothing.
    expect(h.core.attention.sources.reconcile()).toBe(0);
  });
});

describe('the dead-man’s switch', () => {
  it('a slot whose trigger nobody acknowledges never starts: one item a sweep after its window, later slots fold in', async () => {
    h = await startJobsHarness({ start: '2026-11-30T00:00:30.000Z', config: { sweepIntervalS: 60 } });
    await h.agent('ops', ignore);
    const jobId = h.createJob({ name: 'heartbeat', role: 'ops', schedule: EVERY_15_MIN, retry: { maxAttempts: 1 } });
    await h.advanceTo('2026-11-30T00:29:00.000Z');
    expect(items('dead_man')).toEqual([]); // the 00:15 slot may still start until 00:30
    await h.advanceTo('2026-11-30T00:32:00.000Z');
    const dead = items('dead_man');
    expect(dead).toEqual([expect.objectContaining({ severity: 'critical', subject: `job:${jobId}`, count: 1, title: 'heartbeat: slot 2026-11-30T00:15 did not start by the end of its window' })]);
    expect(dead[0]!.detail).toMatch(/trigger undeliverable/);
    await h.advanceTo('2026-11-30T00:47:00.000Z');
    expect(items('dead_man')).toEqual([expect.objectContaining({ count: 2, title: 'heartbeat: 2 slots did not start by the end of their windows' })]);
  });

  it('Gaffer not running over a folded slot: detected a sweep after the next start', async () => {
    h = await startJobsHarness({ start: '2026-11-30T00:00:30.000Z', config: { sweepIntervalS: 60 } });
    await h.agent('ops', succeed());
    const jobId = h.createJob({ name: 'fold', role: 'ops', schedule: EVERY_15_MIN, missedWindow: 'fold_into_next' });
    await h.advanceTo('2026-11-30T00:15:40.000Z');
    const { dir, clock } = h;
    await h.stop();
    clock.advance(50 * 60_000); // down over 00:30, 00:45 and into 01:00's window
    h = await startJobsHarness({ dir, clock });
    await h.agent('ops', succeed());
    await h.settle();
    expect(h.runs(jobId).filter((r) => r.disposition === 'folded' || r.disposition === 'backfilled').map((r) => r.slot)).toEqual(['2026-11-30T00:30', '2026-11-30T00:45']);
    expect(items()).toEqual([]); // fold_into_next raises no alert of its own
    await h.advance(61_000);
    expect(items()).toEqual([expect.objectContaining({ kind: 'dead_man', count: 2 })]);
    // Restarting again does not look at those slots a second time.
    const again = h.dir;
    await h.stop();
    h = await startJobsHarness({ dir: again, clock });
    await h.advance(61_000);
    expect(items('dead_man')).toHaveLength(1);
    expect(items('dead_man')[0]!.count).toBe(2);
  });
});
