/**
 * The server as `npm start -- --headless` runs it: scripts/start.mjs bundles the server and its
 * log worker with esbuild and runs the bundle, not the sources. What resolves files next to
 * itself must still find them from out/headless: the log store's worker thread (a line from an
 * agent is stored and acknowledged) and the managed agents' launcher (an agent Gaffer starts
 * connects and says hello).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Agent } from '../src-main/sdk';
import { apiCall, createAgentToken, startAgent, startGaffer, until, type Gaffer } from './harness';

let g: Gaffer;
const agents: Agent[] = [];

beforeAll(async () => {
  g = await startGaffer({ asShipped: true, startTimeoutMs: 120_000 });
});

afterAll(async () => {
  for (const a of agents) await a.close().catch(() => {});
  await g?.stop(); // Gaffer stops the agents it manages with itself
});

describe('the shipped headless start (the bundle)', () => {
  it("an agent's log line is stored and acknowledged by the bundled log worker", async () => {
    const token = await createAgentToken(g, 'shipped-dev', 'shipped');
    const { task } = await apiCall<{ task: { id: number } }>(g, 'POST', '/tasks', { title: 'log from the bundle', role: 'shipped' });
    const agent = await startAgent(g, token, 'shipped', 'shipped-dev');
    agents.push(agent);
    await agent.work(
      async (ctx) => {
        await ctx.log('hello from the bundled server');
        return { status: 'done' as const, note: 'logged' };
      },
      { maxTasks: 1 },
    );
    const page = await apiCall<{ items: Array<{ text: string }> }>(g, 'GET', `/tasks/${task.id}/logs?after=0&limit=50`);
    expect(page.items.map((l) => l.text)).toContain('hello from the bundled server');
    expect(g.log()).not.toMatch(/log storage could not start/);
  });

  it('a managed agent is started from the bundle and says hello', async () => {
    await apiCall(g, 'POST', '/managed-agents', { name: 'shipped-watch', role: 'shipped-watch', command: ['sleep', '3600'], timeoutS: 600, reason: 'e2e: started by the bundle' });
    await until(
      async () =>
        (await apiCall<{ managedAgent: { processes: Array<{ status: string; instanceId: string | null }> } }>(g, 'GET', '/managed-agents/shipped-watch')).managedAgent.processes.some(
          (p) => p.status === 'running' && p.instanceId,
        ),
      'the managed agent to run and say hello',
      60_000,
    );
  });
});
