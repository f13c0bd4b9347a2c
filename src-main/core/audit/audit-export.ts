/**
 * Audit export (JSONL / CSV) and verification of exports and of the live chain.
 *
 * Invariants:
 * 1. Bounded memory: the export walks the log one page at a time through `AuditQuery.page`
 *    (never `.all()` over the range) and yields between pages. No SQLite iterator stays open
 *    across an `await`: an open iterator would make the connection refuse the core's writes.
 *    Bounded turns: a page is EXPORT_PAGE_ROWS rows, and the event loop gets a turn (its sockets
 *    read, the group commit run) after every page, so an agent's claim waits behind one short
 *    page, never a long stretch of export (issue 32: 1 000-row pages kept claims waiting).
 *    The server's export runs this generator in a worker thread (export-thread.ts), so there the
 *    pages cost the main thread nothing; in this thread it is what an in-memory database uses.
 * 2. An export is a snapshot: it stops at the newest id that existed when it started, so a log
 *    appended meanwhile does not make it run forever.
 * 3. Every exported row carries `prevHash` and `hash`, and `detail` exactly as stored, so the row
 *    can be re-hashed. In JSONL, a row from before text was checked carries its text as written
 *    (an unpaired surrogate as a `\udXXX` escape; stored-text.ts), so it verifies too; CSV is
 *    plain UTF-8 and cannot hold one, so such a row fails to verify from a CSV export. A contiguous range (ids with no gaps) verifies the links too; a filtered
 *    export (gaps) verifies each row's own hash and the links inside each contiguous stretch only.
 *    `ExportCheck.coverage` says which of the two a result proves.
 */
import { StringDecoder } from 'node:string_decoder';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { GafferError } from '../../common/errors';
import { isoTime } from '../../common/iso-time';
import { auditFilterInput, type AuditFilterInput } from '../../common/schemas';
import { parseOrThrow } from '../../common/validate';
import type { Db } from '../db/open';
import type { AuditRow } from './audit-store';
import { auditRowToChainRow } from './audit-store';
import { normaliseFilter, type AuditQuery } from './query-store';
import { ChainVerifier, GENESIS_HASH, MAX_LISTED_PROBLEMS, type AsWritten, type ChainCheck, type ChainRow } from './hash-chain';
import { auditRowsAsWritten } from './stored-text';
import { auditHashAt, maxAuditId, prepareAuditChunk } from './chain-store';

