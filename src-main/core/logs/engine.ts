/**
 * The log store's operations as messages: one table of what the store can be asked, used by the
 * worker thread (worker.ts) and by the in-thread engine that tests and tools use.
 */
import { LOG_LEVELS, LOG_LINE_KINDS, LOG_STREAMS, type LogAttempt, type LogPage, type LogSettings, type LogStorageStats } from '../../common/logs';
import { readLogFrame, type LogFrameText } from './frame-text';
import type { AppendEntry, AppendOutcome, IncomingLine, LogStore, ReadQuery, SearchHit } from './log-store';

/**
 * A batch of entries in the shape that crosses to the worker cheaply: one string holding every
 * text and typed arrays for the rest (cloning thousands of small objects costs more than
 * inserting them).
 */
export interface PackedBatch {
  subjects: string[];
  attempts: number[];
  /** Lines per entry. */
  counts: number[];
  text: string;
  /** Per line: its characters in `text`, `at` (ms), client seq (0: none), stream * 4 + level (+ 16 × its conversation kind's number, PROTOCOL §16). */
  lens: Uint32Array;
  ats: Float64Array;
  seqs: Float64Array;
  kinds: Uint8Array;
  /** PROTOCOL §16, sparse (most lines have none): the lines that carry `data`, by index, and that data. */
  dataAt: number[];
  data: Array<Record<string, unknown>>;
}

const STREAM_OF = new Map(LOG_STREAMS.map((x, i) => [x, i]));
const LEVEL_OF = new Map(LOG_LEVELS.map((x, i) => [x, i]));
const LINE_KIND_OF = new Map(LOG_LINE_KINDS.map((x, i) => [x, i + 1]));

export function packBatch(entries: AppendEntry[]): PackedBatch {
  let n = 0;
  for (const e of entries) n += e.lines.length;
  const lens = new Uint32Array(n);
  const ats = new Float64Array(n);
  const seqs = new Float64Array(n);
  const kinds = new Uint8Array(n);
  const texts: string[] = new Array<string>(n);
  const dataAt: number[] = [];
  const data: Array<Record<string, unknown>> = [];
  let i = 0;
  for (const e of entries) {
    for (const l of e.lines) {
      texts[i] = l.text;
      lens[i] = l.text.length;
      ats[i] = l.at;
      seqs[i] = l.seq ?? 0;
      kinds[i] = (l.kind ? (LINE_KIND_OF.get(l.kind) ?? 0) * 16 : 0) + (STREAM_OF.get(l.stream ?? 'stdout') ?? 0) * 4 + (LEVEL_OF.get(l.level ?? 'info') ?? 1);
      if (l.data) {
        dataAt.push(i);
        data.push(l.data);
      }
      i++;
    }
  }
  return { subjects: entries.map((e) => e.subject), attempts: entries.map((e) => e.attempt), counts: entries.map((e) => e.lines.length), text: texts.join(''), lens, ats, seqs, kinds, dataAt, data };
}

export function unpackBatch(b: PackedBatch): AppendEntry[] {
  const out: AppendEntry[] = [];
  let i = 0;
  let pos = 0;
  let d = 0;
  for (let e = 0; e < b.subjects.length; e++) {
    const lines: IncomingLine[] = new Array<IncomingLine>(b.counts[e]!);
    for (let k = 0; k < b.counts[e]!; k++, i++) {
      const text = b.text.slice(pos, pos + b.lens[i]!);
      pos += b.lens[i]!;
      const kind = b.kinds[i]!;
      const line: IncomingLine = { text, at: b.ats[i]!, stream: LOG_STREAMS[(kind >> 2) & 3]!, level: LOG_LEVELS[kind & 3]! };
      if (b.seqs[i]! > 0) line.seq = b.seqs[i]!;
      if (kind >= 16) line.kind = LOG_LINE_KINDS[(kind >> 4) - 1];
      if (b.dataAt[d] === i) line.data = b.data[d++];
      lines[k] = line;
    }
    out.push({ subject: b.subjects[e]!, attempt: b.attempts[e]!, lines });
  }
  return out;
}

