/**
 * The audit export's worker thread (export-thread.ts starts one per export): it opens its own
 * read-only connection (in WAL mode a reader neither blocks the writer nor waits for it), runs
 * `exportAudit` there and sends each chunk, UTF-8 encoded, to the main thread, whose only work
 * left is writing the bytes to the response. So a million-row export costs the thread that serves
 * claims a socket write per chunk, not the reading and serialising of every row.
 *
 * Flow control: it sends at most `window` chunks ahead of what the main thread has taken
 * (`{more: n}` gives credit back); with no credit it waits, so a slow or paused reader of the
 * response stops the reading here too (memory stays bounded). It runs at a lower CPU priority
 * (`nice`) than the main thread, as the log worker does.
 *
 * Messages out: `{chunk: Uint8Array}` (its buffer transferred), `{stalled: n}` (waiting for credit
 * after n chunks), `{done: true}`, `{error: {code, message}}`.
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
    for await (const text of exportAudit(new AuditQuery(db), data.filter, { format: data.format })) {
      if (credit === 0 && !stopped) port.postMessage({ stalled: sent });
      while (credit === 0 && !stopped) await new Promise<void>((r) => (wake = r));
      if (stopped) return;
      credit--;
      const bytes = encoder.encode(text); // its own ArrayBuffer: moved to the main thread, not copied
      port.postMessage({ chunk: bytes }, [bytes.buffer]);
      sent++;
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
