/**
 * The durable peer, measured side by side with the hub: BullMQ on `redis-server --appendfsync
 * always` (bench/redis.ts), the same drain shape as the hub's 50-agent run — N workers in a child
 * process, one job at a time each, an empty processor (bench/bullmq-workers.ts). Jobs keep BullMQ's
 * defaults (a completed job stays in its completed set, as a done task stays on Gaffer's board).
 * Skipped, with one line saying why, where `redis-server` is missing.
 */
import { Queue } from 'bullmq';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { processCpuUs } from './proc';
import { redisMissing, startDurableRedis } from './redis';
import { spawnChild, stopChild } from './util';

export interface PeerRun {
  tasksPerSec: number;
  /** redis-server CPU per completed job over the whole run (its "server CPU per task"), µs. */
  serverCpuUsPerTask: number;
}

export function peerMissing(): string | null {
  return redisMissing();
}

export async function bullmqDrain(workers: number, jobs: number, warmupMs: number, durationMs: number): Promise<PeerRun> {
  const redis = await startDurableRedis();
  const { child } = await spawnChild(path.join(path.dirname(fileURLToPath(import.meta.url)), 'bullmq-workers.ts'));
  try {
    const connection = { host: '127.0.0.1', port: redis.port, maxRetriesPerRequest: null };
    const queue = new Queue('bench', { connection });
    for (let i = 0; i < jobs; i += 1000) {
      await queue.addBulk(Array.from({ length: Math.min(1000, jobs - i) }, (_, j) => ({ name: 'bench', data: { n: i + j } })));
    }
    const cpu0 = processCpuUs(redis.pid);
    child.send({ cmd: 'run', port: redis.port, queue: 'bench', workers, warmupMs, durationMs });
    const r = await child.next();
    const cpu = processCpuUs(redis.pid) - cpu0;
    const left = await queue.count();
    await queue.close();
    if (left === 0) console.warn(`  (warning: the BullMQ queue ran dry with ${workers} workers; seed more jobs)`);
    return { tasksPerSec: Math.round(r.cycles / r.seconds), serverCpuUsPerTask: cpu / Math.max(1, r.totalCycles) };
  } finally {
    await stopChild(child);
    await redis.close();
  }
}
