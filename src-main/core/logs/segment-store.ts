/**
 * One log segment: a SQLite file of its own (`logs/seg-000001.db`) holding the lines appended
 * while it was the newest, plus the per-subject and per-attempt counters those appends left.
 *
 * Invariants:
 * 1. A segment is self-contained: its lines and the counters describing them change in the same
 *    transaction (WAL, synchronous=FULL), so a crash leaves every segment consistent: what was
 *    committed is there, the batch in flight is not, and nothing half-written is ever read.
 * 2. A line's rowid is `num * 2^32 + seq`, where `num` is the subject's number in this segment
 *    and `seq` its dense sequence number: a subject's lines are one rowid range, read in order
 *    without a secondary index.
 * 3. Retention deletes whole files (never rows), so a segment is only ever appended to while it
 *    is the newest, and then only read.
 * 4. The counters of an attempt are cumulative: the newest segment that holds an attempt has its
 *    totals so far (lines, bytes, the client's last seq), the state resends are checked against.
 * 5. Its size on disk is the file plus its WAL and shared-memory file (`diskBytes`, measured by
 *    `stat` when asked to). The WAL is checkpointed once it holds WAL_CHECKPOINT_PAGES and cut back
 *    to WAL_KEEP_BYTES then, and to nothing once the segment stops being the newest: beyond what
 *    its lines take, a segment's WAL adds at most WAL_ALLOWANCE_BYTES plus the batch being written.
 */
import Database from 'better-sqlite3';
import { makePrivate } from '../db/data-dir';
import fs from 'node:fs';
import path from 'node:path';

/** 2^32: the seq part of a rowid. */
export const SEQ_SPAN = 4_294_967_296;

/** Lines per INSERT statement (one statement per line costs more than SQLite's own work per row). */
const LINES_PER_INSERT = 64;
const LINE_COLUMNS = 7;

const FORMAT = 1;

/** Invariant 5: the WAL is copied into the file once it holds this many pages (SQLite's default is 1000) … */
const WAL_CHECKPOINT_PAGES = 512;
/** … and keeps at most this much of its file afterwards (journal_size_limit). */
const WAL_KEEP_BYTES = 2 * 1024 * 1024;
/**
 * What the newest segment's WAL may add on disk, beyond the batch being written: the pages written
 * since the last checkpoint (≤ WAL_CHECKPOINT_PAGES of 4 KiB), and the file growing by as much
 * again when they are copied into it.
 */
export const WAL_ALLOWANCE_BYTES = 2 * WAL_CHECKPOINT_PAGES * 4096;

const fileBytes = (f: string) => fs.statSync(f, { throwIfNoEntry: false })?.size ?? 0;

export interface SegmentSubject {
  num: number;
  subject: string;
  /** Seq range of the subject's lines in this segment (0/0 before the first). */
  firstSeq: number;
  lastSeq: number;
  /** Lines up to this seq are in the full-text index. */
  ftsSeq: number;
}

export interface AttemptCounters {
  lines: number;
  bytes: number;
  /** Highest per-attempt `seq` the client sent (0: none). Resends at or below it are duplicates. */
  clientSeq: number;
  truncated: boolean;
  dropped: number;
  firstSeq: number;
  lastSeq: number;
  firstAt: number;
  lastAt: number;
}

export interface StoredRow {
  id: number;
  attempt: number;
  at: number;
  kind: number;
  text: string;
  cut: number | null;
  /** PROTOCOL §16: the line's `data` as JSON (segments written before it have the column added, empty). */
  data: string | null;
}

interface AttemptRow {
  num: number;
  attempt: number;
  lines: number;
  bytes: number;
  client_seq: number;
  truncated: number;
  dropped: number;
  first_seq: number;
  last_seq: number;
  first_at: number;
  last_at: number;
}

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
  CREATE TABLE IF NOT EXISTS subjects (
    num INTEGER PRIMARY KEY,
    subject TEXT NOT NULL UNIQUE,
    first_seq INTEGER NOT NULL,
    last_seq INTEGER NOT NULL,
    fts_seq INTEGER NOT NULL DEFAULT 0
  );
  CREATE TABLE IF NOT EXISTS attempts (
    num INTEGER NOT NULL,
    attempt INTEGER NOT NULL,
    lines INTEGER NOT NULL,
    bytes INTEGER NOT NULL,
    client_seq INTEGER NOT NULL,
    truncated INTEGER NOT NULL,
    dropped INTEGER NOT NULL,
    first_seq INTEGER NOT NULL,
    last_seq INTEGER NOT NULL,
    first_at INTEGER NOT NULL,
    last_at INTEGER NOT NULL,
    PRIMARY KEY (num, attempt)
  ) WITHOUT ROWID;
  -- kind = stream * 4 + level (+16 for the truncation marker); cut = the line's full size when it was cut.
  CREATE TABLE IF NOT EXISTS lines (
    id INTEGER PRIMARY KEY,
    attempt INTEGER NOT NULL,
    at INTEGER NOT NULL,
    kind INTEGER NOT NULL,
    text TEXT NOT NULL,
    cut INTEGER,
    data TEXT
  );
  -- Word search across logs: a contentless index filled after the fact (never on the append path).
  CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(text, content='', detail='none');
