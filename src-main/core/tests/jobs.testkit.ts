/**
 * Test kit for the jobs module (used by *.test.ts only): a real core with a manual clock, its hub
 * served over real WebSockets on 127.0.0.1:0, and scripted agents speaking the protocol over `ws`.
 *
 * The core may not import the server layer, so the socket is bridged to the hub here in a few lines
 * (the production adapter, server/agent-socket.ts, adds the upgrade guards its own tests cover).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { onTestFinished } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { ManualClock } from '../../common/clock';
import type { SchedulerConfig } from '../../common/config';
import type { JobSpecInput, Run } from '../../common/job-schema';
import { MAX_FRAME_BYTES, type JobTriggerPush } from '../../common/protocol';
import { createCore, type Core } from '../create-core';
import { checkInvariants } from './invariants';
import { tempDir } from './test-core';
import { TestAgent } from './ws-agent.testkit';

export { until } from './ws-agent.testkit';

/** Serves `core.hub` on `server` at `/agent` (bearer token checked like the production adapter). */
function bridgeHub(server: http.Server, core: Core): () => void {
  const wss = new WebSocketServer({ server, path: '/agent', maxPayload: MAX_FRAME_BYTES, perMessageDeflate: false });
  wss.on('connection', (ws, req) => {
    const secret = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1];
    const token = secret ? core.tokens.verify(secret) : null;
    if (secret && !token) {
      ws.close(4401, 'bad token');
      return;
    }
    const conn = core.hub.connect(
      {
        send: (text) => {
          if (ws.readyState === WebSocket.OPEN) ws.send(text);
        },
        close: (code, reason) => ws.close(code, reason),
        get bufferedAmount() {
          return ws.bufferedAmount;
        },
        ping: () => ws.ping(),
        terminate: () => ws.terminate(),
      },
      { remoteAddress: req.socket.remoteAddress ?? null, token },
    );
    ws.on('message', (data, isBinary) => (isBinary ? conn.receiveBinary() : conn.receive(data.toString())));
    ws.on('pong', () => conn.alive());
    ws.on('close', (code, reason) => conn.closed(code, reason.toString()));
    ws.on('error', () => ws.terminate());
  });
  return () => {
    for (const c of wss.clients) c.terminate();
    wss.close();
  };
}

/** A `job_trigger` as an agent receives it: the protocol's fields plus the runner's additions. */
export interface Trigger extends JobTriggerPush {
  slotAt?: string;
  trigger?: string;
  covers?: string[];
  backfillId?: number;
  /** Added by the kit: wall time (manual clock) when it arrived. */
  receivedAt: number;
}

/** What an agent does with a trigger. */
export type Behavior = (t: Trigger, agent: JobAgent) => Promise<void> | void;

export const succeed =
  (steps: string[] = []): Behavior =>
  async (t, a) => {
    await a.started(t);
    for (const s of steps) if (!t.completedSteps.includes(s)) await a.step(t, s);
    await a.result(t, 'success');
  };

export const fail =
  (errorClass: 'retryable' | 'fatal' | 'needs_human', error = 'downstream timeout', steps: string[] = []): Behavior =>
  async (t, a) => {
    await a.started(t);
    for (const s of steps) if (!t.completedSteps.includes(s)) await a.step(t, s);
    await a.result(t, 'failed', errorClass, error);
  };

/** Acknowledges and then never finishes (a long run). */
export const hang: Behavior = async (t, a) => {
  await a.started(t);
};

/** Never even acknowledges. */
export const ignore: Behavior = () => {};

export class JobAgent {
  readonly triggers: Trigger[] = [];
  readonly replies: Array<{ type: string; runId: string; reply: unknown }> = [];
  prechecks: Array<{ requestId: string; check: string; slot: string }> = [];
  precheckAnswer: (p: { check: string; slot: string }) => { ready: boolean; reason?: string; evidence?: unknown } | null = () => ({ ready: true });
  busy = 0;

  constructor(
    readonly a: TestAgent,
    private readonly clock: ManualClock,
    public behavior: Behavior,
  ) {
    a.ws.on('message', (data) => {
      const msg = JSON.parse(data.toString()) as { type?: string; ok?: unknown };
      if (msg.type === 'job_trigger' && !('ok' in msg)) {
        const t = { ...(msg as unknown as Trigger), receivedAt: this.clock.now() };
        this.triggers.push(t);
        this.busy++;
        void Promise.resolve(this.behavior(t, this)).finally(() => this.busy--);
      } else if (msg.type === 'precheck' && !('ok' in msg)) {
        const p = msg as unknown as { requestId: string; check: string; slot: string };
        this.prechecks.push(p);
        const ans = this.precheckAnswer(p);
        if (ans) void this.a.request('precheck_result', { requestId: p.requestId, ...ans });
      }
    });
  }

  get instanceId(): string {
    return this.a.instanceId;
  }

  async started(t: Trigger) {
    const r = await this.a.request('run_started', { runId: t.runId });
    this.replies.push({ type: 'run_started', runId: t.runId, reply: r });
    return r;
  }

  async step(t: Trigger, step: string) {
    const r = await this.a.request('run_step', { runId: t.runId, step });
    this.replies.push({ type: 'run_step', runId: t.runId, reply: r });
    return r;
  }

  async result(t: Trigger, outcome: 'success' | 'failed', errorClass?: string, error?: string) {
    const r = await this.a.request('run_result', { runId: t.runId, outcome, ...(errorClass ? { errorClass } : {}), ...(error ? { error } : {}) });
    this.replies.push({ type: 'run_result', runId: t.runId, reply: r });
    return r;
  }

  close() {
    this.a.close();
  }
}

