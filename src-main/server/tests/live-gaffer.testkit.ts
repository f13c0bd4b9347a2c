/**
 * Test kit: a real Gaffer in this process (core on the system clock, the local server on
 * 127.0.0.1:0, a temp data directory) for tests that drive real agent processes against it.
 */
import type { SchedulerConfig } from '../../common/config';
import type { Run } from '../../common/job-schema';
import type { Task } from '../../common/model';
import { createCore, type Core } from '../../core/create-core';
import { tempDir } from '../../core/tests/test-core';
import { startServer, type RunningServer } from '../server';

export interface LiveGaffer {
  core: Core;
  server: RunningServer;
  dir: string;
  operatorToken: string;
  /** A fresh agent token bound to `role`. */
  token(role: string): string;
  createTask(title: string, payload?: unknown, extra?: { priority?: number }): Task;
  task(id: number): Task;
  run(id: string): Run;
  /** An `/api/v1` call with the operator token. */
  api(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  close(): Promise<void>;
}

export const OPERATOR_TOKEN = 'gfo_live-test-operator-token-0123456789';

export async function startLiveGaffer(opts: { config?: Partial<SchedulerConfig>; dir?: string; extraRoutes?: Parameters<typeof startServer>[1]['extraRoutes']; role?: string } = {}): Promise<LiveGaffer> {
  const dir = opts.dir ?? tempDir('gaffer-live-');
  const core = createCore({ dataDir: dir, config: opts.config ?? {} });
  core.start();
  const server = await startServer(core, { port: 0, operatorToken: OPERATOR_TOKEN, ...(opts.extraRoutes ? { extraRoutes: opts.extraRoutes } : {}) });
  let n = 0;
  let closed = false;
  return {
    core,
    server,
    dir,
    operatorToken: OPERATOR_TOKEN,
    token: (role) => core.tokens.create({ name: `live-${++n}`, role, actor: 'test' }).token,
    createTask: (title, payload, extra) => core.tasks.create({ title, role: opts.role ?? 'cmd', ...(payload !== undefined ? { payload } : {}), ...(extra ?? {}) }, { actor: 'test' }).task,
    task: (id) => core.tasks.get(id),
    run: (id) => core.jobs.getRun(id).run,
    async api(method, path, body) {
      const res = await fetch(`${server.url}/api/v1${path}`, {
        method,
        headers: { authorization: `Bearer ${OPERATOR_TOKEN}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : null };
    },
    async close() {
      if (closed) return;
      closed = true;
      await server.close();
      core.close();
    },
  };
}
