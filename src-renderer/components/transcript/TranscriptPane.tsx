/**
 * An attempt read as a conversation (PROTOCOL §16), beside the raw log: the attempt's lines are
 * loaded page by page and built into items (transcript.ts); only the items on screen are in the
 * DOM (@tanstack/react-virtual, measured heights: messages wrap, tool calls open).
 *
 * Follow-live never fights the reader: new items scroll into view only while the reader is at
 * the bottom; scrolled up, a button says how many arrived and jumps to them.
 */
import { measureElement, useVirtualizer } from '@tanstack/react-virtual';
import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react';
import type { LogAttemptsResult } from '../../../src-main/common/console-api';
import type { LogPaneProps } from '../logs/LogPane';
import { warmMarkdown, warmSliceLeft, type Warming } from './markdown';
import { estimateHeight, LearnedHeights, TranscriptBuilder, type TranscriptItem } from './transcript';
import { TranscriptRow } from './TranscriptItemView';
import { useFastScroll } from './scroll-pace';

/** Lines per page, and the most one transcript loads (the raw log has the rest). */
const PAGE = 1000;
const MAX_LINES = 50_000;
/** Within this many px of the end counts as "at the bottom". */
const BOTTOM_SLACK_PX = 48;

/** The markdown text an item renders, if any. */
const markdownOf = (item: TranscriptItem | undefined): string | undefined => (item?.type === 'message' || item?.type === 'result' ? item.text : undefined);

