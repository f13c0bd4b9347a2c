/**
 * A transcript's markdown, made cheap to mount (issue 31: 10 000 events scroll without dropped
 * frames). A virtualised list mounts a row each time it scrolls into view, and parsing markdown
 * (react-markdown: micromark, mdast, hast) was the largest script cost of mounting one. So:
 *
 * 1. Text with no markdown syntax (most short messages: "All green. Next file.") is not parsed:
 *    its paragraphs are rendered as react-markdown would render them (`plainMarkdown`; the test
 *    compares the two on the same texts). The check is conservative: any character or line start
 *    markdown could read as syntax sends the text to the parser.
 * 2. A parsed text's rendered tree is kept (the most recent MARKDOWN_CACHE texts), so a text is
 *    parsed once however often its row is mounted. `Markdown` (the synchronous one) is a pure
 *    function of its text, without hooks: its result can be reused.
 * 3. `warmMarkdown` parses texts ahead of the reader while the page is idle, so rows met for the
 *    first time during a fling find their markdown ready.
 */
import { Fragment, type ReactElement } from 'react';
import Markdown from 'react-markdown';

/**
 * Rendered trees of parsed texts, the most recently used last; the least recently used goes when
 * `capacity` texts are held.
 */
export class MarkdownCache {
  private readonly rendered = new Map<string, ReactElement>();
  constructor(readonly capacity: number) {}
  has(text: string): boolean {
    return this.rendered.has(text);
  }
  get size(): number {
    return this.rendered.size;
  }
  /** The rendered tree of `text`, parsed now only if it is not held. */
  get(text: string): ReactElement {
    let el = this.rendered.get(text);
    if (el) {
      this.rendered.delete(text);
    } else {
      el = Markdown({ children: text }) as ReactElement;
      if (this.rendered.size >= this.capacity) this.rendered.delete(this.rendered.keys().next().value!);
    }
    this.rendered.set(text, el);
    return el;
  }
}

/** Enough for every distinct text of a 50 000-line transcript; a few MB of React elements. */
export const MARKDOWN_CACHE = 5000;
const cache = new MarkdownCache(MARKDOWN_CACHE);

/**
 * Characters that may start markdown syntax anywhere in a line (escapes, code, emphasis, links,
 * images, HTML, entities, headings, tables, strikethrough).
 */
const INLINE_SYNTAX = /[\\`*_[\]<>&#~|]/;

/** A control character other than a newline (tabs and carriage returns included): markdown replaces NUL and counts form feeds as whitespace, so the parser decides. */
function hasControl(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 && c !== 0x0a) return true;
  }
  return false;
}

/** Line starts that open a block (lists, quotes, setext underlines, ordered lists), and any leading or trailing whitespace (indented code, hard breaks, trimming). */
const BLOCK_SYNTAX = /^(?:[^\S\n]|[-+=>]|\d+[.)])|[^\S\n]$/m;

/** The text's paragraphs when it has no markdown syntax at all, else null. */
export function plainParagraphs(text: string): string[] | null {
  if (text === '' || INLINE_SYNTAX.test(text) || hasControl(text) || BLOCK_SYNTAX.test(text)) return null;
  // Paragraphs apart by exactly one empty line; more (or text that starts or ends with one) is left to the parser.
  if (text.startsWith('\n') || text.endsWith('\n') || text.includes('\n\n\n')) return null;
  return text.split('\n\n');
}

/** What react-markdown renders for plain paragraphs: `<p>`s separated by a line break. */
function plainMarkdown(paragraphs: string[]): ReactElement {
  return (
    <>
      {paragraphs.map((p, i) => (
        <Fragment key={i}>
          {i > 0 ? '\n' : null}
          <p>{p}</p>
        </Fragment>
      ))}
    </>
  );
}

/** The rendered markdown of `text`: plain paragraphs without parsing, else parsed once and kept. */
export function markdown(text: string): ReactElement {
  const plain = plainParagraphs(text);
  return plain ? plainMarkdown(plain) : cache.get(text);
}

/** Whether `text` would be parsed now (it has syntax and is not cached). */
export function needsParse(text: string): boolean {
  return !cache.has(text) && plainParagraphs(text) === null;
}

/** Where a warming pass is: its centre, the distance reached from it, the texts it parsed. */
export interface Warming {
  from: number;
  distance: number;
  parsed: number;
}

/** Longest a warming slice runs (ms), whatever idle time the browser offers. */
export const WARM_SLICE_MS = 4;

/**
 * Whether a warming slice that started at `start` may parse one more text: while the browser's idle
 * deadline leaves more than a millisecond, and never past WARM_SLICE_MS. An idle browser grants up to
 * 50 ms; a scroll that starts inside such a slice would wait for it, so a slice stays short.
 */
export function warmSliceLeft(start: number, now: () => number, deadline?: { timeRemaining(): number }): boolean {
  if (deadline && deadline.timeRemaining() <= 1) return false;
  return now() - start < WARM_SLICE_MS;
}

/**
 * Parses into the cache the texts `textAt(i)` nearest `w.from` first (outwards, both ways, going
 * on from `w.distance`) while `timeLeft()` says there is time, and at most MARKDOWN_CACHE / 2 texts
 * per pass, so warming never evicts what the reader is looking at. Returns true when the pass is
 * over (every text ready, or its share of the cache used); `w` says where to go on from.
 */
export function warmMarkdown(w: Warming, count: number, textAt: (i: number) => string | undefined, timeLeft: () => boolean): boolean {
  for (; w.distance <= Math.max(w.from, count - w.from); w.distance++) {
    const d = w.distance;
    for (const i of d === 0 ? [w.from] : [w.from + d, w.from - d]) {
      if (i < 0 || i >= count) continue;
      const text = textAt(i);
      if (text === undefined || !needsParse(text)) continue;
      if (w.parsed >= MARKDOWN_CACHE / 2 || !timeLeft()) return w.parsed >= MARKDOWN_CACHE / 2;
      cache.get(text);
      w.parsed++;
    }
  }
  return true;
}
