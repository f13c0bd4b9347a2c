/**
 * The SDK's log outbox for one attempt (a claimed task or an acknowledged run): lines are
 * numbered, batched into `log` frames, sent one frame at a time and kept until acknowledged.
 *
 * Invariants:
 * 1. Every line gets the next per-attempt `seq` (1, 2, 3, …); the server stores a seq once, so
 *    resending after a lost reply, a reconnect or a server restart never duplicates a line.
 * 2. One frame in flight at a time, and a frame never exceeds `maxFrameBytes`: the socket's
 *    outgoing buffer holds at most one frame of logs. A line is dropped from memory only when the
 *    server has acknowledged its seq (`lastSeq`), so an acknowledged line is never resent and an
 *    unacknowledged one is never lost while this process lives.
 * 3. Memory is bounded: `write` resolves once the buffer is below `highWaterLines` (await it to
 *    log losslessly at the speed the server takes); past `maxBufferedLines` lines are dropped,
 *    counted, and one line says how many.
 * 4. When the server says the sender no longer holds the work (`not_holder`, `not_found`), the
 *    outbox stops and discards what it holds: those lines can no longer be stored.
 */
import type { LogLevel, LogLineKind, LogStream } from '../common/logs';
import { cutText } from '../common/line-splitter';
import { isLogData, type LogResult } from '../common/protocol';
import { toWellFormedText } from '../common/text';
import { GafferRequestError } from './errors';

export interface LogOptions {
  stream?: LogStream;
  level?: LogLevel;
  /** PROTOCOL §16: the line's part in a conversation (the CLI adapters set it). */
  kind?: LogLineKind;
  /** PROTOCOL §16: structured detail, a JSON object of at most 64 KiB (a larger one is left out). */
  data?: Record<string, unknown>;
}

export interface LogOutboxOptions {
  /** Lines per frame at most (default 2000). */
  maxFrameLines?: number;
  /** Bytes of lines per frame at most (default 224 KiB, under the 256 KiB frame limit). */
  maxFrameBytes?: number;
  /** `write` resolves once fewer lines than this wait (default 20 000). */
  highWaterLines?: number;
  /** Beyond this many waiting lines, new ones are dropped and counted (default 100 000). */
  maxBufferedLines?: number;
  /** A partly filled frame is sent after this long (default 50 ms). */
  lingerMs?: number;
  /** A line longer than this many characters is cut before sending (default 64 Ki). */
  maxLineChars?: number;
}

interface Pending {
  seq: number;
  text: string;
  stream: LogStream;
  level: LogLevel;
  at: string;
  kind?: LogLineKind;
  data?: Record<string, unknown>;
  /** Bytes this line takes in a frame (its JSON, escapes included). */
  size: number;
}

type WireLine = Omit<Pending, 'stream' | 'level' | 'size' | 'kind' | 'data'> & LogOptions;
type Send = (lines: WireLine[]) => Promise<LogResult>;

/** A line as it goes on the wire: the defaults (`stdout`, `info`) left out. */
function wireLine(l: Pending): WireLine {
  const w: WireLine = { seq: l.seq, text: l.text, at: l.at };
  if (l.stream !== 'stdout') w.stream = l.stream;
  if (l.level !== 'info') w.level = l.level;
  if (l.kind) w.kind = l.kind;
  if (l.data) w.data = l.data;
  return w;
}

const STOP_CODES = new Set(['not_holder', 'not_found', 'forbidden', 'unauthorized']);
/** Characters JSON writes as themselves, one byte each: a text of only these takes its length + 2 quotes. */
const PLAIN_JSON = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** The line's bytes in a frame's JSON (its quotes and escapes included). */
const jsonBytes = (t: string) => (PLAIN_JSON.test(t) ? t.length + 2 : Buffer.byteLength(JSON.stringify(t)));