export const EXPORT_FORMATS = ['jsonl', 'csv'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export const CSV_COLUMNS = ['id', 'at', 'type', 'actor', 'subject', 'detail', 'traceId', 'prevHash', 'hash'] as const;

// ---------------------------------------------------------------------------------------------
// Writing

/**
 * One CSV field (RFC 4180): quoted when it holds a comma, quote, CR or LF, or when it is empty;
 * quotes doubled. `null` is the only unquoted empty field, so null and "" stay distinct.
 */
export function csvField(v: string | number | null): string {
  if (v === null) return '';
  const s = String(v);
  return s === '' || /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function csvRecord(fields: ReadonlyArray<string | number | null>): string {
  return `${fields.map(csvField).join(',')}\r\n`;
}

export function csvHeader(): string {
  return csvRecord(CSV_COLUMNS);
}

/** One CSV record; `detail` is the stored JSON text. */
export function csvRow(r: AuditRow): string {
  return csvRecord([r.id, isoTime(r.at), r.type, r.actor, r.subject, r.detail, r.trace_id, r.prev_hash, r.hash]);
}

/** One JSONL line: an `AuditEvent`, with the stored detail text spliced in byte for byte. */
export function jsonlRow(r: AuditRow): string {
  const head = JSON.stringify({ id: r.id, at: isoTime(r.at), type: r.type, actor: r.actor, subject: r.subject });
  const tail = JSON.stringify({ traceId: r.trace_id, prevHash: r.prev_hash, hash: r.hash });
  return `${head.slice(0, -1)},"detail":${r.detail},${tail.slice(1)}\n`;
}

/** Invariant 3: the row with its text columns as written, when they read back changed. */
function withTextAsWritten(r: AuditRow, asWritten: AsWritten): AuditRow {
  const w = asWritten(auditRowToChainRow(r));
  if (!w) return r;
  return { ...r, type: w.row.type, actor: w.row.actor, subject: w.row.subject, detail: w.row.detail, trace_id: w.row.traceId };
}

/**
 * Rows per page of an export (and per yielded chunk), between which the event loop gets a turn
 * (invariant 1): about 1–2 ms of work on a quiet machine (~8 µs a row), so a claim arriving
 * meanwhile waits about as long as one of its own commits. Larger pages save little: the page
 * query's own cost is small beside the rows'.
 */
export const EXPORT_PAGE_ROWS = 200;

export interface ExportOptions {
  format: ExportFormat;
  /** Rows per page (and per yielded chunk), at most EXPORT_PAGE_ROWS. */
  pageSize?: number;
}

/**
 * Streams the filtered log, oldest first, as text chunks (each a whole number of lines).
 * Validates the filter up front (bad input → `bad_request`, before anything is yielded).
 */
export function exportAudit(query: AuditQuery, filter: unknown, opts: ExportOptions): AsyncGenerator<string, void, undefined> {
  const f = normaliseFilter(parseOrThrow(auditFilterInput, filter, 'audit filter') as AuditFilterInput);
  const pageSize = Math.min(Math.max(opts.pageSize ?? EXPORT_PAGE_ROWS, 1), EXPORT_PAGE_ROWS);
  const asWritten = query.asWritten();
  const line = opts.format === 'csv' ? csvRow : (r: AuditRow) => jsonlRow(withTextAsWritten(r, asWritten));
  // Invariant 2: a snapshot up to the newest row at the start.
  const snapshotEnd = query.lastId() + 1;
  const before = f.before === undefined ? snapshotEnd : Math.min(f.before, snapshotEnd);
  async function* run(): AsyncGenerator<string, void, undefined> {
    if (opts.format === 'csv') yield csvHeader();
    let after = f.after;
    for (;;) {
      const page = query.page({ ...f, before, ...(after === undefined ? {} : { after }) }, pageSize, 'asc');
      if (page.rows.length > 0) yield page.rows.map(line).join('');
      if (page.next === null) return;
      after = page.next;
      await yieldToLoop();
    }
  }
  return run();
}

// ---------------------------------------------------------------------------------------------
// Verifying the live chain

export interface LiveCheck extends ChainCheck {
  firstId: number;
  lastId: number;
  /** What the first row's prevHash was checked against. */
  anchor: 'genesis' | 'previous_row' | 'none';
}

/**
 * Verifies ids in (after, before) of the live log, a chunk at a time, yielding between chunks so
 * a full check of millions of rows never blocks the process. From id 1 it is anchored at the
 * genesis hash; otherwise at the stored hash of the row before the range (taken on trust). Every
 * bad row is reported and the check goes on after it (hash-chain.ts, invariant 2).
 */
export async function verifyLiveRange(db: Db, range: { after?: number; before?: number } = {}, chunk = 2000): Promise<LiveCheck> {
  const max = maxAuditId(db);
  const first = Math.max(1, (range.after ?? 0) + 1);
  const last = Math.min(max, range.before !== undefined ? range.before - 1 : max);
  if (first > last) return { ok: true, checked: 0, firstId: first, lastId: last, anchor: 'none' };
  let anchor: string | undefined = GENESIS_HASH;
  if (first > 1) anchor = auditHashAt(db, first - 1);
  const v = new ChainVerifier(anchor, { firstId: first, asWritten: auditRowsAsWritten(db) });
  const stmt = prepareAuditChunk(db);
  let next = first;
  while (next <= last) {
    const rows = stmt.all(next, last, chunk);
    if (rows.length === 0) break;
    for (const r of rows) v.push(auditRowToChainRow(r));
    next = rows[rows.length - 1]!.id + 1;
    await yieldToLoop();
  }
  v.expectEnd(last);
  return { ...v.result(), firstId: first, lastId: last, anchor: anchorKind(first, anchor) };
}

function anchorKind(first: number, anchor: string | undefined): LiveCheck['anchor'] {
  if (anchor === undefined) return 'none';
  return first === 1 ? 'genesis' : 'previous_row';
}

// ---------------------------------------------------------------------------------------------
// Verifying an exported file

export interface ExportCheck {
  ok: boolean;
  format: ExportFormat;
  rows: number;
  firstId: number | null;
  lastId: number | null;
  /**
   * - `chain`: the ids are contiguous, so every row's hash and every link were checked: a row
   *   altered, removed, inserted or reordered inside the range is detected.
   * - `rows`: the file has gaps (a filtered export): each row's own hash was checked, and links
   *   only inside each contiguous stretch. Rows left out of the file cannot be detected, and a
   *   row whose hash was recomputed after editing is only caught where a link covers it.
   * - `empty`: no rows.
   */
  coverage: 'chain' | 'rows' | 'empty';
  /** Contiguous stretches of ids (1 for a contiguous export). */
  segments: number;
  /** Links (row n's prevHash = row n-1's hash) that were checked. */
  linksChecked: number;
  /** The first row is id 1 and its prevHash was checked against the genesis hash. */
  anchoredAtGenesis: boolean;
  /** The first offending row id, when known. */
  brokenAt?: number;
  /** 1-based line (JSONL) or record (CSV, header = 1) of the first failure. */
  line?: number;
  reason?: string;
  /** Every failure, in file order (the first MAX_LISTED_PROBLEMS); present when there is one. */
  problems?: ExportProblem[];
  /** All failures, listed or not. */
  problemCount?: number;
  /** One sentence for humans saying what was proven. */
  summary: string;
}

export interface ExportProblem {
  line: number;
  id?: number;
  reason: string;
}

/**
 * Checks rows of an export one at a time (bounded memory), whatever the file format. A bad line
 * or row is recorded and the check carries on with the next one, so every failure is reported.
 */
export class ExportVerifier {
  private rows = 0;
  private firstId: number | null = null;
  private lastId: number | null = null;
  private segments = 0;
  private links = 0;
  private genesis = false;
  private chain: ChainVerifier | undefined;
  private line = 0;
  private readonly problems: ExportProblem[] = [];
  private problemCount = 0;

  constructor(
    private readonly format: ExportFormat,
    /** The file is meant to be a contiguous range (an unfiltered export): a gap is a failure. */
    private readonly expectContiguous = false,
  ) {}

  get failed(): boolean {
    return this.problemCount > 0;
  }

  fail(line: number, reason: string, id?: number): false {
    this.problemCount++;
    if (this.problems.length < MAX_LISTED_PROBLEMS) this.problems.push({ line, reason, ...(id === undefined ? {} : { id }) });
    return false;
  }

  push(row: ChainRow, line: number): boolean {
    this.line = line;
    this.rows++;
    if (this.lastId !== null && row.id <= this.lastId) return this.fail(line, `row ${row.id} is out of order or repeated`, row.id);
    this.firstId ??= row.id;
    let ok = true;
    if (this.lastId === null || row.id !== this.lastId + 1) {
      if (this.lastId !== null && this.expectContiguous) {
        const from = this.lastId + 1;
        ok = this.fail(line, row.id === from + 1 ? `gap: row ${from} missing` : `gap: rows ${from}–${row.id - 1} missing`, from);
      }
      this.segments++;
      if (this.lastId === null && row.id === 1) this.genesis = true;
      // A stretch is anchored at genesis when it starts at row 1; otherwise its first prevHash is taken on trust.
      this.chain = new ChainVerifier(row.id === 1 ? GENESIS_HASH : undefined, { onProblem: (p) => this.fail(this.line, p.reason, p.id) });
    } else {
      this.links++;
    }
    this.lastId = row.id;
    return this.chain!.push(row) && ok;
  }

  result(): ExportCheck {
    const coverage: ExportCheck['coverage'] = this.rows === 0 && !this.failed ? 'empty' : this.segments <= 1 ? 'chain' : 'rows';
    const base = {
      format: this.format,
      rows: this.rows,
      firstId: this.firstId,
      lastId: this.lastId,
      coverage,
      segments: this.segments,
      linksChecked: this.links,
      anchoredAtGenesis: this.genesis,
    };
    const first = this.problems[0];
    if (first) {
      const at = first.id === undefined ? `line ${first.line}` : `row ${first.id} (line ${first.line})`;
      const more = this.problemCount > 1 ? `; ${this.problemCount} failures in all` : '';
      return {
        ok: false,
        ...base,
        ...(first.id === undefined ? {} : { brokenAt: first.id }),
        line: first.line,
        reason: first.reason,
        problems: [...this.problems],
        problemCount: this.problemCount,
        summary: `verification failed at ${at}: ${first.reason}${more}`,
      };
    }
    const range = this.rows === 0 ? 'no rows' : `${this.rows} rows, ids ${this.firstId}–${this.lastId}`;
    const summary =
      coverage === 'empty'
        ? 'the export holds no rows'
        : coverage === 'chain'
          ? `${range}: every row hash and every link verified (contiguous range${this.genesis ? ', anchored at genesis' : '; first row’s prevHash taken on trust'})`
          : `${range} in ${this.segments} stretches: each row's own hash verified, links only within stretches; rows absent from a filtered export cannot be detected`;
    return { ok: true, ...base, summary };
  }
}

const HEX64 = /^[0-9a-f]{64}$/;

function rowFromObject(o: unknown): ChainRow | string {
  if (typeof o !== 'object' || o === null || Array.isArray(o)) return 'not an object';
  const r = o as Record<string, unknown>;
  if (typeof r.id !== 'number' || !Number.isSafeInteger(r.id) || r.id < 1) return 'bad "id"';
  if (typeof r.at !== 'string' || Number.isNaN(Date.parse(r.at))) return 'bad "at"';
  for (const k of ['type', 'actor', 'subject'] as const) if (typeof r[k] !== 'string') return `bad "${k}"`;
  if (!('detail' in r)) return 'missing "detail"';
  if (r.traceId !== null && typeof r.traceId !== 'string') return 'bad "traceId"';
  if (typeof r.prevHash !== 'string' || !HEX64.test(r.prevHash)) return 'bad "prevHash"';
  if (typeof r.hash !== 'string' || !HEX64.test(r.hash)) return 'bad "hash"';
  return {
    id: r.id,
    at: r.at,
    type: r.type as string,
    actor: r.actor as string,
    subject: r.subject as string,
    // The exporter writes the stored JSON text; JSON.stringify(JSON.parse(x)) === x for such text.
    detail: JSON.stringify(r.detail),
    traceId: (r.traceId as string | null) ?? null,
    prevHash: r.prevHash,
    hash: r.hash,
  };
}

/** Text or bytes, in chunks (a file stream, an HTTP body, an array of strings). */
export type ChunkSource = AsyncIterable<string | Buffer | Uint8Array> | Iterable<string | Buffer | Uint8Array>;

/** Longest line / record accepted while verifying (a row's detail is capped far below this). */
export const MAX_EXPORT_LINE = 4 * 1024 * 1024;

async function* textChunks(input: ChunkSource): AsyncGenerator<string> {
  const decoder = new StringDecoder('utf8');
  for await (const c of input) yield typeof c === 'string' ? c : decoder.write(Buffer.from(c));
  const rest = decoder.end();
  if (rest) yield rest;
}

/** Splits text chunks into lines (without the newline), bounded by MAX_EXPORT_LINE. */
export async function* lines(input: ChunkSource): AsyncGenerator<string> {
  let buf = '';
  for await (const text of textChunks(input)) {
    buf += text;
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      yield buf.slice(0, nl).replace(/\r$/, '');
      buf = buf.slice(nl + 1);
    }
    if (buf.length > MAX_EXPORT_LINE) throw new GafferError('too_large', `a line is longer than ${MAX_EXPORT_LINE} characters`);
  }
  if (buf.length > 0) yield buf.replace(/\r$/, '');
}

/** A CSV record: its fields and whether each was quoted (so `""` and an empty field differ). */
export interface CsvRecord {
  fields: string[];
  quoted: boolean[];
}

/** Streaming RFC 4180 parser: quoted fields may hold commas, quotes ("") and line breaks. */
export async function* csvRecords(input: ChunkSource): AsyncGenerator<CsvRecord> {
  let fields: string[] = [];
  let quoted: boolean[] = [];
  let field = '';
  let isQuoted = false;
  let inQuotes = false;
  let afterQuote = false; // just saw a quote inside a quoted field (either "" or the closing one)
  let size = 0;
  let any = false;
  const endField = () => {
    fields.push(field);
    quoted.push(isQuoted);
    field = '';
    isQuoted = false;
  };
  for await (const text of textChunks(input)) {
    for (let i = 0; i < text.length; i++) {
      const ch = text[i]!;
      any = true;
      if (++size > MAX_EXPORT_LINE) throw new GafferError('too_large', `a record is longer than ${MAX_EXPORT_LINE} characters`);
      if (inQuotes) {
        if (afterQuote) {
          afterQuote = false;
          if (ch === '"') {
            field += '"';
            continue;
          }
          inQuotes = false; // the quote closed the field; fall through to handle `ch`
        } else if (ch === '"') {
          afterQuote = true;
          continue;
        } else {
          field += ch;
          continue;
        }
      }
      if (ch === '"' && field === '' && !isQuoted) {
        inQuotes = true;
        isQuoted = true;
      } else if (ch === ',') {
        endField();
      } else if (ch === '\n') {
        endField();
        yield { fields, quoted };
        fields = [];
        quoted = [];
        size = 0;
        any = false;
      } else if (ch === '\r') {
        // CRLF: the \n ends the record.
      } else {
        field += ch;
      }
    }
  }
  if (inQuotes && !afterQuote) throw new GafferError('bad_request', 'unterminated quoted CSV field');
  if (any && (field !== '' || isQuoted || fields.length > 0)) {
    endField();
    yield { fields, quoted };
  }
}

export interface VerifyExportOptions {
  /** The file should be an unfiltered range: a missing row fails instead of lowering `coverage`. */
  expectContiguous?: boolean;
}

/**
 * Verifies an exported file (any async source of text or bytes: a file stream, an HTTP body),
 * reading it once with bounded memory.
 */
export async function verifyExport(
  input: ChunkSource,
  format: ExportFormat,
  opts: VerifyExportOptions = {},
): Promise<ExportCheck> {
  const v = new ExportVerifier(format, opts.expectContiguous ?? false);
  let n = 0;
  try {
    if (format === 'jsonl') {
      for await (const line of lines(input)) {
        n++;
        if (line.trim() === '') continue;
        let obj: unknown;
        try {
          obj = JSON.parse(line);
        } catch {
          v.fail(n, 'not valid JSON');
          continue;
        }
        const row = rowFromObject(obj);
        if (typeof row === 'string') {
          const id = (obj as { id?: unknown })?.id;
          v.fail(n, row, typeof id === 'number' ? id : undefined);
          continue;
        }
        v.push(row, n);
      }
    } else {
      for await (const rec of csvRecords(input)) {
        n++;
        if (n === 1) {
          if (rec.fields.join(',') !== CSV_COLUMNS.join(',')) {
            v.fail(1, `unexpected header; expected ${CSV_COLUMNS.join(',')}`);
            break; // without the header the columns mean nothing
          }
          continue;
        }
        if (rec.fields.length === 1 && rec.fields[0] === '' && !rec.quoted[0]) continue; // blank line
        if (rec.fields.length !== CSV_COLUMNS.length) {
          v.fail(n, `expected ${CSV_COLUMNS.length} fields, found ${rec.fields.length}`);
          continue;
        }
        const [id, at, type, actor, subject, detail, traceId, prevHash, hash] = rec.fields as [string, string, string, string, string, string, string, string, string];
        let parsedDetail: unknown;
        try {
          parsedDetail = JSON.parse(detail);
        } catch {
          v.fail(n, 'bad "detail": not JSON', Number(id) || undefined);
          continue;
        }
        const row = rowFromObject({
          id: /^\d+$/.test(id) ? Number(id) : NaN,
          at,
          type,
          actor,
          subject,
          detail: parsedDetail,
          traceId: traceId === '' && !rec.quoted[6] ? null : traceId,
          prevHash,
          hash,
        });
        if (typeof row === 'string') {
          v.fail(n, row, /^\d+$/.test(id) ? Number(id) : undefined);
          continue;
        }
        v.push(row, n);
      }
    }
  } catch (e) {
    v.fail(n + 1, e instanceof Error ? e.message : String(e));
  }
  return v.result();
}
