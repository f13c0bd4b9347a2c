/**
 * `npm run bench -- transcript` (issue 31: "a transcript of 10 000 events scrolls without dropped
 * frames"): a task whose attempt log holds 10 000 transcript events (PROTOCOL §16 kind/data lines:
 * assistant messages in markdown, tool calls with their input and output, failed tools, errors,
 * plain output) is seeded into a data directory; the real headless start chain serves the console
 * (`npm start -- --headless` builds out/renderer when it is older than its sources); Chromium opens
 * the task's Transcript view and, once every line is loaded, scrolls it from the top to the bottom
 * over a few seconds, one scroll step per animation frame. Measured in the page with
 * requestAnimationFrame: the frame times (p50 / p95 / max), frames over 50 ms, frames that took
 * longer than 1.5 × an idle frame of the same page (dropped; the machine's own pace is printed
 * beside), the long animation frames' script and layout time, and the DOM nodes of the list.
 * With GAFFER_BENCH_TRANSCRIPT_TRACE=1 a traced pass (idle page, then the scroll) attributes each
 * dropped frame: the page's main thread over a frame of CPU (the transcript's own figure,
 * `transcript.traced.droppedMainOverBudget`), its tasks waiting for a core, or the main thread within
 * budget (the compositor / the OS) — the idle page's drops, attributed alike, are the control.
 * A user's scroll (GAFFER_BENCH_TRANSCRIPT_GESTURE=0 skips it): the rAF pass above scrolls from the
 * page's main thread, so any main-thread pause is a dropped frame by construction; a wheel is scrolled
 * by the compositor thread. CDP `Input.synthesizeScrollGesture` (gestureSourceType 'mouse', 15 000
 * px/s, the whole transcript, ~30 s at 10 000 events; not mouseWheel events) drives it through
 * Chromium's input pipeline, on the transcript and on an idle page of the same scroller size and length
 * (the control). Read from the trace (category `benchmark`): each compositor frame's PipelineReporter
 * state (presented all / presented partial / dropped), its has_missing_content (checkerboarded) and
 * scroll_state (which thread scrolled), and ScrollJankV4 (Chromium's janky frames and missed vsyncs);
 * from the page, each rAF: outline rows or blank area in view; from DOMDebugger: wheel/touch listeners
 * that are not passive (they would make the compositor wait for the main thread).
 * Figures are printed, never asserted. Run: npm run bench -- transcript
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { IncomingLine } from '../src-main/core/logs/log-store';
import { LogStore } from '../src-main/core/logs/log-store';
import { DEFAULT_LOG_SETTINGS, type LogLine } from '../src-main/common/logs';
import { buildTranscript, estimateHeight, TranscriptBuilder } from '../src-renderer/components/transcript/transcript';
import { createCore } from '../src-main/core/create-core';
import { BENCH_OPERATOR_TOKEN, startHeadless } from './headless-proc';
import { benchDir, percentile, printTable } from './util';
import { allocationFigures, attributeFrames, collectorFigures, compositorScrollFigures, type CompositorScrollFigures, describeFrame, dropCauses, FRAME_REPORT_CATEGORIES, FRAME_TRACE_MARK, selfTimeTotals, startFrameTrace, stopFrameTrace } from './frame-trace';

const EVENTS = Number(process.env.GAFFER_BENCH_TRANSCRIPT_EVENTS ?? 10_000);
const SCROLL_MS = Number(process.env.GAFFER_BENCH_TRANSCRIPT_SCROLL_MS ?? 6000);
/**
 * GAFFER_BENCH_TRANSCRIPT_STEP_PX=250: scroll this many px each frame, however long the frame took
 * (250 px is 15 000 px/s at 60 Hz), instead of following the clock. On a loaded machine a timed
 * scroll moves farther in each slow frame (outlines, other rows), so two builds did different work;
 * stepped, both do the same frames, and the traced pass's CPU and collections compare.
 */
const STEP_PX = Number(process.env.GAFFER_BENCH_TRANSCRIPT_STEP_PX ?? 0);
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ROLE = 'coder';

/** One event of a Claude-Code-like session, cycling through what such a run prints. */
function event(n: number, at: number): IncomingLine {
  const turn = Math.floor(n / 10);
  const usage = { inputTokens: 1200 + (n % 97) * 13, outputTokens: 80 + (n % 31) * 7 };
  switch (n % 10) {
    case 0:
      return {
        at,
        kind: 'assistant',
        text: [
          `### Step ${turn}: the parser`,
          '',
          `I'll read \`src/parser/part${turn % 40}.ts\` first, then run **the unit tests** for it. What I found so far:`,
          '',
          `- the tokenizer keeps a *copy* of each line (${turn % 7} places)`,
          `- \`parseExpr\` recurses without a depth limit; see [the issue](https://example.invalid/issues/${turn})`,
          '- a long sentence that has to wrap on a narrow pane because it goes on and on about the grammar, the precedence table and the error recovery that the old code did not have',
          '',
          '```ts',
          `export function depth${turn}(node: Node): number {`,
          '  return node.children.reduce((d, c) => Math.max(d, depth(c) + 1), 0);',
          '}',
          '```',
        ].join('\n'),
        data: { model: 'claude-sonnet-4', usage },
      };
    case 1:
      return { at, kind: 'tool_call', text: 'Read', data: { name: 'Read', id: `toolu_${n}`, input: { file_path: `/repo/src/parser/part${turn % 40}.ts` } } };
    case 2:
      return {
        at,
        kind: 'tool_result',
        text: 'Read',
        data: { id: `toolu_${n - 1}`, output: Array.from({ length: 30 }, (_, i) => `${String(i + 1).padStart(4)}  const token${i} = next(input, ${i}); // ${'x'.repeat(i % 40)}`).join('\n') },
      };
    case 3:
      return { at, kind: 'tool_call', text: 'Bash', data: { name: 'Bash', id: `toolu_${n}`, input: { command: `npm test -- parser/part${turn % 40}`, description: 'Run the parser tests' } } };
    case 4: {
      const failed = turn % 5 === 0;
      return {
        at,
        kind: 'tool_result',
        text: 'Bash',
        ...(failed ? { level: 'error' as const } : {}),
        data: {
          id: `toolu_${n - 1}`,
          isError: failed,
          exitCode: failed ? 1 : 0,
          output: failed ? `FAIL parser/part${turn % 40}.test.ts\n  ✕ parses nested brackets (12 ms)\n    Expected: 3\n    Received: 2\n\nTests: 1 failed, 41 passed` : `PASS parser/part${turn % 40}.test.ts\n\nTests: 42 passed, 42 total\nTime: 1.${turn % 10} s`,
        },
      };
    }
    case 5:
      return { at, kind: 'assistant', text: turn % 5 === 0 ? 'The nested-bracket case fails: the **depth** is off by one. Fixing `parseExpr`.' : `All green for part ${turn % 40}. Next file.`, data: { model: 'claude-sonnet-4', usage } };
    case 6:
      return {
        at,
        kind: 'tool_call',
        text: 'Edit',
        data: { name: 'Edit', id: `toolu_${n}`, input: { file_path: `/repo/src/parser/part${turn % 40}.ts`, old_string: 'return depth(c)', new_string: 'return depth(c) + 1' } },
      };
    case 7:
      return { at, kind: 'tool_result', text: 'Edit', data: { id: `toolu_${n - 1}`, output: 'The file has been updated.' } };
    case 8:
      return turn % 9 === 0 ? { at, kind: 'error', text: `rate limited: retrying in ${turn % 5} s`, level: 'warn' } : { at, kind: 'system', text: `context: ${40 + (turn % 50)} % used` };
    default:
      return { at, stream: 'stdout', text: `[agent] turn ${turn} done in ${(turn % 13) + 2}.${turn % 10} s` };
  }
}

