/**
 * The audit export as the server streams it: produced off the thread that serves claims
 * (export-worker.ts) when the log is a file, in this thread when it is in memory (tests).
 *
 * Invariants:
 * 1. Same bytes as `exportAudit` (it is what the worker runs): same rows, same text, same hashes,
 *    so `verifyExport` accepts either.
 * 2. Bad input is refused here, before a worker starts or anything is written (`bad_request`).
 * 3. A snapshot as of the call: the newest id is read here, on the writer's connection, and passed
 *    to the worker as the range's end (its own connection, opened later, can only see more).
 * 4. Backpressure reaches the reading: the worker is at most `window` chunks ahead of what the
 *    consumer has released, so a consumer that stops pulling (a full response socket) stops the
 *    worker after `window` chunks. Leaving the loop early (a client gone) ends the worker.
 * 5. A chunk is valid until the consumer pulls the next one: it is a view onto the worker's ring
 *    (export-worker.ts), which the worker writes again once the chunk is released, and pulling the
 *    next chunk releases it. So a consumer that keeps bytes past its next pull copies them
 *    (`streamChunks` pulls only once the socket has taken the previous write; the console's
 *    export decodes each chunk before it pulls the next).
 */
import type { Worker } from 'node:worker_threads';
import { GafferError, type ErrorCode } from '../../common/errors';
import { auditFilterInput } from '../../common/schemas';
import { parseOrThrow } from '../../common/validate';
import { startWorkerThread } from '../worker-thread';
import { exportAudit, type ExportFormat } from './audit-export';
import type { ExportWorkerData } from './export-worker';
import { normaliseFilter, type AuditQuery } from './query-store';

/** The export worker's nice value on Linux: below the main thread, as the log worker's. */
export const EXPORT_WORKER_NICE = 10;
/**
 * The export worker sleeps this long after each page (export-worker.ts, "Pacing"): it gives up its
 * CPU to whatever waits for one — a claim from another session — at least once a page.
 */
export const EXPORT_WORKER_PAUSE_MS = 0.1;
/** Rows the export worker reads between two pauses (a chunk it sends is still EXPORT_PAGE_ROWS rows). */
export const EXPORT_WORKER_PAGE_ROWS = 50;
/**
 * The bound on pacing's cost: the worker pauses only while the export made at least this many rows
 * a second (over its last second; ~9 MB/s of JSONL, 1M rows in 40 s). Slower than that (a busy
 * machine, where each pause queues the worker behind everything else), it runs unpaced.
 */
export const EXPORT_WORKER_MIN_ROWS_PER_S = 25_000;
/** Chunks (pages of up to EXPORT_PAGE_ROWS rows) the worker may run ahead of the consumer. */
export const EXPORT_WINDOW = 4;
/**
 * Bytes of one slot of the worker's ring: a page of EXPORT_PAGE_ROWS rows is ~70 KB of JSONL with
 * the usual details; a larger page goes as a buffer of its own (export-worker.ts).
 */
export const EXPORT_SLOT_BYTES = 256 * 1024;

export interface AuditExporterOptions {
  /** The database file (':memory:': the export runs in this thread). */
  dbPath: string;
  nativeBinding?: string | undefined;
  nice?: number;
  /** Default EXPORT_WORKER_PAUSE_MS; 0: no pauses. */
  pauseMs?: number;
  /** Default EXPORT_WORKER_PAGE_ROWS. */
  pageRows?: number;
  /** Default EXPORT_WORKER_MIN_ROWS_PER_S. */
  minRowsPerS?: number;
}

export interface StreamOptions {
  format: ExportFormat;
  window?: number;
  /** Tests: the worker waits for the consumer, having sent `sent` chunks. */
  onStall?: (sent: number) => void;
}

export class AuditExporter {
  constructor(
    private readonly query: AuditQuery,
    private readonly opts: AuditExporterOptions,
  ) {}

  /** The export's chunks, text or UTF-8 bytes. Throws `bad_request` at once for a bad filter. */
  stream(filter: unknown, opts: StreamOptions): AsyncGenerator<string | Uint8Array, void, undefined> {
    if (this.opts.dbPath === ':memory:') return exportAudit(this.query, filter, opts);
    const f = parseOrThrow(auditFilterInput, filter, 'audit filter');
    normaliseFilter(f); // invariant 2: what it refuses (e.g. "from" not before "to") is refused here, not in the worker
    const snapshotEnd = this.query.lastId() + 1;
    const window = Math.max(1, opts.window ?? EXPORT_WINDOW);
    const ring = new SharedArrayBuffer(window * EXPORT_SLOT_BYTES);
    const data: ExportWorkerData = {
      dbPath: this.opts.dbPath,
      ...(this.opts.nativeBinding ? { nativeBinding: this.opts.nativeBinding } : {}),
      filter: { ...f, before: Math.min(f.before ?? snapshotEnd, snapshotEnd) },
      format: opts.format,
      window,
      ring,
      slotBytes: EXPORT_SLOT_BYTES,
      nice: this.opts.nice ?? EXPORT_WORKER_NICE,
      pauseMs: this.opts.pauseMs ?? EXPORT_WORKER_PAUSE_MS,
      pageRows: this.opts.pageRows ?? EXPORT_WORKER_PAGE_ROWS,
      minRowsPerS: this.opts.minRowsPerS ?? EXPORT_WORKER_MIN_ROWS_PER_S,
    };
    return fromWorker(startWorkerThread({ from: import.meta.url, bundled: 'audit-export-worker.js', source: 'export-worker.ts' }, data), data, opts.onStall);
  }
}

type WorkerMessage = { slot?: number; len?: number; chunk?: Uint8Array; stalled?: number; done?: true; error?: { code: string | null; message: string } };

/** Listens from the start (a stall or an error before the first pull is not lost). */
function fromWorker(w: Worker, ring: Pick<ExportWorkerData, 'ring' | 'slotBytes'>, onStall?: (sent: number) => void): AsyncGenerator<Uint8Array, void, undefined> {
  const queue: Uint8Array[] = [];
  let done = false;
  let failure: GafferError | null = null;
  let wake: (() => void) | null = null;
  const poke = () => {
    wake?.();
    wake = null;
  };
  w.on('message', (m: WorkerMessage) => {
    if (m.slot !== undefined) queue.push(new Uint8Array(ring.ring, m.slot * ring.slotBytes, m.len)); // a view: no copy, no new backing store
    else if (m.chunk) queue.push(m.chunk);
    else if (m.stalled !== undefined) onStall?.(m.stalled);
    else if (m.done) done = true;
    else if (m.error) failure ??= new GafferError((m.error.code as ErrorCode | null) ?? 'unavailable', `audit export failed: ${m.error.message}`);
    poke();
  });
  w.on('error', (e) => {
    failure ??= new GafferError('unavailable', `audit export failed: ${e.message}`);
    poke();
  });
  w.on('exit', (code) => {
    if (!done) failure ??= new GafferError('unavailable', `audit export stopped (its worker exited with ${code})`);
    poke();
  });
  async function* chunks(): AsyncGenerator<Uint8Array, void, undefined> {
    try {
      for (;;) {
        const chunk = queue.shift();
        if (chunk) {
          yield chunk;
          w.postMessage({ more: 1 }); // invariants 4, 5: the consumer pulled again, so it is done with this chunk
          continue;
        }
        if (failure) throw failure;
        if (done) return;
        await new Promise<void>((r) => (wake = r));
      }
    } finally {
      await w.terminate(); // the worker and its connection are gone once the export is
    }
  }
  return chunks();
}
