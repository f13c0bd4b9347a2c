/**
 * The log pane of a task or run: attempts as tabs, a live tail with follow mode, stdout / stderr
 * / agent lines told apart, terminal colours, search within the attempt, download, the cap.
 *
 * Rows have one fixed height and only the rows on screen exist in the DOM; the lines themselves
 * come page by page (lib/log-window), so a million-line attempt scrolls like a short one. A
 * browser caps an element's height, so past MAX_SCROLL_PX the scrollbar is scaled.
 */
import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState, type KeyboardEvent } from 'react';
import type { LogAttemptsResult, LogAttemptView } from '../../../src-main/common/console-api';
import type { LogLine, LogPage, LogStream } from '../../../src-main/common/logs';
import { formatCount } from '../../lib/format';
import { LogWindow } from '../../lib/log-window';
import { AnsiText } from './AnsiText';
import { formatUsage } from './usage-words';

export interface LogPaneProps {
  subject: string;
  /** How far the log goes, from live events (undefined until something new arrives). */
  tail: { attempt: number; lastSeq: number } | undefined;
  loadAttempts(): Promise<LogAttemptsResult>;
  loadPage(args: { attempt: number; after: number; limit: number; stream?: LogStream; contains?: string }): Promise<LogPage>;
  loadText(attempt: number): Promise<{ filename: string; text: string; complete: boolean }>;
  /** Saves a downloaded attempt as a file. */
  save(filename: string, text: string): void;
  /** Starts following the subject's live tail; returns stop. */
  follow(): () => void;
  /** Height of the line area in px (default 320). */
  height?: number;
}

export const LOG_ROW_PX = 18;
const MAX_SCROLL_PX = 8_000_000;
const OVERSCAN = 20;
const STREAM_TAG: Record<LogStream, string> = { stdout: 'out', stderr: 'err', agent: 'agt' };
const STREAM_WORDS: Record<LogStream, string> = { stdout: 'standard output', stderr: 'standard error', agent: 'agent' };

type Filter = 'all' | LogStream;

/** "1 line", "6 lines": the count follows the live tail, not the figure loaded when the pane opened. */
export const lineCount = (n: number): string => `${formatCount(n)} line${n === 1 ? '' : 's'}`;

/** Rows for a stream filter: loaded in order as the operator scrolls (seqs are not dense there). */
class FilteredRows {
  lines: LogLine[] = [];
  next: number | null = 0;
  private busy = false;
  constructor(
    private readonly load: (after: number) => Promise<LogPage>,
    private readonly onChange: () => void,
    private readonly onError: (e: unknown) => void,
  ) {}
  more(): void {
    if (this.busy || this.next === null) return;
    this.busy = true;
    void this.load(this.next)
      .then(
        (p) => {
          this.lines.push(...p.items);
          this.next = p.next;
          this.onChange();
        },
        (e: unknown) => this.onError(e),
      )
      .finally(() => (this.busy = false));
  }
}