/**
 * Following a run live (in process, the renderer's own code): each fetched page of new lines used to
 * rebuild and re-estimate the whole transcript; the TranscriptBuilder reads only the new lines.
 * Median ms per page of PAGE_LINES appended to a transcript of EVENTS events.
 */
function liveFollowFigures(): { fullMs: number; appendMs: number; pageLines: number } {
  const PAGE_LINES = 50;
  const now = Date.now();
  const lines: LogLine[] = [];
  for (let n = 0; n < EVENTS; n++) {
    const e = event(n, now - (EVENTS - n) * 50);
    lines.push({ seq: n + 1, at: new Date(e.at).toISOString(), attempt: 1, stream: e.stream ?? 'stdout', level: e.level ?? 'info', text: e.text, ...(e.kind ? { kind: e.kind } : {}), ...(e.data ? { data: e.data } : {}) });
  }
  const full: number[] = [];
  const append: number[] = [];
  const start = Math.max(0, EVENTS - 20 * PAGE_LINES);
  for (let k = start; k < EVENTS; k += PAGE_LINES) {
    const upTo = lines.slice(0, k + PAGE_LINES);
    let t = performance.now();
    buildTranscript(upTo).forEach((i) => estimateHeight(i)); // before: everything, every page
    full.push(performance.now() - t);
    const b = new TranscriptBuilder();
    const seen = b.build(lines.slice(0, k)); // the transcript so far, estimated once
    const estimated = new WeakMap(seen.map((i) => [i, estimateHeight(i)]));
    t = performance.now();
    for (const i of b.build(upTo)) if (!estimated.has(i)) estimated.set(i, estimateHeight(i));
    append.push(performance.now() - t);
  }
  const median = (xs: number[]) => Number(percentile([...xs].sort((a, b) => a - b), 50).toFixed(2));
  return { fullMs: median(full), appendMs: median(append), pageLines: PAGE_LINES };
}

/** The data directory: one task, its attempt 1 log holding EVENTS events (the last a result). */
function seed(dir: string): { taskId: number; storedLines: number } {
  const core = createCore({ dataDir: dir });
  const { task } = core.tasks.create({ title: 'Refactor the parser (10 000-event transcript)', role: ROLE }, { actor: 'operator:bench' });
  core.close();
  const now = Date.now();
  const store = new LogStore(path.join(dir, 'logs'), now);
  let stored = 0;
  for (let from = 0; from < EVENTS; from += 1000) {
    const lines: IncomingLine[] = [];
    for (let n = from; n < Math.min(EVENTS, from + 1000); n++) {
      const at = now - (EVENTS - n) * 50;
      lines.push(
        n === EVENTS - 1
          ? { at, seq: n + 1, kind: 'result', text: 'Refactored the parser; 42 tests pass.', data: { result: 'Refactored the parser; **42 tests pass**.', costUsd: 3.21, numTurns: EVENTS / 10, durationMs: EVENTS * 50, usage: { inputTokens: 1_200_000, outputTokens: 90_000 } } }
          : { ...event(n, at), seq: n + 1 },
      );
    }
    const r = store.append([{ subject: `task:${task.id}`, attempt: 1, lines }], now, DEFAULT_LOG_SETTINGS);
    if (!r[0] || !r[0].ok) throw new Error(`seeding the log failed: ${JSON.stringify(r[0])}`);
    stored += r[0].stored;
  }
  store.close();
  return { taskId: task.id, storedLines: stored };
}

interface PageFigures {
  loadMs: number;
  idle: number[];
  frames: number[];
  longFrames: number;
  scriptMs: number;
  layoutMs: number;
  domNodes: number[];
  rows: number[];
  scrollHeight: number;
  reachedEnd: boolean;
  /** Each long animation frame: its duration and its three longest scripts (what ran, for how long). */
  longFrameScripts: string[];
  /** Each frame's start (requestAnimationFrame time), and the trace mark's time, in performance.now() ms. */
  frameTimes: number[];
  markAt: number;
  /** The idle pass's frame starts (requestAnimationFrame time). */
  idleTimes: number[];
  /** Each long animation frame's [start, end], performance.now() ms. */
  loafWindows: [number, number][];
  /** Frames whose rows were outlines (the list moved a screen or more per frame). */
  outlineFrames: number;
  /** DOM nodes (elements and text) added to the list during the scroll. */
  nodesAdded: number;
}

/**
 * Runs in the page (a string: the bench runs under tsx, whose helpers do not exist there). Scrolls
 * the transcript from the top to the bottom in `scrollMs`, one step per animation frame (the
 * target follows the list's height as rows are measured), and records each frame's time, the DOM
 * nodes in the list and the rows rendered.
 */
