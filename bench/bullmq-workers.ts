/**
 * The peer's agents: BullMQ workers in a CHILD process (forked by bench/hub.ts), the same drain
 * shape as bench/hub-agents.ts — N workers, one job at a time each (concurrency 1), an empty
 * processor, so each cycle is "complete this job, fetch the next" (BullMQ does both in one round
 * trip, `moveToFinished` with fetch-next). Driven over IPC:
 *   {cmd:'run', port, queue, workers, warmupMs, durationMs} → {cycles, totalCycles, seconds}
 */
import { Worker } from 'bullmq';

type Msg = { cmd: 'run' | 'exit'; port: number; queue: string; workers: number; warmupMs: number; durationMs: number };

async function run(m: Msg) {
  const connection = { host: '127.0.0.1', port: m.port, maxRetriesPerRequest: null };
  let measureFrom = Infinity;
  let end = Infinity;
  let cycles = 0;
  let totalCycles = 0;
  const fleet = Array.from({ length: m.workers }, () => new Worker(m.queue, async () => undefined, { connection, concurrency: 1, autorun: false }));
  for (const w of fleet) {
    w.on('completed', () => {
      const t = performance.now();
      totalCycles++;
      if (t >= measureFrom && t <= end) cycles++;
    });
    w.on('error', (e) => process.send!({ error: String(e) }));
  }
  await Promise.all(fleet.map((w) => w.waitUntilReady()));
  const start = performance.now();
  measureFrom = start + m.warmupMs;
  end = measureFrom + m.durationMs;
  for (const w of fleet) void w.run();
  await new Promise((r) => setTimeout(r, end - performance.now()));
  await Promise.all(fleet.map((w) => w.close(true)));
  return { cycles, totalCycles, seconds: m.durationMs / 1000 };
}

process.on('message', (m: Msg) => {
  if (m.cmd === 'run') run(m).then((r) => process.send!(r), (e) => process.send!({ error: String((e as Error)?.stack ?? e) }));
  else process.exit(0);
});
process.send!({ up: true });
