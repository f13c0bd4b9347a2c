/**
 * The log store: segment files in `<dataDir>/logs/`, appended in batches, read by subject, swept
 * by age and size. Synchronous; it runs in the log worker thread (worker.ts), never on the
 * thread that serves claims.
 *
 * Invariants:
 * 1. One `append` is one transaction on the newest segment: either every entry in it that passed
 *    its checks is stored, or nothing is (a crash or a full disk loses that batch, never more,
 *    and never leaves a half batch). Counters in memory change only after the commit.
 * 2. Per (subject, attempt): a line whose client `seq` is at or below the last one stored is a
 *    duplicate (a resend after a reconnect or a restart) and is not stored again.
 * 3. Per attempt, past `maxLinesPerAttempt` or `maxBytesPerAttempt`, exactly one marker line is
 *    stored and every later line is counted as dropped.
 * 4. Text is stored as given (colour codes kept) once it is valid Unicode; an entry with a lone
 *    surrogate is refused whole (its frame is refused; nothing of it is stored). A line longer
 *    than `maxLineBytes` is cut at a character boundary and keeps its full size in `cut`.
 * 5. Retention removes whole segments, oldest first, never the newest one.
 * 6. The total is kept as lines are written, not only by the sweep: before a batch, the oldest
 *    segments are deleted until the files on disk (segments and WALs) plus twice the batch (its
 *    WAL frames and its pages) plus the WAL's own allowance (segment invariant 5) fit in
 *    `maxTotalMb`; after it, until they fit again. The newest
 *    segment rotates at an eighth of the total, so deleting the older ones always makes room:
 *    the logs directory holds at most `maxTotalMb`, up to the store's estimate of one batch.
 */
import fs from 'node:fs';
import { makePrivateDir } from '../db/data-dir';
import path from 'node:path';
import { LOG_LEVELS, LOG_LINE_KINDS, LOG_STREAMS, type LogAttempt, type LogLineKind, type LogLevel, type LogLine, type LogPage, type LogSettings, type LogStorageStats, type LogStream } from '../../common/logs';
import { isoTime } from '../../common/iso-time';
import { Segment, segmentIdOf, SEQ_SPAN, WAL_ALLOWANCE_BYTES, type AttemptCounters, type StoredRow } from './segment-store';

export interface IncomingLine {
  text: string;
  stream?: LogStream;
  level?: LogLevel;
  /** Epoch ms (the client's `at`, or when Gaffer received the frame). */
  at: number;
  /** The client's per-attempt sequence number (optional; enables duplicate-free resends). */
  seq?: number;
  /** PROTOCOL §16: the line's part in a conversation, and its structured detail (checked by the wire schema). */
  kind?: LogLineKind | undefined;
  data?: Record<string, unknown> | undefined;
}

export interface AppendEntry {
  subject: string;
  attempt: number;
  lines: IncomingLine[];
}

export type AppendOutcome =
  | {
      ok: true;
      /** Lines stored from this entry (pieces of multi-line texts counted one by one). */
      stored: number;
      duplicates: number;
      /** Lines not stored because the attempt is past its cap. */
      dropped: number;
      truncated: boolean;
      /** The subject's last stored seq. */
      lastSeq: number;
      /** The client's last seq the store has for this attempt. */
      clientSeq: number;
    }
  | { ok: false; field: string; message: string };

export interface ReadQuery {
  subject: string;
  after?: number;
  limit: number;
  attempt?: number;
  stream?: LogStream;
  /** Case-insensitive substring. */
  contains?: string;
}

export interface SearchHit extends LogLine {
  subject: string;
}

export interface LogStoreOptions {
  nativeBinding?: string;
  /** A new segment starts once the newest is this big (default 64 MiB) … */
  segmentMaxBytes?: number;
  /** … or this old (default one day), so retention by age frees space day by day. */
  segmentMaxAgeMs?: number;
  /** Called for a segment that could not be opened (it is moved aside, not deleted). */
  onBadSegment?: (file: string, error: string) => void;
}

const KIND_MARKER = 16;
/**
 * PROTOCOL §16: the line's conversation kind is stored in the same integer, above the marker bit:
 * (index in LOG_LINE_KINDS + 1) << 5, 0 for none (every line stored before it).
 */
