/**
 * Which work made each slow frame of a scroll: Chromium's trace of the scroll, read per frame.
 *
 * The long-animation-frame API only reports frames over 50 ms and names scripts, not layout, paint,
 * garbage collection or the compositor; a frame of 25–50 ms with nothing in it said nothing. The
 * trace holds every task of every thread with its wall time (`dur`) and its thread CPU time
 * (`tdur`). The page marks the scroll's start (`performance.mark(FRAME_TRACE_MARK)`) so its
 * requestAnimationFrame times can be placed on the trace's clock; each slow frame then gets the
 * renderer main thread's busy time in it, the CPU time of that work, what took it (self time by
 * event: a script function, style, layout, paint, a GC), and how busy the compositor and raster
 * threads were. CPU time is the figure that does not move with the machine's load: work of a frame
 * whose main thread used little CPU waited for a core, it did not have too much to do.
 */
import type { Browser, Page } from 'playwright-core';

export const FRAME_TRACE_MARK = 'gaffer-frame-trace-start';

const CATEGORIES = [
  'toplevel',
  'devtools.timeline',
  'disabled-by-default-devtools.timeline',
  'blink.user_timing',
  'v8',
  'cc',
  'gpu',
].join(',');

interface TraceEvent {
  name: string;
  cat: string;
  ph: string;
  pid: number;
  tid: number;
  ts: number;
  dur?: number;
  tdur?: number;
  args?: { name?: string; usedHeapSizeBefore?: number; usedHeapSizeAfter?: number; data?: { functionName?: string; type?: string; url?: string } };
}

/**
 * GAFFER_BENCH_TRACE_EXTRA_CATEGORIES=a,b: more trace categories (e.g. `blink_gc,cppgc,v8.compile`
 * to name what "task (other)" — a task's self time with no event of the default categories in it — was).
 */
export async function startFrameTrace(browser: Browser, page: Page): Promise<void> {
  const extra = (process.env.GAFFER_BENCH_TRACE_EXTRA_CATEGORIES ?? '').split(',').filter(Boolean);
  await browser.startTracing(page, { categories: [...CATEGORIES.split(','), ...extra] });
}

export async function stopFrameTrace(browser: Browser): Promise<TraceEvent[]> {
  const raw = JSON.parse((await browser.stopTracing()).toString('utf8')) as { traceEvents?: TraceEvent[] } | TraceEvent[];
  return Array.isArray(raw) ? raw : (raw.traceEvents ?? []);
}

/** A slow frame: from one animation frame to the next, in the page's performance.now() ms. */
export interface FrameWindow {
  start: number;
  end: number;
}

export interface FrameAttribution {
  frameMs: number;
  /** The renderer main thread: wall time busy with tasks in this frame, and their CPU time. */
  mainBusyMs: number;
  mainCpuMs: number;
  /** The three biggest kinds of work on the main thread (self time), e.g. "Layout 12.1". */
  top: string[];
  /** Every kind of main-thread work in the frame, self time in ms. */
  selfMs: Map<string, number>;
  /** The same kinds, self CPU time in ms (an event's thread time less its children's, counted in the frame its event starts in). */
  selfCpuMs: Map<string, number>;
  compositorBusyMs: number;
  rasterBusyMs: number;
  gpuBusyMs: number;
}

function label(e: TraceEvent): string {
  const d = e.args?.data;
  if (e.name === 'FunctionCall' && d?.functionName) return `script ${d.functionName}`;
  if (e.name === 'FunctionCall') return 'script (anonymous)';
  if (e.name === 'EventDispatch' && d?.type) return `event ${d.type}`;
  if (e.name === 'TimerFire') return 'timer';
  if (e.name === 'FireAnimationFrame') return 'animation frame callback';
  if (e.name === 'UpdateLayoutTree') return 'style';
  if (/GC|Scavenge|MarkCompact/i.test(e.name)) return 'garbage collection';
  if (e.name === 'RunTask' || e.name === 'ThreadControllerImpl::RunTask') return 'task (other)';
  return e.name;
}