const IN_PAGE = `async function (scrollMs, withIdle, stepPx = ${STEP_PX}) {
  const el = document.querySelector('[data-testid="transcript-scroll"]');
  const frame = () => new Promise((res) => requestAnimationFrame((t) => res(t)));
  el.scrollTop = 0;
  for (let i = 0; i < 30; i++) await frame();
  // The machine's own pace: frames with nothing to do, for as long as the scroll will take (a
  // headless browser on a shared machine misses the odd frame with no page work at all; this counts them).
  const idle = [];
  let prev = await frame();
  const idleStart = prev;
  const idleTimes = [prev];
  while (withIdle && prev - idleStart < scrollMs) {
    const t = await frame();
    idle.push(t - prev);
    idleTimes.push(t);
    prev = t;
  }
  // Long animation frames (> 50 ms): how much of each was script, how much style and layout.
  const loaf = [];
  const observer = new PerformanceObserver((list) => loaf.push(...list.getEntries()));
  observer.observe({ type: 'long-animation-frame' });
  // The DOM nodes the page made during the scroll (elements and text, each added subtree counted
  // whole): a count, unlike the frame times it does not move with the machine's load.
  let nodesAdded = 0;
  const countAdded = (n) => { nodesAdded++; for (let c = n.firstChild; c; c = c.nextSibling) countAdded(c); };
  const mutations = new MutationObserver((list) => list.forEach((m) => m.addedNodes.forEach(countAdded)));
  mutations.observe(el, { childList: true, subtree: true });
  const frames = [], frameTimes = [], domNodes = [], rows = [];
  let outlineFrames = 0;
  const start = await frame();
  const markAt = performance.mark('${FRAME_TRACE_MARK}').startTime;
  frameTimes.push(start);
  let last = start;
  for (;;) {
    const t = await frame();
    frames.push(t - last);
    frameTimes.push(t);
    last = t;
    domNodes.push(el.querySelectorAll('*').length);
    rows.push(el.querySelectorAll('.transcript-row').length);
    if (el.querySelector('.tx-outline')) outlineFrames++;
    const progress = stepPx > 0 ? 1 : Math.min(1, (t - start) / scrollMs);
    el.scrollTop = stepPx > 0 ? el.scrollTop + stepPx : progress * (el.scrollHeight - el.clientHeight);
    if (progress >= 1 && el.scrollTop + el.clientHeight >= el.scrollHeight - 2) break;
    if (stepPx > 0 ? frames.length > 20000 : t - start > scrollMs * 4) break;
  }
  await frame();
  observer.takeRecords().forEach((e) => loaf.push(e));
  observer.disconnect();
  mutations.takeRecords().forEach((m) => m.addedNodes.forEach(countAdded));
  mutations.disconnect();
  const scriptMs = loaf.reduce((sum, e) => sum + e.scripts.reduce((a, x) => a + x.duration, 0), 0);
  const layoutMs = loaf.reduce((sum, e) => sum + (e.styleAndLayoutStart ? e.startTime + e.duration - e.styleAndLayoutStart : 0), 0);
  const longFrameScripts = loaf.map((e) => Math.round(e.duration) + ' ms: ' + [...e.scripts].sort((a, b) => b.duration - a.duration).slice(0, 3)
    .map((x) => (x.invoker || x.invokerType) + (x.sourceFunctionName ? ' → ' + x.sourceFunctionName : '') + ' ' + Math.round(x.duration) + ' ms').join(', '));
  const loafWindows = loaf.map((e) => [e.startTime, e.startTime + e.duration]);
  return { idle, idleTimes, loafWindows, frames, frameTimes, markAt, outlineFrames, nodesAdded, domNodes, rows, longFrames: loaf.length, scriptMs, layoutMs, longFrameScripts, scrollHeight: el.scrollHeight, reachedEnd: el.scrollTop + el.clientHeight >= el.scrollHeight - 2 };
}`;

/**
 * A user's scroll (GAFFER_BENCH_TRANSCRIPT_GESTURE=0 skips it): the page does not scroll itself; CDP
 * `Input.synthesizeScrollGesture` (mouse wheel, GAFFER_BENCH_TRANSCRIPT_GESTURE_SPEED px/s, 15 000 by
 * default) sends the scroll through Chromium's input pipeline, as a wheel or touchpad would, so the
 * compositor thread scrolls and keeps presenting frames while the main thread is busy (a collection,
 * a layout), unless a non-passive wheel/touch listener makes it wait for the main thread.
 * Meanwhile the page reads, each animation frame, whether the viewport showed content not rendered
 * yet: rows drawn as outlines, or area no row covers (blank). Runs in the page as a string (see IN_PAGE).
 */
const GESTURE_SPEED = Number(process.env.GAFFER_BENCH_TRANSCRIPT_GESTURE_SPEED ?? 15_000);
const GESTURE_SAMPLER = `function (selector, rowsToo) {
  const el = document.querySelector(selector);
  const s = { frames: 0, outlineFrames: 0, blankFrames: 0, maxBlankPx: 0, longFrames: 0, last: 0, stop: false };
  window.__gaffer_gesture = s;
  const tick = (t) => {
    if (s.stop) return;
    if (s.last) { s.frames++; if (t - s.last > 25) s.longFrames++; }
    s.last = t;
    if (rowsToo) {
      const box = el.getBoundingClientRect();
      const spans = [];
      let outline = false;
      for (const r of el.querySelectorAll('.transcript-row')) {
        const b = r.getBoundingClientRect();
        if (b.bottom <= box.top || b.top >= box.bottom) continue;
        spans.push([Math.max(b.top, box.top), Math.min(b.bottom, box.bottom)]);
        if (r.querySelector('.tx-outline')) outline = true;
      }
      spans.sort((a, b) => a[0] - b[0]);
      let covered = 0, reach = box.top;
      for (const [a, b] of spans) { if (b > reach) { covered += b - Math.max(a, reach); reach = b; } }
      // Below the list's last row at the very end is not "not rendered".
      const atEnd = el.scrollTop + el.clientHeight >= el.scrollHeight - 2;
      const blank = atEnd ? 0 : Math.max(0, Math.min(box.bottom, window.innerHeight) - box.top - covered);
      if (outline) s.outlineFrames++;
      if (blank > 2) { s.blankFrames++; s.maxBlankPx = Math.max(s.maxBlankPx, Math.round(blank)); }
    }
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
}`;

