// @vitest-environment happy-dom
/** The transcript built from log lines (PROTOCOL §16) and one item rendered: safe markdown, errors marked. */
import { cleanup, fireEvent, render, waitFor } from '@testing-library/react';
import { memo, type ComponentProps, type ReactElement } from 'react';
import Markdown from 'react-markdown';
import { afterEach, describe, expect, it, vi, type MockInstance } from 'vitest';
import type { LogLine } from '../../../src-main/common/logs';
import { buildTranscript, estimateHeight, LearnedHeights, TranscriptBuilder, type TranscriptItem } from './transcript';
import { markdown, MARKDOWN_CACHE, MarkdownCache, needsParse, plainParagraphs, WARM_SLICE_MS, warmMarkdown, warmSliceLeft, type Warming } from './markdown';
import { TranscriptItemView } from './TranscriptItemView';
import { TranscriptPane } from './TranscriptPane';
import { ScrollPace, SETTLE_MS } from './scroll-pace';

afterEach(cleanup);

// Rows rendered, counted: the real row, memoised as the module memoises it, with a counter in front.
const rowRenders = vi.hoisted(() => ({ n: 0 }));
vi.mock('./TranscriptItemView', async (importOriginal) => {
  const real = await importOriginal<typeof import('./TranscriptItemView')>();
  const inner = (real.TranscriptRow as unknown as { type: (p: ComponentProps<typeof real.TranscriptRow>) => ReactElement }).type;
  const counted = (p: ComponentProps<typeof real.TranscriptRow>) => {
    rowRenders.n++;
    return inner(p);
  };
  return { ...real, TranscriptRow: memo(counted) };
});

let seq = 0;
const line = (text: string, extra: Partial<LogLine> = {}): LogLine => ({ seq: ++seq, at: '2026-12-01T10:00:00.000Z', attempt: 1, stream: 'stdout', level: 'info', text, ...extra });