/** Wall time of `events` (top-level, non-overlapping) inside [a, b], and its share of their CPU time. */
function busyIn(events: TraceEvent[], a: number, b: number): { wall: number; cpu: number } {
  let wall = 0;
  let cpu = 0;
  for (const e of events) {
    const s = e.ts;
    const t = e.ts + (e.dur ?? 0);
    if (t <= a || s >= b) continue;
    const overlap = Math.min(t, b) - Math.max(s, a);
    wall += overlap;
    if (e.dur && e.tdur !== undefined) cpu += (e.tdur * overlap) / e.dur;
  }
  return { wall: wall / 1000, cpu: cpu / 1000 };
}

/** Complete events of one thread, the top-level tasks among them, and each event's self time. */
function threadTimeline(events: TraceEvent[]): { tasks: TraceEvent[]; selves: { e: TraceEvent; start: number; end: number }[]; selfCpu: { e: TraceEvent; cpu: number }[] } {
  const xs = events.filter((e) => e.ph === 'X' && e.dur !== undefined).sort((a, b) => a.ts - b.ts || (b.dur ?? 0) - (a.dur ?? 0));
  const tasks: TraceEvent[] = [];
  // Self time as intervals: each event's span minus its children's, kept as the pieces in between.
  const selves: { e: TraceEvent; start: number; end: number }[] = [];
  const stack: { e: TraceEvent; end: number; cursor: number; childCpu: number }[] = [];
  // Self CPU: an event's thread time less its children's.
  const selfCpu: { e: TraceEvent; cpu: number }[] = [];
  const close = (upTo: number): void => {
    while (stack.length && stack[stack.length - 1]!.end <= upTo) {
      const top = stack.pop()!;
      if (top.end > top.cursor) selves.push({ e: top.e, start: top.cursor, end: top.end });
      if (top.e.tdur !== undefined) selfCpu.push({ e: top.e, cpu: Math.max(0, top.e.tdur - top.childCpu) });
      if (stack.length) {
        stack[stack.length - 1]!.cursor = top.end;
        stack[stack.length - 1]!.childCpu += top.e.tdur ?? 0;
      }
    }
  };
  for (const e of xs) {
    close(e.ts);
    const end = e.ts + (e.dur ?? 0);
    const parent = stack[stack.length - 1];
    if (parent) {
      if (e.ts > parent.cursor) selves.push({ e: parent.e, start: parent.cursor, end: e.ts });
      parent.cursor = Math.min(end, parent.end);
    } else tasks.push(e);
    stack.push({ e, end: parent ? Math.min(end, parent.end) : end, cursor: e.ts, childCpu: 0 });
  }
  close(Infinity);
  return { tasks, selves, selfCpu };
}

/**
 * Attributes each frame window to the work that ran in it. `markAtMs` is the mark's
 * performance.now() in the page; returns null when the trace has no such mark.
 */