interface GestureFigures {
  distancePx: number;
  gestureMs: number;
  scrolledPx: number;
  page: { frames: number; outlineFrames: number; blankFrames: number; maxBlankPx: number; longFrames: number };
  compositor: CompositorScrollFigures | null;
}

async function gesture(browser: import('playwright-core').Browser, page: import('playwright-core').Page, selector: string, rowsToo: boolean): Promise<GestureFigures> {
  const cdp = await page.context().newCDPSession(page);
  const geo = await page.evaluate(async (sel) => {
    const el = document.querySelector(sel)!;
    el.scrollTop = 0;
    for (let i = 0; i < 30; i++) await new Promise((r) => requestAnimationFrame(r));
    const b = el.getBoundingClientRect();
    return { x: Math.round(b.left + b.width / 2), y: Math.round(b.top + Math.min(b.height, window.innerHeight - b.top) / 2), distance: el.scrollHeight - el.clientHeight };
  }, selector);
  await page.evaluate(`(${GESTURE_SAMPLER})(${JSON.stringify(selector)}, ${rowsToo})`);
  await browser.startTracing(page, { categories: FRAME_REPORT_CATEGORIES });
  const t0 = Date.now();
  await cdp.send('Input.synthesizeScrollGesture', { x: geo.x, y: geo.y, yDistance: -geo.distance, speed: GESTURE_SPEED, gestureSourceType: 'mouse', preventFling: true });
  const gestureMs = Date.now() - t0;
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  const s = (await page.evaluate(`(() => { const s = window.__gaffer_gesture; s.stop = true; return s; })()`)) as GestureFigures['page'];
  const scrolledPx = await page.evaluate((sel) => document.querySelector(sel)!.scrollTop, selector);
  const events = await stopFrameTrace(browser);
  if (process.env.GAFFER_BENCH_TRANSCRIPT_GESTURE_TRACE_FILE) fs.writeFileSync(`${process.env.GAFFER_BENCH_TRANSCRIPT_GESTURE_TRACE_FILE}.${rowsToo ? 'transcript' : 'idle'}.json`, JSON.stringify({ traceEvents: events }));
  await cdp.detach();
  return { distancePx: geo.distance, gestureMs, scrolledPx: Math.round(scrolledPx), page: { frames: s.frames, outlineFrames: s.outlineFrames, blankFrames: s.blankFrames, maxBlankPx: s.maxBlankPx, longFrames: s.longFrames }, compositor: compositorScrollFigures(events) };
}

/**
 * Wheel, touch and scroll listeners in the page (DOMDebugger, the whole document and the window):
 * a wheel or touch listener that is not passive makes the compositor wait for the main thread before
 * it scrolls. Returns "type passive|NOT passive (where)" for each wheel/touch listener.
 */
async function scrollBlockingListeners(page: import('playwright-core').Page): Promise<{ blocking: number; lines: string[] }> {
  const cdp = await page.context().newCDPSession(page);
  const lines: string[] = [];
  let blocking = 0;
  for (const expression of ['document', 'window']) {
    const { result } = await cdp.send('Runtime.evaluate', { expression, objectGroup: 'gaffer-listeners' });
    const { listeners } = await cdp.send('DOMDebugger.getEventListeners', { objectId: result.objectId!, depth: -1, pierce: true });
    for (const l of listeners) {
      if (!/^(wheel|mousewheel|touchstart|touchmove|scroll)$/.test(l.type)) continue;
      const handler = (l.handler?.description ?? '').replace(/\s+/g, ' ').slice(0, 90);
      // Playwright's injected script listens on window (its hit-target check for clicks): the bench's, not the app's.
      const playwright = handler.includes('_hitTargetInterceptor');
      const blocks = l.type !== 'scroll' && !l.passive && !playwright;
      if (blocks) blocking++;
      lines.push(`${l.type} on ${expression === 'window' ? 'window' : 'the document' + (l.backendNodeId ? ` (node ${l.backendNodeId})` : '')}: ${l.passive ? 'passive' : l.type === 'scroll' ? 'not passive (a scroll listener cannot block scrolling)' : playwright ? "not passive, Playwright's injected script (not the app's, not counted)" : 'NOT passive: blocks threaded scrolling'} — script ${l.scriptId}:${l.lineNumber}:${l.columnNumber} ${handler}`);
    }
  }
  await cdp.detach();
  return { blocking, lines };
}