/** `new Date().toISOString()`, formatted once per millisecond (a flood logs many lines in one). */
let isoMs = -1;
let isoText = '';
function isoNow(): string {
  const ms = Date.now();
  if (ms !== isoMs) {
    isoMs = ms;
    isoText = new Date(ms).toISOString();
  }
  return isoText;
}
const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class LogOutbox {
  private buffer: Pending[] = [];
  private seq = 0;
  private dropped = 0;
  private sending = false;
  private stopped: string | null = null;
  private linger: NodeJS.Timeout | undefined;
  private roomWaiters: Array<() => void> = [];
  private idleWaiters: Array<() => void> = [];
  private readonly o: Required<LogOutboxOptions>;
  /** Lines the server acknowledged (stored, or recognised as already stored). */
  acknowledged = 0;
  /** The server said the attempt's log reached its cap. */
  truncated = false;

  constructor(
    private readonly send: Send,
    opts: LogOutboxOptions = {},
    private readonly warn: (msg: string, fields?: Record<string, unknown>) => void = () => {},
  ) {
    this.o = {
      maxFrameLines: opts.maxFrameLines ?? 2000,
      maxFrameBytes: opts.maxFrameBytes ?? 224 * 1024,
      highWaterLines: opts.highWaterLines ?? 20_000,
      maxBufferedLines: opts.maxBufferedLines ?? 100_000,
      lingerMs: opts.lingerMs ?? 50,
      maxLineChars: opts.maxLineChars ?? 64 * 1024,
    };
  }

  /** Why the outbox stopped (it takes no more lines), or null. */
  get stoppedReason(): string | null {
    return this.stopped;
  }

  get waiting(): number {
    return this.buffer.length;
  }

  /**
   * Queues one line. Resolves at once while the buffer is below the high-water mark, else once
   * it has drained below it (invariant 3).
   */
  write(text: string, opts: LogOptions = {}): Promise<void> {
    if (this.stopped) return Promise.resolve();
    if (this.buffer.length >= this.o.maxBufferedLines) {
      this.dropped++;
      return this.room();
    }
    if (this.dropped > 0) {
      this.push(`[gaffer sdk] ${this.dropped} line(s) dropped: they were logged faster than they could be sent`, { stream: 'agent', level: 'warn' });
      this.dropped = 0;
    }
    this.push(text, opts);
    if (this.buffer.length >= this.o.maxFrameLines) void this.pump();
    else this.linger ??= setTimeout(() => void this.pump(), this.o.lingerMs);
    return this.buffer.length >= this.o.highWaterLines ? this.room() : Promise.resolve();
  }

  private push(text: string, opts: LogOptions): void {
    // Text that is not valid Unicode (a lone surrogate, half an emoji after a cut) would make the
    // server refuse the whole frame: mend it, and cut only on a character boundary.
    let t = toWellFormedText(text);
    if (t.length > this.o.maxLineChars) t = `${cutText(t, this.o.maxLineChars)} […cut by the SDK: ${t.length} characters in all]`;
    const stream = opts.stream ?? 'stdout';
    const level = opts.level ?? 'info';
    // The line's fields: seq, at (24), stream and level when not the defaults, punctuation.
    // Data the server would refuse (not JSON, over 64 KiB) is left out rather than losing the line.
    const data = opts.data !== undefined && isLogData(opts.data) ? opts.data : undefined;
    const extra = (opts.kind ? 24 : 0) + (data ? Buffer.byteLength(JSON.stringify(data)) + 8 : 0);
    const size = jsonBytes(t) + 64 + (stream === 'stdout' ? 0 : 18) + (level === 'info' ? 0 : 16) + extra;
    this.buffer.push({ seq: ++this.seq, text: t, stream, level, at: isoNow(), size, ...(opts.kind ? { kind: opts.kind } : {}), ...(data ? { data } : {}) });
  }

  private room(): Promise<void> {
    if (this.buffer.length < this.o.highWaterLines || this.stopped) return Promise.resolve();
    return new Promise((r) => this.roomWaiters.push(r));
  }

  /** Resolves once every line written so far is acknowledged (or the outbox stopped). */
  flush(): Promise<void> {
    if (this.buffer.length === 0 || this.stopped) return Promise.resolve();
    void this.pump();
    return new Promise((r) => this.idleWaiters.push(r));
  }

  /** Stops at once and discards what is waiting (the work was taken away). */
  stop(reason: string): void {
    if (this.stopped) return;
    this.stopped = reason;
    if (this.buffer.length > 0) this.warn('log lines discarded', { lines: this.buffer.length, reason });
    this.buffer = [];
    this.settle();
  }

  private settle(): void {
    if (this.buffer.length < this.o.highWaterLines || this.stopped) for (const w of this.roomWaiters.splice(0)) w();
    if (this.buffer.length === 0 || this.stopped) for (const w of this.idleWaiters.splice(0)) w();
  }

  private frame(): Pending[] {
    const out: Pending[] = [];
    let bytes = 0;
    for (const l of this.buffer) {
      if (out.length > 0 && (out.length >= this.o.maxFrameLines || bytes + l.size > this.o.maxFrameBytes)) break;
      out.push(l);
      bytes += l.size;
    }
    return out;
  }

  private async pump(): Promise<void> {
    if (this.linger) {
      clearTimeout(this.linger);
      this.linger = undefined;
    }
    if (this.sending) return;
    this.sending = true;
    try {
      let failures = 0;
      while (this.buffer.length > 0 && !this.stopped) {
        const lines = this.frame();
        try {
          const r = await this.send(lines.map(wireLine));
          failures = 0;
          if (r.truncated) this.truncated = true;
          // Invariant 2: drop what the server has (its lastSeq), keep the rest for the next frame.
          let n = 0;
          while (n < this.buffer.length && this.buffer[n]!.seq <= r.lastSeq) n++;
          this.buffer.splice(0, n);
          this.acknowledged += n;
        } catch (e) {
          if (e instanceof GafferRequestError && STOP_CODES.has(e.code)) {
            this.stop(`${e.code}: ${e.message}`);
            break;
          }
          if (e instanceof GafferRequestError && e.code === 'bad_request') {
            // Resending would be refused the same way: drop this frame's lines and go on.
            this.warn('log frame refused; its lines are dropped', { lines: lines.length, error: e.message });
            this.buffer.splice(0, lines.length);
            this.settle();
            continue;
          }
          // Connection lost, timed out, refused for a moment (rate_limited, unavailable): the
          // same lines go again; the server's seq check makes that harmless (invariant 1).
          failures++;
          this.warn('log frame not acknowledged; resending', { error: e instanceof Error ? e.message : String(e), failures });
          await wait(Math.min(2000, 50 * 2 ** Math.min(failures, 6)));
        }
        this.settle();
      }
    } finally {
      this.sending = false;
      this.settle();
    }
  }
}
