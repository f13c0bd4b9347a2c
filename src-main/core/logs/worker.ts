/**
 * The log worker thread: owns the log store, so appends (inserts and their fsync), searches and
 * retention never run on the thread that serves claims. Messages: `{id, op, args}` in,
 * `{id, ok, value}` or `{id, ok: false, error}` out, answered in arrival order.
 * The word index is filled by the `index` operation, which the service sends when appends pause.
 *
 * Logs never slow a claim (SPEC §10): the worker runs at a lower CPU priority (`nice`) than the
 * thread that serves claims, so when the CPUs are short a flood of lines waits, not a claim. On
 * Linux it can run in SCHED_IDLE besides (index.ts `workerSchedIdle`, off by default): a woken
 * claim thread or agent process of any session then takes its CPU at once.
 * Only on Linux, where a nice value belongs to the thread that sets it; elsewhere it would apply
 * to the whole process, claims included, so the worker's priority is left as it is there.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { runOp, type EngineOp } from './engine';
import { LogStore } from './log-store';
import { idleThisThread, niceThisThread } from '../worker-thread';

export interface WorkerData {
  dir: string;
  now: number;
  nativeBinding?: string;
  segmentMaxBytes?: number;
  segmentMaxAgeMs?: number;
  /** The worker thread's nice value on Linux (0: as the process). */
  nice?: number;
  /** Linux: run the worker in SCHED_IDLE (worker-thread.ts `idleThisThread`); its nice value stays if that fails. */
  schedIdle?: boolean;
}

const data = workerData as WorkerData;
niceThisThread(data.nice);
if (data.schedIdle) idleThisThread();
const port = parentPort!;
const bad: string[] = [];
const store = new LogStore(data.dir, data.now, {
  ...(data.nativeBinding ? { nativeBinding: data.nativeBinding } : {}),
  ...(data.segmentMaxBytes ? { segmentMaxBytes: data.segmentMaxBytes } : {}),
  ...(data.segmentMaxAgeMs ? { segmentMaxAgeMs: data.segmentMaxAgeMs } : {}),
  onBadSegment: (file, error) => bad.push(`${file}: ${error}`),
});
port.postMessage({ ready: true, badSegments: bad });

port.on('message', (m: { id: number; op: EngineOp | 'close'; args: never }) => {
  if (m.op === 'close') {
    store.close();
    port.postMessage({ id: m.id, ok: true, value: null });
    port.close();
    return;
  }
  try {
    port.postMessage({ id: m.id, ok: true, value: runOp(store, m.op, m.args) });
  } catch (e) {
    const err = e as { code?: string; message?: string };
    port.postMessage({ id: m.id, ok: false, error: { code: err.code ?? null, message: err.message ?? String(e) } });
  }
});