export interface JobsHarness {
  core: Core;
  clock: ManualClock;
  dir: string;
  port: number;
  url: string;
  agents: JobAgent[];
  /** A scripted agent of `role`; `hello`: more fields of its hello (e.g. `{takesRuns: false}`). */
  agent(role: string, behavior?: Behavior, name?: string, hello?: Record<string, unknown>): Promise<JobAgent>;
  createJob(spec: Partial<JobSpecInput> & { name: string }): string;
  run(jobId: string, slot: string): Run | undefined;
  runs(jobId: string): Run[];
  /** Advances the manual clock to `iso`, stopping at every runner wake-up to let agents answer. */
  advanceTo(iso: string | number): Promise<void>;
  advance(ms: number): Promise<void>;
  /** Waits (real time) until the system is quiet: no checks in flight, commits done, audit stable. */
  settle(): Promise<void>;
  audit(type?: string): Array<{ id: number; at: number; type: string; actor: string; subject: string; detail: any }>;
  /** Closes server and core (the database stays). */
  stop(): Promise<void>;
  close(): Promise<void>;
}

/** The schedule most scenario tests use: every 15 minutes, UTC. */
export const EVERY_15_MIN = { everyS: 900, timezone: 'UTC' };
/** Who the scenario tests' operator actions are audited as. */
export const OPERATOR = { actor: 'operator:test' };

export const BASE_CONFIG: Partial<SchedulerConfig> = {
  // Agents of these tests do not heartbeat while the manual clock races through hours.
  heartbeatTimeoutS: 10_000_000,
};

export async function startJobsHarness(opts: { start?: string; config?: Partial<SchedulerConfig>; dir?: string; clock?: ManualClock; startCore?: boolean } = {}): Promise<JobsHarness> {
  const clock = opts.clock ?? new ManualClock(opts.start ?? '2026-11-30T00:00:00.000Z');
  const dir = opts.dir ?? tempDir('gaffer-jobs-');
  const core = createCore({ clock, dataDir: dir, config: { ...BASE_CONFIG, ...(opts.config ?? {}) }, hub: { pingIntervalMs: 0 } });
  const server = http.createServer((_req, res) => res.writeHead(404).end());
  const unbridge = bridgeHub(server, core);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const url = `ws://127.0.0.1:${port}/agent`;
  if (opts.startCore ?? true) core.start();
  const agents: JobAgent[] = [];
  let n = 0;
  let stopped = false;

  const settle = async () => {
    for (let i = 0; i < 400; i++) {
      await core.jobs.settled();
      const a = core.audit.count();
      const busy = agents.some((x) => x.busy > 0);
      await new Promise((r) => setTimeout(r, 6));
      if (!busy && core.committer.pending === 0 && core.audit.count() === a && !agents.some((x) => x.busy > 0)) {
        await new Promise((r) => setTimeout(r, 4));
        if (core.audit.count() === a) return;
      }
    }
  };

  const h: JobsHarness = {
    core,
    clock,
    dir,
    port,
    url,
    agents,
    async agent(role, behavior = succeed(), name, hello = {}) {
      const token = core.tokens.create({ name: `t${++n}`, role, actor: 'test' }).token;
      const a = await TestAgent.hello(url, token, role, name ?? `${role}-${n}`, hello);
      const ja = new JobAgent(a, clock, behavior);
      agents.push(ja);
      await settle();
      return ja;
    },
    createJob(spec) {
      const full = { role: 'reporter', schedule: { cron: '0 9 * * *', timezone: 'Asia/Shanghai' }, ...spec } as JobSpecInput;
      return core.jobs.create(full, { actor: 'test' }).job.id;
    },
    run(jobId, slot) {
      return core.jobs.listRuns({ job: jobId, limit: 1000 }).items.find((r) => r.slot === slot);
    },
    runs(jobId) {
      return core.jobs.listRuns({ job: jobId, limit: 1000 }).items.reverse();
    },
    async advanceTo(target) {
      const t = typeof target === 'number' ? target : Date.parse(target);
      await settle();
      for (let guard = 0; guard < 100_000 && clock.now() < t; guard++) {
        const wake = core.jobs.nextWakeAt;
        if (wake !== undefined && wake <= clock.now()) {
          clock.advance(0);
          await settle();
          if (core.jobs.nextWakeAt === wake) {
            // A timer set before a wall-clock jump: let time pass until a sweep catches up.
            clock.advanceTo(Math.min(t, clock.now() + 1000));
            await settle();
          }
          continue;
        }
        clock.advanceTo(wake !== undefined ? Math.min(wake, t) : t);
        await settle();
      }
    },
    async advance(ms) {
      await h.advanceTo(clock.now() + ms);
    },
    settle,
    audit(type) {
      const rows = core.db
        .prepare(`SELECT id, at, type, actor, subject, detail FROM audit ${type ? 'WHERE type = ?' : ''} ORDER BY id`)
        .all(...(type ? [type] : [])) as Array<{ id: number; at: number; type: string; actor: string; subject: string; detail: string }>;
      return rows.map((r) => ({ ...r, detail: JSON.parse(r.detail) }));
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      core.close();
      unbridge();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
    async close() {
      await h.stop();
    },
  };
  // Closed when the test that started it finishes, after its afterEach hooks (close is idempotent:
  // a test may stop or close it itself first, e.g. to restart on the same directory).
  onTestFinished(() => h.close());
  return h;
}

/** Fails the test if any invariant is broken. */
export function assertInvariants(core: Core): void {
  const problems = checkInvariants(core.db);
  if (problems.length) throw new Error(`invariants broken:\n${problems.join('\n')}`);
}
