/**
 * The audit export's worker thread (export-thread.ts starts one per export): it opens its own
 * read-only connection (in WAL mode a reader neither blocks the writer nor waits for it), runs
 * `exportAudit` there and sends each chunk, UTF-8 encoded, to the main thread, whose only work
 * left is writing the bytes to the response. So a million-row export costs the thread that serves
 * claims a socket write per chunk, not the reading and serialising of every row.
 *
 * Flow control: it sends at most `window` chunks ahead of what the main thread has released
 * (`{more: n}` gives credit back); with no credit it waits, so a slow or paused reader of the
 * response stops the reading here too (memory stays bounded). It runs at a lower CPU priority
 * (`nice`) than the main thread, as the log worker does.
 *
 * Pacing: it reads pages of `pageRows` rows (50: ~0.3–0.6 ms of work) and sleeps `pauseMs` after
 * each (a futex wait, `Atomics.wait`), so it never holds a CPU for more than one such page at a
 * time; the chunks it sends are still EXPORT_PAGE_ROWS rows (several pages joined). A nice value
 * does not make it give way to a thread of another session (Linux autogroup: an agent's process,
 * the probe), nor does SCHED_IDLE on this kernel: a woken agent stood queued up to 37 ms on the CPU
 * the worker kept running on (perf's scheduler events, bench/REPORT.md "export3"). Sleeping, the
 * worker hands the CPU to whatever waits for it. On a quiet machine a pause costs only itself
 * (~0.1 ms a page); on a busy one the worker, woken, queues behind everything else (at load 10 an
 * export fell to 9 500 rows/s). So the price is bounded: over each second the worker measures its rate,
 * and it pauses only while that rate was at least `minRowsPerS`. Below it the export runs unpaced,
 * as before.
 *
 * The bytes go through a ring of `window` slots in one SharedArrayBuffer (`ring`), shared once at
 * the start: a chunk is UTF-8 encoded straight into the next slot and the main thread gets
 * `{slot, len}`. A transferred ArrayBuffer per chunk (as before) made the main thread adopt a new
 * 70 KB backing store per page, ~40 MB/s of external memory, and V8 answered that with GC pauses
 * on the thread that serves claims (issue 32: 45 in 8 s, up to 43 ms, the export's largest share
 * of the main thread's long tasks). Slot k is written again only after `window`
 * more sends, i.e. once the main thread has released it (credit). A page too large for a slot
 * (very large details) is sent the old way, its own buffer transferred, so every chunk stays whole
 * rows.
 *
 * Messages out: `{slot, len}` (bytes in the ring), `{chunk: Uint8Array}` (its buffer transferred),
 * `{stalled: n}` (waiting for credit after n chunks), `{done: true}`, `{error: {code, message}}`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openDatabase } from '../db/open';
import { niceThisThread } from '../worker-thread';
import { EXPORT_PAGE_ROWS, exportAudit, type ExportFormat } from './audit-export';
import { AuditQuery } from './query-store';

export interface ExportWorkerData {
  dbPath: string;
  nativeBinding?: string;
  /** Already validated on the main thread, with the snapshot's bound in `before`. */
  filter: unknown;
  format: ExportFormat;
  /** Chunks it may send ahead of the main thread. */
  window: number;
  /** `window` slots of `slotBytes` each. */
  ring: SharedArrayBuffer;
  slotBytes: number;
  nice?: number;
  /** Rows per page read (at most EXPORT_PAGE_ROWS); a chunk sent is EXPORT_PAGE_ROWS ÷ pageRows pages. */
  pageRows?: number;
  /** Sleep after each page (ms; 0: none). */
  pauseMs?: number;
  /** No pauses while the export made fewer rows per second than this over the last second. */
  minRowsPerS?: number;
}

const data = workerData as ExportWorkerData;
niceThisThread(data.nice);
const port = parentPort!;
let credit = data.window;
let stopped = false;
let wake: (() => void) | null = null;
const napping = new Int32Array(new SharedArrayBuffer(4)); // never notified: Atomics.wait on it is a sleep
let windowStart = performance.now();
let windowRows = 0;
let pacing = true;
/** After a page of `rows` rows: a pause, unless the export ran slower than minRowsPerS over its last second. */
const pause = (rows: number) => {
  if (!data.pauseMs) return;
  windowRows += rows;
  const now = performance.now();
  if (now - windowStart >= 1000) {
    pacing = (windowRows * 1000) / (now - windowStart) >= (data.minRowsPerS ?? 0);
    windowStart = now;
    windowRows = 0;
  }
  if (pacing) Atomics.wait(napping, 0, 0, data.pauseMs);
};
port.on('message', (m: { more?: number; stop?: true }) => {
  if (m.stop) stopped = true;
  else credit += m.more ?? 0;
  wake?.();
  wake = null;
});

async function run(): Promise<void> {
  const db = openDatabase(data.dbPath, { readonly: true, ...(data.nativeBinding ? { nativeBinding: data.nativeBinding } : {}) });
  try {
    const encoder = new TextEncoder();
    let sent = 0;
    let ringSends = 0;
    /** Sends one chunk (whole rows); false once the main thread has stopped the export. */
    const send = async (text: string): Promise<boolean> => {
      if (credit === 0 && !stopped) port.postMessage({ stalled: sent });
      while (credit === 0 && !stopped) await new Promise<void>((r) => (wake = r));
      if (stopped) return false;
      credit--;
      sent++;
      const slot = ringSends % data.window;
      const into = new Uint8Array(data.ring, slot * data.slotBytes, data.slotBytes);
      const r = encoder.encodeInto(text, into); // stops short, without splitting a character, when the slot is full
      if (r.read === text.length) {
        ringSends++;
        port.postMessage({ slot, len: r.written });
        return true;
      }
      const bytes = encoder.encode(text); // too large for a slot: its own ArrayBuffer, moved, not copied
      port.postMessage({ chunk: bytes }, [bytes.buffer]);
      return true;
    };
    windowStart = performance.now(); // the first second is the export's, not the worker's start-up
    // Pages of `pageRows`, a pause after each; a chunk is still up to EXPORT_PAGE_ROWS rows (several pages).
    const pageRows = Math.min(Math.max(data.pageRows ?? EXPORT_PAGE_ROWS, 1), EXPORT_PAGE_ROWS);
    const pagesPerChunk = Math.max(1, Math.floor(EXPORT_PAGE_ROWS / pageRows));
    const parts: string[] = [];
    for await (const text of exportAudit(new AuditQuery(db), data.filter, { format: data.format, pageSize: pageRows })) {
      parts.push(text);
      if (parts.length >= pagesPerChunk) {
        if (!(await send(parts.join('')))) return;
        parts.length = 0;
      }
      pause(pageRows);
    }
    if (parts.length > 0 && !(await send(parts.join('')))) return;
    port.postMessage({ done: true });
  } catch (e) {
    const err = e as { code?: string; message?: string };
    port.postMessage({ error: { code: err.code ?? null, message: err.message ?? String(e) } });
  } finally {
    db.close();
    port.close();
  }
}

void run();