describe('buildTranscript', () => {
  it('joins split messages, attaches results to their calls (by id, else by name), keeps plain output and every line', () => {
    const items = buildTranscript([
      line('claude session s1 started', { kind: 'system', data: { cli: 'claude', sessionId: 's1' } }),
      line("I'll run the tests.", { kind: 'assistant', data: { model: 'm', usage: { inputTokens: 12, outputTokens: 40 } } }),
      line('Then fix them.', { kind: 'assistant' }),
      line('tool Bash: npm test', { kind: 'tool_call', data: { id: 't1', name: 'Bash', input: { command: 'npm test' } } }),
      line('tool failed: 1 failing', { kind: 'tool_result', level: 'warn', data: { id: 't1', name: 'Bash', output: '1 failing', isError: true } }),
      line('$ ls', { kind: 'tool_call', data: { name: 'shell', input: { command: 'ls' } } }),
      line('$ ls → exit 0', { kind: 'tool_result', data: { name: 'shell', output: 'a\nb', exitCode: 0, isError: false } }),
      line('files changed: a.ts', { kind: 'tool_result', data: { name: 'file_change', input: { changes: [] }, isError: false } }),
      line('not json', {}),
      line('still not json', {}),
      line('oops', { stream: 'stderr', level: 'warn' }),
      line('claude finished', { kind: 'result', data: { isError: false, costUsd: 0.04, numTurns: 3, result: 'Fixed **it**.' } }),
    ]);
    expect(items.map((i) => i.type)).toEqual(['system', 'message', 'tool', 'tool', 'tool', 'output', 'output', 'result']);
    expect(items[1]).toMatchObject({ text: "I'll run the tests.\nThen fix them.", model: 'm', usage: { inputTokens: 12, outputTokens: 40 } });
    expect(items[2]).toMatchObject({ name: 'Bash', input: { command: 'npm test' }, output: '1 failing', isError: true, done: true });
    expect(items[3]).toMatchObject({ name: 'shell', output: 'a\nb', exitCode: 0, isError: false, done: true });
    expect(items[4]).toMatchObject({ name: 'file_change', done: true });
    expect(items[5]).toMatchObject({ stream: 'stdout', lines: ['not json', 'still not json'] });
    expect(items[6]).toMatchObject({ stream: 'stderr', lines: ['oops'], warn: true });
    expect(items[7]).toMatchObject({ text: 'Fixed **it**.', costUsd: 0.04, numTurns: 3, isError: false });
  });

  it('followed live, lines read once: the same transcript at every step, items returned before never change, unchanged ones keep their identity', () => {
    const all = [
      line('Reading.', { kind: 'assistant', data: { model: 'm' } }),
      line('More of it.', { kind: 'assistant' }), // continues the message (rule 1)
      line('tool Read', { kind: 'tool_call', data: { id: 'r1', name: 'Read', input: { path: 'a' } } }),
      line('out 1', {}),
      line('out 2', {}), // joins the output block
      line('read it', { kind: 'tool_result', data: { id: 'r1', output: 'text' } }), // closes the call
      line('$ ls', { kind: 'tool_call', data: { name: 'shell', input: { command: 'ls' } } }),
      line('$ ls → exit 0', { kind: 'tool_result', data: { name: 'shell', output: 'a', exitCode: 0 } }),
      line('Done.', { kind: 'result', data: { result: 'Done.' } }),
    ];
    for (let split = 1; split < all.length; split++) {
      const b = new TranscriptBuilder();
      let lines = all.slice(0, split);
      const before = b.build(lines);
      const frozen = JSON.stringify(before);
      lines = lines.concat(all.slice(split)); // as the pane appends a fetched page
      const after = b.build(lines);
      expect(after).toEqual(buildTranscript(all));
      expect(JSON.stringify(before)).toBe(frozen); // nothing handed out earlier was mutated
      for (let i = 0; i < before.length; i++) {
        if (JSON.stringify(before[i]) === JSON.stringify(after[i])) expect(after[i]).toBe(before[i]);
        else expect(after[i]).not.toBe(before[i]);
      }
    }
    // A list that does not extend the last one (another attempt, a list reloaded) is read from the start.
    const b = new TranscriptBuilder();
    b.build(all);
    const shorter = [line('Another attempt.', { kind: 'assistant' })];
    expect(b.build(shorter)).toEqual(buildTranscript(shorter));
    b.build(all);
    const sameTail = [line('Reloaded.', { kind: 'assistant' }), ...all.slice(1)];
    expect(b.build(sameTail)).toEqual(buildTranscript(sameTail));
  });
});

describe('TranscriptBuilder.append', () => {
  it('pages appended one after another give the transcript of all the lines, without the caller keeping them; items returned before never change', () => {
    const all = [
      line('Reading.', { kind: 'assistant', data: { model: 'm' } }),
      line('More of it.', { kind: 'assistant' }),
      line('tool Read', { kind: 'tool_call', data: { id: 'r1', name: 'Read', input: { path: 'a' } } }),
      line('out 1', {}),
      line('out 2', {}),
      line('read it', { kind: 'tool_result', data: { id: 'r1', output: 'text' } }),
      line('Done.', { kind: 'result', data: { result: 'Done.' } }),
    ];
    const whole = buildTranscript(all);
    for (let split = 1; split < all.length; split++) {
      const b = new TranscriptBuilder();
      const first = b.append(all.slice(0, split));
      const frozen = JSON.stringify(first);
      const next = b.append(all.slice(split));
      expect(next).toEqual(whole);
      expect(JSON.stringify(first)).toBe(frozen);
      // An item the second page did not touch is the same object.
      for (let i = 0; i < first.length - 1; i++) if (JSON.stringify(first[i]) === JSON.stringify(next[i])) expect(next[i]).toBe(first[i]);
    }
  });
});

