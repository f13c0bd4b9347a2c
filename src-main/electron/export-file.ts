/**
 * Streams an audit export to a file chosen in the native save dialog, with progress.
 *
 * 1. Bounded memory: chunks are written as they come, waiting for 'drain' when the OS is slower.
 * 2. Atomic: rows go to `<file>.part`, renamed over `<file>` only when complete; a failure or a
 *    cancellation removes the partial file, so a file at the chosen path is always whole.
 * 3. Progress is reported at most every `progressMs`, plus once when done.
 * 4. Bounded dirty data: every `syncEveryBytes` (default 4 MiB) the file is synced (`fdatasync`, off this
 *    thread) before more is written. Hundreds of MB left to the page cache are written back in bursts,
 *    and the scheduler's commits, whose fsync shares the disk, waited behind them (bench/REPORT.md,
 *    "iso-cx": a disk canary's fsync p99 went from 9–25 ms to up to 133 ms while an export was written).
 * Node only (no electron import), so it is unit-tested in Node.
 */
import fs from 'node:fs';
import type { ExportProgress } from '../common/console-api';
import type { ConsoleExport } from '../server/console/export';
import { rowsInChunk } from '../server/console/export';

export interface WriteExportOptions {
  onProgress?: (p: ExportProgress) => void;
  progressMs?: number;
  /** Checked between chunks: true stops the export and removes the partial file. */
  cancelled?: () => boolean;
  now?: () => number;
  /** Invariant 4: bytes written between two syncs of the file. */
  syncEveryBytes?: number;
}

/** Invariant 4's default. */
export const EXPORT_SYNC_BYTES = 4 * 1024 * 1024;

export async function writeExportFile(exp: ConsoleExport, file: string, opts: WriteExportOptions = {}): Promise<{ file: string; rows: number } | null> {
  const part = `${file}.part`;
  const now = opts.now ?? Date.now;
  const fd = fs.openSync(part, 'w', 0o600); // its own fd, to sync (invariant 4); the stream closes it
  const out = fs.createWriteStream(part, { fd });
  let failure: Error | undefined;
  out.on('error', (e) => (failure ??= e));
  let rows = 0;
  let bytes = 0;
  let unsynced = 0;
  let first = true;
  let lastReport = 0;
  try {
    for await (const chunk of exp.chunks) {
      if (failure) throw failure;
      if (opts.cancelled?.()) {
        await exp.chunks.return(undefined);
        await close(out);
        fs.rmSync(part, { force: true });
        return null;
      }
      rows += rowsInChunk(chunk, exp.format, first);
      first = false;
      const size = Buffer.byteLength(chunk);
      bytes += size;
      unsynced += size;
      if (unsynced >= (opts.syncEveryBytes ?? EXPORT_SYNC_BYTES)) {
        unsynced = 0;
        await writeThrough(out, chunk); // this chunk and all before it are in the file …
        await datasync(fd); // … and on the disk before more is written (invariant 4)
      } else if (!out.write(chunk)) await drain(out);
      const t = now();
      if (opts.onProgress && t - lastReport >= (opts.progressMs ?? 200)) {
        lastReport = t;
        opts.onProgress({ rows, bytes, done: false });
      }
    }
    await close(out);
    if (failure) throw failure;
    fs.renameSync(part, file);
  } catch (e) {
    out.destroy();
    fs.rmSync(part, { force: true });
    throw e;
  }
  opts.onProgress?.({ rows, bytes, done: true });
  return { file, rows };
}

function writeThrough(out: fs.WriteStream, chunk: string | Uint8Array): Promise<void> {
  return new Promise((resolve, reject) => out.write(chunk, (e) => (e ? reject(e) : resolve())));
}

function datasync(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fs.fdatasync(fd, (e) => (e ? reject(e) : resolve())));
}

function drain(out: fs.WriteStream): Promise<void> {
  return new Promise((resolve, reject) => {
    const done = () => {
      out.off('error', fail);
      resolve();
    };
    const fail = (e: Error) => {
      out.off('drain', done);
      reject(e);
    };
    out.once('drain', done);
    out.once('error', fail);
  });
}

function close(out: fs.WriteStream): Promise<void> {
  return new Promise((resolve, reject) => {
    out.end((err?: Error | null) => (err ? reject(err) : resolve()));
  });
}
