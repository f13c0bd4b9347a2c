/**
 * The agent SDK (src-main/sdk) and the example agents (examples/) against the real hub
 * (server/agent-socket.ts over `ws`, core with a manual clock). It lives here because the SDK and
 * the examples may not import core or server, not even in tests (lint layering).
 * Real time only drives the SDK's own timers (renewals, heartbeats, reconnect backoff); lock
 * windows and graces move only when a test advances the core's clock.
 */
import fs from 'node:fs';
import type { Socket } from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../common/clock';
import type { Logger } from '../common/logger';
import type { Task } from '../common/model';
import type { AgentRequestOf } from '../common/protocol';
import type { JobTrigger, RunSink } from '../core/hub/ports';
import { tempDir } from '../core/tests/test-core';
import { reportJob, type Notify } from '../../examples/report-agent';
import { workTask } from '../../examples/worker-agent';
import { startHarness, TestAgent, trackSockets, until, type Harness, type Json } from './tests/agent-socket.testkit';
import {
  BacklogError,
  BlockedError,
  connect,
  FatalError,
  GafferRequestError,
  LockLostError,
  NeedsHumanError,
  RetryableError,
  RunCancelledError,
  type Agent,
  type AgentOptions,
} from '../sdk';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function harness(opts: Parameters<typeof startHarness>[0] = {}): Promise<Harness> {
  const h = await startHarness({ ...opts, hub: { pingIntervalMs: 0, ...(opts.hub ?? {}) } });
  cleanups.push(() => h.close());
  return h;
}

function captureLogger(lines: string[]): Logger {
  const put = (level: string) => (msg: string, fields?: Record<string, unknown>) => lines.push(`${level} ${msg} ${JSON.stringify(fields ?? {})}`);
  return { info: put('info'), warn: put('warn'), error: put('error') };
}

async function agentFor(h: Harness, opts: Partial<AgentOptions> = {}): Promise<Agent> {
  const a = await connect({
    url: h.url,
    token: h.token(opts.role ?? 'dev'),
    role: 'dev',
    name: 'test-agent',
    reconnect: { initialDelayMs: 10, maxDelayMs: 50 },
    ...opts,
  });
  cleanups.push(() => a.close({ timeoutMs: 100 }));
  return a;
}

function createTask(h: Harness, title: string, extra: Record<string, unknown> = {}): Task {
  return h.core.tasks.create({ title, role: 'dev', ...extra }, { actor: 'test' }).task;
}


function blip(sockets: Set<Socket>): void {
  for (const s of sockets) s.destroy();
}

/** Refuses agent upgrades until the returned function is called. */
function blockUpgrades(h: Harness): () => void {
  const saved = h.server.listeners('upgrade') as Array<(...a: unknown[]) => void>;
  h.server.removeAllListeners('upgrade');
  h.server.on('upgrade', (_req, socket: Socket) => socket.destroy());
  return () => {
    h.server.removeAllListeners('upgrade');
    for (const l of saved) h.server.on('upgrade', l);
  };
}

function deferred<T = void>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

describe('connect', () => {
  it('sends the token only as an Authorization header and never logs it', async () => {
    const h = await harness();
    const seen: Array<{ url: string | undefined; auth: string | undefined }> = [];
    h.server.prependListener('upgrade', (req) => seen.push({ url: req.url, auth: req.headers.authorization }));
    const lines: string[] = [];
    const token = h.token('dev');
    const agent = await connect({ url: `http://127.0.0.1:${h.port}`, token, role: 'dev', name: 'w1', version: '1.2.3', logger: captureLogger(lines) });
    expect(agent.instanceId).toMatch(/^inst_/);
    expect(agent.lockWindowS).toBe(7200);
    expect(agent.connected).toBe(true);
    expect(seen).toEqual([{ url: '/agent', auth: `Bearer ${token}` }]);
    expect(h.core.instances.get(agent.instanceId)).toMatchObject({ role: 'dev', name: 'w1', version: '1.2.3', status: 'online' });
    await agent.close();
    expect(agent.connected).toBe(false);
    await until(() => h.core.instances.get(agent.instanceId).status === 'disconnected', 'disconnect');
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.join('\n')).not.toContain(token);
  });

  it('refuses a bad token (401) and a token bound to another role (403), without retrying', async () => {
    const h = await harness();
    let upgrades = 0;
    h.server.prependListener('upgrade', () => upgrades++);
    const bad = connect({ url: h.url, token: 'gft_nope', role: 'dev', name: 'x', reconnect: { initialDelayMs: 1 } });
    await expect(bad).rejects.toMatchObject({ code: 'unauthorized', status: 401 });
    await expect(connect({ url: h.url, token: h.token('pm'), role: 'dev', name: 'x' })).rejects.toMatchObject({ code: 'forbidden' });
    await new Promise((r) => setTimeout(r, 30));
    expect(upgrades).toBe(2);
  });

  it('claim, renew, report and create_task', async () => {
    const h = await harness();
    const agent = await agentFor(h);
    const created = await agent.createTask({ title: 'from agent', priority: 3, payload: { a: 1 }, idempotencyKey: 'k1' });
    expect(created).toMatchObject({ replayed: false, task: { title: 'from agent', role: 'dev', priority: 3, payload: { a: 1 } } });
    expect((await agent.createTask({ title: 'from agent', priority: 3, payload: { a: 1 }, idempotencyKey: 'k1' })).replayed).toBe(true);
    const claimed = await agent.claim();
    expect(claimed).toMatchObject({ task: { id: created.task.id, status: 'in_progress', attempt: 1 }, lock: { fence: 1 } });
    h.clock.advance(1000);
    const renewed = await agent.renew(created.task.id, claimed!.lock.fence);
    expect(renewed.expiresAt).toBe(new Date(h.clock.now() + 7200_000).toISOString());
    await expect(agent.renew(created.task.id, 99)).rejects.toMatchObject({ code: 'not_holder', status: 409 });
    const reported = await agent.report(created.task.id, claimed!.lock.fence, 'done', { note: 'ok', output: { n: 1 } });
    expect(reported.task).toMatchObject({ status: 'done', note: 'ok', output: { n: 1 } });
    expect(await agent.claim()).toBeNull();
  });
});