describe('TranscriptItemView', () => {
  it('renders markdown without raw HTML, and marks a failed tool', () => {
    const { container } = render(<TranscriptItemView item={{ type: 'message', seq: 1, at: '', text: '**bold** <img src=x onerror="alert(1)"><script>alert(1)</script>', thinking: false, usage: { inputTokens: 3, outputTokens: 5 } }} />);
    expect(container.querySelector('strong')?.textContent).toBe('bold');
    expect(container.querySelector('img, script')).toBeNull();
    expect(container.textContent).toContain('3 in · 5 out tokens');
    const tool = render(<TranscriptItemView item={{ type: 'tool', seq: 2, at: '', name: 'Bash', input: { command: 'npm test' }, output: '1 failing', done: true, isError: true, exitCode: 1 }} />);
    const details = tool.container.querySelector('details')!;
    expect(details.className).toContain('tx-failed');
    expect(details.querySelector('summary')!.textContent).toContain('✗ failed (exit 1)');
    expect(details.textContent).toContain('1 failing');
  });
});

describe('a long transcript stays cheap to scroll', () => {
  it('a text is parsed once: shown again (a row scrolled back into view), its rendered markdown is reused; the cache is bounded', () => {
    const first = markdown('**again** and again');
    expect(markdown('**again** and again')).toBe(first);
    expect(render(first).container.querySelector('strong')?.textContent).toBe('again');
    // Bounded, least recently used out first (a small cache: the real one holds MARKDOWN_CACHE).
    const small = new MarkdownCache(3);
    const a = small.get('*a*');
    small.get('*b*');
    small.get('*a*');
    small.get('*c*');
    small.get('*d*');
    expect(small.size).toBe(3);
    expect(small.has('*b*')).toBe(false);
    expect(small.get('*a*')).toBe(a);
    expect(MARKDOWN_CACHE).toBeGreaterThanOrEqual(2000); // every distinct text of a 10 000-event transcript
  });

  it('rows are estimated from their text before they are measured: a long message is estimated taller than a short one', () => {
    const message = (text: string) => estimateHeight({ type: 'message', seq: 1, at: '', text, thinking: false });
    const short = message('ok');
    const long = message(['### Step', '', 'a paragraph '.repeat(40), '', '- one', '- two', '', '```ts', 'code', '```'].join('\n'));
    expect(long).toBeGreaterThan(short * 4);
    expect(estimateHeight({ type: 'output', seq: 2, at: '', stream: 'stdout', lines: ['a', 'b', 'c'], warn: false })).toBeGreaterThan(
      estimateHeight({ type: 'output', seq: 3, at: '', stream: 'stdout', lines: ['a'], warn: false }),
    );
  });
});

describe('row heights learned on screen', () => {
  it('a row not measured yet is placed by the first measured height of its class (type, estimate, width), else by its estimate', () => {
    const tool = (name: string): TranscriptItem => ({ type: 'tool', seq: 1, at: '', name, done: true, isError: false });
    const note: TranscriptItem = { type: 'system', seq: 2, at: '', text: 'context: 40 % used' };
    const h = new LearnedHeights();
    const est = estimateHeight(tool('Read'));
    expect(h.estimate(tool('Read'), est, 800)).toBe(est);
    h.learn(tool('Read'), est, 800, 41);
    expect(h.estimate(tool('Bash'), est, 800)).toBe(41); // same class: another one-line tool call
    expect(h.estimate(tool('Bash'), est, 600)).toBe(est); // another width: not learned
    expect(h.estimate(note, estimateHeight(note), 800)).toBe(estimateHeight(note)); // another type
  });
});

