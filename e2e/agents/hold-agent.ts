/**
 * An SDK agent that claims one task of its role and then holds it (renewing, heartbeating)
 * until it is killed. Prints `ready <instanceId>`, then `claimed <taskId> <fence>`.
 * Env: GAFFER_URL, GAFFER_TOKEN, ROLE, NAME, TASK_ID (optional: wait for that task).
 */
import { connect } from '../../src-main/sdk';

const agent = await connect({ url: process.env.GAFFER_URL!, token: process.env.GAFFER_TOKEN!, role: process.env.ROLE ?? 'dev', name: process.env.NAME ?? 'hold-agent', reconnect: false });
console.log(`ready ${agent.instanceId}`);
const want = process.env.TASK_ID ? Number(process.env.TASK_ID) : null;
void agent.work(
  async ({ task, signal }) => {
    console.log(`claimed ${task.id} ${task.attempt}`);
    if (want !== null && task.id !== want) return { note: 'not the one' };
    await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
  },
  { idleDelayMs: 200 },
);
setInterval(() => {}, 1 << 30);
