/**
 * The child's output within a budget (lines come from common/line-splitter.ts).
 *
 * The budget counts the log lines of one attempt (both streams together). The first line over it
 * is replaced by a single "truncated" notice; everything after is dropped from the log.
 */
export { cutText, DEFAULT_MAX_LINE_CHARS, LineSplitter } from '../../common/line-splitter';

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