export function LogPane(p: LogPaneProps) {
  const height = p.height ?? 320;
  const [attempts, setAttempts] = useState<LogAttemptsResult | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [selected, setSelected] = useState<number | null>(null);
  const [filter, setFilter] = useState<Filter>('all');
  const [following, setFollowing] = useState(true);
  const [scrollTop, setScrollTop] = useState(0);
  const [, setVersion] = useState(0);
  const [query, setQuery] = useState('');
  const [matches, setMatches] = useState<{ q: string; seqs: number[]; at: number; more: boolean } | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const scroller = useRef<HTMLDivElement | null>(null);
  const bump = useCallback(() => setVersion((v) => v + 1), []);
  const win = useMemo(() => new LogWindow({ onChange: bump, onError: (e) => setError(String((e as Error).message ?? e)) }), [bump]);
  const { loadAttempts, follow, subject } = p;

  // Attempts: on open, and when the live tail shows an attempt (or lines) we do not know yet.
  const refreshAttempts = useCallback(() => {
    loadAttempts().then(
      (a) => {
        setAttempts(a);
        setError(null);
      },
      (e: unknown) => setError(e instanceof Error ? e.message : String(e)),
    );
  }, [loadAttempts]);
  useEffect(() => {
    setAttempts(null);
    setSelected(null);
    refreshAttempts();
    return follow();
  }, [subject, refreshAttempts, follow]);
  const list = attempts?.attempts ?? [];
  const latest = list[list.length - 1];
  const current: LogAttemptView | undefined = list.find((a) => a.attempt === selected) ?? latest;
  useEffect(() => {
    if (p.tail && (!latest || p.tail.attempt > latest.attempt)) refreshAttempts();
  }, [p.tail, latest, refreshAttempts]);

  // The number of rows of the shown attempt: its stored lines, or further when the tail moved on.
  const liveCount = current ? (p.tail && p.tail.attempt === current.attempt ? Math.max(current.lastSeq, p.tail.lastSeq) : current.lastSeq) - current.firstSeq + 1 : 0;

  const { loadPage } = p;
  const attemptNo = current?.attempt;
  const firstSeq = current?.firstSeq;
  useEffect(() => {
    if (attemptNo === undefined || firstSeq === undefined) return;
    win.reset(firstSeq, 0, (after, limit) => loadPage({ attempt: attemptNo, after, limit }).then((pg) => pg.items));
    setMatches(null);
    bump();
  }, [win, attemptNo, firstSeq, loadPage, bump]);
  // After the reset above (effects run in order): also when another attempt has the same count.
  useEffect(() => {
    win.setCount(liveCount);
    bump();
  }, [win, liveCount, attemptNo, firstSeq, bump]);

  const filtered = useMemo(() => {
    if (filter === 'all' || attemptNo === undefined) return null;
    const rows = new FilteredRows((after) => loadPage({ attempt: attemptNo, after, limit: 1000, stream: filter }), bump, (e) => setError(e instanceof Error ? e.message : String(e)));
    rows.more();
    return rows;
  }, [filter, attemptNo, loadPage, bump]);
  // A live attempt under a filter: fetch what arrived after the last loaded line.
  useEffect(() => {
    if (filtered && filtered.next === null && liveCount > 0) {
      const last = filtered.lines[filtered.lines.length - 1];
      filtered.next = last ? last.seq : (firstSeq ?? 1) - 1;
      filtered.more();
    }
  }, [filtered, liveCount, firstSeq]);

  const count = filtered ? filtered.lines.length : win.count;
  const rowAt = (i: number): LogLine | undefined => (filtered ? filtered.lines[i] : win.row(i));

  // Scroll geometry (scaled past MAX_SCROLL_PX).
  const fullPx = count * LOG_ROW_PX;
  const spacerPx = Math.min(fullPx, MAX_SCROLL_PX);
  const scale = spacerPx > height ? (fullPx - height) / (spacerPx - height) : 1;
  const virtualTop = scrollTop * scale;
  const first = Math.max(0, Math.floor(virtualTop / LOG_ROW_PX) - OVERSCAN);
  const last = Math.min(count - 1, Math.ceil((virtualTop + height) / LOG_ROW_PX) + OVERSCAN);
  useEffect(() => {
    if (!filtered) win.ensure(first, last);
    else if (last >= filtered.lines.length - OVERSCAN) filtered.more();
  }, [win, filtered, first, last, count]);

  const scrollToRow = useCallback(
    (row: number, align: 'top' | 'center' | 'end') => {
      const el = scroller.current;
      if (!el) return;
      const full = count * LOG_ROW_PX;
      const spacer = Math.min(full, MAX_SCROLL_PX);
      const s = spacer > height ? (full - height) / (spacer - height) : 1;
      const targetVirtual = row * LOG_ROW_PX - (align === 'center' ? height / 2 : align === 'end' ? height - LOG_ROW_PX : 0);
      el.scrollTop = Math.max(0, targetVirtual / s);
      setScrollTop(el.scrollTop);
    },
    [count, height],
  );

  // Follow mode: stay at the end while it grows.
  useLayoutEffect(() => {
    if (following && count > 0) scrollToRow(count - 1, 'end');
  }, [following, count, scrollToRow]);

  const onScroll = () => {
    const el = scroller.current;
    if (!el) return;
    setScrollTop(el.scrollTop);
    const atEnd = el.scrollTop + el.clientHeight >= el.scrollHeight - LOG_ROW_PX;
    if (!atEnd && following) setFollowing(false);
  };

  const runSearch = async (direction: 1 | -1) => {
    const q = query.trim();
    if (!q || attemptNo === undefined) return;
    if (matches && matches.q === q && matches.seqs.length > 0) {
      const at = (matches.at + direction + matches.seqs.length) % matches.seqs.length;
      setMatches({ ...matches, at });
      setFollowing(false);
      scrollToRow(win.rowOfSeq(matches.seqs[at]!), 'center');
      return;
    }
    setBusy('Searching…');
    try {
      const page = await loadPage({ attempt: attemptNo, after: 0, limit: 500, contains: q });
      const seqs = page.items.map((l) => l.seq);
      setMatches({ q, seqs, at: 0, more: page.next !== null });
      if (seqs.length > 0 && filter === 'all') {
        setFollowing(false);
        scrollToRow(win.rowOfSeq(seqs[0]!), 'center');
      }
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    } finally {
      setBusy(null);
    }
  };

  const download = async () => {
    if (attemptNo === undefined) return;
    setBusy('Preparing the download…');
    try {
      const t = await p.loadText(attemptNo);
      p.save(t.filename, t.text);
      if (!t.complete) setError('The download stopped at 64 MiB; the HTTP API’s download has the whole attempt.');
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    } finally {
      setBusy(null);
    }
  };

  const onSearchKey = (e: KeyboardEvent<HTMLInputElement>) => {
    if (e.key === 'Enter') {
      e.preventDefault();
      void runSearch(e.shiftKey ? -1 : 1);
    } else if (e.key === 'Escape') {
      setQuery('');
      setMatches(null);
    }
  };
  const onListKey = (e: KeyboardEvent<HTMLDivElement>) => {
    if (e.key === 'End') setFollowing(true);
    if (e.key === 'Home') {
      setFollowing(false);
      scrollToRow(0, 'top');
    }
  };

  const currentMatch = matches && matches.seqs.length ? matches.seqs[matches.at] : undefined;
  const rows = [];
  // Keys recycle by position in the window: a scroll updates the rows' text in place instead of
  // replacing every DOM node (the difference between a smooth and a janky fling).
  const pool = last - first + 1;
  for (let i = first; i <= last && i < count; i++) {
    const l = rowAt(i);
    const top = scrollTop + (i * LOG_ROW_PX - virtualTop);
    rows.push(
      <div
        key={i % pool}
        className={`log-row ${l ? `log-${l.stream} log-level-${l.level}` : 'log-pending'}${l?.marker ? ' log-marker' : ''}${l && l.seq === currentMatch ? ' log-match' : ''}`}
        style={{ top, height: LOG_ROW_PX }}
        data-seq={l?.seq}
      >
        <span className="log-seq">{l ? l.seq : ''}</span>
        <span className="log-tag" title={l ? STREAM_WORDS[l.stream] : undefined}>
          {l ? STREAM_TAG[l.stream] : ''}
        </span>
        <span className="log-text">
          {l ? <AnsiText text={l.text} /> : '…'}
          {l?.cutFrom !== undefined ? <span className="log-cut"> [cut: {formatCount(l.cutFrom)} bytes in all]</span> : null}
        </span>
      </div>,
    );
  }

  return (
    <section className="log-pane" aria-label="Log" data-testid="log-pane">
      <div className="log-head">
        <div role="tablist" aria-label="Attempts" className="log-tabs">
          {list.map((a) => (
            <button
              key={a.attempt}
              role="tab"
              type="button"
              aria-selected={a.attempt === current?.attempt}
              className={`log-tab${a.attempt === current?.attempt ? ' on' : ''}`}
              onClick={() => {
                setSelected(a.attempt);
                setFollowing(a.attempt === latest?.attempt);
              }}
              title={`${formatCount(a.lines)} lines · ${formatUsage(a.usage)}`}
            >
              Attempt {a.attempt}
              {a.truncated ? <span className="log-tab-flag"> · cut</span> : null}
            </button>
          ))}
        </div>
        <div className="log-tools">
          <label className="log-filter">
            <span className="small muted">Show</span>
            <select value={filter} onChange={(e) => setFilter(e.target.value as Filter)} aria-label="Which lines">
              <option value="all">All lines</option>
              <option value="stdout">Standard output</option>
              <option value="stderr">Standard error</option>
              <option value="agent">Agent lines</option>
            </select>
          </label>
          <input
            type="search"
            placeholder="Search this attempt"
            aria-label="Search this attempt"
            value={query}
            onChange={(e) => setQuery(e.target.value)}
            onKeyDown={onSearchKey}
          />
          {matches ? (
            <span className="small muted" aria-live="polite">
              {matches.seqs.length === 0 ? 'no match' : `${matches.at + 1} of ${matches.seqs.length}${matches.more ? '+' : ''}`}
            </span>
          ) : null}
          <label className="log-follow">
            <input type="checkbox" checked={following} onChange={(e) => setFollowing(e.target.checked)} /> Follow
          </label>
          <button type="button" className="btn small" onClick={() => void download()} disabled={!current}>
            Download
          </button>
        </div>
      </div>
      {current ? (
        <div className="log-summary small muted">
          {lineCount(Math.max(current.lines, liveCount))} · {formatUsage(current.usage)}
          {list.length > 1 && attempts ? ` · all attempts: ${formatUsage(attempts.usage)}` : ''}
          {busy ? ` · ${busy}` : ''}
        </div>
      ) : null}
      {current?.truncated ? (
        <div className="log-banner" role="status">
          This attempt’s log reached its cap: {formatCount(current.dropped)} later line{current.dropped === 1 ? ' was' : 's were'} counted but not kept.
        </div>
      ) : null}
      {error ? (
        <div className="log-banner error" role="alert">
          {error}
        </div>
      ) : null}
      {attempts && list.length === 0 ? (
        <div className="log-empty muted">No log lines yet. Lines appear here as the agent sends them.</div>
      ) : (
        <div className="log-lines" ref={scroller} style={{ height }} onScroll={onScroll} tabIndex={0} onKeyDown={onListKey} role="region" aria-label={`Log lines of attempt ${current?.attempt ?? ''}`} data-testid="log-lines">
          <div style={{ height: Math.max(spacerPx, 1), position: 'relative' }}>{rows}</div>
        </div>
      )}
    </section>
  );
}
