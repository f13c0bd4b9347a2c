/**
 * Streams an audit export to a file chosen in the native save dialog, with progress.
 *
 * 1. Bounded memory: chunks are written as they come, waiting for 'drain' when the OS is slower.
 * 2. Atomic: rows go to `<file>.part`, renamed over `<file>` only when complete; a failure or a
 *    cancellation removes the partial file, so a file at the chosen path is always whole.
 * 3. Progress is reported at most every `progressMs`, plus once when done.
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
}

export async function writeExportFile(exp: ConsoleExport, file: string, opts: WriteExportOptions = {}): Promise<{ file: string; rows: number } | null> {
  const part = `${file}.part`;
  const now = opts.now ?? Date.now;
  const out = fs.createWriteStream(part, { flags: 'w', mode: 0o600 });
  let failure: Error | undefined;
  out.on('error', (e) => (failure ??= e));
  let rows = 0;
  let bytes = 0;
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
      bytes += Buffer.byteLength(chunk);
      if (!out.write(chunk)) await drain(out);
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