export function attributeFrames(events: TraceEvent[], markAtMs: number, frames: FrameWindow[]): FrameAttribution[] | null {
  const mark = events.find((e) => e.name === FRAME_TRACE_MARK);
  if (!mark) return null;
  const offset = mark.ts - markAtMs * 1000; // trace µs = page ms × 1000 + offset
  const threadNames = new Map<string, string>();
  for (const e of events) if (e.ph === 'M' && e.name === 'thread_name') threadNames.set(`${e.pid}:${e.tid}`, e.args?.name ?? '');
  const byThread = new Map<string, TraceEvent[]>();
  for (const e of events) {
    if (e.ph !== 'X') continue;
    const key = `${e.pid}:${e.tid}`;
    let list = byThread.get(key);
    if (!list) byThread.set(key, (list = []));
    list.push(e);
  }
  const threadsNamed = (test: (name: string, pid: number) => boolean): TraceEvent[][] =>
    [...byThread.entries()].filter(([k]) => test(threadNames.get(k) ?? '', Number(k.split(':')[0]))).map(([, v]) => v);
  const rendererPid = mark.pid;
  const main = threadTimeline(byThread.get(`${mark.pid}:${mark.tid}`) ?? []);
  const compositor = threadsNamed((n, pid) => pid === rendererPid && n === 'Compositor').map((t) => threadTimeline(t).tasks);
  const raster = threadsNamed((n, pid) => pid === rendererPid && n.startsWith('CompositorTileWorker')).map((t) => threadTimeline(t).tasks);
  const gpu = threadsNamed((n, pid) => pid !== rendererPid && (n === 'VizCompositorThread' || n === 'CrGpuMain')).map((t) => threadTimeline(t).tasks);
  const busiest = (lists: TraceEvent[][], a: number, b: number): number => Math.max(0, ...lists.map((l) => busyIn(l, a, b).wall));
  return frames.map(({ start, end }) => {
    const a = start * 1000 + offset;
    const b = end * 1000 + offset;
    const busy = busyIn(main.tasks, a, b);
    const self = new Map<string, number>();
    for (const s of main.selves) {
      const overlap = Math.min(s.end, b) - Math.max(s.start, a);
      if (overlap > 0) self.set(label(s.e), (self.get(label(s.e)) ?? 0) + overlap / 1000);
    }
    const top = [...self.entries()].sort((x, y) => y[1] - x[1]).slice(0, 3).map(([k, v]) => `${k} ${v.toFixed(1)}`);
    const selfCpuMs = new Map<string, number>();
    for (const s of main.selfCpu) if (s.e.ts >= a && s.e.ts < b) selfCpuMs.set(label(s.e), (selfCpuMs.get(label(s.e)) ?? 0) + s.cpu / 1000);
    return {
      frameMs: end - start,
      mainBusyMs: busy.wall,
      mainCpuMs: busy.cpu,
      top,
      selfMs: self,
      selfCpuMs,
      compositorBusyMs: busiest(compositor, a, b),
      rasterBusyMs: busiest(raster, a, b),
      gpuBusyMs: busiest(gpu, a, b),
    };
  });
}

/** Self time by kind of work over all `frames`, the biggest first, as "kind ms". */
export function selfTimeTotals(frames: FrameAttribution[], limit = 12, cpu = false): string[] {
  const sum = new Map<string, number>();
  for (const f of frames) for (const [k, v] of cpu ? f.selfCpuMs : f.selfMs) sum.set(k, (sum.get(k) ?? 0) + v);
  return [...sum.entries()].sort((a, b) => b[1] - a[1]).slice(0, limit).map(([k, v]) => `${k} ${v.toFixed(0)}`);
}

export function describeFrame(f: FrameAttribution, byCpu = false): string {
  const r = (x: number): string => x.toFixed(1);
  const top = byCpu ? [...f.selfCpuMs].sort((x, y) => y[1] - x[1]).slice(0, 5).map(([k, v]) => `${k} ${v.toFixed(1)}`) : f.top;
  return `${r(f.frameMs)} ms frame: main thread busy ${r(f.mainBusyMs)} ms (CPU ${r(f.mainCpuMs)} ms: ${top.join(', ') || 'nothing'}); compositor ${r(f.compositorBusyMs)}, raster ${r(f.rasterBusyMs)}, GPU process ${r(f.gpuBusyMs)} ms`;
}

/**
 * What the page allocated during a scroll, from the renderer's garbage collections between `fromMs`
 * and `toMs` (page ms). The trace's MinorGC / MajorGC events carry the heap's size before and after:
 * between the end of one collection and the start of the next the page allocated `before − after`
 * of the two, so from the first collection's end to the last one's start it allocated
 * Σ freed (all but the first) + (last after − first after).
 */