const LINE_KIND_SHIFT = 5;
const LINE_KIND_INDEX = new Map(LOG_LINE_KINDS.map((k, i) => [k, i + 1]));
const MIB = 1024 * 1024;
/** Invariant 6: a stored line's bytes beyond its text (row header, rowid, columns, page slack). */
const ROW_OVERHEAD_BYTES = 40;
const STREAM_INDEX = new Map(LOG_STREAMS.map((s, i) => [s, i]));
const LEVEL_INDEX = new Map(LOG_LEVELS.map((l, i) => [l, i]));
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
// eslint-disable-next-line no-control-regex -- colour and cursor codes are exactly what is removed
const ANSI = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]/g;

/** The text without terminal escape sequences (for the word index and for searching words). */
export const plainText = (text: string) => text.replace(ANSI, '');

function kindOf(stream: LogStream | undefined, level: LogLevel | undefined, lineKind?: LogLineKind): number {
  const k = lineKind ? (LINE_KIND_INDEX.get(lineKind) ?? 0) << LINE_KIND_SHIFT : 0;
  return k + (STREAM_INDEX.get(stream ?? 'stdout') ?? 0) * 4 + (LEVEL_INDEX.get(level ?? 'info') ?? 1);
}

/** Cuts `text` to at most `maxBytes` UTF-8 bytes without splitting a character. */
export function cutUtf8(text: string, maxBytes: number): string {
  const buf = Buffer.from(text, 'utf8');
  if (buf.length <= maxBytes) return text;
  let end = maxBytes;
  while (end > 0 && (buf[end]! & 0xc0) === 0x80) end--; // back off continuation bytes
  return buf.subarray(0, end).toString('utf8');
}

export function toLine(r: StoredRow): LogLine {
  const seq = r.id % SEQ_SPAN;
  const stream = LOG_STREAMS[(r.kind >> 2) & 3] ?? 'stdout';
  const level = LOG_LEVELS[r.kind & 3] ?? 'info';
  const line: LogLine = { seq, at: isoTime(r.at), attempt: r.attempt, stream, level, text: r.text };
  if (r.cut !== null) line.cutFrom = r.cut;
  if (r.kind & KIND_MARKER) line.marker = 'truncated';
  const lineKind = LOG_LINE_KINDS[(r.kind >> LINE_KIND_SHIFT) - 1];
  if (lineKind) line.kind = lineKind;
  if (r.data !== null && r.data !== undefined) line.data = JSON.parse(r.data) as Record<string, unknown>;
  return line;
}

function escapeLike(s: string): string {
  return `%${s.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** An FTS5 query that matches lines holding every word of `q` (prefix match on the last one). */
export function ftsQuery(q: string): string | null {
  const words = plainText(q)
    .split(/[^\p{L}\p{N}_]+/u)
    .filter(Boolean)
    .slice(0, 16);
  if (words.length === 0) return null;
  return words.map((w, i) => `"${w.replace(/"/g, '""')}"${i === words.length - 1 ? '*' : ''}`).join(' AND ');
}

interface SubjectState {
  lastSeq: number;
  /** Oldest first. */
  segments: Segment[];
}

export class LogStore {
  private readonly segments: Segment[] = [];
  private readonly subjects = new Map<string, SubjectState>();
  /** subject → attempt → its counters (the newest segment's, cumulative). */
  private readonly attempts = new Map<string, Map<number, AttemptCounters>>();
  private readonly segmentMaxBytes: number;
  private readonly segmentMaxAgeMs: number;
  /** Invariant 6: the cap last given (by an append or a sweep); the word index keeps to it too. */
  private capBytes = Infinity;
  /** Segments deleted to keep the total (invariant 6), since the store opened. */
  evicted = 0;