`;

/** What an open transaction changed in memory: subjects it made, seq ranges it moved. */
interface Undo {
  created: SegmentSubject[];
  seqs: Map<SegmentSubject, [first: number, last: number]>;
  nextNum: number;
}

export const segmentFile = (dir: string, id: number) => path.join(dir, `seg-${String(id).padStart(6, '0')}.db`);

export function segmentIdOf(file: string): number | null {
  const m = /^seg-(\d{6,})\.db$/.exec(path.basename(file));
  return m ? Number(m[1]) : null;
}

export class Segment {
  readonly subjects = new Map<string, SegmentSubject>();
  private readonly byNum = new Map<number, SegmentSubject>();
  readonly createdAt: number;
  lastAt: number;
  private readonly db: Database.Database;
  private readonly q;
  private nextNum = 1;
  /** Lines of the open transaction not yet inserted: LINE_COLUMNS values each, written by `flushLines`. */
  private pendingLines: Array<number | string | null> = [];

  private constructor(
    readonly id: number,
    readonly file: string,
    db: Database.Database,
    now: number,
  ) {
    this.db = db;
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.pragma(`journal_size_limit = ${WAL_KEEP_BYTES}`);
    db.pragma(`wal_autocheckpoint = ${WAL_CHECKPOINT_PAGES}`);
    db.exec(SCHEMA);
    // A segment written before PROTOCOL §16 has no `data` column: added (empty) on open, so old and
    // new segments read alike. Idempotent: only when missing.
    if (!(db.pragma('table_info(lines)') as Array<{ name: string }>).some((c) => c.name === 'data')) db.exec('ALTER TABLE lines ADD COLUMN data TEXT');
    const meta = db.prepare<[string], { value: string }>('SELECT value FROM meta WHERE key = ?');
    const created = meta.get('created_at');
    if (!created) {
      db.prepare('INSERT INTO meta (key, value) VALUES (?, ?), (?, ?)').run('created_at', String(now), 'format', String(FORMAT));
    }
    this.createdAt = created ? Number(created.value) : now;
    this.q = {
      insertLine: db.prepare('INSERT INTO lines (id, attempt, at, kind, text, cut, data) VALUES (?, ?, ?, ?, ?, ?, ?)'),
      insertLines: db.prepare(`INSERT INTO lines (id, attempt, at, kind, text, cut, data) VALUES ${Array<string>(LINES_PER_INSERT).fill('(?, ?, ?, ?, ?, ?, ?)').join(', ')}`),
      upsertSubject: db.prepare(
        'INSERT INTO subjects (num, subject, first_seq, last_seq) VALUES (?, ?, ?, ?) ON CONFLICT (num) DO UPDATE SET last_seq = excluded.last_seq',
      ),
      upsertAttempt: db.prepare(
        `INSERT INTO attempts (num, attempt, lines, bytes, client_seq, truncated, dropped, first_seq, last_seq, first_at, last_at)
         VALUES (@num, @attempt, @lines, @bytes, @clientSeq, @truncated, @dropped, @firstSeq, @lastSeq, @firstAt, @lastAt)
         ON CONFLICT (num, attempt) DO UPDATE SET lines = excluded.lines, bytes = excluded.bytes, client_seq = excluded.client_seq,
           truncated = excluded.truncated, dropped = excluded.dropped, last_seq = excluded.last_seq, last_at = excluded.last_at`,
      ),
      range: db.prepare<[number, number, number], StoredRow>('SELECT id, attempt, at, kind, text, cut, data FROM lines WHERE id > ? AND id <= ? ORDER BY id LIMIT ?'),
      rangeKind: db.prepare<[number, number, number, number], StoredRow>(
        'SELECT id, attempt, at, kind, text, cut, data FROM lines WHERE id > ? AND id <= ? AND (kind >> 2) & 3 = ? ORDER BY id LIMIT ?',
      ),
      rangeLike: db.prepare<[number, number, string, number], StoredRow>(
        "SELECT id, attempt, at, kind, text, cut, data FROM lines WHERE id > ? AND id <= ? AND text LIKE ? ESCAPE '\\' ORDER BY id LIMIT ?",
      ),
      rangeKindLike: db.prepare<[number, number, number, string, number], StoredRow>(
        "SELECT id, attempt, at, kind, text, cut, data FROM lines WHERE id > ? AND id <= ? AND (kind >> 2) & 3 = ? AND text LIKE ? ESCAPE '\\' ORDER BY id LIMIT ?",
      ),
      ftsInsert: db.prepare('INSERT INTO fts (rowid, text) VALUES (?, ?)'),
      ftsSeq: db.prepare('UPDATE subjects SET fts_seq = ? WHERE num = ?'),
      ftsMatch: db.prepare<[string, number], { rowid: number }>('SELECT rowid FROM fts WHERE fts MATCH ? ORDER BY rowid DESC LIMIT ?'),
      byId: db.prepare<[number], StoredRow>('SELECT id, attempt, at, kind, text, cut, data FROM lines WHERE id = ?'),
      pageCount: db.prepare<[], { page_count: number }>('PRAGMA page_count'),
    };
    for (const s of db.prepare<[], { num: number; subject: string; first_seq: number; last_seq: number; fts_seq: number }>('SELECT * FROM subjects').all()) {
      const sub = { num: s.num, subject: s.subject, firstSeq: s.first_seq, lastSeq: s.last_seq, ftsSeq: s.fts_seq };
      this.subjects.set(s.subject, sub);
      this.byNum.set(s.num, sub);
      this.nextNum = Math.max(this.nextNum, s.num + 1);
    }
    const last = db.prepare<[], { at: number | null }>('SELECT max(last_at) AS at FROM attempts').get();
    this.lastAt = last?.at ?? this.createdAt;
    this.pageSize = db.pragma('page_size', { simple: true }) as number;
  }

  private readonly pageSize: number;

  static create(dir: string, id: number, now: number, nativeBinding?: string): Segment {
    const file = segmentFile(dir, id);
    const db = new Database(file, nativeBinding ? { nativeBinding } : {});
    makePrivate(file); // before its first write: its WAL takes the same mode (db/data-dir.ts)
    return new Segment(id, file, db, now);
  }

  /** Opens an existing segment; throws when the file is not a readable segment. */
  static open(file: string, now: number, nativeBinding?: string): Segment {
    const id = segmentIdOf(file);
    if (id === null) throw new Error(`not a segment file: ${file}`);
    const db = new Database(file, { fileMustExist: true, ...(nativeBinding ? { nativeBinding } : {}) });
    try {
      const ok = db.pragma('quick_check', { simple: true });
      if (ok !== 'ok') throw new Error(`segment ${path.basename(file)} failed its check: ${String(ok)}`);
      return new Segment(id, file, db, now);
    } catch (e) {
      db.close();
      throw e;
    }
  }

  /** Every attempt's counters in this segment, keyed by subject. */
  attemptRows(): Array<{ subject: string; attempt: number; counters: AttemptCounters }> {
    return this.db
      .prepare<[], AttemptRow>('SELECT * FROM attempts')
      .all()
      .map((r) => ({
        subject: this.byNum.get(r.num)!.subject,
        attempt: r.attempt,
        counters: {
          lines: r.lines,
          bytes: r.bytes,
          clientSeq: r.client_seq,
          truncated: r.truncated === 1,
          dropped: r.dropped,
          firstSeq: r.first_seq,
          lastSeq: r.last_seq,
          firstAt: r.first_at,
          lastAt: r.last_at,
        },
      }));
  }

  /** The subject's entry in this segment, made when absent (inside the caller's transaction). */
  subject(subject: string): SegmentSubject {
    let s = this.subjects.get(subject);
    if (!s) {
      s = { num: this.nextNum++, subject, firstSeq: 0, lastSeq: 0, ftsSeq: 0 };
      this.subjects.set(subject, s);
      this.byNum.set(s.num, s);
      this.undo?.created.push(s);
    }
    return s;
  }

  /** What the open transaction changed in memory, to put back if it rolls back. */
  private undo: Undo | null = null;

  subjectOfNum(num: number): SegmentSubject | undefined {
    return this.byNum.get(num);
  }

  /** Runs `fn` in one IMMEDIATE transaction; the in-memory subject table follows a rollback. */
  transaction<T>(fn: () => T): T {
    const undo: Undo = (this.undo = { created: [], seqs: new Map(), nextNum: this.nextNum });
    try {
      return this.db
        .transaction(() => {
          const r = fn();
          this.flushLines();
          return r;
        })
        .immediate();
    } catch (e) {
      this.pendingLines = [];
      for (const [sub, [first, last]] of undo.seqs) {
        sub.firstSeq = first;
        sub.lastSeq = last;
      }
      for (const sub of undo.created) {
        this.subjects.delete(sub.subject);
        this.byNum.delete(sub.num);
      }
      this.nextNum = undo.nextNum;
      throw e;
    } finally {
      this.undo = null;
    }
  }

  /** Adds a line to the open transaction (inserted by the time it commits). */
  insertLine(s: SegmentSubject, seq: number, attempt: number, at: number, kind: number, text: string, cut: number | null, data: string | null = null): void {
    if (!this.undo) throw new Error('insertLine outside a segment transaction');
    if (!this.undo.seqs.has(s)) this.undo.seqs.set(s, [s.firstSeq, s.lastSeq]);
    this.pendingLines.push(s.num * SEQ_SPAN + seq, attempt, at, kind, text, cut, data);
    if (this.pendingLines.length === LINES_PER_INSERT * LINE_COLUMNS) this.flushLines();
    if (s.firstSeq === 0) s.firstSeq = seq;
    s.lastSeq = seq;
  }

  private flushLines(): void {
    const p = this.pendingLines;
    this.pendingLines = [];
    if (p.length === LINES_PER_INSERT * LINE_COLUMNS) this.q.insertLines.run(p);
    else for (let i = 0; i < p.length; i += LINE_COLUMNS) this.q.insertLine.run(p.slice(i, i + LINE_COLUMNS));
  }

  saveSubject(s: SegmentSubject): void {
    this.q.upsertSubject.run(s.num, s.subject, s.firstSeq, s.lastSeq);
  }

  saveAttempt(s: SegmentSubject, attempt: number, c: AttemptCounters): void {
    this.q.upsertAttempt.run({ num: s.num, attempt, ...c, truncated: c.truncated ? 1 : 0 });
    if (c.lastAt > this.lastAt) this.lastAt = c.lastAt;
  }

  /** Lines of `subject` with after < seq <= upTo, oldest first; `stream` and `like` filter. */
  read(subject: string, after: number, upTo: number, limit: number, stream?: number, like?: string): StoredRow[] {
    const s = this.subjects.get(subject);
    if (!s) return [];
    const lo = s.num * SEQ_SPAN + Math.max(0, after);
    const hi = s.num * SEQ_SPAN + Math.min(upTo, SEQ_SPAN - 1);
    if (like !== undefined) return stream === undefined ? this.q.rangeLike.all(lo, hi, like, limit) : this.q.rangeKindLike.all(lo, hi, stream, like, limit);
    return stream === undefined ? this.q.range.all(lo, hi, limit) : this.q.rangeKind.all(lo, hi, stream, limit);
  }

  /**
   * Adds up to `budget` lines to the word index, subject by subject. Returns how many it added
   * (0: the index is complete). `plain` turns a line into the words to index (no colour codes).
   */
  indexSome(budget: number, plain: (text: string) => string): number {
    let done = 0;
    for (const s of this.subjects.values()) {
      if (done >= budget) break;
      if (s.ftsSeq >= s.lastSeq) continue;
      const rows = this.read(s.subject, Math.max(s.ftsSeq, s.firstSeq - 1), s.lastSeq, budget - done);
      if (rows.length === 0) continue;
      const upTo = rows[rows.length - 1]!.id - s.num * SEQ_SPAN;
      this.db.transaction(() => {
        for (const r of rows) this.q.ftsInsert.run(r.id, plain(r.text));
        this.q.ftsSeq.run(upTo, s.num);
      })();
      s.ftsSeq = upTo;
      done += rows.length;
    }
    return done;
  }

  /** Newest first: rowids whose words match the FTS5 query. */
  match(query: string, limit: number): StoredRow[] {
    const out: StoredRow[] = [];
    for (const { rowid } of this.q.ftsMatch.all(query, limit)) {
      const r = this.q.byId.get(rowid);
      if (r) out.push(r);
    }
    return out;
  }

  /** Size of the database pages (the WAL is checkpointed into them): what rotation looks at. */
  bytes(): number {
    return this.q.pageCount.get()!.page_count * this.pageSize;
  }

  private measured = -1;

  /** Invariant 5: the file, its WAL and its shared-memory file on disk, as last measured (measured now if never). */
  diskBytes(): number {
    return this.measured >= 0 ? this.measured : this.measure();
  }

  /** Stats the file and its WAL (after a write to this segment). */
  measure(): number {
    this.measured = fileBytes(this.file) + fileBytes(`${this.file}-wal`) + fileBytes(`${this.file}-shm`);
    return this.measured;
  }

  /** Invariant 5: copies the WAL into the file and empties it (the segment is no longer the newest). */
  retire(): void {
    this.db.pragma('wal_checkpoint(TRUNCATE)');
    this.measure();
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  /** Closes and removes the file with its WAL and shared-memory files. */
  remove(): void {
    this.close();
    for (const f of [this.file, `${this.file}-wal`, `${this.file}-shm`]) fs.rmSync(f, { force: true });
  }
}
