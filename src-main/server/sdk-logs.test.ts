/**
 * The SDK's `ctx.log` / `agent.log` / `ctx.usage` / `captureConsole` against the real hub and log
 * worker: every line arrives once and in order, before the report, also when the connection
 * drops in the middle and when Gaffer restarts (lives here because the SDK may not import core or
 * server, lint layering).
 */
import type { Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { LogLine } from '../common/logs';
import { connect, type Agent } from '../sdk';
import { tempDir } from '../core/tests/test-core';
import { startHarness, until, type Harness } from './tests/agent-socket.testkit';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function harness(opts: Parameters<typeof startHarness>[0] = {}): Promise<Harness> {
  const h = await startHarness({ hub: { pingIntervalMs: 0 }, ...opts });
  const closeServer = h.close.bind(h);
  let closed = false;
  /** Closes the server and waits for the log worker (what it acknowledged is on disk). Idempotent. */
  const close = async () => {
    if (closed) return;
    closed = true;
    h.agentSocket.close(); // upgraded sockets are not the http server's connections any more
    await closeServer();
    await h.core.logs.close();
  };
  cleanups.push(close);
  return Object.assign(h, { close });
}

async function agentFor(h: Harness): Promise<Agent> {
  const a = await connect({ url: h.url, token: h.token('dev'), role: 'dev', name: 'logger', reconnect: { initialDelayMs: 10, maxDelayMs: 50 } });
  cleanups.push(() => a.close({ timeoutMs: 100 }));
  return a;
}

async function allLines(h: Harness, subject: string): Promise<LogLine[]> {
  const out: LogLine[] = [];
  let after = 0;
  for (;;) {
    const page = await h.core.logs.read({ subject, after, limit: 5000 });
    out.push(...page.items);
    if (page.next === null) return out;
    after = page.next;
  }
}

describe('SDK logs and usage', () => {
  it('ctx.log, agent.log, captured console and usage all land before the report, in order', async () => {
    const h = await harness();
    const { task } = h.core.tasks.create({ title: 'talky', role: 'dev' }, { actor: 'test' });
    const a = await agentFor(h);
    let totals;
    await a.work(
      async (ctx) => {
        for (let i = 1; i <= 3000; i++) await ctx.log(`step ${i}`);
        console.log('from console %d', 42);
        console.error('to stderr');
        await a.log(ctx.task.id, 'via agent.log', { stream: 'agent', level: 'warn' });
        await ctx.usage({ inputTokens: 1000, outputTokens: 200, costUsd: 0.01, model: 'm1' });
        totals = await ctx.usage({ inputTokens: 5, costUsd: 0.005 });
        return { output: { ok: true } };
      },
      { maxTasks: 1, captureConsole: true, idleDelayMs: 10 },
    );
    expect(h.core.tasks.get(task.id).status).toBe('done');
    expect(totals).toEqual({ inputTokens: 1005, outputTokens: 200, costUsd: 0.015 });
    const lines = await allLines(h, `task:${task.id}`);
    expect(lines).toHaveLength(3003);
    expect(lines.slice(0, 3000).map((l) => l.text)).toEqual(Array.from({ length: 3000 }, (_, i) => `step ${i + 1}`));
    expect(lines.slice(3000).map((l) => [l.stream, l.level, l.text])).toEqual([
      ['stdout', 'info', 'from console 42'],
      ['stderr', 'error', 'to stderr'],
      ['agent', 'warn', 'via agent.log'],
    ]);
    expect(lines.every((l) => l.attempt === 1)).toBe(true);
    expect(h.core.logs.usageOf(`task:${task.id}`)).toEqual({ inputTokens: 1005, outputTokens: 200, costUsd: 0.015 });
  });

  it('lines survive a dropped connection: each is stored once, in order', async () => {
    const h = await harness();
    const sockets = new Set<Socket>();
    h.server.on('connection', (s: Socket) => {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    });
    const { task } = h.core.tasks.create({ title: 'blip', role: 'dev' }, { actor: 'test' });
    const a = await agentFor(h);
    await a.work(
      async (ctx) => {
        for (let i = 1; i <= 20_000; i++) {
          await ctx.log(`n ${i}`);
          if (i === 7000 || i === 14_000) for (const s of sockets) s.destroy();
        }
      },
      { maxTasks: 1, idleDelayMs: 10, logs: { maxFrameLines: 500 } },
    );
    await until(() => h.core.tasks.get(task.id).status === 'done', 'the report');
    const lines = await allLines(h, `task:${task.id}`);
    expect(lines.map((l) => l.text)).toEqual(Array.from({ length: 20_000 }, (_, i) => `n ${i + 1}`));
  });

  it('lines survive a restart of Gaffer: the SDK resumes, resends what was not acknowledged, each line is stored once, in order', async () => {
    const dataDir = tempDir('gaffer-sdk-restart-');
    let h = await harness({ dataDir });
    const { clock, port } = h;
    const { task } = h.core.tasks.create({ title: 'through a restart', role: 'dev' }, { actor: 'test' });
    const a = await connect({ url: h.url, token: h.token('dev'), role: 'dev', name: 'restarts', reconnect: { initialDelayMs: 10, maxDelayMs: 50 } });
    cleanups.push(() => a.close({ timeoutMs: 100 }));
    const instance = a.instanceId;
    const resumed: boolean[] = [];
    a.on('ready', (e) => resumed.push(e.resumed));
    let restarted: Promise<void> | undefined;
    await a.work(
      async (ctx) => {
        for (let i = 1; i <= 12_000; i++) {
          // Not awaited at the restart: the lines written meanwhile wait in the outbox and go after it.
          const room = ctx.log(`n ${i}`);
          if (i === 6000) {
            restarted = (async () => {
              await h.close();
              h = await harness({ dataDir, clock, port });
            })();
          } else await room;
        }
        await restarted;
        return { output: { lines: 12_000 } };
      },
      { maxTasks: 1, idleDelayMs: 10, logs: { maxFrameLines: 250 } },
    );
    expect(resumed).toEqual([true]);
    expect(a.instanceId).toBe(instance);
    expect(h.core.tasks.get(task.id)).toMatchObject({ status: 'done', attempt: 1 });
    const lines = await allLines(h, `task:${task.id}`);
    expect(lines.map((l) => l.text)).toEqual(Array.from({ length: 12_000 }, (_, i) => `n ${i + 1}`));
    expect(lines.every((l) => l.attempt === 1)).toBe(true);
  });

  it('a job handler logs and reports usage for its run attempt', async () => {
    const h = await harness();
    const a = await agentFor(h);
    const seen: Array<{ runId: string; attempt: number }> = [];
    a.onJob(async (ctx) => {
      seen.push({ runId: ctx.runId, attempt: ctx.attempt });
      await ctx.log('job line');
      console.log('captured in a job');
      await ctx.usage({ outputTokens: 7, costUsd: 0.5 });
      return { sent: 1 };
    }, { captureConsole: true });
    h.core.start();
    const { job } = h.core.jobs.create({ name: 'nightly', role: 'dev', schedule: { everyS: 3600 } }, { actor: 'test' });
    const t = h.core.jobs.triggerNow(job.id, { reason: 'test', actor: 'test' });
    await until(() => h.core.jobs.getRun(t.run.id).run.status === 'success', 'the run to finish');
    expect(seen).toEqual([{ runId: t.run.id, attempt: 1 }]);
    const lines = await allLines(h, `run:${t.run.id}`);
    expect(lines.map((l) => [l.attempt, l.text])).toEqual([
      [1, 'job line'],
      [1, 'captured in a job'],
    ]);
    expect(h.core.logs.usageOf(`run:${t.run.id}`)).toEqual({ inputTokens: 0, outputTokens: 7, costUsd: 0.5 });
    expect(h.core.logs.usageSummary('job', 0, Date.now() + 1e9)).toEqual([{ key: job.id, inputTokens: 0, outputTokens: 7, costUsd: 0.5 }]);
  });
});