  constructor(
    readonly dir: string,
    now: number,
    private readonly opts: LogStoreOptions = {},
  ) {
    this.segmentMaxBytes = opts.segmentMaxBytes ?? 64 * 1024 * 1024;
    this.segmentMaxAgeMs = opts.segmentMaxAgeMs ?? 24 * 3600 * 1000;
    makePrivateDir(dir);
    const files = fs
      .readdirSync(dir)
      .filter((f) => segmentIdOf(f) !== null)
      .sort((a, b) => segmentIdOf(a)! - segmentIdOf(b)!);
    for (const f of files) {
      const file = path.join(dir, f);
      try {
        this.adopt(Segment.open(file, now, opts.nativeBinding));
      } catch (e) {
        // Never lose a file silently and never stop Gaffer for a log: move it aside for a person.
        const aside = `${file}.unreadable`;
        fs.renameSync(file, aside);
        opts.onBadSegment?.(aside, e instanceof Error ? e.message : String(e));
      }
    }
    if (this.segments.length === 0) this.segments.push(Segment.create(dir, 1, now, opts.nativeBinding));
  }

  private adopt(seg: Segment): void {
    this.segments.push(seg);
    for (const s of seg.subjects.values()) {
      const st = this.subjects.get(s.subject) ?? { lastSeq: 0, segments: [] };
      st.segments.push(seg);
      st.lastSeq = Math.max(st.lastSeq, s.lastSeq);
      this.subjects.set(s.subject, st);
    }
    // Later segments hold later (cumulative) counters: they replace earlier ones.
    for (const a of seg.attemptRows()) this.countersOf(a.subject).set(a.attempt, a.counters);
  }

  private countersOf(subject: string): Map<number, AttemptCounters> {
    let m = this.attempts.get(subject);
    if (!m) this.attempts.set(subject, (m = new Map()));
    return m;
  }

  private get newest(): Segment {
    return this.segments[this.segments.length - 1]!;
  }

  private rotateIfDue(now: number): void {
    const cur = this.newest;
    if (cur.bytes() < Math.min(this.segmentMaxBytes, this.capBytes / 8) && now - cur.createdAt < this.segmentMaxAgeMs) return;
    cur.retire();
    this.segments.push(Segment.create(this.dir, cur.id + 1, now, this.opts.nativeBinding));
  }

  /** On disk: every segment file and its WAL. */
  totalBytes(): number {
    let n = 0;
    for (const s of this.segments) n += s.diskBytes();
    return n;
  }

  /**
   * Invariant 6: deletes the oldest segments until the total plus `incoming` bytes fits the cap.
   * The subjects of the batch about to be written keep their seq and counters even when their
   * last segment goes (their lines continue the numbering; a resend is still recognised).
   */
  private makeRoom(incoming: number, writing?: ReadonlySet<string>): void {
    while (this.segments.length > 1 && this.totalBytes() + incoming > this.capBytes) {
      this.drop(this.segments[0]!, writing);
      this.evicted++;
    }
  }

  /** Stores a batch (invariant 1); one outcome per entry, in order. */
  append(entries: AppendEntry[], now: number, settings: LogSettings): AppendOutcome[] {
    this.capBytes = settings.maxTotalMb * MIB;
    this.rotateIfDue(now);
    let incoming = 0;
    for (const e of entries) for (const l of e.lines) incoming += l.text.length + ROW_OVERHEAD_BYTES + (l.data ? 2 * ROW_OVERHEAD_BYTES : 0);
    this.makeRoom(2 * incoming + WAL_ALLOWANCE_BYTES, new Set(entries.map((e) => e.subject)));
    const seg = this.newest;
    const outcomes: AppendOutcome[] = [];
    const staged = new Map<string, Map<number, AttemptCounters>>();
    const seqs = new Map<string, number>();
    seg.transaction(() => {
      for (const entry of entries) {
        const bad = entry.lines.findIndex((l) => LONE_SURROGATE.test(l.text));
        if (bad >= 0) {
          outcomes.push({ ok: false, field: `lines[${bad}].text`, message: `lines[${bad}].text is not valid Unicode (a lone surrogate cannot be stored as UTF-8)` });
          continue;
        }
        outcomes.push(this.appendEntry(seg, entry, now, settings, staged, seqs));
      }
      for (const [subject, byAttempt] of staged) {
        const s = seg.subject(subject);
        seg.saveSubject(s); // also for an entry of duplicates only: its attempt row names it
        for (const [attempt, c] of byAttempt) seg.saveAttempt(s, attempt, c);
      }
    });
    // Committed: memory follows (invariant 1).
    for (const [subject, byAttempt] of staged) for (const [attempt, c] of byAttempt) this.countersOf(subject).set(attempt, c);
    for (const [subject, lastSeq] of seqs) {
      const st = this.subjects.get(subject) ?? { lastSeq: 0, segments: [] };
      st.lastSeq = lastSeq;
      if (st.segments[st.segments.length - 1] !== seg && seg.subjects.get(subject)!.lastSeq > 0) st.segments.push(seg);
      this.subjects.set(subject, st);
    }
    seg.measure();
    this.makeRoom(0);
    return outcomes;
  }

