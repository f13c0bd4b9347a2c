/**
 * Never silent (PROTOCOL §12): a failure that ends for good is in the inbox at once — not after
 * three in a row — and reaches a webhook signed; the item resolves itself when its cause is gone.
 * Real agents over the socket, a manual clock, a webhook receiver on loopback.
 */
import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { InboxItem, InboxKind } from '../../common/attention';
import { isGafferError } from '../../common/errors';
import { fail, startJobsHarness, succeed, until, type JobsHarness } from '../tests/jobs.testkit';
import { TestAgent } from '../tests/ws-agent.testkit';

let h: JobsHarness | undefined;
const servers: http.Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
});

interface Received {
  headers: http.IncomingHttpHeaders;
  raw: string;
  body: Record<string, unknown>;
}

/** A webhook receiver on 127.0.0.1 that keeps every request it gets. */
async function receiver(status = 200): Promise<{ url: string; got: Received[] }> {
  const got: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      got.push({ headers: req.headers, raw, body: JSON.parse(raw) as Record<string, unknown> });
      res.writeHead(status).end();
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, got };
}

/** The five-line verifier docs/operator-guide.md shows, in Node. */
function verified(secret: string, r: Received): boolean {
  const [t, v1] = String(r.headers['gaffer-signature']).split(',').map((p) => p.split('=')[1]);
  const want = createHmac('sha256', secret).update(`${t}.${r.raw}`).digest('hex');
  return v1 === want;
}

function items(kind: InboxKind): InboxItem[] {
  return h!.core.inbox.list({ state: 'all', kind, limit: 100 }).items;
}

const DAILY = { cron: '0 1 * * *', timezone: 'UTC' };