export function allocationFigures(events: TraceEvent[], markAtMs: number, fromMs: number, toMs: number): { collections: number; majors: number; majorCpuMs: number; allocatedMb: number; spanMs: number; gcWallMs: number; kinds: string } | null {
  const mark = events.find((e) => e.name === FRAME_TRACE_MARK);
  if (!mark) return null;
  const offset = mark.ts - markAtMs * 1000;
  const a = fromMs * 1000 + offset;
  const b = toMs * 1000 + offset;
  const gcs = events
    .filter((e) => e.pid === mark.pid && e.ph === 'X' && (e.name === 'MinorGC' || e.name === 'MajorGC') && e.ts >= a && e.ts < b && e.args?.usedHeapSizeBefore !== undefined)
    .sort((x, y) => x.ts - y.ts);
  // Each kind of collection: how many, their wall time, their CPU time.
  const byKind = new Map<string, { n: number; wall: number; cpu: number }>();
  for (const g of gcs) {
    const k = byKind.get(g.name) ?? { n: 0, wall: 0, cpu: 0 };
    byKind.set(g.name, { n: k.n + 1, wall: k.wall + (g.dur ?? 0) / 1000, cpu: k.cpu + (g.tdur ?? 0) / 1000 });
  }
  const kinds = [...byKind].map(([name, k]) => `${name} ${k.n}× ${k.wall.toFixed(0)} ms (CPU ${k.cpu.toFixed(0)} ms)`).join(', ');
  const majors = byKind.get('MajorGC')?.n ?? 0;
  const majorCpuMs = Math.round(byKind.get('MajorGC')?.cpu ?? 0);
  if (gcs.length < 2) return { collections: gcs.length, majors, majorCpuMs, allocatedMb: 0, spanMs: 0, gcWallMs: gcs.reduce((n, g) => n + (g.dur ?? 0) / 1000, 0), kinds };
  const before = (g: TraceEvent): number => g.args!.usedHeapSizeBefore!;
  const after = (g: TraceEvent): number => g.args!.usedHeapSizeAfter!;
  let bytes = after(gcs[gcs.length - 1]!) - after(gcs[0]!);
  for (const g of gcs.slice(1)) bytes += before(g) - after(g);
  const first = gcs[0]!;
  const last = gcs[gcs.length - 1]!;
  return {
    collections: gcs.length,
    majors,
    majorCpuMs,
    allocatedMb: Number((bytes / 2 ** 20).toFixed(1)),
    spanMs: (last.ts - (first.ts + (first.dur ?? 0))) / 1000,
    gcWallMs: Number((gcs.reduce((n, g) => n + (g.dur ?? 0), 0) / 1000).toFixed(1)),
    kinds,
  };
}

/** Why a dropped frame was late, from the page's main thread in its window. */
export type DropCause = 'main thread over budget' | 'main thread waited for a core' | 'main thread within budget';

/**
 * A dropped frame's cause. Over budget: the main thread used more than a frame (`budgetMs`) of CPU in
 * the frame's window — the page's own work, a garbage collection's pause included; the transcript's
 * figure. Waited for a core: its tasks held the main thread for more than a frame of wall time but
 * used less CPU than that (the OS ran something else meanwhile). Within budget: the main thread was
 * neither — the compositor, the GPU process (software, on the same cores) or the OS's scheduling of
 * them missed the vsync; the same kind of drop the idle page has.
 */
export function dropCause(f: FrameAttribution, budgetMs = 1000 / 60): DropCause {
  if (f.mainCpuMs > budgetMs) return 'main thread over budget';
  if (f.mainBusyMs > budgetMs) return 'main thread waited for a core';
  return 'main thread within budget';
}

/** Each dropped frame (over `slowMs`) of `frames` by cause: the counts, and a line per frame. */
export function dropCauses(frames: FrameAttribution[], slowMs: number, budgetMs = 1000 / 60): { dropped: number; byCause: Record<DropCause, number>; lines: string[] } {
  const byCause: Record<DropCause, number> = { 'main thread over budget': 0, 'main thread waited for a core': 0, 'main thread within budget': 0 };
  const lines: string[] = [];
  for (const f of frames) {
    if (f.frameMs <= slowMs) continue;
    const cause = dropCause(f, budgetMs);
    byCause[cause]++;
    const gc = f.selfCpuMs.get('garbage collection') ?? 0;
    lines.push(`${cause}${gc >= 1 ? ` (GC ${gc.toFixed(1)} ms CPU)` : ''}: ${describeFrame(f, true)}`);
  }
  return { dropped: lines.length, byCause, lines };
}