  private appendEntry(
    seg: Segment,
    entry: AppendEntry,
    now: number,
    settings: LogSettings,
    staged: Map<string, Map<number, AttemptCounters>>,
    seqs: Map<string, number>,
  ): AppendOutcome {
    const prev = staged.get(entry.subject)?.get(entry.attempt) ?? this.attempts.get(entry.subject)?.get(entry.attempt);
    const c: AttemptCounters = prev
      ? { ...prev }
      : { lines: 0, bytes: 0, clientSeq: 0, truncated: false, dropped: 0, firstSeq: 0, lastSeq: 0, firstAt: now, lastAt: now };
    let seq = seqs.get(entry.subject) ?? this.subjects.get(entry.subject)?.lastSeq ?? 0;
    const s = seg.subject(entry.subject);
    let stored = 0;
    let duplicates = 0;
    let dropped = 0;
    const put = (at: number, kind: number, text: string, cut: number | null, bytes: number, data: string | null = null) => {
      seq++;
      seg.insertLine(s, seq, entry.attempt, at, kind, text, cut, data);
      if (c.firstSeq === 0) {
        c.firstSeq = seq;
        c.firstAt = at;
      }
      c.lastSeq = seq;
      c.lastAt = Math.max(c.lastAt, at);
      c.lines++;
      c.bytes += bytes;
      stored++;
    };
    for (const line of entry.lines) {
      if (line.seq !== undefined) {
        if (line.seq <= c.clientSeq) {
          duplicates++;
          continue;
        }
        c.clientSeq = line.seq;
      }
      const pieces = line.text.split('\n');
      if (pieces.length > 1 && pieces[pieces.length - 1] === '') pieces.pop();
      const kind = kindOf(line.stream, line.level, line.kind);
      // The line's data goes with its first piece (the others carry its kind only) and counts
      // toward the attempt's byte cap.
      let data = line.data ? JSON.stringify(line.data) : null;
      for (let piece of pieces) {
        if (c.truncated) {
          dropped++;
          continue;
        }
        let bytes = Buffer.byteLength(piece, 'utf8');
        let cut: number | null = null;
        if (bytes > settings.maxLineBytes) {
          cut = bytes;
          piece = cutUtf8(piece, settings.maxLineBytes);
          bytes = Buffer.byteLength(piece, 'utf8');
        }
        if (data) bytes += Buffer.byteLength(data, 'utf8');
        // One line is kept back for the marker, so the cap is never passed.
        if (c.lines + 2 > settings.maxLinesPerAttempt || c.bytes + bytes > settings.maxBytesPerAttempt) {
          const note = `log truncated: this attempt reached its cap (${settings.maxLinesPerAttempt} lines or ${settings.maxBytesPerAttempt} bytes); later lines are counted, not kept`;
          put(line.at, 2 * 4 + 2 + KIND_MARKER, note, null, 0);
          c.truncated = true;
          dropped++;
          continue;
        }
        put(line.at, kind, piece, cut, bytes, data);
        data = null;
      }
    }
    c.dropped += dropped;
    let byAttempt = staged.get(entry.subject);
    if (!byAttempt) staged.set(entry.subject, (byAttempt = new Map()));
    byAttempt.set(entry.attempt, c);
    if (stored > 0) seqs.set(entry.subject, seq);
    return { ok: true, stored, duplicates, dropped, truncated: c.truncated, lastSeq: seq, clientSeq: c.clientSeq };
  }