/**
 * Frames in arrival order, some parsed on the main thread (packed), the rest as their text or
 * bytes, read here (frame-text.ts): `order[i]` is 0 for the next packed entry, 1 for the next text.
 */
export interface IngestBatch {
  packed: PackedBatch;
  texts: LogFrameText[];
  order: Uint8Array;
}

/** Per frame: what the store did, or why a text frame was refused (nothing of it stored). */
export type IngestOutcome = (AppendOutcome & { ok: true; lines: number }) | { ok: false; code?: 'bad_request' | 'not_holder'; field?: string; message: string };

/** Reads the text frames, then appends every frame that reads cleanly as one batch (log-store invariant 1). */
function ingest(store: LogStore, b: IngestBatch, now: number, settings: LogSettings): IngestOutcome[] {
  const packed = unpackBatch(b.packed);
  const entries: AppendEntry[] = [];
  const slots: Array<number | IngestOutcome> = [];
  let p = 0;
  let t = 0;
  for (const kind of b.order) {
    const read = kind === 0 ? { ok: true as const, entry: packed[p++]! } : readLogFrame(b.texts[t++]!);
    if (read.ok) {
      slots.push(entries.length);
      entries.push(read.entry);
    } else slots.push(read);
  }
  const outcomes = store.append(entries, now, settings);
  return slots.map((s) => {
    if (typeof s !== 'number') return s;
    const o = outcomes[s]!;
    return o.ok ? { ...o, lines: entries[s]!.lines.length } : o;
  });
}

export interface EngineOps {
  ingest: { args: { batch: IngestBatch; now: number; settings: LogSettings }; result: IngestOutcome[] };
  read: { args: ReadQuery; result: LogPage };
  attempts: { args: { subject: string }; result: LogAttempt[] };
  search: { args: { q: string; limit: number }; result: SearchHit[] };
  sweep: { args: { now: number; settings: Pick<LogSettings, 'retentionDays' | 'maxTotalMb'> }; result: { removed: number } };
  stats: { args: Record<string, never>; result: LogStorageStats };
  /** Adds up to `budget` lines to the word index; returns how many (0: it is up to date). */
  index: { args: { budget: number }; result: number };
}
export type EngineOp = keyof EngineOps;

/** Lines indexed for word search before a search runs (the rest waits for idle time). */
const INDEX_BEFORE_SEARCH = 50_000;

export function runOp<O extends EngineOp>(store: LogStore, op: O, args: EngineOps[O]['args']): EngineOps[O]['result'] {
  const a = args as never;
  const table: { [K in EngineOp]: (x: EngineOps[K]['args']) => EngineOps[K]['result'] } = {
    ingest: (x) => ingest(store, x.batch, x.now, x.settings),
    read: (x) => store.read(x),
    attempts: (x) => store.attemptsOf(x.subject),
    search: (x) => {
      store.indexSome(INDEX_BEFORE_SEARCH);
      return store.search(x.q, x.limit);
    },
    sweep: (x) => store.sweep(x.now, x.settings),
    stats: () => store.stats(),
    index: (x) => store.indexSome(x.budget),
  };
  return (table[op] as (x: never) => EngineOps[O]['result'])(a);
}

/** Where the log store runs: a worker thread in Gaffer, this thread in tests. */
export interface LogEngine {
  call<O extends EngineOp>(op: O, args: EngineOps[O]['args']): Promise<EngineOps[O]['result']>;
  close(): Promise<void>;
}

/** The store on this thread (tests, tools): each call runs in a later microtask, like a worker's reply. */
export function inlineEngine(store: LogStore): LogEngine {
  let closed = false;
  return {
    call: (op, args) =>
      Promise.resolve().then(() => {
        if (closed) throw new Error('log engine closed');
        return runOp(store, op, args);
      }),
    async close() {
      if (closed) return;
      closed = true;
      store.close();
    },
  };
}