describe('a job run that fails for good', () => {
  it('a daily job failing all three attempts raises run_failed at its last attempt, signed to a loopback webhook; the next run’s success resolves it', async () => {
    h = await startJobsHarness({ start: '2026-11-30T00:00:30.000Z' });
    const hook = await receiver();
    const view = h.core.attention.notifications.put({ webhooks: [{ url: hook.url }], consoleUrl: 'http://127.0.0.1:7311/', actor: 'operator:test' });
    const secret = view.webhooks[0]!.secret;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{20,}$/);
    // Later reads mask it; a new webhook sends every critical and warning kind.
    expect(h.core.attention.notifications.view().webhooks[0]!.secret).toBe(`whsec_…${secret.slice(-4)}`);
    expect(view.webhooks[0]!.events).toEqual(expect.arrayContaining(['run_failed', 'task_failed', 'crash_looping', 'webhook_dead', 'storage_fault', 'needs_human']));

    const agent = await h.agent('qa', fail('retryable', 'npm test: 3 failing'));
    const jobId = h.createJob({ name: 'nightly-qa', role: 'qa', schedule: DAILY, retry: { maxAttempts: 3, firstDelayS: 60 } });
    await h.advanceTo('2026-11-30T01:10:00.000Z');
    await until(() => h!.runs(jobId)[0]?.status === 'failed', 'the run failed for good');
    const run = h.runs(jobId)[0]!;
    expect(run.attempt).toBe(3);

    const [item, ...more] = items('run_failed');
    expect(more).toEqual([]);
    expect(item).toMatchObject({ severity: 'critical', subject: `job:${jobId}`, state: 'open', count: 1 });
    expect(item!.title).toBe(`nightly-qa ${run.slot} failed`);
    expect(item!.detail).toContain('npm test: 3 failing');
    // At once: raised in the same instant the last attempt's result was recorded.
    expect(Date.parse(item!.at)).toBe(Date.parse(run.finishedAt!));
    expect(items('repeated_failures')).toEqual([]); // one failure is not a streak, and nobody waits three days

    // Real HTTP on a loaded machine; given up before the test's own limit, saying where the delivery stands.
    await until(() => hook.got.length === 1, 'the webhook delivery', 20_000).catch((e: Error) => {
      throw new Error(`${e.message}; deliveries: ${JSON.stringify(h!.core.attention.webhooks.list().items)}`);
    });
    const [d] = hook.got;
    expect(verified(secret, d!)).toBe(true);
    expect(verified(`${secret}x`, d!)).toBe(false);
    expect(d!.headers['gaffer-delivery']).toMatch(/^\d+$/);
    expect(d!.body).toMatchObject({ id: item!.id, kind: 'run_failed', severity: 'critical', title: item!.title, subject: `job:${jobId}`, url: `http://127.0.0.1:7311/#/inbox?item=${item!.id}` });

    agent.behavior = succeed();
    await h.advanceTo('2026-12-01T01:01:00.000Z');
    await until(() => items('run_failed')[0]!.state === 'resolved', 'resolved by the next run');
    expect(items('run_failed')[0]!.resolution).toContain('succeeded');
    expect(h.core.inbox.counts().open).toBe(0);
    expect(h.audit('inbox.resolve')).toHaveLength(1);
    // A resolved item is not the operator's to acknowledge any more.
    expect(() => h!.core.inbox.ack(item!.id, { actor: 'operator:test' })).toThrow(/resolved itself/);
  });

  it('Retry now: a failed run runs again at once as a new attempt of the same run; its success resolves the item', async () => {
    h = await startJobsHarness({ start: '2026-11-30T00:00:30.000Z' });
    const agent = await h.agent('qa', fail('retryable', 'flaky upstream'));
    const jobId = h.createJob({ name: 'sync', role: 'qa', schedule: DAILY, retry: { maxAttempts: 1 } });
    await h.advanceTo('2026-11-30T01:00:30.000Z');
    await until(() => h!.runs(jobId)[0]?.status === 'failed', 'failed');
    const failed = h.runs(jobId)[0]!;
    expect(items('run_failed')).toHaveLength(1);

    agent.behavior = succeed();
    const r = h.core.jobs.retryRun(failed.id, { actor: 'operator:test' });
    expect(r.backfill).toMatchObject({ runId: failed.id, status: 'dispatched' });
    await until(() => h!.runs(jobId)[0]?.disposition === 'backfilled', 'backfilled');
    const after = h.runs(jobId)[0]!;
    expect(after).toMatchObject({ id: failed.id, slot: failed.slot, idempotencyKey: failed.idempotencyKey, attempt: failed.attempt + 1 });
    expect(h.runs(jobId)).toHaveLength(1); // still one run per slot
    await until(() => items('run_failed')[0]!.state === 'resolved', 'resolved');
    expect(items('run_failed')[0]!.resolution).toContain('backfilled');
    // Audited as the operator's act, with the default reason.
    expect(h.audit('backfill.enqueue')[0]).toMatchObject({ actor: 'operator:test' });
    expect(h.audit('backfill.run_now')[0]).toMatchObject({ actor: 'operator:test', detail: { reason: 'retried by hand' } });

    // A run that succeeded is not retried; nothing changes.
    const before = JSON.stringify(h.runs(jobId));
    let code = '';
    try {
      h.core.jobs.retryRun(failed.id, { actor: 'operator:test' });
    } catch (e) {
      code = isGafferError(e) ? e.code : 'not a GafferError';
    }
    expect(code).toBe('invalid_transition');
    expect(JSON.stringify(h.runs(jobId))).toBe(before);
  });
});

describe('Retry now and a run that waits for a decision', () => {
  it('a held run is the operator\'s to approve or reject: Retry now refuses it and changes nothing', async () => {
    h = await startJobsHarness({ start: '2026-11-30T00:00:30.000Z' });
    await h.agent('ops', fail('needs_human', 'approve the refund?'));
    const jobId = h.createJob({ name: 'refunds', role: 'ops', schedule: DAILY, retry: { maxAttempts: 1 } });
    await h.advanceTo('2026-11-30T01:00:30.000Z');
    await until(() => h!.runs(jobId)[0]?.disposition === 'held', 'held');
    const before = JSON.stringify(h.runs(jobId));
    expect(() => h!.core.jobs.retryRun(h!.runs(jobId)[0]!.id, { actor: 'operator:test' })).toThrow(/waits for your decision/);
    expect(JSON.stringify(h.runs(jobId))).toBe(before);
    expect(items('run_failed')).toEqual([]); // held, not failed for good
  });
});