  /** A page of a subject's lines, oldest first. */
  read(q: ReadQuery): LogPage {
    const st = this.subjects.get(q.subject);
    if (!st) return { items: [], next: null };
    let after = q.after ?? 0;
    let upTo = st.lastSeq;
    if (q.attempt !== undefined) {
      const c = this.attempts.get(q.subject)?.get(q.attempt);
      if (!c || c.firstSeq === 0) return { items: [], next: null };
      after = Math.max(after, c.firstSeq - 1);
      upTo = c.lastSeq;
    }
    const stream = q.stream === undefined ? undefined : STREAM_INDEX.get(q.stream);
    const like = q.contains ? escapeLike(q.contains) : undefined;
    const items: LogLine[] = [];
    for (const seg of st.segments) {
      const sub = seg.subjects.get(q.subject);
      if (!sub || sub.lastSeq <= after || sub.firstSeq > upTo) continue;
      for (const r of seg.read(q.subject, after, upTo, q.limit - items.length, stream, like)) items.push(toLine(r));
      if (items.length >= q.limit) break;
    }
    const last = items[items.length - 1];
    const more = items.length >= q.limit && last !== undefined && last.seq < upTo;
    return { items, next: more ? last.seq : null };
  }

  /** The subject's attempts, oldest first. */
  attemptsOf(subject: string): LogAttempt[] {
    const out: LogAttempt[] = [];
    for (const [attempt, c] of this.attempts.get(subject) ?? []) {
      out.push({
        attempt,
        lines: c.lines,
        bytes: c.bytes,
        firstSeq: c.firstSeq,
        lastSeq: c.lastSeq,
        firstAt: isoTime(c.firstAt),
        lastAt: isoTime(c.lastAt),
        truncated: c.truncated,
        dropped: c.dropped,
      });
    }
    return out.sort((a, b) => a.attempt - b.attempt);
  }

  /** Word search across every log, newest first (lines not yet in the index are not found). */
  search(q: string, limit: number): SearchHit[] {
    const query = ftsQuery(q);
    if (query === null) return [];
    const hits: SearchHit[] = [];
    for (let i = this.segments.length - 1; i >= 0 && hits.length < limit; i--) {
      const seg = this.segments[i]!;
      for (const r of seg.match(query, limit - hits.length)) {
        const sub = seg.subjectOfNum(Math.floor(r.id / SEQ_SPAN));
        if (sub) hits.push({ subject: sub.subject, ...toLine(r) });
      }
    }
    return hits;
  }

  /** Indexes up to `budget` more lines for `search`; returns how many (0: up to date). */
  indexSome(budget: number): number {
    let done = 0;
    for (const seg of this.segments) {
      if (done >= budget) break;
      const n = seg.indexSome(budget - done, plainText);
      if (n > 0) seg.measure();
      done += n;
    }
    if (done > 0) this.makeRoom(0); // the index takes room too (invariant 6)
    return done;
  }

  /** Retention (invariant 5): whole segments past the age, then the oldest while over the size. */
  sweep(now: number, settings: Pick<LogSettings, 'retentionDays' | 'maxTotalMb'>): { removed: number } {
    let removed = 0;
    const cutoff = now - settings.retentionDays * 24 * 3600 * 1000;
    this.capBytes = settings.maxTotalMb * MIB;
    while (this.segments.length > 1) {
      const oldest = this.segments[0]!;
      if (oldest.lastAt >= cutoff && this.totalBytes() <= this.capBytes) break;
      this.drop(oldest);
      removed++;
    }
    return { removed };
  }

  private drop(seg: Segment, keep?: ReadonlySet<string>): void {
    this.segments.shift();
    seg.remove();
    for (const subject of seg.subjects.keys()) {
      const st = this.subjects.get(subject);
      if (!st) continue;
      st.segments = st.segments.filter((s) => s !== seg);
      if (st.segments.length > 0 || keep?.has(subject)) continue;
      this.subjects.delete(subject);
      this.attempts.delete(subject);
    }
  }

  stats(): LogStorageStats {
    let lines = 0;
    for (const byAttempt of this.attempts.values()) for (const c of byAttempt.values()) lines += c.lines;
    return {
      segments: this.segments.length,
      bytes: this.totalBytes(),
      lines,
      oldestAt: this.segments.length ? isoTime(this.segments[0]!.createdAt) : null,
    };
  }

  close(): void {
    for (const s of this.segments) s.close();
  }
}