/**
 * What started the major collections, and which heap grew. V8's unified heap collects its own heap
 * and Blink's (Oilpan / cppgc: DOM nodes, layout objects, styles, fragments) together; incremental
 * marking starts when either nears its limit (`V8.GCIncrementalMarkingStart`'s reason, e.g.
 * "approaching global allocation limit" — V8's and Blink's bytes together — or the old generation's).
 * Each collection's `V8.GCTraceGCNVP` record (category disabled-by-default-v8.gc) holds V8's old
 * generation and the global bytes before and after it; Blink's bytes are the difference, so
 * between one collection's end and the next one's start Blink allocated the growth of that difference
 * (Blink's heap shrinks only in major collections). Without that category, `blinkAllocatedMb` is null.
 */
export function collectorFigures(events: TraceEvent[], markAtMs: number, fromMs: number, toMs: number): { markingStarts: string; blinkAllocatedMb: number | null; blinkLiveAfterMajorMb: number | null } | null {
  const mark = events.find((e) => e.name === FRAME_TRACE_MARK);
  if (!mark) return null;
  const offset = mark.ts - markAtMs * 1000;
  const a = fromMs * 1000 + offset;
  const b = toMs * 1000 + offset;
  const inScroll = (e: TraceEvent): boolean => e.pid === mark.pid && e.ts >= a && e.ts < b;
  const reasons = new Map<string, number>();
  for (const e of events) {
    if (e.name !== 'V8.GCIncrementalMarkingStart' || !inScroll(e)) continue;
    const v = (e.args as { value?: { reason?: string; gc_reason?: string } } | undefined)?.value;
    const k = `${v?.reason ?? '?'}${v?.gc_reason ? ` (via ${v.gc_reason})` : ''}`;
    reasons.set(k, (reasons.get(k) ?? 0) + 1);
  }
  interface Nvp { ts: number; gc: string; start_old_gen_consumed_size: number; end_old_gen_consumed_size: number; start_global_consumed_size: number; end_global_consumed_size: number }
  const nvp = events
    .filter((e) => e.name === 'V8.GCTraceGCNVP' && inScroll(e))
    .map((e) => {
      try {
        return { ...(JSON.parse(String((e.args as { value?: unknown } | undefined)?.value)) as Nvp), ts: e.ts };
      } catch {
        return null;
      }
    })
    .filter((x): x is Nvp => x !== null && typeof x.start_global_consumed_size === 'number')
    .sort((x, y) => x.ts - y.ts);
  let blink: number | null = null;
  let liveAfterMajor: number | null = null;
  if (nvp.length >= 2) {
    blink = 0;
    for (let i = 1; i < nvp.length; i++) {
      const grew = nvp[i]!.start_global_consumed_size - nvp[i]!.start_old_gen_consumed_size - (nvp[i - 1]!.end_global_consumed_size - nvp[i - 1]!.end_old_gen_consumed_size);
      blink += Math.max(0, grew);
    }
    for (const g of nvp) if (g.gc !== 's') liveAfterMajor = g.end_global_consumed_size - g.end_old_gen_consumed_size;
  }
  return {
    markingStarts: [...reasons].map(([k, n]) => `${n}× ${k}`).join(', ') || 'none',
    blinkAllocatedMb: blink === null ? null : Number((blink / 2 ** 20).toFixed(1)),
    blinkLiveAfterMajorMb: liveAfterMajor === null ? null : Number((liveAfterMajor / 2 ** 20).toFixed(1)),
  };
}

/**
 * The compositor's own account of a scroll driven through Chromium's input pipeline
 * (`Input.synthesizeScrollGesture`): with the `benchmark` category the trace holds one
 * `PipelineReporter` per frame of each compositor (its state: presented all, presented partial — the
 * compositor's part went out without the main thread's update —, dropped, or no update wanted;
 * `has_missing_content` / `checkerboarded_needs_record|raster` when tiles in view were not ready;
 * `scroll_state`: which thread scrolled) and one `ScrollJankV4` per scroll frame (Chromium's own
 * scroll-jank verdict, `is_janky`, and the vsyncs since the previous presented scroll frame).
 */