describe('a failed task', () => {
  it('raises task_failed at once with the agent’s note; retrying the task resolves it', async () => {
    h = await startJobsHarness();
    const token = h.core.tokens.create({ name: 'dev', role: 'dev', actor: 'test' }).token;
    const a = await TestAgent.hello(h.url, token, 'dev', 'dev-1');
    const { task } = h.core.tasks.create({ title: 'migrate billing', role: 'dev' }, { actor: 'test' });
    const claim = await a.request('claim', {});
    const r = await a.request('report', { taskId: task.id, fence: claim.result.lock.fence, status: 'failed', note: 'the migration script exited 2' });
    expect(r.ok).toBe(true);
    await h.settle();
    expect(items('task_failed')).toEqual([
      expect.objectContaining({ severity: 'warning', subject: `task:${task.id}`, state: 'open', title: `Task ${task.id} “migrate billing” failed`, detail: 'the migration script exited 2' }),
    ]);
    h.core.tasks.retry({ taskId: task.id, reason: 'fixed the script', actor: 'operator:test' });
    await h.settle();
    expect(items('task_failed')).toEqual([expect.objectContaining({ state: 'resolved', resolution: 'the task moved on to backlog (operator:test)' })]);
    a.close();
  });
});

describe('a webhook that gives up', () => {
  it('raises webhook_dead (never sent to the dead webhook itself); a later delivery that gets through resolves it', async () => {
    h = await startJobsHarness({ start: '2026-11-30T00:00:30.000Z' });
    const broken = await receiver(410); // 4xx other than 408/425/429: dead at once
    const good = await receiver(200);
    h.core.attention.notifications.put({ webhooks: [{ url: broken.url, name: 'broken' }, { url: good.url, name: 'good' }], actor: 'operator:test' });
    const token = h.core.tokens.create({ name: 'dev', role: 'dev', actor: 'test' }).token;
    const a = await TestAgent.hello(h.url, token, 'dev', 'dev-1');
    const { task } = h.core.tasks.create({ title: 'a', role: 'dev' }, { actor: 'test' });
    const claim = await a.request('claim', {});
    await a.request('report', { taskId: task.id, fence: claim.result.lock.fence, status: 'failed', note: 'boom' });
    await until(() => items('webhook_dead').length === 1, 'webhook_dead', 30_000);
    const dead = items('webhook_dead')[0]!;
    expect(dead).toMatchObject({ severity: 'warning', state: 'open' });
    expect(dead.title).toMatch(/^A notification to http:\/\/127\.0\.0\.1:\d+\/h… could not be delivered$/);
    expect(dead.detail).toContain('“Task');
    await until(() => good.got.length === 2, 'the good webhook got both items', 30_000);
    expect(good.got.map((g) => g.body.kind).sort()).toEqual(['task_failed', 'webhook_dead']);
    expect(broken.got.map((g) => g.body.kind)).toEqual(['task_failed']); // not told about its own death

    // The receiver is fixed; the operator sends the dead delivery again and it gets through.
    const fixed = await receiver(200);
    const hooks = h.core.attention.notifications.view().webhooks;
    h.core.attention.notifications.put({ webhooks: hooks.map((w) => ({ id: w.id, ...(w.name === 'broken' ? { url: fixed.url } : {}) })), actor: 'operator:test' });
    const deadDelivery = h.core.attention.webhooks.list({ status: 'dead' }).items[0]!;
    h.core.attention.webhooks.retry(deadDelivery.id, { actor: 'operator:test' });
    await until(() => items('webhook_dead')[0]!.state === 'resolved', 'resolved');
    expect(fixed.got).toHaveLength(1);
    a.close();
  });
});
