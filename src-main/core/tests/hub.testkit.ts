/**
 * Test kit for the hub: fake sockets and a core with a manual clock, driven through the hub's
 * transport-agnostic port (real sockets: server/tests/agent-socket.testkit.ts). Used by *.test.ts only.
 */
import { isDeepStrictEqual } from 'node:util';
import { expect } from 'vitest';
import { ManualClock } from '../../common/clock';
import type { SchedulerConfig } from '../../common/config';
import { agentPush } from '../../common/protocol';
import { createCore, type Core } from '../create-core';
import { tempDir } from './test-core';
import { until, type Json } from './ws-agent.testkit';
import type { HubConnection, HubOptions, HubSocket, JobTrigger, RunSink } from '../hub/ports';

export { until, type Json };

/** A socket that records what the hub sends; pushes that are not exactly a value of their schema are collected. */
export class FakeSocket implements HubSocket {
  sent: Json[] = [];
  closedWith: { code: number; reason: string } | undefined;
  bufferedAmount = 0;
  pings = 0;
  terminated = false;
  conn!: HubConnection;
  constructor(private readonly drift: string[]) {}
  send(text: string) {
    const msg = JSON.parse(text);
    if (!('ok' in msg)) {
      const parsed = agentPush.safeParse(msg);
      if (!parsed.success || !isDeepStrictEqual(parsed.data, msg)) this.drift.push(text);
    }
    this.sent.push(msg);
  }
  close(code: number, reason: string) {
    this.closedWith = { code, reason };
    queueMicrotask(() => this.conn.closed(code, reason));
  }
  ping() {
    this.pings++;
  }
  terminate() {
    this.terminated = true;
    this.conn.closed(1006, '');
  }
  replies(id: unknown) {
    return this.sent.filter((m) => 'ok' in m && m.id === id);
  }
  pushes(type?: string) {
    return this.sent.filter((m) => !('ok' in m) && (type === undefined || m.type === type));
  }
}

export type TokenGrant = ReturnType<Core['tokens']['create']>;

/** A core (manual clock, pings off unless asked) and helpers to talk to its hub. */
export class HubFixture {
  readonly clock = new ManualClock();
  readonly core: Core;
  /** Pushes the hub sent that are not exactly a value of their schema. */
  readonly pushDrift: string[] = [];
  private seq = 0;

  constructor(hub: HubOptions = {}, config: Partial<SchedulerConfig> = {}) {
    this.core = createCore({ clock: this.clock, dataDir: tempDir('gaffer-hubunit-'), config, hub: { pingIntervalMs: 0, ...hub } });
  }

  token(role: string | null = 'dev'): TokenGrant {
    return this.core.tokens.create({ name: 'a', role, actor: 'test' });
  }

  open(tokenInfo?: TokenGrant): FakeSocket {
    const sock = new FakeSocket(this.pushDrift);
    sock.conn = this.core.hub.connect(sock, { remoteAddress: '127.0.0.1', token: tokenInfo ? this.core.tokens.verify(tokenInfo.token)! : null });
    return sock;
  }

  async call(sock: FakeSocket, type: string, fields: Record<string, unknown> = {}): Promise<Json> {
    const id = `c${++this.seq}`;
    sock.conn.receive(JSON.stringify({ id, type, ...fields }));
    return until(() => sock.replies(id)[0], `reply to ${type}`);
  }

  async agent(role = 'dev', name = 'a', tok = this.token(role)): Promise<{ sock: FakeSocket; id: string }> {
    const sock = this.open(tok);
    const r = await this.call(sock, 'hello', { role, name });
    expect(r.ok).toBe(true);
    return { sock, id: r.result.instanceId as string };
  }

  audits(type: string): Array<{ detail: string; subject: string; actor: string; trace_id: string | null }> {
    return this.core.db.prepare('SELECT * FROM audit WHERE type = ? ORDER BY id').all(type) as Array<{ detail: string; subject: string; actor: string; trace_id: string | null }>;
  }

  /** Closes the core and checks that every push was a value of its schema. */
  close(): void {
    this.core.close();
    expect(this.pushDrift).toEqual([]);
  }
}

export const trigger = (runId: string): JobTrigger => ({
  runId,
  jobId: 'job_1',
  job: 'daily-report',
  slot: '2026-11-30',
  attempt: 1,
  payload: { channel: 'sales' },
  idempotencyKey: 'job_1:2026-11-30',
  deadline: '2026-11-30T10:00:00.000Z',
  completedSteps: [],
  version: 3,
  traceId: 'trace-1',
});

export class TestSink implements RunSink {
  started: Array<[string, string]> = [];
  steps: Array<[string, string]> = [];
  runStarted(instanceId: string, req: { runId: string }) {
    this.started.push([instanceId, req.runId]);
    return {};
  }
  runStep(instanceId: string, req: { step: string }) {
    this.steps.push([instanceId, req.step]);
    return {};
  }
  runResult(_instanceId: string, req: { runId: string; outcome: string }) {
    return { run: { id: req.runId, status: req.outcome } };
  }
}
