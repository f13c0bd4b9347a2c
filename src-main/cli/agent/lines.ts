/**
 * The child's output as lines (common/line-splitter.ts), and the agent's own optional budget.
 *
 * Gaffer caps every attempt's log itself (Settings: lines and bytes per attempt, one "truncated"
 * marker, a line cut at its line limit); the agent sends everything up to that. `--max-log-lines` /
 * `--max-log-bytes` set a lower budget of the agent's own: it counts the log lines of one attempt
 * (both streams together), the first line over it is replaced by a single "truncated" notice, and
 * everything after is not sent.
 */
export { cutText, LineSplitter } from '../../common/line-splitter';

export interface OutputLimits {
  maxLines: number;
  maxBytes: number;
}

/**
 * The longest line the agent reads whole: the SDK's own line limit (64 Ki characters; one line
 * must fit a 256 KiB frame), less room for the cut marker, so a long line is cut (and marked) once,
 * here. Gaffer then keeps up to its own line limit of it (Settings, default 16 KiB) and records the
 * size it was sent with.
 */
export const MAX_LINE_CHARS = 64 * 1024 - 64;

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
        text: `output truncated: this attempt passed the agent's limit of ${this.limits.maxLines} lines or ${this.limits.maxBytes} bytes (--max-log-lines, --max-log-bytes); further output is not sent`,
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
