/**
 * The child's output as lines, within a budget.
 *
 * 1. Bytes are decoded as UTF-8 across chunk boundaries (a character split between two reads is
 *    not mangled); `\n` and `\r\n` end a line; what is left at the end of the stream is a line too.
 * 2. A line longer than `maxLineChars` is cut there, marked, and the rest of it up to the next
 *    newline is dropped, so one endless line cannot grow memory.
 * 3. The budget counts the log lines of one attempt (both streams together). The first line over
 *    it is replaced by a single "truncated" notice; everything after is dropped from the log.
 */
import { StringDecoder } from 'node:string_decoder';

export const DEFAULT_MAX_LINE_CHARS = 16 * 1024;

export class LineSplitter {
  private readonly decoder = new StringDecoder('utf8');
  private buf = '';
  private skipping = false;

  constructor(
    private readonly onLine: (line: string) => void,
    private readonly maxLineChars = DEFAULT_MAX_LINE_CHARS,
  ) {}

  push(chunk: Buffer | string): void {
    this.feed(typeof chunk === 'string' ? chunk : this.decoder.write(chunk));
  }

  end(): void {
    this.feed(this.decoder.end());
    if (this.buf.length > 0 && !this.skipping) this.onLine(this.buf);
    this.buf = '';
    this.skipping = false;
  }

  private feed(text: string): void {
    let start = 0;
    for (;;) {
      const nl = text.indexOf('\n', start);
      if (nl < 0) break;
      const piece = text.slice(start, nl);
      start = nl + 1;
      if (this.skipping) {
        this.skipping = false;
        this.buf = '';
        continue;
      }
      const line = this.buf + piece;
      this.buf = '';
      this.onLine(line.endsWith('\r') ? line.slice(0, -1) : line);
    }
    if (this.skipping) return;
    this.buf += text.slice(start);
    if (this.buf.length > this.maxLineChars) {
      this.onLine(`${this.buf.slice(0, this.maxLineChars)} … [line cut at ${this.maxLineChars} characters]`);
      this.buf = '';
      this.skipping = true;
    }
  }
}

export interface OutputLimits {
  maxLines: number;
  maxBytes: number;
}

export const DEFAULT_OUTPUT_LIMITS: OutputLimits = { maxLines: 10_000, maxBytes: 1024 * 1024 };

/** Counts an attempt's log lines against its limits (invariant 3). */
export class OutputBudget {
  private lines = 0;
  private bytes = 0;
  private over = false;
  dropped = 0;

  constructor(private readonly limits: OutputLimits) {}

  /**
   * `keep`: log it; `notice`: log the returned text instead (once, at the first line over the
   * budget); `drop`: leave it out.
   */
  admit(text: string): { verdict: 'keep' } | { verdict: 'notice'; text: string } | { verdict: 'drop' } {
    if (this.over) {
      this.dropped++;
      return { verdict: 'drop' };
    }
    const size = Buffer.byteLength(text) + 1;
    if (this.lines + 1 > this.limits.maxLines || this.bytes + size > this.limits.maxBytes) {
      this.over = true;
      this.dropped++;
      return {
        verdict: 'notice',
        text: `output truncated: this attempt passed its limit of ${this.limits.maxLines} lines or ${this.limits.maxBytes} bytes; further output is not logged`,
      };
    }
    this.lines++;
    this.bytes += size;
    return { verdict: 'keep' };
  }

  get truncated(): boolean {
    return this.over;
  }
}
