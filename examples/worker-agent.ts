/**
 * A worker agent: claims tasks of its role, one at a time, and "works" them.
 *
 *   GAFFER_URL=ws://127.0.0.1:7311/agent GAFFER_TOKEN=gft_… npx tsx examples/worker-agent.ts
 *
 * Optional: GAFFER_ROLE (default `dev`), GAFFER_NAME (default `worker-<pid>`).
 * Task payload understood here: `{ "steps": 3, "stepMs": 500, "needs": "credentials" }`.
 * Ctrl-C shuts down gracefully: the task in hand is finished or handed back.
 */
import { pathToFileURL } from 'node:url';
import { BlockedError, type WorkHandler } from 'gaffer-agent';
import { connectFromEnv } from './connect-from-env';

interface Payload {
  steps?: number;
  stepMs?: number;
  needs?: string;
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(t), reject(signal.reason)), { once: true });
  });
}

export const workTask: WorkHandler = async ({ task, attempt, previouslyExpired, signal }) => {
  const p = (task.payload ?? {}) as Payload;
  if (previouslyExpired) {
    // An earlier holder's lock expired: its work may be half done. Check before redoing.
    console.log(`task ${task.id}: attempt ${attempt}, previous holder vanished — checking what is already done`);
  }
  if (p.needs) throw new BlockedError(`cannot start: needs ${p.needs}`);
  const steps = p.steps ?? 3;
  for (let i = 1; i <= steps; i++) {
    signal.throwIfAborted(); // lock lost or agent closing: stop here
    await pause(p.stepMs ?? 500, signal);
    console.log(`task ${task.id} "${task.title}": step ${i}/${steps}`);
  }
  return { output: { steps, attempt }, note: `finished ${steps} steps` };
};

async function main(): Promise<void> {
  const agent = await connectFromEnv('dev', 'worker');
  console.log(`connected as ${agent.instanceId}; waiting for ${agent.role} tasks (Ctrl-C to stop)`);
  agent.on('task.claimed', ({ task }) => console.log(`claimed task ${task.id}: ${task.title}`));
  agent.on('task.reported', ({ taskId, status }) => console.log(`reported task ${taskId}: ${status}`));
  process.once('SIGINT', () => {
    console.log('shutting down…');
    void agent.close({ timeoutMs: 10_000 });
  });
  await agent.work(workTask, { idleDelayMs: 2000 });
  await agent.close();
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((e: unknown) => {
    console.error(e instanceof Error ? e.message : e);
    process.exit(1);
  });
}
