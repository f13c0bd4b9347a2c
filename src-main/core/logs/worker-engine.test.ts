import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import type { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_LOG_SETTINGS } from '../../common/logs';
import { tempDir } from '../tests/test-core';
import { packBatch, type LogEngine } from './engine';
import { startWorkerEngine } from './worker-engine';
import { createCore } from '../create-core';

const engines: LogEngine[] = [];
afterEach(async () => {
  for (const e of engines.splice(0)) await e.close();
});

const T0 = Date.parse('2026-12-01T10:00:00.000Z');
/** One frame parsed on the main thread (no text frames). */
const batch = (from: number, n: number) => ({
  packed: packBatch([{ subject: 'task:1', attempt: 1, lines: Array.from({ length: n }, (_, i) => ({ text: `line ${from + i}`, at: T0, seq: from + i })) }]),
  texts: [],
  order: new Uint8Array(1),
});

describe('the log worker', () => {
  it('answers in a thread of its own, and a worker that dies is started again with what was committed', async () => {
    const spawned: Worker[] = [];
    const exits: string[] = [];
    const engine = startWorkerEngine({ dir: tempDir('gaffer-logw-'), now: () => T0, onSpawn: (w) => spawned.push(w), onExit: (e) => exits.push(e) });
    engines.push(engine);
    const [first] = await engine.call('ingest', { batch: batch(1, 50), now: T0, settings: DEFAULT_LOG_SETTINGS });
    expect(first).toMatchObject({ ok: true, stored: 50, clientSeq: 50 });

    // The worker dies: what is waiting fails as unavailable (never acknowledged), the next call starts a new one.
    const waiting = engine.call('ingest', { batch: batch(51, 50), now: T0, settings: DEFAULT_LOG_SETTINGS });
    await spawned[0]!.terminate();
    const outcome = await waiting.then(
      () => 'answered',
      (e: { code?: string }) => e.code,
    );
    // Either it committed before the kill (then the resend below is all duplicates) or it failed unavailable.
    expect(['answered', 'unavailable']).toContain(outcome);
    expect(exits).toHaveLength(1);
    const [again] = await engine.call('ingest', { batch: batch(51, 50), now: T0, settings: DEFAULT_LOG_SETTINGS });
    expect(spawned).toHaveLength(2);
    expect(again).toMatchObject({ ok: true, clientSeq: 100 });
    const page = await engine.call('read', { subject: 'task:1', limit: 1000 });
    expect(page.items.map((l) => l.text)).toEqual(Array.from({ length: 100 }, (_, i) => `line ${i + 1}`));
  });

  /** Nice values of this process's threads (Linux: field 19 of /proc/<pid>/task/<tid>/stat). */
  const threadNices = () =>
    fs.readdirSync(`/proc/${process.pid}/task`).map((tid) => {
      const stat = fs.readFileSync(`/proc/${process.pid}/task/${tid}/stat`, 'utf8');
      return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
    });

  it.skipIf(process.platform !== 'linux')('runs at a lower CPU priority than the rest of the process (only its own thread; Linux only)', async () => {
    const before = threadNices();
    const base = before[0];
    expect(before.every((n) => n === base && n !== 7)).toBe(true);
    const engine = startWorkerEngine({ dir: tempDir('gaffer-logw-'), now: () => T0, nice: 7 });
    engines.push(engine);
    await engine.call('stats', {});
    const during = threadNices();
    expect(during.filter((n) => n === 7)).toHaveLength(1);
    expect(during.filter((n) => n !== 7).every((n) => n === base)).toBe(true); // the thread serving claims among them
    await engine.close();
    expect(threadNices().filter((n) => n === 7)).toEqual([]);
  });

  /** Scheduling policy of this process's threads (Linux: field 41 of /proc/<pid>/task/<tid>/stat; 5 = SCHED_IDLE). */
  const threadPolicies = () =>
    fs.readdirSync(`/proc/${process.pid}/task`).map((tid) => {
      const stat = fs.readFileSync(`/proc/${process.pid}/task/${tid}/stat`, 'utf8');
      return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[38]);
    });
  const SCHED_IDLE = 5;
  // Needs `chrt` (util-linux), as the product does; without it the worker keeps its nice value only.
  const hasChrt = process.platform === 'linux' && spawnSync('chrt', ['--version'], { stdio: 'ignore' }).status === 0;

  it.skipIf(!hasChrt)('runs in SCHED_IDLE when asked: any woken thread takes its CPU at once (only its own thread; Linux)', async () => {
    expect(threadPolicies().filter((p) => p === SCHED_IDLE)).toEqual([]);
    const engine = startWorkerEngine({ dir: tempDir('gaffer-logw-'), now: () => T0, nice: 7, schedIdle: true });
    engines.push(engine);
    const [r] = await engine.call('ingest', { batch: batch(1, 10), now: T0, settings: DEFAULT_LOG_SETTINGS });
    expect(r).toMatchObject({ ok: true, stored: 10 });
    const during = threadPolicies();
    expect(during.filter((p) => p === SCHED_IDLE)).toHaveLength(1);
    expect(during.filter((p) => p !== SCHED_IDLE).every((p) => p === 0)).toBe(true); // the thread serving claims among them
    await engine.close();
    expect(threadPolicies().filter((p) => p === SCHED_IDLE)).toEqual([]);
  });

  it.skipIf(!hasChrt)('the logs option workerSchedIdle reaches the worker; without it the worker keeps nice only', async () => {
    const policiesWith = async (workerSchedIdle: boolean | undefined) => {
      const core = createCore({ dataDir: tempDir('gaffer-logw-core-'), logs: workerSchedIdle === undefined ? {} : { workerSchedIdle } });
      try {
        await core.logs.read({ subject: 'task:none', limit: 1 }); // starts the worker
        return threadPolicies().filter((p) => p === SCHED_IDLE).length;
      } finally {
        core.close();
        await core.logs.close(); // the same promise core.close() started: the worker gone
      }
    };
    expect(await policiesWith(true)).toBe(1);
    expect(await policiesWith(undefined)).toBe(0); // off by default
  });
});
