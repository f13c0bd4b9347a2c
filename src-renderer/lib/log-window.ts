/**
 * The lines a log pane can show without holding them all: an attempt's lines are rows
 * `0 … count-1` (row i is seq `firstSeq + i`: an attempt's seqs are dense), fetched in pages
 * around what is on screen and forgotten when far away. A million-line log costs the pages in
 * view, not a million objects.
 *
 * Invariants:
 * 1. At most one request per page is in flight; a page answered for a superseded window
 *    (another attempt, after `reset`) is dropped by generation.
 * 2. At most `maxPages` pages are kept; the ones used longest ago go first.
 * 3. The last page may be partial while the attempt is live: it is fetched again once `count`
 *    says more lines exist.
 */
import type { LogLine } from '../../src-main/common/logs';

export type PageLoader = (after: number, limit: number) => Promise<LogLine[]>;

export interface LogWindowOptions {
  pageSize?: number;
  maxPages?: number;
  /** Called when rows arrived (re-render). */
  onChange: () => void;
  onError?: (e: unknown) => void;
}

interface Page {
  lines: LogLine[];
  used: number;
}

export class LogWindow {
  private pages = new Map<number, Page>();
  private loading = new Set<number>();
  private generation = 0;
  private tick = 0;
  private firstSeq = 1;
  private total = 0;
  private load: PageLoader = async () => [];
  readonly pageSize: number;
  private readonly maxPages: number;

  constructor(private readonly opts: LogWindowOptions) {
    this.pageSize = opts.pageSize ?? 500;
    this.maxPages = opts.maxPages ?? 240;
  }

  /** Shows another attempt (or the same one from scratch). */
  reset(firstSeq: number, count: number, load: PageLoader): void {
    this.generation++;
    this.pages.clear();
    this.loading.clear();
    this.firstSeq = firstSeq;
    this.total = count;
    this.load = load;
  }

  get count(): number {
    return this.total;
  }

  /** The attempt grew (live tail). */
  setCount(count: number): void {
    if (count <= this.total) return;
    const lastPage = Math.floor((this.total - 1) / this.pageSize);
    this.total = count;
    // Invariant 3: a partial last page is fetched again.
    const p = this.pages.get(lastPage);
    if (p && p.lines.length < this.pageSize) this.pages.delete(lastPage);
  }

  rowOfSeq(seq: number): number {
    return seq - this.firstSeq;
  }

  /** Row `i`, or undefined while its page loads. */
  row(i: number): LogLine | undefined {
    const p = this.pages.get(Math.floor(i / this.pageSize));
    if (!p) return undefined;
    p.used = ++this.tick;
    return p.lines[i % this.pageSize];
  }

  /** Makes sure the rows `from … to` are loaded or loading. */
  ensure(from: number, to: number): void {
    if (this.total === 0) return;
    const a = Math.max(0, Math.floor(from / this.pageSize));
    const b = Math.min(Math.floor((this.total - 1) / this.pageSize), Math.floor(Math.max(from, to) / this.pageSize));
    for (let p = a; p <= b; p++) {
      const have = this.pages.get(p);
      const expected = Math.min(this.pageSize, this.total - p * this.pageSize);
      if (have && have.lines.length >= expected) {
        have.used = ++this.tick;
        continue;
      }
      if (!this.loading.has(p)) void this.fetch(p);
    }
  }

  private async fetch(p: number): Promise<void> {
    const gen = this.generation;
    this.loading.add(p);
    try {
      const lines = await this.load(this.firstSeq - 1 + p * this.pageSize, this.pageSize);
      if (gen !== this.generation) return; // invariant 1
      this.pages.set(p, { lines, used: ++this.tick });
      this.evict();
      this.opts.onChange();
    } catch (e) {
      if (gen === this.generation) this.opts.onError?.(e);
    } finally {
      if (gen === this.generation) this.loading.delete(p);
    }
  }

  private evict(): void {
    if (this.pages.size <= this.maxPages) return;
    const byAge = [...this.pages].sort((x, y) => x[1].used - y[1].used);
    for (const [k] of byAge.slice(0, this.pages.size - this.maxPages)) this.pages.delete(k);
  }

  /** Pages held (tests, and to check memory stays bounded). */
  get held(): number {
    return this.pages.size;
  }
}
