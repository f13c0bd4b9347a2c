/**
 * The audit log's head (newest row id and hash) kept OUTSIDE the database, in a small file next to
 * it (`gaffer.db-audit-head`), so that rows deleted from the end of the log, or a changed newest
 * row, show at the next start (integrity.ts): the hash chain alone cannot tell a log cut short
 * from one that simply ended there.
 *
 * Invariants:
 * 1. The file only ever names a committed row: it is written after the commit that appended the
 *    row (Store.afterCommit). So the database is always at or ahead of the file; a crash (or a
 *    power loss, below) can leave the file naming an older row than the newest — "behind" — and
 *    never a newer one. Behind is not an alarm; ahead, or a different hash for the row it names, is.
 * 2. Cheap: one positional write of a fixed-size record at offset 0 per commit that appended
 *    rows, on a descriptor kept open, no fsync. The size never changes, so an overwrite is one
 *    block (a power loss leaves the old record or the new one, never a torn or empty file).
 * 3. Only the creation is durable (file and directory fsynced) before the database records that
 *    the file is kept: a file that was created and then lost is therefore never a power loss.
 * 4. 0600: it names the log, nothing secret, but the data directory's files are the user's only.
 */
import fs from 'node:fs';
import path from 'node:path';

/** The record's fixed size in bytes: `{"id":…,"hash":"…"}`, padded with spaces, then a newline. */
export const HEAD_RECORD_BYTES = 128;

export type HeadRead = { state: 'absent' } | { state: 'unreadable'; reason: string } | { state: 'ok'; id: number; hash: string };

export function headRecordPath(dbPath: string): string {
  return `${dbPath}-audit-head`;
}

/** Fills `buf` with the record (ASCII only: the id's digits and the hex hash). */
function fillRecord(buf: Buffer, id: number, hash: string): void {
  const end = buf.write(`{"id":${id},"hash":"${hash}"}`, 0, 'latin1');
  buf.fill(0x20, end, HEAD_RECORD_BYTES - 1);
  buf[HEAD_RECORD_BYTES - 1] = 0x0a;
}

export class AuditHeadFile {
  private fd: number | undefined;
  private readonly buf = Buffer.alloc(HEAD_RECORD_BYTES);

  constructor(readonly path: string) {}

  read(): HeadRead {
    let text: string;
    try {
      text = fs.readFileSync(this.path, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { state: 'absent' };
      return { state: 'unreadable', reason: `cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})` };
    }
    try {
      const v = JSON.parse(text) as { id?: unknown; hash?: unknown };
      if (Number.isSafeInteger(v.id) && (v.id as number) >= 0 && typeof v.hash === 'string' && /^[0-9a-f]{64}$/.test(v.hash)) {
        return { state: 'ok', id: v.id as number, hash: v.hash };
      }
    } catch {
      // falls through: not the record Gaffer writes
    }
    return { state: 'unreadable', reason: `does not hold a head record (${text.length} bytes)` };
  }

  /** Invariant 3: the first write, made durable before the database says the file is kept. */
  create(id: number, hash: string): void {
    this.write(id, hash);
    fs.fsyncSync(this.fd!);
    try {
      const dir = fs.openSync(path.dirname(this.path), 'r');
      try {
        fs.fsyncSync(dir);
      } finally {
        fs.closeSync(dir);
      }
    } catch {
      // Some platforms cannot open a directory for fsync; the file itself is durable.
    }
  }

  /** Invariant 2. Throws on an I/O error (the caller decides whether that matters). */
  write(id: number, hash: string): void {
    if (this.fd === undefined) {
      // No O_TRUNC: an existing record is overwritten in place, never emptied first.
      this.fd = fs.openSync(this.path, fs.constants.O_WRONLY | fs.constants.O_CREAT, 0o600);
      fs.fchmodSync(this.fd, 0o600);
      if (fs.fstatSync(this.fd).size > HEAD_RECORD_BYTES) fs.ftruncateSync(this.fd, HEAD_RECORD_BYTES);
    }
    fillRecord(this.buf, id, hash);
    fs.writeSync(this.fd, this.buf, 0, HEAD_RECORD_BYTES, 0);
  }

  close(): void {
    if (this.fd === undefined) return;
    fs.closeSync(this.fd);
    this.fd = undefined;
  }
}