export const FRAME_REPORT_CATEGORIES = ['benchmark'];

export interface CompositorScrollFigures {
  /** Frames of the scrolling renderer's compositor between its first and last scrolling frame. */
  frames: number;
  spanMs: number;
  byState: Record<string, number>;
  byScrollState: Record<string, number>;
  /** Presented frames whose tiles in view were not all ready (checkerboarded: blank or stale area). */
  missingContent: number;
  /** Frames that were dropped or presented without the main thread's part. */
  droppedOrPartial: number;
  /** ScrollJankV4: scroll frames, those Chromium calls janky, and vsyncs missed between scroll frames. */
  scrollFrames: number;
  janky: number;
  missedVsyncs: number;
}

interface FrameReporter {
  state?: string;
  scroll_state?: string;
  has_missing_content?: boolean;
}

export function compositorScrollFigures(events: TraceEvent[]): CompositorScrollFigures | null {
  const renderers = new Set(events.filter((e) => e.name === 'process_name' && (e.args as { name?: string } | undefined)?.name === 'Renderer').map((e) => e.pid));
  const reports = events.filter((e) => e.name === 'PipelineReporter' && e.ph === 'b' && renderers.has(e.pid));
  const reporterOf = (e: TraceEvent) => ((e.args as { frame_reporter?: FrameReporter } | undefined)?.frame_reporter ?? {}) as FrameReporter;
  // The renderer that scrolled: the one with the most scrolling frames.
  const scrolling = new Map<number, number>();
  for (const e of reports) if ((reporterOf(e).scroll_state ?? 'SCROLL_NONE') !== 'SCROLL_NONE') scrolling.set(e.pid, (scrolling.get(e.pid) ?? 0) + 1);
  const pid = [...scrolling.entries()].sort((a, b) => b[1] - a[1])[0]?.[0];
  if (pid === undefined) return null;
  const mine = reports.filter((e) => e.pid === pid).sort((a, b) => a.ts - b.ts);
  const isScrolling = (e: TraceEvent) => (reporterOf(e).scroll_state ?? 'SCROLL_NONE') !== 'SCROLL_NONE';
  const first = mine.find(isScrolling)!.ts;
  const last = [...mine].reverse().find(isScrolling)!.ts;
  const inSpan = mine.filter((e) => e.ts >= first && e.ts <= last);
  const count = (xs: string[]) => xs.reduce<Record<string, number>>((m, k) => ((m[k] = (m[k] ?? 0) + 1), m), {});
  const byState = count(inSpan.map((e) => (reporterOf(e).state ?? '?').replace(/^STATE_/, '').toLowerCase()));
  const byScrollState = count(inSpan.map((e) => (reporterOf(e).scroll_state ?? '?').replace(/^SCROLL_/, '').toLowerCase()));
  const jank = events
    .filter((e) => e.name === 'ScrollJankV4' && e.ph === 'b' && e.pid === pid && e.ts >= first - 50_000 && e.ts <= last + 50_000)
    .map((e) => (e.args as { scroll_jank_v4?: { is_janky?: boolean; vsyncs_since_previous_frame?: number } } | undefined)?.scroll_jank_v4 ?? {});
  return {
    frames: inSpan.length,
    spanMs: Math.round((last - first) / 1000),
    byState,
    byScrollState,
    missingContent: inSpan.filter((e) => reporterOf(e).has_missing_content === true).length,
    droppedOrPartial: (byState['dropped'] ?? 0) + (byState['presented_partial'] ?? 0),
    scrollFrames: jank.length,
    janky: jank.filter((j) => j.is_janky === true).length,
    missedVsyncs: jank.reduce((n, j) => n + Math.max(0, (j.vsyncs_since_previous_frame ?? 1) - 1), 0),
  };
}
