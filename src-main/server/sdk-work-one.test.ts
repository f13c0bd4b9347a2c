/**
 * The SDK's `workOne` and `request` additions (used by `gaffer mcp`) against the real hub: one
 * claim per call, "no task" as a plain `false`, a refused claim as an error, and the task worked
 * with the same renewals, lock-loss abort and report as `work()`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { connect, GafferRequestError, LockLostError, type Agent } from '../sdk';
import { startHarness, until, type Harness } from './tests/agent-socket.testkit';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(): Promise<{ h: Harness; agent: Agent }> {
  const h = await startHarness({ hub: { pingIntervalMs: 0 } });
  cleanups.push(() => h.close());
  const agent = await connect({ url: h.url, token: h.token('dev'), role: 'dev', name: 'one', reconnect: false });
  cleanups.push(() => agent.close({ timeoutMs: 100 }));
  return { h, agent };
}

describe('Agent.workOne', () => {
  it('answers false at once when nothing is claimable, and never claims twice', async () => {
    const { h, agent } = await setup();
    let calls = 0;
    expect(await agent.workOne(() => void calls++)).toBe(false);
    expect(calls).toBe(0);
    // A task created after the empty claim is not picked up by that call.
    h.core.tasks.create({ title: 'later', role: 'dev' }, { actor: 'operator:test' });
    await new Promise((r) => setTimeout(r, 50));
    expect(h.core.tasks.list({ role: 'dev' }).items[0]).toMatchObject({ status: 'backlog', attempt: 0 });
  });

  it('works one claimed task like work(): renewals while it runs, then the report', async () => {
    const { h, agent } = await setup();
    const { task } = h.core.tasks.create({ title: 't', role: 'dev' }, { actor: 'operator:test' });
    let renewed = 0;
    agent.on('task.renewed', () => renewed++);
    const worked = await agent.workOne(
      async ({ task: t }) => {
        await until(() => renewed >= 2, 'two renewals');
        return { output: { title: t.title } };
      },
      { renewEveryMs: 10 },
    );
    expect(worked).toBe(true);
    expect(h.core.tasks.get(task.id)).toMatchObject({ status: 'done', output: { title: 't' }, lock: null });
  });

  it('a refused claim rejects instead of looking like "no task"', async () => {
    const { agent } = await setup();
    await expect(agent.workOne(() => {}, { role: 'ops' })).rejects.toBeInstanceOf(GafferRequestError);
  });

  it('aborts the handler and reports nothing when the lock is taken away', async () => {
    const { h, agent } = await setup();
    const { task } = h.core.tasks.create({ title: 'to lose', role: 'dev' }, { actor: 'operator:test' });
    let reason: unknown;
    const worked = agent.workOne(
      ({ signal }) =>
        new Promise((_resolve, reject) => {
          signal.addEventListener('abort', () => reject((reason = signal.reason)));
          h.core.tasks.forceRelease({ taskId: task.id, reason: 'test', actor: 'operator:test' });
        }),
      { renewEveryMs: 10 },
    );
    await expect(worked).resolves.toBe(true);
    expect(reason).toBeInstanceOf(LockLostError);
    expect(h.core.tasks.get(task.id)).toMatchObject({ status: 'backlog', lock: null });
  });
});

describe('Agent.request', () => {
  it('sends any protocol request and surfaces the reply or the refusal', async () => {
    const { agent } = await setup();
    expect(await agent.request('heartbeat')).toEqual({ serverTime: expect.any(String) });
    await expect(agent.request('no_such_frame', { x: 1 })).rejects.toMatchObject({ code: 'bad_request' });
  });
});
