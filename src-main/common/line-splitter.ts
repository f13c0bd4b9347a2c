/**
 * Bytes of a stream as lines (a child's output, a managed process's output).
 *
 * 1. Bytes are decoded as UTF-8 across chunk boundaries (a character split between two reads is
 *    not mangled); `\n` and `\r\n` end a line; what is left at the end of the stream is a line too.
 * 2. A line longer than `maxLineChars` is cut there, marked, and the rest of it up to the next
 *    newline is dropped, so one endless line cannot grow memory.
 */

export const DEFAULT_MAX_LINE_CHARS = 16 * 1024;

/**
 * `s` cut to at most `max` UTF-16 units without splitting a surrogate pair (half an emoji is text
 * Gaffer refuses to store), with `mark` appended when something was cut.
 */
export function cutText(s: string, max: number, mark = ''): string {
  if (s.length <= max) return s;
  let end = Math.max(0, max - mark.length);
  const c = s.charCodeAt(end - 1);
  if (c >= 0xd800 && c <= 0xdbff) end--; // a high surrogate whose pair would be cut off
  return s.slice(0, end) + mark;
}

export class LineSplitter {
  private readonly decoder = new TextDecoder('utf-8');
  private buf = '';
  private skipping = false;

  constructor(
    private readonly onLine: (line: string) => void,
    private readonly maxLineChars = DEFAULT_MAX_LINE_CHARS,
  ) {}

  push(chunk: Uint8Array | string): void {
    this.feed(typeof chunk === 'string' ? chunk : this.decoder.decode(chunk, { stream: true }));
  }

  end(): void {
    this.feed(this.decoder.decode());
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
      this.onLine(`${cutText(this.buf, this.maxLineChars)} … [line cut at ${this.maxLineChars} characters]`);
      this.buf = '';
      this.skipping = true;
    }
  }
}