/** The user's scroll on the transcript and, the control, on a page of the same scroller size and length that does not change. */
async function userScroll(browser: import('playwright-core').Browser, page: import('playwright-core').Page): Promise<Record<string, number>> {
  await page.setViewportSize({ width: 1440, height: 900 });
  const listeners = await scrollBlockingListeners(page);
  const sel = '[data-testid="transcript-scroll"]';
  const box = await page.evaluate((s) => {
    const el = document.querySelector(s)!;
    const b = el.getBoundingClientRect();
    return { left: b.left, top: b.top, width: b.width, height: b.height, scrollHeight: el.scrollHeight };
  }, sel);
  const idlePage = await (await browser.newContext({ viewport: { width: 1440, height: 900 } })).newPage();
  await idlePage.setContent(
    `<div id="s" style="position:absolute;left:${box.left}px;top:${box.top}px;width:${box.width}px;height:${box.height}px;overflow:auto">` +
      `<div style="height:${box.scrollHeight}px;background:repeating-linear-gradient(#fff 0 40px,#f1f1f1 40px 80px)"></div></div>`,
  );
  const idle = await gesture(browser, idlePage, '#s', false);
  await idlePage.context().close();
  const tx = await gesture(browser, page, sel, true);
  const c = (g: GestureFigures) => g.compositor;
  const states = (g: GestureFigures) => (c(g) ? Object.entries(c(g)!.byState).map(([k, v]) => `${k} ${v}`).join(', ') : 'no frame reports in the trace');
  const scrollers = (g: GestureFigures) => (c(g) ? Object.entries(c(g)!.byScrollState).map(([k, v]) => `${k} ${v}`).join(', ') : '-');
  const row = (g: GestureFigures) => `${c(g)?.frames ?? '-'} frames in ${c(g)?.spanMs ?? '-'} ms: ${states(g)}`;
  printTable(`A user's scroll: Input.synthesizeScrollGesture, mouse wheel, ${GESTURE_SPEED} px/s, top to bottom (compositor-driven)`, [
    { what: 'gesture: distance / scrolled / took (transcript; idle page)', value: `${tx.distancePx} / ${tx.scrolledPx} px / ${tx.gestureMs} ms; ${idle.distancePx} / ${idle.scrolledPx} px / ${idle.gestureMs} ms` },
    { what: 'wheel/touch listeners that are not passive (block threaded scrolling)', value: listeners.blocking },
    { what: 'compositor frames, transcript (PipelineReporter states)', value: row(tx) },
    { what: 'compositor frames, idle page', value: row(idle) },
    { what: 'which thread scrolled (frames), transcript; idle page', value: `${scrollers(tx)}; ${scrollers(idle)}` },
    { what: 'dropped or partial (compositor), transcript / idle page', value: `${c(tx)?.droppedOrPartial ?? '-'} / ${c(idle)?.droppedOrPartial ?? '-'}` },
    { what: "Chromium's scroll jank (ScrollJankV4): janky frames / missed vsyncs / scroll frames, transcript", value: `${c(tx)?.janky ?? '-'} / ${c(tx)?.missedVsyncs ?? '-'} / ${c(tx)?.scrollFrames ?? '-'}` },
    { what: '… idle page', value: `${c(idle)?.janky ?? '-'} / ${c(idle)?.missedVsyncs ?? '-'} / ${c(idle)?.scrollFrames ?? '-'}` },
    { what: 'presented with tiles missing (checkerboarded), transcript / idle page', value: `${c(tx)?.missingContent ?? '-'} / ${c(idle)?.missingContent ?? '-'}` },
    { what: 'page frames (rAF) with outline rows in view / blank area in view (max px), of', value: `${tx.page.outlineFrames} / ${tx.page.blankFrames} (${tx.page.maxBlankPx} px) of ${tx.page.frames}` },
    { what: 'page frames (rAF) over 25 ms, transcript / idle page (main thread; not what the compositor showed)', value: `${tx.page.longFrames} of ${tx.page.frames} / ${idle.page.longFrames} of ${idle.page.frames}` },
  ]);
  for (const line of listeners.lines) console.log(`  listener: ${line}`);
  const fig = (prefix: string, g: GestureFigures): Record<string, number> => ({
    [`${prefix}.compositorFrames`]: c(g)?.frames ?? 0,
    [`${prefix}.droppedOrPartial`]: c(g)?.droppedOrPartial ?? 0,
    [`${prefix}.dropped`]: c(g)?.byState['dropped'] ?? 0,
    [`${prefix}.presentedPartial`]: c(g)?.byState['presented_partial'] ?? 0,
    [`${prefix}.jankyFrames`]: c(g)?.janky ?? 0,
    [`${prefix}.missedVsyncs`]: c(g)?.missedVsyncs ?? 0,
    [`${prefix}.checkerboarded`]: c(g)?.missingContent ?? 0,
    [`${prefix}.mainThreadScrollFrames`]: c(g)?.byScrollState['main_thread'] ?? 0,
    [`${prefix}.pageFrames`]: g.page.frames,
    [`${prefix}.pageLongFrames`]: g.page.longFrames,
    [`${prefix}.gestureMs`]: g.gestureMs,
  });
  return {
    'transcript.gesture.blockingListeners': listeners.blocking,
    'transcript.gesture.outlineFrames': tx.page.outlineFrames,
    'transcript.gesture.blankFrames': tx.page.blankFrames,
    'transcript.gesture.maxBlankPx': tx.page.maxBlankPx,
    ...fig('transcript.gesture', tx),
    ...fig('transcript.gesture.idle', idle),
  };
}

/**
 * GAFFER_BENCH_TRANSCRIPT_SCREENSHOTS=dir: after the scroll, the transcript at 1024×700 and
 * 1440×900 at the top, in the middle and at the end (each once the rows settled, the first tool
 * call opened at the top) and mid-fling (rows drawn as outlines), to compare two builds by eye: dir/<checkout>-<width>-<where>.png (the
 * checkout's folder name: side-by-side.mjs names its two `before-<sha>` and `after-<sha>`).
 */
async function screenshots(page: import('playwright-core').Page): Promise<void> {
  const dir = process.env.GAFFER_BENCH_TRANSCRIPT_SCREENSHOTS;
  if (!dir) return;
  fs.mkdirSync(dir, { recursive: true });
  for (const [width, height] of [[1024, 700], [1440, 900]] as const) {
    await page.setViewportSize({ width, height });
    for (const where of ['top', 'middle', 'end'] as const) {
      await page.evaluate((w) => {
        const el = document.querySelector('[data-testid="transcript-scroll"]')!;
        el.scrollTop = w === 'top' ? 0 : w === 'middle' ? Math.round(el.scrollHeight / 2) : el.scrollHeight;
      }, where);
      await page.waitForTimeout(400);
      // Measured rows move the list: scroll again to the same place once they settled.
      await page.evaluate((w) => {
        const el = document.querySelector('[data-testid="transcript-scroll"]')!;
        el.scrollTop = w === 'top' ? 0 : w === 'middle' ? Math.round(el.scrollHeight / 2) : el.scrollHeight;
      }, where);
      if (where === 'top') await page.locator('[data-testid="transcript-scroll"] details.tx-tool summary').first().click();
      await page.waitForTimeout(400);
      await page.screenshot({ path: path.join(dir, `${path.basename(process.cwd())}-${width}-${where}.png`) });
    }
    // Mid-fling: two screens a frame for a few frames, then the shot at once (rows drawn as outlines).
    await page.evaluate(async () => {
      const el = document.querySelector('[data-testid="transcript-scroll"]')!;
      el.scrollTop = Math.round(el.scrollHeight / 3);
      for (let i = 0; i < 6; i++) {
        await new Promise((r) => requestAnimationFrame(r));
        el.scrollTop += 2 * el.clientHeight;
      }
    });
    await page.screenshot({ path: path.join(dir, `${path.basename(process.cwd())}-${width}-fling.png`) });
  }
}