export function TranscriptPane(p: Pick<LogPaneProps, 'subject' | 'tail' | 'loadAttempts' | 'loadPage' | 'follow' | 'height'>) {
  const height = p.height ?? 320;
  const { loadAttempts, loadPage, follow, subject, tail } = p;
  const [attempts, setAttempts] = useState<LogAttemptsResult | null>(null);
  const [selected, setSelected] = useState<number | null>(null);
  // The transcript, and how far the attempt's lines were read. The lines themselves are not kept:
  // the items hold what they show, and 22 000 log lines (their objects, `data` wrappers and short
  // texts, a few MB) were heap the collector marked again and again for nothing.
  const [items, setItems] = useState<TranscriptItem[]>([]);
  const [lastSeq, setLastSeq] = useState(0);
  const held = useRef({ seq: 0, lines: 0 });
  const builder = useRef(new TranscriptBuilder());
  const [error, setError] = useState<string | null>(null);
  const [unseen, setUnseen] = useState(0);
  const scroller = useRef<HTMLDivElement | null>(null);
  const atBottom = useRef(true);
  const loading = useRef(false);

  useEffect(() => {
    setAttempts(null);
    setSelected(null);
    loadAttempts().then(setAttempts, (e: unknown) => setError(e instanceof Error ? e.message : String(e)));
    return follow();
  }, [subject, loadAttempts, follow]);
  const list = attempts?.attempts ?? [];
  const latest = list[list.length - 1];
  const attempt = selected ?? (tail && (!latest || tail.attempt > latest.attempt) ? tail.attempt : latest?.attempt);

  // Loads the attempt's lines after the last one read, page by page; each page is read into the transcript once.
  // Asked again while a load is out (another attempt opened, the live tail moved), the load in flight
  // goes on with the newest ask when it ends: returning there left a newly opened attempt empty.
  const wanted = useRef<number | null>(null);
  const loadMore = useCallback(
    async (att: number) => {
      wanted.current = att;
      if (loading.current) return;
      loading.current = true;
      try {
        while (wanted.current !== null) {
          const current = wanted.current;
          wanted.current = null;
          const b = builder.current;
          for (;;) {
            const page = await loadPage({ attempt: current, after: held.current.seq, limit: PAGE });
            if (builder.current !== b) break; // another attempt was opened meanwhile: not its lines
            if (page.items.length) {
              held.current = { seq: page.items[page.items.length - 1]!.seq, lines: held.current.lines + page.items.length };
              setItems(builder.current.append(page.items));
              setLastSeq(held.current.seq);
            }
            if (page.next === null || held.current.lines >= MAX_LINES) break;
          }
        }
        setError(null);
      } catch (e) {
        wanted.current = null;
        setError(e instanceof Error ? e.message : String(e));
      } finally {
        loading.current = false;
      }
    },
    [loadPage],
  );
  useEffect(() => {
    builder.current = new TranscriptBuilder();
    held.current = { seq: 0, lines: 0 };
    setItems([]);
    setLastSeq(0);
    atBottom.current = true;
    setUnseen(0);
    if (attempt !== undefined) void loadMore(attempt);
  }, [attempt, loadMore]);
  // The live tail moved on: fetch what arrived.
  useEffect(() => {
    if (tail && attempt !== undefined && tail.attempt === attempt && tail.lastSeq > lastSeq) void loadMore(attempt);
  }, [tail, attempt, lastSeq, loadMore]);

  // Once per item (kept while the item is unchanged): the virtualizer asks again for every
  // unmeasured row each time a row is measured, and a live tail would re-estimate them all.
  const estimated = useRef(new WeakMap<TranscriptItem, number>());
  const estimates = useMemo(
    () =>
      items.map((i) => {
        let e = estimated.current.get(i);
        if (e === undefined) estimated.current.set(i, (e = estimateHeight(i)));
        return e;
      }),
    [items],
  );
  const learned = useRef(new LearnedHeights());
  // The list's width, read on mount and on resize only: the virtualizer estimates every row below a
  // measured one again (10 000 at the top of a long transcript), and reading clientWidth for each
  // was 31 ms of a 44 ms render in the fling's profile.
  const paneWidth = useRef(0);
  const resized = useRef<ResizeObserver | null>(null);
  const setScroller = useCallback((el: HTMLDivElement | null) => {
    scroller.current = el;
    resized.current?.disconnect();
    resized.current = null;
    if (!el) return;
    paneWidth.current = el.clientWidth;
    if (typeof ResizeObserver === 'function') {
      resized.current = new ResizeObserver(() => (paneWidth.current = el.clientWidth));
      resized.current.observe(el);
    }
  }, []);
  const width = () => paneWidth.current;
  const estimateSize = useCallback((i: number) => (items[i] ? learned.current.estimate(items[i], estimates[i]!, width()) : 56), [items, estimates]);
  // Faster than a screen per frame, rows are outlines until the list slows (scroll-pace.ts), with
  // one row of overscan instead of six: every frame brings a new screen, so rows beyond it are waste.
  const [fast, observePace] = useFastScroll();
  const virtualizer = useVirtualizer({
    count: items.length,
    getScrollElement: () => scroller.current,
    estimateSize,
    overscan: fast ? 1 : 6,
    measureElement: (el, entry, v) => {
      const size = measureElement(el, entry, v);
      const i = v.indexFromElement(el);
      // The row's first measurement (a row mounts with its tool call closed) teaches its class.
      if (items[i] && !v.itemSizeCache.has(v.options.getItemKey(i))) learned.current.learn(items[i], estimates[i]!, width(), size);
      return size;
    },
  });

  // While the page is idle, parse the markdown of the rows around the reader (nearest first), so a
  // row scrolled into view for the first time mounts without parsing (markdown.tsx).
  useEffect(() => {
    if (items.length === 0) return;
    const idle = typeof window.requestIdleCallback === 'function';
    let handle = 0;
    let timer = 0;
    let w: Warming = { from: -1, distance: 0, parsed: 0 };
    const step = (deadline?: IdleDeadline) => {
      // Not while the list scrolls: its frames are the budget being saved (a busy machine gives
      // idle slices between them); rows met then are parsed as they mount, as before.
      if (virtualizer.isScrolling) {
        timer = window.setTimeout(schedule, 200);
        return;
      }
      const at = virtualizer.range?.startIndex ?? 0;
      if (at !== w.from) w = { from: at, distance: 0, parsed: 0 };
      const start = performance.now();
      const timeLeft = () => warmSliceLeft(start, () => performance.now(), deadline);
      if (!warmMarkdown(w, items.length, (i) => markdownOf(items[i]), timeLeft)) schedule();
    };
    const schedule = () => (handle = idle ? window.requestIdleCallback(step) : (timer = window.setTimeout(step, 50)));
    schedule();
    return () => {
      if (idle) window.cancelIdleCallback(handle);
      window.clearTimeout(timer);
    };
  }, [items, virtualizer]);

  // Follow-live: to the end only while the reader is there; else count what arrived.
  const shown = useRef(0);
  useLayoutEffect(() => {
    const grown = items.length - shown.current;
    shown.current = items.length;
    if (grown <= 0 || items.length === 0) return;
    if (atBottom.current) virtualizer.scrollToIndex(items.length - 1, { align: 'end' });
    else setUnseen((n) => n + grown);
  }, [items.length, virtualizer]);
  const onScroll = () => {
    const el = scroller.current;
    if (!el) return;
    observePace(el);
    atBottom.current = el.scrollTop + el.clientHeight >= el.scrollHeight - BOTTOM_SLACK_PX;
    if (atBottom.current) setUnseen(0);
  };
  const jumpToEnd = () => {
    atBottom.current = true;
    setUnseen(0);
    virtualizer.scrollToIndex(items.length - 1, { align: 'end' });
  };

  return (
    <section className="transcript-pane" aria-label="Transcript" data-testid="transcript-pane">
      {list.length > 1 ? (
        <div role="tablist" aria-label="Attempts" className="log-tabs">
          {list.map((a) => (
            <button key={a.attempt} role="tab" type="button" aria-selected={a.attempt === attempt} className={`log-tab${a.attempt === attempt ? ' on' : ''}`} onClick={() => setSelected(a.attempt)}>
              Attempt {a.attempt}
            </button>
          ))}
        </div>
      ) : null}
      {error ? (
        <div className="log-banner error" role="alert">
          {error}
        </div>
      ) : null}
      {attempts && list.length === 0 && items.length === 0 ? (
        <div className="log-empty muted">Nothing to read yet. The conversation appears here as the agent works.</div>
      ) : (
        <div className="transcript-scroll" ref={setScroller} style={{ height }} onScroll={onScroll} tabIndex={0} role="region" aria-label={`Transcript of attempt ${attempt ?? ''}`} data-testid="transcript-scroll">
          <div style={{ height: virtualizer.getTotalSize(), position: 'relative' }}>
            {virtualizer.getVirtualItems().map((v) => (
              // An outline is not measured: it keeps the height the row is known (or estimated) to have.
              <TranscriptRow key={v.key} item={items[v.index]!} index={v.index} start={v.start} outline={fast} size={fast ? v.size : undefined} measure={virtualizer.measureElement} />
            ))}
          </div>
        </div>
      )}
      {unseen > 0 ? (
        <button type="button" className="btn small transcript-new" onClick={jumpToEnd}>
          {unseen} new — jump to the latest
        </button>
      ) : null}
    </section>
  );
}
