/**
 * Approve and reject a held run end to end: the real SDK over the real agent socket, the real job
 * runner (manual clock), the HTTP routes. An agent that needs a human raises an inbox item; the
 * approval dispatches the run again with `ctx.approval`; a rejection ends it `rejected`.
 * (Here because the SDK may not import core or server, not even in tests.)
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { NeedsHumanError, connect, type Agent, type JobContext } from '../sdk';
import { createApiHandler } from './api-v1';
import { startHarness, until, type Harness } from './tests/agent-socket.testkit';

const OPERATOR = 'op-token-for-approvals';
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(): Promise<{ h: Harness; agent: Agent; api: (method: string, path: string, body?: unknown) => Promise<{ status: number; body: any }> }> {
  const h = await startHarness({ hub: { pingIntervalMs: 0 }, config: { heartbeatTimeoutS: 10_000_000 } });
  cleanups.push(() => h.close());
  // The API on its own server (the harness's server only carries the agent socket).
  const server = http.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const handler = createApiHandler(h.core, { operatorToken: OPERATOR, port });
  server.on('request', (req, res) => void handler(req, res));
  cleanups.push(
    () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  );
  h.core.start();
  const agent = await connect({ url: h.url, token: h.token('ops'), role: 'ops', name: 'ops-1', reconnect: { initialDelayMs: 10, maxDelayMs: 50 } });
  cleanups.push(() => agent.close({ timeoutMs: 100 }));
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`http://127.0.0.1:${port}/api/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${OPERATOR}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: await res.json() };
  };
  return { h, agent, api };
}

/** A job due an hour from now; returns its run once it is held and the agent is done with it. */
async function heldRun(h: Harness, agent: Agent, seen: JobContext[]): Promise<{ jobId: string; runId: string }> {
  const finished: string[] = [];
  agent.on('job.finished', (e) => finished.push(e.runId));
  const { job } = h.core.jobs.create({ name: 'refund', role: 'ops', schedule: { everyS: 3600, timezone: 'UTC' }, retry: { maxAttempts: 1 } }, { actor: 'test' });
  h.clock.advance(3600_000);
  const run = await until(() => h.core.jobs.listRuns({ job: job.id }).items.find((r) => r.disposition === 'held' && finished.includes(r.id)), 'held run');
  expect(seen).toHaveLength(1);
  expect(seen[0]!.approval).toBeUndefined();
  return { jobId: job.id, runId: run.id };
}

describe('approvals through the SDK', () => {
  it('approve: the run is dispatched again, ctx.approval carries the note, who and when; the inbox item is acknowledged', async () => {
    const { h, agent, api } = await setup();
    const seen: JobContext[] = [];
    agent.onJob((ctx) => {
      seen.push(ctx);
      if (!ctx.approval) throw new NeedsHumanError('refund 40 EUR to customer 17?');
      return { refunded: 40, approvedBy: ctx.approval.by };
    });
    const { runId } = await heldRun(h, agent, seen);
    const [item] = h.core.inbox.list().items;
    expect(item).toMatchObject({ kind: 'needs_human', subject: `run:${runId}`, detail: 'refund 40 EUR to customer 17?' });

    const r = await api('POST', `/runs/${runId}/approve`, { note: 'yes, goodwill refund' });
    expect(r.status).toBe(200);
    expect(r.body.run).toMatchObject({ id: runId, held: false });
    await until(() => h.core.jobs.getRun(runId).run.disposition === 'backfilled', 'approved re-run succeeded');
    expect(seen).toHaveLength(2);
    expect(seen[1]!.approval).toEqual({ decision: 'approved', note: 'yes, goodwill refund', by: 'operator:http', at: expect.any(String) });
    expect(seen[1]!.runId).toBe(runId);
    expect(h.core.jobs.getRun(runId).run.output).toEqual({ refunded: 40, approvedBy: 'operator:http' });
    // The run reads as approved, then succeeded: its completing backfill carries the approval.
    const got = await api('GET', `/runs/${runId}`);
    expect(got.body.backfills.at(-1)).toMatchObject({ status: 'done', approval: { decision: 'approved', note: 'yes, goodwill refund', by: 'operator:http' } });
    expect(h.core.inbox.get(item!.id)).toMatchObject({ state: 'acked', ackedBy: 'operator:http', note: 'yes, goodwill refund' });
    // Decided once: the run is no longer waiting for a decision.
    expect((await api('POST', `/runs/${runId}/approve`, { note: 'again' })).body.error.code).toBe('invalid_transition');
    expect(h.core.auditQuery.query({ subject: `run:${runId}`, type: 'operator.approve' }).items).toHaveLength(1);
  });

  it('reject: the run ends failed with disposition rejected, nothing is dispatched', async () => {
    const { h, agent, api } = await setup();
    const seen: JobContext[] = [];
    agent.onJob((ctx) => {
      seen.push(ctx);
      throw new NeedsHumanError('delete the old bucket?');
    });
    const { runId } = await heldRun(h, agent, seen);
    // A team's Gaffer requires the note (a solo operator's may leave it out: audited "no reason given").
    h.core.operatorSettings.setRequireReason({ on: true, actor: 'test' });
    expect((await api('POST', `/runs/${runId}/reject`, {})).status).toBe(400);
    const r = await api('POST', `/runs/${runId}/reject`, { note: 'no, keep it' });
    expect(r.body.run).toMatchObject({ status: 'failed', disposition: 'rejected', held: false });
    await new Promise((res) => setTimeout(res, 50));
    expect(seen).toHaveLength(1);
    expect(h.core.jobs.listBackfills({ job: r.body.run.jobId }).items.map((b) => b.status)).toEqual(['cancelled']);
    expect(h.core.inbox.counts().open).toBe(0);
    expect((await api('POST', `/runs/${runId}/reject`, { note: 'twice' })).status).toBe(422);
  });

  it('an approved re-run that needs a human again can be decided again; the kill switch refuses an approval', async () => {
    const { h, agent } = await setup();
    const seen: JobContext[] = [];
    agent.onJob((ctx) => {
      seen.push(ctx);
      throw new NeedsHumanError(ctx.approval ? 'still unsure: 41 EUR?' : 'refund 40 EUR?');
    });
    const { runId } = await heldRun(h, agent, seen);
    h.core.jobs.approvals.approve(runId, { note: 'go', actor: 'operator:test' });
    await until(() => seen.length === 2 && h.core.inbox.counts().open === 1, 'asked again');
    expect(h.core.inbox.list().items[0]).toMatchObject({ subject: `run:${runId}`, detail: 'still unsure: 41 EUR?' });
    h.core.jobs.setKillSwitch({ on: true, reason: 'incident', actor: 'operator:test' });
    expect(() => h.core.jobs.approvals.approve(runId, { note: 'go', actor: 'operator:test' })).toThrow(expect.objectContaining({ code: 'conflict' }));
    expect(h.core.jobs.approvals.reject(runId, { note: 'stop', actor: 'operator:test' })).toMatchObject({ disposition: 'rejected' });
  });
});