/**
 * GAFFER_BENCH_TRANSCRIPT_TRACE=1: the same scroll once more under Chromium's tracing, and each
 * slow frame (over `slowMs`) of that pass attributed to the work that ran in it (bench/frame-trace.ts).
 * Tracing costs the page some time of its own, so this pass's frame counts are not the figures
 * above; it says what the slow frames were made of.
 */
async function tracedScroll(browser: import('playwright-core').Browser, page: import('playwright-core').Page, slowMs: number): Promise<Record<string, number>> {
  await page.setViewportSize({ width: 1440, height: 900 });
  await startFrameTrace(browser, page);
  // With the idle pass, traced too: its dropped frames are attributed as the scroll's are (the control).
  const f = (await page.evaluate(`(${IN_PAGE})(${SCROLL_MS}, true)`)) as Omit<PageFigures, 'loadMs'>;
  const events = await stopFrameTrace(browser);
  // GAFFER_BENCH_TRANSCRIPT_TRACE_FILE=file.json: the traced pass's trace (DevTools' Performance panel opens it).
  if (process.env.GAFFER_BENCH_TRANSCRIPT_TRACE_FILE) fs.writeFileSync(process.env.GAFFER_BENCH_TRANSCRIPT_TRACE_FILE, JSON.stringify({ traceEvents: events }));
  const windows = f.frameTimes.slice(1).map((end, i) => ({ start: f.frameTimes[i]!, end }));
  const all = attributeFrames(events, f.markAt, windows);
  if (!all) {
    console.log('  (traced scroll: the trace holds no start mark; nothing attributed)');
    return {};
  }
  const slow = all.filter((x) => x.frameMs > slowMs);
  // Each dropped frame (over slowMs, as in the untraced pass) by cause: the page's main thread over a
  // frame of CPU (the transcript's own), its tasks descheduled, or the main thread within budget (the
  // compositor / the OS: what the idle page drops). The idle page's frames, traced alike, are the control.
  const drops = dropCauses(all, slowMs);
  const idleAll = attributeFrames(events, f.markAt, f.idleTimes.slice(1).map((end, i) => ({ start: f.idleTimes[i]!, end }))) ?? [];
  const idleDrops = dropCauses(idleAll, slowMs);
  const causes = (d: typeof drops) => Object.entries(d.byCause).map(([k, v]) => `${k} ${v}`).join(', ');
  console.log(`\n  Traced dropped frames (over ${slowMs.toFixed(1)} ms): scroll ${drops.dropped} of ${all.length} — ${causes(drops)}; idle page ${idleDrops.dropped} of ${idleAll.length} — ${causes(idleDrops)}`);
  for (const line of drops.lines) console.log(`  dropped, scroll: ${line}`);
  for (const line of idleDrops.lines) console.log(`  dropped, idle page: ${line}`);
  const overBudget = all.filter((x) => x.mainCpuMs > 16.7);
  console.log(`\n  Traced scroll (${f.outlineFrames} frames with outline rows): ${slow.length} of ${all.length} frames over ${slowMs.toFixed(1)} ms; frames whose main-thread work used over 16.7 ms of CPU: ${overBudget.length}; main-thread CPU per frame mean ${(all.reduce((n, x) => n + x.mainCpuMs, 0) / all.length).toFixed(2)}, p50 / p99 / max ${[50, 99, 100].map((q) => percentile(all.map((x) => x.mainCpuMs).sort((a, b) => a - b), q).toFixed(1)).join(' / ')} ms`);
  for (const x of slow) console.log(`  slow ${describeFrame(x)}`);
  console.log(`  main thread over the whole scroll, self ms: ${selfTimeTotals(all).join(', ')}`);
  console.log(`  main thread over the whole scroll, self CPU ms: ${selfTimeTotals(all, 16, true).join(', ')}`);
  // The frames over budget by CPU, what their CPU went to (self CPU by kind of work).
  for (const x of overBudget) console.log(`  over 16.7 ms of CPU: ${describeFrame(x, true)}`);
  const cpu = all.map((x) => x.mainCpuMs).sort((a, b) => a - b);
  // Garbage collection on the main thread per frame (self time), and what the page allocated per frame.
  const gcMs = all.reduce((n, x) => n + (x.selfMs.get('garbage collection') ?? 0), 0);
  const alloc = allocationFigures(events, f.markAt, f.frameTimes[0]!, f.frameTimes[f.frameTimes.length - 1]!);
  const kbPerFrame = alloc && alloc.spanMs > 0 ? Math.round((alloc.allocatedMb * 1024) / (alloc.spanMs / (f.frames.length ? (f.frameTimes[f.frameTimes.length - 1]! - f.frameTimes[0]!) / f.frames.length : 16.7))) : 0;
  console.log(
    `  garbage collection on the main thread: ${(gcMs / all.length).toFixed(2)} ms per frame (${gcMs.toFixed(0)} ms in ${all.length} frames); ` +
      `collections ${alloc?.collections ?? 0}, allocated ${alloc?.allocatedMb ?? 0} MB in ${Math.round(alloc?.spanMs ?? 0)} ms = ${kbPerFrame} KB per frame; ${alloc?.kinds ?? ''}`,
  );
  // What started the major collections and which heap grew: with the collector's categories
  // (GAFFER_BENCH_TRACE_EXTRA_CATEGORIES=v8.gc,disabled-by-default-v8.gc,blink_gc,cppgc) Blink's bytes too.
  const gc = collectorFigures(events, f.markAt, f.frameTimes[0]!, f.frameTimes[f.frameTimes.length - 1]!);
  const blinkKbPerFrame = gc?.blinkAllocatedMb != null ? Math.round((gc.blinkAllocatedMb * 1024) / Math.max(1, f.frames.length)) : null;
  console.log(
    `  major collections started by: ${gc?.markingStarts ?? 'none'}; ` +
      (blinkKbPerFrame === null ? "Blink's heap: not in this trace (add disabled-by-default-v8.gc)" : `Blink's heap (Oilpan) allocated ${gc!.blinkAllocatedMb} MB = ${blinkKbPerFrame} KB per frame, live after the last major ${gc!.blinkLiveAfterMajorMb ?? '?'} MB`),
  );
  return {
    ...(blinkKbPerFrame === null ? {} : { 'transcript.traced.blinkAllocatedKbPerFrame': blinkKbPerFrame }),
    'transcript.traced.gcMsPerFrame': Number((gcMs / all.length).toFixed(2)),
    'transcript.traced.collections': alloc?.collections ?? 0,
    'transcript.traced.majorCollections': alloc?.majors ?? 0,
    'transcript.traced.majorCollectionCpuMs': alloc?.majorCpuMs ?? 0,
    'transcript.traced.allocatedKbPerFrame': kbPerFrame,
    'transcript.traced.frames': all.length,
    'transcript.traced.slowFrames': slow.length,
    'transcript.traced.framesDropped': drops.dropped,
    'transcript.traced.droppedMainOverBudget': drops.byCause['main thread over budget'],
    'transcript.traced.droppedMainWaited': drops.byCause['main thread waited for a core'],
    'transcript.traced.droppedMainWithinBudget': drops.byCause['main thread within budget'],
    'transcript.traced.idleFramesDropped': idleDrops.dropped,
    'transcript.traced.idleDroppedMainOverBudget': idleDrops.byCause['main thread over budget'],
    'transcript.traced.framesMainCpuOver16ms': overBudget.length,
    'transcript.traced.mainCpuMeanMs': Number((cpu.reduce((n, x) => n + x, 0) / cpu.length).toFixed(2)),
    'transcript.traced.mainCpuP99Ms': Number(percentile(cpu, 99).toFixed(1)),
    'transcript.traced.mainCpuMaxMs': Number(cpu[cpu.length - 1]!.toFixed(1)),
  };
}