describe('markdown without parsing', () => {
  const html = (el: ReactElement) => render(<div>{el}</div>).container.innerHTML;

  it('text without markdown syntax is rendered without the parser, exactly as the parser renders it', () => {
    const plain = ['All green for part 3. Next file.', 'ok', 'two\nlines', 'one paragraph.\n\nAnother, with a second\nline.', 'a URL http://example.invalid/x?y=1 stays text', 'é, ü, 漢字 — and “quotes”!', 'a.b-c (d) {e} 3 + 4 = 7', 'x\u00a0y'];
    for (const text of plain) {
      expect(plainParagraphs(text), text).not.toBeNull();
      expect(needsParse(text), text).toBe(false);
      expect(html(markdown(text)), text).toBe(html(Markdown({ children: text }) as ReactElement));
      cleanup();
    }
  });

  it('any markdown syntax goes to the parser (and renders as the parser does)', () => {
    const syntax = ['**bold**', 'a `code` b', '# heading', '- item', '+ item', '1. first', '2) second', '> quote', 'para\n===', 'para\n---', '    indented code', '\tcode', 'a  \nhard break', 'trailing ', ' leading', 'x\n\n\ny', 'a & b', '<b>x</b>', '[link](u)', '![img](u)', 'snake_case', 'a ~~s~~ b', 'a | b', 'escaped \\*', 'c:\\path', 'win\r\nline', 'issue #4', ''];
    for (const text of syntax) {
      expect(plainParagraphs(text), JSON.stringify(text)).toBeNull();
      if (text) expect(html(markdown(text)), text).toBe(html(Markdown({ children: text }) as ReactElement));
      cleanup();
    }
  });

  it('idle warming parses the texts nearest the reader first, stops when time is up and goes on from there; plain texts cost nothing', () => {
    const texts = Array.from({ length: 9 }, (_, i) => (i === 5 ? 'plain text' : `**warm ${i}** of ${Math.random()}`));
    const w: Warming = { from: 4, distance: 0, parsed: 0 };
    let budget = 3;
    expect(warmMarkdown(w, texts.length, (i) => texts[i], () => budget-- > 0)).toBe(false);
    // 4 first, then 5 (plain: skipped) and 3, then 6: three parsed.
    expect(texts.map((t) => !needsParse(t))).toEqual([false, false, false, true, true, true, true, false, false]);
    expect(warmMarkdown(w, texts.length, (i) => texts[i], () => true)).toBe(true);
    expect(texts.every((t) => !needsParse(t))).toBe(true);
    expect(w.parsed).toBe(8);
  });

  it('a warming slice stops at a few milliseconds even when the browser offers 50', () => {
    let now = 100;
    const idle50 = { timeRemaining: () => 50 - (now - 100) };
    expect(warmSliceLeft(100, () => now, idle50)).toBe(true);
    now = 100 + WARM_SLICE_MS - 0.5;
    expect(warmSliceLeft(100, () => now, idle50)).toBe(true);
    now = 100 + WARM_SLICE_MS;
    expect(warmSliceLeft(100, () => now, idle50)).toBe(false);
    // A deadline nearly spent ends the slice earlier; without a deadline (no idle callbacks) the cap holds.
    now = 101;
    expect(warmSliceLeft(100, () => now, { timeRemaining: () => 0.5 })).toBe(false);
    expect(warmSliceLeft(100, () => now)).toBe(true);
  });
});

/** The pane over one attempt holding `lines`, all in one page. */
function renderPane(subject: string, lines: LogLine[]) {
  const usage = { inputTokens: 0, outputTokens: 0, costUsd: 0 };
  const attempts = [{ attempt: 1, firstSeq: 1, lastSeq: lines.length, lines: lines.length, bytes: 1, capped: false, usage }];
  return render(
    <TranscriptPane
      subject={subject}
      tail={undefined}
      height={300}
      follow={() => () => {}}
      loadAttempts={() => Promise.resolve({ attempts, usage } as never)}
      loadPage={() => Promise.resolve({ items: lines, next: null })}
    />,
  );
}

/** 400 messages in a pane, rendered, then flung: a screen or more in each of three frames (`clock` stands for performance.now). */
async function renderAndFling(subject: string, clock: MockInstance<() => number>) {
  const lines = Array.from({ length: 400 }, (_, i) => line(`message ${i}`, { kind: 'assistant', data: { model: 'm' } }));
  const pane = renderPane(subject, lines);
  await waitFor(() => expect(pane.container.querySelectorAll('.tx-message').length).toBeGreaterThan(0));
  const el = pane.container.querySelector('[data-testid="transcript-scroll"]') as HTMLElement;
  let now = 1000;
  clock.mockImplementation(() => now);
  for (const top of [0, 900, 1800]) {
    el.scrollTop = top;
    fireEvent.scroll(el);
    now += 16;
  }
  return pane;
}

