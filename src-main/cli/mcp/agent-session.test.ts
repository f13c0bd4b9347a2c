/**
 * AgentSession's job runs against a stand-in SDK agent (the SDK's own handling of triggers is
 * tested in src-main/sdk): what the session keeps per run and attempt (invariant 4).
 */
import { describe, expect, it } from 'vitest';
import type { Agent, JobContext, JobHandler } from '../../sdk';
import { AgentSession } from './agent-session';

/** The members of `Agent` the session's job part uses; the test plays the SDK's side. */
function fakeAgent() {
  let handler: JobHandler | undefined;
  const finished: Array<(e: { runId: string; outcome: 'success' | 'failed'; errorClass?: string }) => void> = [];
  const agent = {
    onJob: (h: JobHandler) => {
      handler = h;
      return () => {};
    },
    on: (event: string, fn: (e: never) => void) => {
      if (event === 'job.finished') finished.push(fn as (typeof finished)[number]);
      return () => {};
    },
  } as unknown as Agent;
  /** Hands the session an acknowledged attempt, as the SDK does after `run_started`; its result as the SDK reports it. */
  const trigger = (runId: string, attempt: number) => {
    const controller = new AbortController();
    const ctx = { runId, attempt, slot: '2026-11-30', job: 'export', signal: controller.signal, step: async () => undefined } as unknown as JobContext;
    const result = Promise.resolve(handler!(ctx)).then(
      (output: unknown) => {
        for (const f of finished) f({ runId, outcome: 'success' });
        return { outcome: 'success', output };
      },
      (e: unknown) => {
        if (!controller.signal.aborted) for (const f of finished) f({ runId, outcome: 'failed', errorClass: 'retryable' });
        return { outcome: 'failed', error: e };
      },
    );
    return { controller, result };
  };
  return { agent, trigger };
}

describe('AgentSession: job runs by run and attempt', () => {
  it('an attempt taken away (deadline, operator) does not shadow the later attempt of the same run', async () => {
    const { agent, trigger } = fakeAgent();
    const session = new AgentSession(agent, { jobs: true, finishTimeoutMs: 1000 });
    const first = trigger('run_1', 1);
    expect(session.nextRun()).toMatchObject({ runId: 'run_1', attempt: 1 });
    first.controller.abort(new Error('deadline passed'));
    await first.result;
    await expect(session.finishRun('run_1', { outcome: 'success' })).rejects.toMatchObject({ code: 'run_ended' });

    trigger('run_1', 2);
    expect(session.nextRun()).toMatchObject({ runId: 'run_1', attempt: 2 });
    expect(session.nextRun()).toBeNull();
    await expect(session.finishRun('run_1', { outcome: 'success' }, 1)).rejects.toMatchObject({ code: 'run_ended', message: expect.stringMatching(/attempt 2 is the current one/) });
    await expect(session.finishRun('run_1', { outcome: 'success' }, 3)).rejects.toMatchObject({ code: 'unknown_run' });
    expect(await session.finishRun('run_1', { outcome: 'success' }, 2)).toEqual({ runId: 'run_1', attempt: 2, outcome: 'success' });
    await expect(session.finishRun('run_1', { outcome: 'success' })).rejects.toMatchObject({ code: 'run_ended', message: expect.stringMatching(/attempt 2 .* is over \(finished: success\)/) });
  });

  it('a finished attempt does not shadow its retry, and the retry queues behind runs taken before it', async () => {
    const { agent, trigger } = fakeAgent();
    const session = new AgentSession(agent, { jobs: true, finishTimeoutMs: 1000 });
    trigger('run_1', 1);
    expect(session.nextRun()).toMatchObject({ runId: 'run_1', attempt: 1 });
    expect(await session.finishRun('run_1', { outcome: 'failed', errorClass: 'retryable', error: 'timeout' })).toMatchObject({ outcome: 'failed', errorClass: 'retryable' });
    trigger('run_2', 1);
    trigger('run_1', 2);
    expect([session.nextRun(), session.nextRun(), session.nextRun()].map((r) => r && [r.runId, r.attempt])).toEqual([['run_2', 1], ['run_1', 2], null]);
  });
});
