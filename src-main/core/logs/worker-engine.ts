/**
 * Starts the log worker thread and talks to it. From the sources (tests, `tsx`, the headless
 * server) the worker runs `worker.ts` through tsx's loader; in the Electron build it runs the
 * bundled `logs-worker.js` next to the main bundle.
 *
 * Invariants:
 * 1. Replies come back in request order; each call settles exactly once: with the worker's
 *    value, its error, or `unavailable` when the worker died or was closed.
 * 2. A worker that dies is started again on the next call (its store reopens the segment files,
 *    whose committed content is intact: log-store invariant 1).
 */
import type { Worker } from 'node:worker_threads';
import { GafferError } from '../../common/errors';
import { startWorkerThread } from '../worker-thread';
import type { EngineOp, EngineOps, LogEngine } from './engine';
import type { WorkerData } from './worker';

export interface WorkerEngineOptions extends Omit<WorkerData, 'now'> {
  /** The clock's time, for a new segment's creation date. */
  now: () => number;
  /** Segment files that could not be opened (moved aside), reported once per start. */
  onBadSegments?: (files: string[]) => void;
  /** The worker stopped unexpectedly (it restarts on the next call). */
  onExit?: (error: string) => void;
  /** Each started worker (tests use it to kill one). */
  onSpawn?: (w: Worker) => void;
}

/** The bundled worker when running from the build, else the TypeScript source through tsx. */
function spawn(data: WorkerData): Worker {
  return startWorkerThread({ from: import.meta.url, bundled: 'logs-worker.js', source: 'worker.ts' }, data);
}

interface Pending {
  resolve: (v: never) => void;
  reject: (e: unknown) => void;
}

export function startWorkerEngine(opts: WorkerEngineOptions): LogEngine {
  let worker: Worker | null = null;
  let ready: Promise<void> | null = null;
  let closed = false;
  let nextId = 1;
  const pending = new Map<number, Pending>();

  const failAll = (why: string) => {
    for (const p of pending.values()) p.reject(new GafferError('unavailable', `log storage is not available: ${why}`));
    pending.clear();
  };

  const start = (): Promise<void> => {
    const { now, onBadSegments, onExit, onSpawn, ...rest } = opts;
    const w = spawn({ ...rest, now: now() });
    worker = w;
    onSpawn?.(w);
    return new Promise<void>((resolve, reject) => {
      w.on('message', (m: { ready?: true; badSegments?: string[]; id?: number; ok?: boolean; value?: unknown; error?: { message: string } }) => {
        if (m.ready) {
          if (m.badSegments?.length) onBadSegments?.(m.badSegments);
          // From now on the worker keeps the process alive only while it owes an answer.
          if (pending.size === 0) w.unref();
          resolve();
          return;
        }
        const p = pending.get(m.id!);
        if (!p) return;
        pending.delete(m.id!);
        if (m.ok) p.resolve(m.value as never);
        else p.reject(new GafferError('unavailable', `log storage refused the operation: ${m.error?.message ?? 'unknown error'}`));
      });
      const gone = (why: string) => {
        if (worker === w) {
          worker = null;
          ready = null;
        }
        reject(new GafferError('unavailable', `log storage could not start: ${why}`));
        failAll(why);
        if (!closed) onExit?.(why);
      };
      w.on('error', (e) => gone(e.message));
      w.on('exit', (code) => gone(`the log worker exited (${code})`));
    });
  };

  // The worker keeps the process alive only while it owes an answer (and while it closes).
  const post = <O extends EngineOp | 'close'>(op: O, args: unknown): Promise<unknown> =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      const w = worker!;
      if (pending.size === 0) w.ref();
      const settle = () => {
        if (pending.size === 0 && op !== 'close') w.unref();
      };
      pending.set(id, {
        resolve: (v: never) => {
          resolve(v);
          settle();
        },
        reject: (e) => {
          reject(e);
          settle();
        },
      });
      w.postMessage({ id, op, args });
    });

  return {
    async call<O extends EngineOp>(op: O, args: EngineOps[O]['args']): Promise<EngineOps[O]['result']> {
      if (closed) throw new GafferError('unavailable', 'log storage is closed');
      ready ??= start();
      await ready;
      return (await post(op, args)) as EngineOps[O]['result'];
    },
    async close() {
      if (closed) return;
      closed = true;
      if (!worker || !ready) return;
      try {
        await ready;
        const w = worker;
        const exited = new Promise((r) => w.once('exit', r));
        await post('close', {});
        await exited;
      } catch {
        // already gone
      } finally {
        failAll('closed');
      }
    },
  };
}