describe('TranscriptPane', () => {
  it('an attempt opened while another attempt\'s page is still loading loads once that page is in', async () => {
    const usage = { inputTokens: 0, outputTokens: 0, costUsd: 0 };
    const attempts = [1, 2].map((n) => ({ attempt: n, firstSeq: 1, lastSeq: 1, lines: 1, bytes: 1, capped: false, usage }));
    let release = () => {};
    const asked: number[] = [];
    const loadPage = ({ attempt }: { attempt: number }) => {
      asked.push(attempt);
      const page = { items: [line(`the answer of attempt ${attempt}`, { kind: 'assistant', data: { model: 'm' } })], next: null };
      // The latest attempt, shown first, answers only when released.
      return attempt === 2 ? new Promise<typeof page>((r) => (release = () => r(page))) : Promise.resolve(page);
    };
    const pane = render(
      <TranscriptPane subject="task:9" tail={undefined} height={300} follow={() => () => {}} loadAttempts={() => Promise.resolve({ attempts, usage } as never)} loadPage={loadPage as never} />,
    );
    const tab = await waitFor(() => pane.getByRole('tab', { name: 'Attempt 1' }));
    fireEvent.click(tab);
    expect(asked).toEqual([2]); // attempt 2's page is still out
    release();
    await waitFor(() => expect(asked).toEqual([2, 1]));
    // And what it read is shown: the list has a row's height (attempt 2's page was dropped, being another attempt's).
    await waitFor(() => expect(parseFloat((pane.container.querySelector('[data-testid="transcript-scroll"] > div') as HTMLElement | null)?.style.height ?? '0')).toBeGreaterThan(0));
  });

  it('parses the markdown of rows not on screen yet while the page is idle', async () => {
    const lines = Array.from({ length: 60 }, (_, i) => line(`**message ${i}** of a long run ${Math.random()}`, { kind: 'assistant', data: { model: 'm' } }));
    const last = lines[lines.length - 1]!.text;
    const pane = renderPane('task:1', lines);
    await waitFor(() => expect(pane.container.querySelector('[data-testid="transcript-scroll"]')).not.toBeNull());
    expect(pane.container.querySelectorAll('.transcript-row').length).toBeLessThan(30); // virtualised: the last rows are not rendered
    await waitFor(() => expect(needsParse(last)).toBe(false), { timeout: 2000 });
    expect(lines.every((l) => !needsParse(l.text))).toBe(true);
  });

  it('estimates rows without reading the layout once per row', async () => {
    const lines = Array.from({ length: 2000 }, (_, i) => line(`message ${i}`, { kind: 'assistant', data: { model: 'm' } }));
    const owner = Object.getPrototypeOf(document.createElement('div')) as Record<string, unknown>;
    let reads = 0;
    Object.defineProperty(owner, 'clientWidth', { configurable: true, get: () => (reads++, 800) });
    try {
      const pane = renderPane('task:2', lines);
      // Every one of the 2 000 rows has been estimated once the list has its full height.
      await waitFor(() => expect(parseFloat((pane.container.querySelector('[data-testid="transcript-scroll"] > div') as HTMLElement | null)?.style.height ?? '0')).toBeGreaterThan(2000 * 40));
      expect(reads).toBeLessThan(50); // the width was read a handful of times, not once per row
    } finally {
      delete owner.clientWidth;
    }
  });
});