export async function runTranscriptBench(): Promise<Record<string, number>> {
  if (!fs.existsSync(CHROMIUM)) {
    console.log(`\n(transcript: no Chromium at ${CHROMIUM}, skipped)`);
    return {};
  }
  const dir = benchDir('transcript');
  const { taskId, storedLines } = seed(dir);
  console.log(`\n## transcript: ${EVENTS} events (${storedLines} stored lines) in one attempt; load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  const g = await startHeadless(dir);
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'] });
  try {
    const page = await (await browser.newContext({ viewport: { width: 1440, height: 900 } })).newPage();
    await page.goto(`${g.url}/#token=${BENCH_OPERATOR_TOKEN}`);
    await page.waitForSelector('[data-testid="view-dashboard"]', { timeout: 60_000 });
    await page.evaluate((h) => (window.location.hash = h), `#/queues/${ROLE}?task=${taskId}`);
    await page.waitForSelector('[data-testid="view-transcript"]', { timeout: 60_000 });
    await page.click('.log-inline .section-head button[aria-expanded]'); // the wide log pane
    await page.waitForSelector('[data-testid="view-transcript"]');
    // From the click on Transcript until the last event (the result) is painted: every page loaded.
    const t0 = Date.now();
    await page.click('[data-testid="view-transcript"]');
    await page.waitForSelector('[data-testid="transcript-scroll"] .tx-result', { timeout: Number(process.env.GAFFER_BENCH_TRANSCRIPT_LOAD_TIMEOUT_MS ?? 180_000) }).catch(async (e: Error) => {
      const file = path.join(os.tmpdir(), 'gaffer-bench-transcript.png');
      await page.screenshot({ path: file });
      const rows = await page.$$eval('[data-testid="transcript-scroll"] .transcript-row', (els) => els.map((x) => x.getAttribute('data-index')).join(','));
      throw new Error(`${e.message}\nrows on screen: ${rows}; screenshot: ${file}`);
    });
    const loadMs = Date.now() - t0;
    // GAFFER_BENCH_TRANSCRIPT_PROFILE=file.cpuprofile: the page's CPU profile of the scroll (DevTools opens it).
    const profile = process.env.GAFFER_BENCH_TRANSCRIPT_PROFILE;
    const cdp = await page.context().newCDPSession(page);
    if (profile) {
      await cdp.send('Profiler.enable');
      await cdp.send('Profiler.start');
    }
    // The renderer's own script / style+layout time over the whole scroll (every frame, not only
    // the long ones): Chromium's Performance domain counters, read before and after.
    await cdp.send('Performance.enable');
    const metrics = async () => Object.fromEntries((await cdp.send('Performance.getMetrics')).metrics.map((m) => [m.name, m.value]));
    // The live heap the collector marks: after a full collection, once loaded and once scrolled.
    const liveHeapMb = async () => {
      await cdp.send('HeapProfiler.collectGarbage');
      return Number(((await cdp.send('Runtime.getHeapUsage')).usedSize / 2 ** 20).toFixed(1));
    };
    const heapLoadedMb = await liveHeapMb();
    const m0 = await metrics();
    const f = (await page.evaluate(`(${IN_PAGE})(${SCROLL_MS}, true)`)) as Omit<PageFigures, 'loadMs'>;
    const m1 = await metrics();
    const heapScrolledMb = await liveHeapMb();
    // GAFFER_BENCH_TRANSCRIPT_HEAP_PROFILE=file.heapprofile: where a scroll allocates, in one more
    // scroll without the idle pass (sampled, every object counted whether or not it was collected
    // since; DevTools' Memory panel opens it). Printed: MB allocated in all, and per frame.
    const heapProfile = process.env.GAFFER_BENCH_TRANSCRIPT_HEAP_PROFILE;
    if (heapProfile) {
      await cdp.send('HeapProfiler.startSampling', { samplingInterval: 16384, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
      const h = (await page.evaluate(`(${IN_PAGE})(${SCROLL_MS}, false)`)) as Omit<PageFigures, 'loadMs'>;
      const { profile: sampled } = await cdp.send('HeapProfiler.stopSampling');
      fs.writeFileSync(heapProfile, JSON.stringify(sampled));
      let bytes = 0;
      const sum = (n: typeof sampled.head): void => {
        bytes += n.selfSize;
        n.children.forEach(sum);
      };
      sum(sampled.head);
      console.log(`  heap-sampled scroll: ${(bytes / 2 ** 20).toFixed(1)} MB allocated in ${h.frames.length} frames = ${Math.round(bytes / 1024 / Math.max(1, h.frames.length))} KB per frame (${heapProfile})`);
    }
    if (profile) fs.writeFileSync(profile, JSON.stringify((await cdp.send('Profiler.stop')).profile));
    const perFrame = (name: string) => Number((((m1[name] ?? 0) - (m0[name] ?? 0)) * 1000 / Math.max(1, f.frames.length)).toFixed(2));
    const r: PageFigures = { loadMs, ...f };
    const sorted = [...r.frames].sort((a, b) => a - b);
    const p50 = percentile(sorted, 50);
    const idle = [...r.idle].sort((a, b) => a - b);
    // A frame is dropped when it took longer than 1.5 × the page's own idle frame (the display's
    // 16.7 ms on an idle machine; more on a loaded one).
    const idleP50 = percentile(idle, 50);
    const dropped = r.frames.filter((x) => x > 1.5 * idleP50).length;
    const idleDropped = r.idle.filter((x) => x > 1.5 * idleP50).length;
    // Without a trace, the long animation frames (over 50 ms of the main thread's wall time, CPU or
    // not) are what the page says of itself: a dropped frame overlapping one had its main thread busy.
    const inLongFrame = r.frames.filter((x, i) => x > 1.5 * idleP50 && r.loafWindows.some(([a, b]) => a < r.frameTimes[i + 1]! && b > r.frameTimes[i]!)).length;
    const live = liveFollowFigures();
    const figures = {
      'transcript.events': EVENTS,
      'transcript.storedLines': storedLines,
      'transcript.loadMs': r.loadMs,
      'transcript.frames': r.frames.length,
      'transcript.frameP50Ms': Number(p50.toFixed(1)),
      'transcript.frameP95Ms': Number(percentile(sorted, 95).toFixed(1)),
      'transcript.frameMaxMs': Number(sorted[sorted.length - 1]!.toFixed(1)),
      'transcript.framesOver50Ms': r.frames.filter((x) => x > 50).length,
      'transcript.framesDropped': dropped,
      'transcript.idleFrameP50Ms': Number(idleP50.toFixed(1)),
      'transcript.idleFrameP95Ms': Number(percentile(idle, 95).toFixed(1)),
      'transcript.idleFrames': r.idle.length,
      'transcript.idleFramesDropped': idleDropped,
      'transcript.framesDroppedInLongFrame': inLongFrame,
      'transcript.longFrames': r.longFrames,
      'transcript.longFrameScriptMs': Math.round(r.scriptMs),
      'transcript.longFrameLayoutMs': Math.round(r.layoutMs),
      'transcript.scriptMsPerFrame': perFrame('ScriptDuration'),
      'transcript.styleLayoutMsPerFrame': Number((perFrame('RecalcStyleDuration') + perFrame('LayoutDuration')).toFixed(2)),
      'transcript.taskMsPerFrame': perFrame('TaskDuration'),
      'transcript.outlineFrames': r.outlineFrames,
      'transcript.domNodesMax': Math.max(...r.domNodes),
      'transcript.nodesAddedPerFrame': Number((r.nodesAdded / Math.max(1, r.frames.length)).toFixed(1)),
      'transcript.rowsMax': Math.max(...r.rows),
      'transcript.scrollHeightPx': Math.round(r.scrollHeight),
      'transcript.liveHeapLoadedMb': heapLoadedMb,
      'transcript.liveHeapScrolledMb': heapScrolledMb,
      'transcript.liveFullRebuildMs': live.fullMs,
      'transcript.liveAppendMs': live.appendMs,
    };
    await screenshots(page);
    printTable(`Transcript of ${EVENTS.toLocaleString('en-US')} events, scrolled top to bottom in ${SCROLL_MS} ms (Chromium, 1440×900, wide pane)${r.reachedEnd ? '' : ' — DID NOT REACH THE END'}`, [
      { what: 'opened to last event painted (all pages loaded)', value: `${r.loadMs} ms` },
      { what: 'frames during the scroll', value: r.frames.length },
      { what: 'frame time p50 / p95 / max', value: `${figures['transcript.frameP50Ms']} / ${figures['transcript.frameP95Ms']} / ${figures['transcript.frameMaxMs']} ms` },
      { what: 'frames over 50 ms', value: figures['transcript.framesOver50Ms'] },
      { what: 'frames over 1.5 × the idle frame (dropped)', value: dropped },
      { what: 'of these, inside a long animation frame (main thread busy > 50 ms, CPU or waiting)', value: inLongFrame },
      { what: 'idle frame p50 / p95 (the machine, nothing to do)', value: `${figures['transcript.idleFrameP50Ms']} / ${figures['transcript.idleFrameP95Ms']} ms` },
      { what: 'idle frames over 1.5 × the idle frame, same duration, no scroll', value: `${idleDropped} of ${r.idle.length}` },
      { what: 'long animation frames: count / script / style+layout', value: `${r.longFrames} / ${figures['transcript.longFrameScriptMs']} ms / ${figures['transcript.longFrameLayoutMs']} ms` },
      { what: 'per frame, every frame: script / style+layout / all main-thread work', value: `${figures['transcript.scriptMsPerFrame']} / ${figures['transcript.styleLayoutMsPerFrame']} / ${figures['transcript.taskMsPerFrame']} ms` },
      { what: 'frames with rows drawn as outlines (moving a screen or more per frame)', value: `${r.outlineFrames} of ${r.frames.length}` },
      { what: 'DOM nodes in the list (max) / rows (max)', value: `${figures['transcript.domNodesMax']} / ${figures['transcript.rowsMax']}` },
      { what: 'DOM nodes made per frame (elements and text added to the list)', value: figures['transcript.nodesAddedPerFrame'] },
      { what: 'live JS heap after a full GC: loaded / after the scroll', value: `${heapLoadedMb} / ${heapScrolledMb} MB` },
      { what: 'list height', value: `${figures['transcript.scrollHeightPx']} px` },
      { what: `followed live: a page of ${live.pageLines} new lines, whole rebuild (before) / read once (now), median`, value: `${live.fullMs} / ${live.appendMs} ms` },
    ]);
    for (const line of r.longFrameScripts) console.log(`  long frame ${line}`);
    if (process.env.GAFFER_BENCH_TRANSCRIPT_TRACE === '1') Object.assign(figures, await tracedScroll(browser, page, 1.5 * idleP50));
    if (process.env.GAFFER_BENCH_TRANSCRIPT_GESTURE !== '0') Object.assign(figures, await userScroll(browser, page));
    return figures;
  } finally {
    await browser.close();
    await g.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await runTranscriptBench();
