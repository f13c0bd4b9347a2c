/**
 * Audit rows as they were written, for databases from before text was checked at the boundaries.
 *
 * Such a Gaffer accepted an unpaired UTF-16 surrogate (`"k-\ud800"`), hashed the JS string and let
 * better-sqlite3 store it: V8 writes a lone surrogate as the 3-byte sequence ED A0–BF xx ("WTF-8"),
 * which is not UTF-8, so it reads back as three U+FFFD and the row no longer matches its hash. The
 * bytes are still there; decoding them with surrogates allowed gives back the text as hashed, which
 * proves the row was not altered. Nothing is ever rewritten (the audit is append-only).
 *
 * Invariants:
 * 1. Only rows that read back with U+FFFD are looked at again (one indexed read each); a healthy
 *    log costs one `includes` per text column.
 * 2. A column is reported only when its stored bytes decode to something other than what was read.
 */
import type { Db } from '../db/open';
import type { AsWritten, ChainRow } from './hash-chain';
import { prepareStoredBytes } from './chain-store';

const utf8 = new TextDecoder('utf-8');

/** Generalised UTF-8: like UTF-8, but a surrogate encoded on its own (ED A0–BF 80–BF) is kept as one. */
export function decodeWtf8(bytes: Uint8Array): string {
  let out = '';
  let from = 0;
  for (let i = 0; i + 2 < bytes.length; i++) {
    const b1 = bytes[i + 1]!;
    const b2 = bytes[i + 2]!;
    if (bytes[i] !== 0xed || b1 < 0xa0 || b1 > 0xbf || (b2 & 0xc0) !== 0x80) continue;
    out += utf8.decode(bytes.subarray(from, i)) + String.fromCharCode(0xd000 | ((b1 & 0x3f) << 6) | (b2 & 0x3f));
    i += 2;
    from = i + 1;
  }
  return out + utf8.decode(bytes.subarray(from));
}

const TEXT_COLUMNS = [
  ['type', 'type'],
  ['actor', 'actor'],
  ['subject', 'subject'],
  ['detail', 'detail'],
  ['traceId', 'trace_id'],
] as const;

type RawRow = Record<(typeof TEXT_COLUMNS)[number][1], Uint8Array | null>;

/** An `AsWritten` for ChainVerifier over the live `audit` table. */
export function auditRowsAsWritten(db: Db): AsWritten {
  let stmt: { get(id: number): unknown } | undefined;
  return (r: ChainRow) => {
    if (!TEXT_COLUMNS.some(([field]) => r[field]?.includes('\ufffd'))) return undefined;
    stmt ??= prepareStoredBytes(db, TEXT_COLUMNS.map(([, col]) => col));
    const raw = stmt.get(r.id) as RawRow | undefined;
    if (!raw) return undefined;
    const row: ChainRow = { ...r };
    const fields: string[] = [];
    for (const [field, col] of TEXT_COLUMNS) {
      const bytes = raw[col];
      if (bytes === null || !r[field]?.includes('\ufffd')) continue;
      const written = decodeWtf8(bytes);
      if (written === r[field]) continue;
      row[field] = written;
      fields.push(field);
    }
    return fields.length > 0 ? { row, fields } : undefined;
  };
}
