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
import { exportAudit, type ExportFormat } from './audit-export';
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
}

const data = workerData as ExportWorkerData;
niceThisThread(data.nice);
const port = parentPort!;
let credit = data.window;
let stopped = false;
let wake: (() => void) | null = null;
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
    for await (const text of exportAudit(new AuditQuery(db), data.filter, { format: data.format })) {
      if (credit === 0 && !stopped) port.postMessage({ stalled: sent });
      while (credit === 0 && !stopped) await new Promise<void>((r) => (wake = r));
      if (stopped) return;
      credit--;
      sent++;
      const slot = ringSends % data.window;
      const into = new Uint8Array(data.ring, slot * data.slotBytes, data.slotBytes);
      const r = encoder.encodeInto(text, into); // stops short, without splitting a character, when the slot is full
      if (r.read === text.length) {
        ringSends++;
        port.postMessage({ slot, len: r.written });
        continue;
      }
      const bytes = encoder.encode(text); // too large for a slot: its own ArrayBuffer, moved, not copied
      port.postMessage({ chunk: bytes }, [bytes.buffer]);
    }
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