describe('rows while the list moves too fast to read', () => {
  it('a move of a screen or more per frame is fast; slower moves, a jump after a pause and the first move are not', () => {
    const p = new ScrollPace();
    expect(p.observe(5000, 1000, 600)).toBe(false); // the first move: nothing to compare with
    expect(p.observe(5300, 1016, 600)).toBe(false); // half a screen in a frame: readable
    expect(p.observe(5900, 1032, 600)).toBe(true); // a screen in a frame
    expect(p.observe(7100, 1048, 600)).toBe(true); // two screens in a frame
    expect(p.observe(60_000, 2000, 600)).toBe(false); // a jump after a pause (End, a click on the track)
    expect(p.observe(60_700, 2008, 600)).toBe(true); // two events in one frame count as one frame
    expect(p.observe(70_000, 2024, 0)).toBe(false); // no viewport, no pace
  });

  it('the rows are outlines while the list flings and come back in full once it slows', async () => {
    // happy-dom has no layout: the list needs a height to render rows at all.
    const owner = Object.getPrototypeOf(document.createElement('div')) as Record<string, unknown>;
    Object.defineProperty(owner, 'clientHeight', { configurable: true, get: () => 300 });
    Object.defineProperty(owner, 'clientWidth', { configurable: true, get: () => 800 });
    const clock = vi.spyOn(performance, 'now');
    try {
      const pane = await renderAndFling('task:3', clock);
      expect(pane.container.querySelectorAll('.tx-outline').length).toBeGreaterThan(0);
      expect(pane.container.querySelectorAll('.tx-message').length).toBe(0);
      clock.mockRestore();
      // No move for SETTLE_MS: every row is rendered in full again.
      await waitFor(() => expect(pane.container.querySelectorAll('.tx-message').length).toBeGreaterThan(0), { timeout: SETTLE_MS * 10 });
      expect(pane.container.querySelectorAll('.tx-outline').length).toBe(0);
    } finally {
      clock.mockRestore();
      delete owner.clientHeight;
      delete owner.clientWidth;
    }
  });
});

describe('rows while the list scrolls', () => {
  /** happy-dom has no layout: the list needs a size, and its rows a height (40 px), to render rows as a browser would. */
  function withLayout<T>(run: () => Promise<T>): Promise<T> {
    const owner = Object.getPrototypeOf(document.createElement('div')) as Record<string, unknown>;
    Object.defineProperty(owner, 'clientHeight', { configurable: true, get: () => 300 });
    Object.defineProperty(owner, 'clientWidth', { configurable: true, get: () => 800 });
    Object.defineProperty(owner, 'offsetHeight', { configurable: true, get: () => 40 });
    return run().finally(() => {
      delete owner.offsetHeight;
      delete owner.clientHeight;
      delete owner.clientWidth;
    });
  }

  it('a scrolled frame renders only the rows that came into view, not every row on screen', () =>
    withLayout(async () => {
      const lines = Array.from({ length: 400 }, (_, i) => line(`message ${i}`, { kind: 'assistant', data: { model: 'm' } }));
      const pane = renderPane('task:4', lines);
      await waitFor(() => expect(pane.container.querySelectorAll('.tx-message').length).toBeGreaterThan(0));
      const el = pane.container.querySelector('[data-testid="transcript-scroll"]') as HTMLElement;
      const shown = () => new Set([...pane.container.querySelectorAll('.transcript-row')].map((r) => r.getAttribute('data-index')));
      el.scrollTop = 0;
      fireEvent.scroll(el);
      await new Promise((r) => setTimeout(r, 0));
      expect(shown().size).toBeLessThan(40);
      // Slowly (a few px a step, far under a screen per frame): rows in full, the range moves row by row.
      let top = 0;
      let entered = 0;
      for (let step = 0; step < 40; step++) {
        const before = shown();
        rowRenders.n = 0;
        top += 7;
        el.scrollTop = top;
        fireEvent.scroll(el);
        await new Promise((r) => setTimeout(r, 0));
        const added = [...shown()].filter((i) => !before.has(i)).length;
        expect(rowRenders.n, `step ${step}`).toBe(added);
        entered += added;
      }
      expect(entered).toBeGreaterThan(3);
      expect(pane.container.querySelectorAll('.tx-outline').length).toBe(0);
    }));

  it('a row that was an outline during a fling is the same element once it fills in', () =>
    withLayout(async () => {
      const clock = vi.spyOn(performance, 'now');
      try {
        const pane = await renderAndFling('task:5', clock);
        const outline = pane.container.querySelector('.tx-outline')!.closest('.transcript-row')!;
        clock.mockRestore();
        await waitFor(() => expect(pane.container.querySelectorAll('.tx-outline').length).toBe(0), { timeout: SETTLE_MS * 10 });
        expect(outline.isConnected).toBe(true);
        expect(outline.querySelector('.tx-message')).not.toBeNull();
      } finally {
        clock.mockRestore();
      }
    }));
});