describe('work loop', () => {
  /** Records the type (and claimNext) of every request frame the hub receives; `edit` may rewrite a frame first. */
  function recordRequests(h: Harness, edit: (frame: Json) => Json = (f) => f): Array<{ type: string; claimNext?: boolean }> {
    const seen: Array<{ type: string; claimNext?: boolean }> = [];
    const connect = h.core.hub.connect.bind(h.core.hub);
    h.core.hub.connect = (socket, info) => {
      const conn = connect(socket, info);
      const receive = conn.receive.bind(conn);
      conn.receive = (text: string) => {
        const frame = edit(JSON.parse(text));
        seen.push({ type: frame.type, ...(frame.claimNext !== undefined ? { claimNext: frame.claimNext } : {}) });
        receive(JSON.stringify(frame));
      };
      return conn;
    };
    return seen;
  }

  it('asks each report for the next task (PROTOCOL §10): one claim, then one round trip per task', async () => {
    const h = await harness();
    const seen = recordRequests(h);
    const agent = await agentFor(h);
    const tasks = [createTask(h, 'one', { priority: 3 }), createTask(h, 'two', { priority: 2 }), createTask(h, 'three', { priority: 1 })];
    const worked: number[] = [];
    const claimed: number[] = [];
    agent.on('task.claimed', ({ task }) => claimed.push(task.id));
    await agent.work(({ task }) => void worked.push(task.id), { idleDelayMs: 10, maxTasks: 3 });
    expect(worked).toEqual(tasks.map((t) => t.id));
    expect(claimed).toEqual(worked);
    // The last report asks for nothing more: maxTasks is reached.
    expect(seen.filter((r) => r.type === 'claim' || r.type === 'report')).toEqual([
      { type: 'claim' },
      { type: 'report', claimNext: true },
      { type: 'report', claimNext: true },
      { type: 'report' },
    ]);
    for (const t of tasks) expect(h.core.tasks.get(t.id)).toMatchObject({ status: 'done', lock: null });
  });

  it('falls back to claim when the reply has no next (a Gaffer without claimNext), and claims only with claimNext: false', async () => {
    const h = await harness();
    // An older Gaffer drops the field it does not know (its schema strips unknown keys).
    const seen = recordRequests(h, ({ claimNext: _dropped, ...frame }) => frame);
    const agent = await agentFor(h);
    createTask(h, 'one');
    createTask(h, 'two');
    const worked: number[] = [];
    await agent.work(({ task }) => void worked.push(task.id), { idleDelayMs: 10, maxTasks: 2 });
    expect(worked).toHaveLength(2);
    expect(seen.map((r) => r.type).filter((t) => t === 'claim' || t === 'report')).toEqual(['claim', 'report', 'claim', 'report']);

    const plain = recordRequests(h);
    const other = await agentFor(h);
    createTask(h, 'three');
    createTask(h, 'four');
    await other.work(() => undefined, { idleDelayMs: 10, maxTasks: 2, claimNext: false });
    expect(plain.filter((r) => r.type === 'claim' || r.type === 'report')).toEqual([{ type: 'claim' }, { type: 'report' }, { type: 'claim' }, { type: 'report' }]);
  });

  it('a report that finds nothing next idles like an empty claim; new work is then claimed', async () => {
    const h = await harness();
    const seen = recordRequests(h);
    const agent = await agentFor(h);
    const first = createTask(h, 'first');
    const worked: number[] = [];
    let later: Task | undefined;
    await agent.work(
      ({ task }) => {
        worked.push(task.id);
        if (task.id === first.id) setTimeout(() => (later = createTask(h, 'later')), 30);
      },
      { idleDelayMs: 10, maxTasks: 2 },
    );
    expect(worked).toEqual([first.id, later!.id]);
    const kinds = seen.filter((r) => r.type === 'claim' || r.type === 'report');
    // report(claimNext) → {task: null} → idle, then claims until "later" exists.
    expect(kinds[0]).toEqual({ type: 'claim' });
    expect(kinds[1]).toEqual({ type: 'report', claimNext: true });
    expect(kinds.at(-1)).toEqual({ type: 'report' });
  });

  it('renews while the handler runs (short lock window) and reports done / blocked', async () => {
    const h = await harness({ config: { lockWindowS: 1 } }); // renew every 250 ms
    const agent = await agentFor(h);
    const a = createTask(h, 'long one', { priority: 2 });
    const b = createTask(h, 'blocked one', { priority: 1 });
    const renewals: number[] = [];
    agent.on('task.renewed', ({ taskId }) => renewals.push(taskId));
    const seen: Array<{ id: number; attempt: number; previouslyExpired: boolean; fence: number }> = [];
    await agent.work(
      async ({ task, attempt, previouslyExpired, lock }) => {
        seen.push({ id: task.id, attempt, previouslyExpired, fence: lock.fence });
        if (task.id === b.id) throw new BlockedError('waiting for credentials', { output: { need: 'creds' } });
        await until(() => renewals.filter((id) => id === a.id).length >= 2, 'two renewals');
        return { output: { pages: 3 }, note: 'written' };
      },
      { idleDelayMs: 10, maxTasks: 2 },
    );
    expect(seen).toEqual([
      { id: a.id, attempt: 1, previouslyExpired: false, fence: 1 },
      { id: b.id, attempt: 1, previouslyExpired: false, fence: 1 },
    ]);
    expect(h.core.tasks.get(a.id)).toMatchObject({ status: 'done', output: { pages: 3 }, note: 'written', lock: null });
    expect(h.core.tasks.get(b.id)).toMatchObject({ status: 'blocked', note: 'waiting for credentials', output: { need: 'creds' } });
    const renewAudit = h.core.auditQuery.query({ type: 'lock.renew', subject: `task:${a.id}` }).items;
    expect(renewAudit.length).toBeGreaterThanOrEqual(2);
    expect(renewAudit.every((e) => e.actor === agent.instanceId)).toBe(true);
  });

  it('maps thrown errors to report statuses', async () => {
    const h = await harness();
    const agent = await agentFor(h);
    const cases = [
      ['fatal', () => new FatalError('bad input'), 'failed'],
      ['human', () => new NeedsHumanError('approve payment'), 'blocked'],
      ['plain', () => new Error('boom'), 'failed'],
      ['backlog', () => new BacklogError('not now'), 'backlog'],
      ['retry', () => new RetryableError('rate limited'), 'backlog'],
    ] as const;
    const attempts: number[] = [];
    for (const [name, make, status] of cases) {
      const t = createTask(h, name);
      await agent.work(
        ({ attempt }) => {
          attempts.push(attempt);
          throw make();
        },
        { idleDelayMs: 10, maxTasks: 1 },
      );
      expect(h.core.tasks.get(t.id).status, name).toBe(status);
      const release = h.core.auditQuery.query({ type: 'lock.release', subject: `task:${t.id}` }).items;
      expect(release.map((e) => [e.actor, (e.detail as { to: string }).to])).toEqual([[agent.instanceId, status]]);
      if (status === 'backlog') {
        // Given back: claimed again (first, being the only one) as attempt 2.
        let second: { attempt: number; id: number } | undefined;
        await agent.work(({ task, attempt }) => void (second = { attempt, id: task.id }), { idleDelayMs: 10, maxTasks: 1 });
        expect(second).toEqual({ attempt: 2, id: t.id });
      }
    }
    expect(attempts).toEqual([1, 1, 1, 1, 1]);
    expect(h.core.tasks.list({ limit: 10 }).items.find((t) => t.title === 'plain')!.note).toBe('boom');
  });

  it('aborts the handler at once when the lock is taken away (lock_lost), stops renewing and does not report', async () => {
    const h = await harness();
    const agent = await agentFor(h);
    const t = createTask(h, 'will be taken away');
    const lost: Array<{ reason: string; lostBecause?: string }> = [];
    agent.on('task.lost', (e) => lost.push(e));
    let reason: unknown;
    await agent.work(
      async ({ signal, task }) => {
        h.core.tasks.forceRelease({ taskId: task.id, reason: 'operator took it', actor: 'operator:test' });
        await new Promise((r) => signal.addEventListener('abort', r, { once: true }));
        reason = signal.reason;
      },
      // No renewal falls due during the test: only the push can tell the handler.
      { idleDelayMs: 10, maxTasks: 1, renewEveryMs: 3_600_000 },
    );
    expect(reason).toBeInstanceOf(LockLostError);
    expect(reason).toMatchObject({ taskId: t.id, lostBecause: 'force_release' });
    expect(lost).toEqual([{ taskId: t.id, reason: 'the server took the lock away (force_release)', lostBecause: 'force_release' }]);
    expect(h.core.tasks.get(t.id)).toMatchObject({ status: 'backlog', previouslyExpired: true });
    const byAgent = h.core.auditQuery.query({ actor: agent.instanceId, subject: `task:${t.id}` }).items.map((e) => e.type);
    expect(byAgent).toEqual(['lock.claim']);
    // It never reported, so the console still shows it as having lost its lock.
    expect(h.core.hub.lostLocksOf(agent.instanceId).map((l) => l.taskId)).toEqual([t.id]);
  });

  it('aborts the handler when a renewal is refused (the lock went without a push)', async () => {
    const h = await harness();
    const agent = await agentFor(h);
    const t = createTask(h, 'taken while disconnected');
    const lost: string[] = [];
    agent.on('task.lost', ({ reason }) => lost.push(reason));
    await agent.work(
      async ({ signal, task }) => {
        // Remove the lock behind the hub's back, as a second Gaffer process sharing the database would.
        h.core.store.write(() => h.core.locks.expireLockTx(task.id, 'lock_window', 'other-process'));
        await new Promise((r) => signal.addEventListener('abort', r, { once: true }));
      },
      { idleDelayMs: 10, maxTasks: 1, renewEveryMs: 10 },
    );
    expect(lost.some((r) => /renew refused|took the lock away/.test(r))).toBe(true);
    expect(h.core.tasks.get(t.id).status).toBe('backlog');
  });

  it('close() waits, then aborts a running handler and gives its task back', async () => {
    const h = await harness();
    const agent = await agentFor(h);
    const t = createTask(h, 'slow');
    const started = deferred();
    const loop = agent.work(
      async ({ signal }) => {
        started.resolve();
        await new Promise((_r, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
      },
      { idleDelayMs: 10 },
    );
    await started.promise;
    await agent.close({ timeoutMs: 20 });
    await loop;
    expect(h.core.tasks.get(t.id)).toMatchObject({ status: 'backlog', note: 'the agent is shutting down', lock: null });
    await until(() => h.core.instances.get(agent.instanceId).status === 'disconnected', 'disconnect');
  });

  it('a report refused as rate_limited is sent again after a pause, never abandoned with the lock held', async () => {
    // A fast agent (a command agent running `true`) can pass the per-session rate; an abandoned
    // report would leave its task locked for the whole lock window.
    const h = await harness({ hub: { ratePerSecond: 20, rateBurst: 3, maxRateStrikes: 1000 } });
    const agent = await agentFor(h);
    const ids = Array.from({ length: 8 }, (_, i) => createTask(h, `fast ${i}`).id);
    // The hub's bucket refills on the core's (manual) clock: let 200 ms pass every 20 ms.
    const tick = setInterval(() => h.clock.advance(200), 20);
    try {
      await agent.work(() => ({ note: 'ok' }), { maxTasks: 8, idleDelayMs: 20 });
    } finally {
      clearInterval(tick);
    }
    expect(ids.map((id) => h.core.tasks.get(id).status)).toEqual(ids.map(() => 'done'));
  });
});

describe('jobs and prechecks', () => {
  function fakeSink(h: Harness) {
    const calls: Array<[string, Record<string, unknown>]> = [];
    const results = new Map<string, AgentRequestOf<'run_result'>>();
    const sink: RunSink = {
      runStarted: (_i, req) => (calls.push(['started', { runId: req.runId }]), {}),
      runStep: (_i, req) => (calls.push(['step', { runId: req.runId, step: req.step, ref: req.ref }]), {}),
      runResult: (_i, req) => {
        calls.push(['result', { runId: req.runId, outcome: req.outcome, errorClass: req.errorClass }]);
        results.set(req.runId, req);
        return { run: { id: req.runId, status: req.outcome } };
      },
    };
    h.core.hub.setRunSink(sink);
    return { calls, results };
  }

  /** What the jobs engine does once it picked `agent`: sends it the trigger (the offer itself is the engine's). */
  const offer = (h: Harness, agent: Agent, t: JobTrigger) => expect(h.core.hub.send(agent.instanceId, { type: 'job_trigger', ...t })).toBe(true);

  const trigger = (runId: string, extra: Partial<JobTrigger> = {}): JobTrigger => ({
    runId,
    jobId: 'job_daily',
    job: 'daily-report',
    slot: '2026-11-30',
    attempt: 2,
    payload: { channel: 'sales' },
    idempotencyKey: 'job_daily:2026-11-30',
    deadline: new Date(Date.now() + 3600_000).toISOString(),
    completedSteps: [],
    version: 7,
    traceId: 'trace-1',
    ...extra,
  });

  it('acknowledges, skips completed steps, checkpoints the rest, reports success', async () => {
    const h = await harness();
    const { calls, results } = fakeSink(h);
    const agent = await agentFor(h, { role: 'reporter' });
    const ran: string[] = [];
    let seen: Record<string, unknown> | undefined;
    agent.onJob(async (ctx) => {
      seen = { slot: ctx.slot, key: ctx.idempotencyKey, attempt: ctx.attempt, payload: ctx.payload, version: ctx.version, completed: ctx.completedSteps };
      const written = await ctx.step('write file', () => (ran.push('write'), 'reports/daily-2026-11-30.md'), { ref: (f) => f });
      await ctx.step('notify', () => (ran.push('notify'), 'msg-42'), { ref: (id) => id });
      await ctx.step('notify', () => ran.push('notify again'));
      return { written: written ?? null };
    });
    offer(h, agent, trigger('run_1', { completedSteps: ['write file'] }));
    await until(() => results.get('run_1'), 'run_result');
    expect(ran).toEqual(['notify']);
    expect(seen).toEqual({ slot: '2026-11-30', key: 'job_daily:2026-11-30', attempt: 2, payload: { channel: 'sales' }, version: 7, completed: ['write file'] });
    expect(calls).toEqual([
      ['started', { runId: 'run_1' }],
      ['step', { runId: 'run_1', step: 'notify', ref: 'msg-42' }],
      ['result', { runId: 'run_1', outcome: 'success', errorClass: undefined }],
    ]);
    expect(results.get('run_1')!.output).toEqual({ written: null });
  });

  it('hands the handler every documented field of the trigger, additions included', async () => {
    const h = await harness();
    const { results } = fakeSink(h);
    const agent = await agentFor(h, { role: 'reporter' });
    let seen: Record<string, unknown> | undefined;
    agent.onJob((ctx) => {
      const { signal: _s, agent: _a, step: _st, log: _l, usage: _u, artifact: _ar, ...fields } = ctx;
      seen = fields;
    });
    const additions = { slotAt: '2026-11-30T01:00:00.000Z', trigger: 'catch_up', backfillId: 4, covers: ['2026-11-28', '2026-11-29'], previousError: 'SMTP timeout' };
    const sent = trigger('run_f', additions);
    offer(h, agent, sent);
    await until(() => results.get('run_f'), 'run_result');
    expect(seen).toEqual(sent);
  });

  it('maps RetryableError / FatalError / NeedsHumanError (and others) to errorClass', async () => {
    const h = await harness();
    const { results } = fakeSink(h);
    const agent = await agentFor(h, { role: 'reporter' });
    agent.onJob((ctx) => {
      const kind = (ctx.payload as { kind: string }).kind;
      if (kind === 'retry') throw new RetryableError('LLM timeout');
      if (kind === 'fatal') throw new FatalError('validation failed', { output: { field: 'date' } });
      if (kind === 'human') throw new NeedsHumanError('refund needs approval');
      throw new TypeError('undefined is not a function');
    });
    for (const kind of ['retry', 'fatal', 'human', 'other']) offer(h, agent, trigger(`run_${kind}`, { payload: { kind } }));
    await until(() => results.size === 4, 'four results');
    const got = Object.fromEntries([...results].map(([id, r]) => [id, [r.outcome, r.errorClass, r.error]]));
    expect(got).toEqual({
      run_retry: ['failed', 'retryable', 'LLM timeout'],
      run_fatal: ['failed', 'fatal', 'validation failed'],
      run_human: ['failed', 'needs_human', 'refund needs approval'],
      run_other: ['failed', 'retryable', 'undefined is not a function'],
    });
    expect(results.get('run_fatal')!.output).toEqual({ field: 'date' });
  });

  it('run_cancelled aborts the handler; nothing more is sent for the run', async () => {
    const h = await harness();
    const { calls } = fakeSink(h);
    const lines: string[] = [];
    const agent = await agentFor(h, { role: 'reporter', logger: captureLogger(lines) });
    const cancelled: string[] = [];
    agent.on('job.cancelled', ({ runId, reason }) => cancelled.push(`${runId}:${reason}`));
    const inStep = deferred();
    let aborted: unknown;
    let secondStep: unknown;
    const done = deferred();
    agent.onJob(async (ctx) => {
      await ctx.step('one', () => 'ref-1', { ref: (r) => r });
      inStep.resolve();
      await new Promise((r) => ctx.signal.addEventListener('abort', r, { once: true }));
      aborted = ctx.signal.reason;
      // A handler that ignores the signal still cannot record anything more.
      secondStep = await ctx.step('two', () => 'ref-2').catch((e: unknown) => e);
      done.resolve();
      return 'finished anyway';
    });
    offer(h, agent, trigger('run_c'));
    await inStep.promise;
    expect(h.core.hub.send(agent.instanceId, { type: 'run_cancelled', runId: 'run_c', reason: 'operator' })).toBe(true);
    await done.promise;
    expect(aborted).toBeInstanceOf(RunCancelledError);
    expect(aborted).toMatchObject({ runId: 'run_c', reason: 'operator' });
    expect(secondStep).toBeInstanceOf(RunCancelledError);
    expect(cancelled).toEqual(['run_c:operator']);
    await until(() => lines.some((l) => l.startsWith('warn not sending run_result')), 'the run to end');
    expect(calls).toEqual([
      ['started', { runId: 'run_c' }],
      ['step', { runId: 'run_c', step: 'one', ref: 'ref-1' }],
    ]);
  });

  it('the jobs engine takes an attempt away (its deadline passes, or the operator cancels it): the handler\'s signal aborts with that reason', async () => {
    // The core's clock an hour ahead of the real one: the SDK's own deadline timer (real clock) stays far off.
    const h = await harness({ clock: new ManualClock(new Date(Date.now() + 3_600_000).toISOString()) });
    h.core.start();
    const agent = await agentFor(h, { role: 'reporter' });
    const aborted: unknown[] = [];
    const inJob: string[] = [];
    agent.onJob(async (ctx) => {
      inJob.push(ctx.runId);
      await new Promise((r) => ctx.signal.addEventListener('abort', r, { once: true }));
      aborted.push(ctx.signal.reason);
      return 'too late';
    });
    const job = (name: string) => h.core.jobs.create({ name, role: 'reporter', schedule: { everyS: 86_400 }, runTimeoutS: 60, retry: { maxAttempts: 1 } }, { actor: 'test' }).job.id;
    const first = h.core.jobs.triggerNow(job('slow'), { reason: 'test', actor: 'test' }).run;
    await until(() => inJob.includes(first.id), 'the handler to run');
    h.clock.advance(60_000);
    await until(() => aborted.length === 1, 'the deadline abort');
    expect(aborted[0]).toBeInstanceOf(RunCancelledError);
    expect(aborted[0]).toMatchObject({ runId: first.id, reason: 'deadline' });
    expect(h.core.jobs.getRun(first.id).run).toMatchObject({ status: 'failed', errorClass: 'lost' });

    const second = h.core.jobs.triggerNow(job('wrong'), { reason: 'again', actor: 'test' }).run;
    await until(() => inJob.includes(second.id), 'the second handler to run');
    h.core.jobs.cancelRun(second.id, { reason: 'wrong input', actor: 'test' });
    await until(() => aborted.length === 2, 'the operator abort');
    expect(aborted[1]).toMatchObject({ runId: second.id, reason: 'operator' });
    expect(h.core.jobs.getRun(second.id).run).toMatchObject({ status: 'failed', lastError: 'cancelled by test: wrong input' });
  });

  it('answers prechecks', async () => {
    const h = await harness();
    const agent = await agentFor(h, { role: 'reporter' });
    agent.onPrecheck('data-ready', ({ slot }) =>
      slot === '2026-11-30' ? { ready: true, reason: 'rows present', evidence: { range: ['2026-11-30', '2026-11-30'], rows: 12 } } : false,
    );
    agent.onPrecheck('explodes', () => {
      throw new Error('db down');
    });
    expect(await h.core.hub.requestPrecheck('reporter', 'data-ready', '2026-11-30', 5000)).toEqual({
      status: 'answered',
      instanceId: agent.instanceId,
      ready: true,
      reason: 'rows present',
      evidence: { range: ['2026-11-30', '2026-11-30'], rows: 12 },
    });
    expect(await h.core.hub.requestPrecheck('reporter', 'data-ready', '2026-12-01', 5000)).toMatchObject({ status: 'answered', ready: false });
    expect(await h.core.hub.requestPrecheck('reporter', 'nope', '2026-11-30', 5000)).toMatchObject({
      status: 'answered',
      ready: false,
      reason: 'this agent has no precheck named "nope"',
    });
    expect(await h.core.hub.requestPrecheck('reporter', 'explodes', '2026-11-30', 5000)).toMatchObject({ ready: false, reason: 'precheck failed: db down' });
  });
});

describe('reconnect', () => {
  it('resumes the same instance after a blip: the lock survives and the task completes', async () => {
    const h = await harness();
    const sockets = trackSockets(h);
    const agent = await agentFor(h);
    const id = agent.instanceId;
    const t = createTask(h, 'survives a blip');
    const events: string[] = [];
    agent.on('disconnected', () => events.push('down'));
    agent.on('ready', ({ resumed }) => events.push(resumed ? 'resumed' : 'new'));
    const go = deferred();
    const started = deferred();
    let renewedAfter = 0;
    const loop = agent.work(
      async ({ signal }) => {
        started.resolve();
        await go.promise;
        expect(signal.aborted).toBe(false);
        return { output: { ok: true } };
      },
      { idleDelayMs: 10, maxTasks: 1, renewEveryMs: 20 },
    );
    await started.promise;
    blip(sockets);
    await until(() => events.includes('resumed'), 'resume');
    agent.on('task.renewed', () => renewedAfter++);
    await until(() => renewedAfter >= 1, 'a renewal after the reconnect');
    go.resolve();
    await loop;
    expect(agent.instanceId).toBe(id);
    expect(events).toEqual(['down', 'resumed']);
    expect(h.core.tasks.get(t.id)).toMatchObject({ status: 'done', output: { ok: true }, attempt: 1 });
    const types = h.core.auditQuery.query({ subject: `instance:${id}` }).items.map((e) => e.type);
    expect(types).toEqual(['instance.hello', 'instance.disconnect', 'instance.resume']);
    expect(h.core.auditQuery.query({ type: 'lock.release', subject: `task:${t.id}` }).items[0]!.actor).toBe(id);
  });

  it('after the grace is over the instance is new: the running task is aborted, not reported', async () => {
    const h = await harness();
    const sockets = trackSockets(h);
    const agent = await agentFor(h);
    const first = agent.instanceId;
    const t = createTask(h, 'lost in the outage');
    const started = deferred();
    let reason: unknown;
    const loop = agent.work(
      async ({ signal }) => {
        started.resolve();
        await new Promise((r) => signal.addEventListener('abort', r, { once: true }));
        reason = signal.reason;
      },
      { idleDelayMs: 10, maxTasks: 1 },
    );
    await started.promise;
    const unblock = blockUpgrades(h);
    blip(sockets);
    await until(() => h.core.instances.get(first).status === 'disconnected', 'disconnected');
    h.clock.advance(h.core.config.reconnectGraceS * 1000 + 1);
    await until(() => h.core.instances.get(first).status === 'offline', 'offline');
    expect(h.core.tasks.get(t.id)).toMatchObject({ status: 'backlog', previouslyExpired: true });
    unblock();
    await loop;
    expect(reason).toBeInstanceOf(LockLostError);
    expect(agent.instanceId).not.toBe(first);
    expect(h.core.instances.get(agent.instanceId).status).toBe('online');
    expect(h.core.auditQuery.query({ type: 'lock.release', subject: `task:${t.id}` }).items).toEqual([]);
  });

  it('gives back a lock it holds but does not know about (a claim reply lost in the blip)', async () => {
    const h = await harness();
    const sockets = trackSockets(h);
    const agent = await agentFor(h);
    const t = createTask(h, 'orphan');
    // The claim lands for this instance, but the agent never sees the reply.
    h.core.locks.claim({ instanceId: agent.instanceId });
    expect(h.core.tasks.get(t.id).lock?.instanceId).toBe(agent.instanceId);
    blip(sockets);
    await until(() => h.core.tasks.get(t.id).status === 'backlog', 'orphan returned');
    expect(h.core.tasks.get(t.id)).toMatchObject({ note: 'claim reply lost in a reconnect; returned unworked', lock: null });
  });

  it('a token past its socket cap (PROTOCOL §17): connect fails with too_many_connections; a 4429 close backs off, then resumes once a place is free', async () => {
    const h = await harness({ hub: { maxConnectionsPerToken: 2 } });
    const token = h.token('dev');
    let upgrades = 0;
    h.server.prependListener('upgrade', () => upgrades++);
    const agent = await connect({ url: h.url, token, role: 'dev', name: 'x', reconnect: { initialDelayMs: 200, maxDelayMs: 5000 } });
    cleanups.push(() => agent.close({ timeoutMs: 100 }));
    const other = await TestAgent.connect(h.url, { token });
    cleanups.push(() => other.ws.terminate());
    await expect(connect({ url: h.url, token, role: 'dev', name: 'third', reconnect: false })).rejects.toMatchObject({ code: 'too_many_connections', status: 429 });
    // The agent is closed 4429 and its place taken before it comes back: it retries with backoff, not in a loop.
    const id = agent.instanceId;
    h.core.hub.kick(id, 4429, 'test');
    const squatter = await TestAgent.connect(h.url, { token });
    const before = upgrades;
    await new Promise((r) => setTimeout(r, 1000));
    expect(upgrades - before).toBeGreaterThanOrEqual(1);
    expect(upgrades - before).toBeLessThanOrEqual(6);
    expect(agent.connected).toBe(false);
    squatter.ws.close();
    await until(() => agent.connected, 'reconnected once a place was free', 10_000);
    expect(agent.instanceId).toBe(id);
  });

  it('stops for good when its token is revoked', async () => {
    const h = await harness();
    const token = h.token('dev');
    const agent = await connect({ url: h.url, token, role: 'dev', name: 'x', reconnect: { initialDelayMs: 5 } });
    cleanups.push(() => agent.close());
    const closed = deferred<Error | undefined>();
    agent.on('closed', ({ error }) => closed.resolve(error));
    const id = h.core.tokens.list().find((x) => h.core.tokens.verify(token)?.id === x.id)!.id;
    h.core.tokens.revoke({ id, reason: 'leaked', actor: 'operator:test' });
    const error = await closed.promise;
    expect(error).toMatchObject({ code: 'unauthorized' });
    expect(agent.connected).toBe(false);
    await expect(agent.claim()).rejects.toMatchObject({ code: 'closed' });
    expect(error).not.toBeInstanceOf(GafferRequestError);
  });
});

describe('heartbeats', () => {
  it('sends heartbeats on the interval', async () => {
    const h = await harness();
    const agent = await agentFor(h, { heartbeatIntervalMs: 20 });
    const before = h.core.instances.get(agent.instanceId).lastHeartbeatAt;
    h.clock.advance(5000);
    const later = new Date(h.clock.now()).toISOString();
    await until(() => h.core.instances.get(agent.instanceId).lastHeartbeatAt === later, 'a heartbeat');
    expect(before).not.toBe(later);
  });
});

describe('example agents', () => {
  it('worker-agent works a task to done, and reports a task that needs something as blocked', async () => {
    const h = await harness();
    const agent = await agentFor(h);
    const a = createTask(h, 'two steps', { priority: 2, payload: { steps: 2, stepMs: 1 } });
    const b = createTask(h, 'needs creds', { priority: 1, payload: { needs: 'credentials' } });
    await agent.work(workTask, { idleDelayMs: 10, maxTasks: 2 });
    expect(h.core.tasks.get(a.id)).toMatchObject({ status: 'done', output: { steps: 2, attempt: 1 }, note: 'finished 2 steps' });
    expect(h.core.tasks.get(b.id)).toMatchObject({ status: 'blocked', note: 'cannot start: needs credentials' });
  });

  it('report-agent writes reports/daily-<slot>.md, checkpoints both steps, and a retry skips what is done', async () => {
    const h = await harness();
    const agent = await agentFor(h, { role: 'reporter' });
    const dir = path.join(tempDir('gaffer-reports-'), 'reports');
    const sent: Array<[string, string]> = [];
    const notify: Notify = async (text, key) => (sent.push([text, key]), `msg-${sent.length}`);
    const steps: Array<[string, string, string | undefined]> = [];
    const results: Array<AgentRequestOf<'run_result'>> = [];
    h.core.hub.setRunSink({
      runStarted: () => ({}),
      runStep: (_i, r) => (steps.push([r.runId, r.step, r.ref]), {}),
      runResult: (_i, r) => (results.push(r), { run: {} }),
    });
    agent.onJob(reportJob({ dir, notify }));
    const trigger = (runId: string, attempt: number, completedSteps: string[]): JobTrigger => ({
      runId,
      jobId: 'job_1',
      job: 'daily-report',
      slot: '2026-11-30',
      attempt,
      payload: { channel: 'sales' },
      idempotencyKey: 'job_1:2026-11-30',
      deadline: new Date(Date.now() + 60_000).toISOString(),
      completedSteps,
      version: 1,
      traceId: 't',
    });
    const file = path.join(dir, 'daily-2026-11-30.md');

    const send = (t: JobTrigger) => expect(h.core.hub.send(agent.instanceId, { type: 'job_trigger', ...t })).toBe(true);
    send(trigger('run_a', 1, []));
    await until(() => results.length === 1, 'first result');
    expect(results[0]).toMatchObject({ outcome: 'success', output: { file } });
    expect(steps).toEqual([
      ['run_a', 'write file', file],
      ['run_a', 'notify', 'msg-1'],
    ]);
    expect(fs.readFileSync(file, 'utf8')).toContain('# Daily report — 2026-11-30');
    expect(sent).toEqual([[`Daily report for 2026-11-30 is ready: ${file}`, 'job_1:2026-11-30']]);

    // A retry after the file was written: only the notification runs.
    send(trigger('run_b', 2, ['write file']));
    await until(() => results.length === 2, 'second result');
    expect(steps.slice(2)).toEqual([['run_b', 'notify', 'msg-2']]);
    // A full rerun of the slot overwrites the same file: still one report.
    send(trigger('run_c', 1, []));
    await until(() => results.length === 3, 'third result');
    expect(fs.readdirSync(dir)).toEqual(['daily-2026-11-30.md']);
    expect(fs.readFileSync(file, 'utf8')).toContain('run: run_c');
    // Every notification carried the same idempotency key for the slot.
    expect(new Set(sent.map(([, key]) => key))).toEqual(new Set(['job_1:2026-11-30']));
  });
});
