/**
 * The runs slice: a job's slot ledger (expected vs actual) counted by day for the heat map, its
 * slots — all of them for a job with a few slots a day, or those of the hour drilled into for a
 * frequent one — the runs of every job (filtered, paged), the open backfill queue of every job,
 * run details and the backfill actions.
 *
 * 1. The ledger belongs to one job at a time; an answer for a job (or a drill-down) that is no
 *    longer selected is dropped (generation number), so switching quickly never shows the wrong slots.
 * 2. The day counts come first and decide the shape: a job with more than `FREQUENT_PER_DAY` slots
 *    on some day is "frequent" — its ledger is read as days, then the hours of a day, then the
 *    slots of an hour, never as one wall of thousands of rows.
 * 3. A live change refreshes the counts from yesterday on only (older slots rarely change; an
 *    operator action refreshes them all). A read from the start of a day replaces that day's
 *    counts; a day split over two pages of one read adds up.
 */
import type { RunDetail } from '../../../src-main/common/console-api';
import type { Backfill, BackfillAction, LedgerBucket, LedgerBucketsResult, LedgerEntry, Run, RunDisposition, RunStatus } from '../../../src-main/common/job-schema';
import { addDays } from '../../lib/days';
import { guarded, toUiError, type UiError } from '../../lib/errors';
import { runLink } from '../../lib/run-words';
import { dateInZone, zonedWallToUtc } from '../../lib/zones';
import { emptyResource, type Resource } from '../resource';
import { resourceLoader, taskLoader, type Slice, type SliceContext } from '../slice';

export interface LedgerState {
  jobId: string | null;
  /** How many weeks back the heat-map and the slot list reach. */
  weeks: number;
  /** The slots of [from, to): the weeks shown, or the hour drilled into (a frequent job). */
  items: LedgerEntry[];
  /** More slots than the console fetches: the newest are left out. */
  truncated: boolean;
  from: string | null;
  to: string | null;
  loading: boolean;
  error: UiError | null;
  loadedAt: number | null;
}

/** Slot counts per local day (or hour) of the job's zone. */
export interface BucketsState {
  items: LedgerBucket[];
  /** The job's zone, once the first answer is in. */
  zone: string | null;
  /** The day whose hours these are (hours only). */
  day: string | null;
  /** Every page of the range was read. */
  complete: boolean;
  loading: boolean;
  error: UiError | null;
  loadedAt: number | null;
}

/** What the slot list shows: every slot (null), the slots of one day, or of one hour. */
export interface LedgerScope {
  day: string | null;
  hour: string | null;
}

export interface AllRunsFilter {
  job?: string;
  status?: RunStatus;
  disposition?: RunDisposition;
  /** Slots due from (inclusive) / to (exclusive), ISO instants. */
  from?: string;
  to?: string;
}

export interface AllRunsState {
  filter: AllRunsFilter;
  items: Run[];
  next: string | null;
  loading: boolean;
  error: UiError | null;
  loadedAt: number | null;
  generation: number;
}

export interface RunsState {
  runs: {
    /** Open backfills (queued, held, failed, in flight) of every job, oldest slot first. */
    backfills: Resource<Backfill[]>;
    ledger: LedgerState;
    days: BucketsState;
    hours: BucketsState;
    scope: LedgerScope;
    all: AllRunsState;
  };
}

export const DEFAULT_LEDGER_WEEKS = 6;
/** More slots than this on some day: the ledger is read as days → hours → slots. */
export const FREQUENT_PER_DAY = 24;
const LEDGER_PAGE = 5000;
/** Slots kept at most in one slot list (a few slots a day over 12 weeks stays far below). */
const LEDGER_MAX_PAGES = 4;
/** Pages of day counts read at most (20 000 slots each). */
const BUCKET_MAX_PAGES = 10;
const ALL_RUNS_PAGE = 100;
const OPEN_BACKFILL_STATUSES = ['queued', 'held', 'failed', 'dispatched'] as const;

export const emptyLedger = (weeks = DEFAULT_LEDGER_WEEKS): LedgerState => ({
  jobId: null,
  weeks,
  items: [],
  truncated: false,
  from: null,
  to: null,
  loading: false,
  error: null,
  loadedAt: null,
});

const emptyBuckets = (day: string | null = null): BucketsState => ({ items: [], zone: null, day, complete: false, loading: false, error: null, loadedAt: null });
const emptyAllRuns = (filter: AllRunsFilter = {}, generation = 0): AllRunsState => ({ filter, items: [], next: null, loading: false, error: null, loadedAt: null, generation });

export const initialRunsState = (): RunsState => ({
  runs: { backfills: emptyResource(), ledger: emptyLedger(), days: emptyBuckets(), hours: emptyBuckets(), scope: { day: null, hour: null }, all: emptyAllRuns() },
});

/** True when some day of the range has more than `FREQUENT_PER_DAY` slots (invariant 2). */
export function isFrequent(days: Pick<BucketsState, 'items'>): boolean {
  return days.items.some((b) => b.slots > FREQUENT_PER_DAY);
}

/** [from, to) of a local day `YYYY-MM-DD` or hour `YYYY-MM-DDTHH` of `zone`, as ISO instants. */
export function scopeRange(key: string, zone: string): { from: string; to: string } | null {
  const isHour = key.length === 13;
  const day = key.slice(0, 10);
  const startWall = isHour ? `${key}:00` : `${day}T00:00`;
  let endWall: string;
  if (!isHour) endWall = `${addDays(day, 1)}T00:00`;
  else {
    const h = Number(key.slice(11, 13)) + 1;
    endWall = h === 24 ? `${addDays(day, 1)}T00:00` : `${day}T${String(h).padStart(2, '0')}:00`;
  }
  const from = zonedWallToUtc(startWall, zone);
  const to = zonedWallToUtc(endWall, zone);
  if (from === null || to === null || !(to > from)) return null;
  return { from: new Date(from).toISOString(), to: new Date(to).toISOString() };
}

export interface RunsActions {
  selectLedgerJob(jobId: string | null, weeks?: number): void;
  /** The slot list's scope: every slot, a day, or an hour (a frequent job reads them from the server). */
  selectLedgerScope(scope: LedgerScope): void;
  reloadLedger(): Promise<void>;
  getRun(id: string): Promise<RunDetail>;
  backfillAction(b: Pick<Backfill, 'id' | 'job' | 'slot'>, action: BackfillAction, reason: string): Promise<Backfill>;
  requestBackfill(jobId: string, slot: string, reason: string): Promise<Backfill>;
  /**
   * "Retry now": a failed run's slot runs again at once, as a new attempt of the same run. The
   * toast says so and links to the run; the runs, the inbox and the dashboard are refreshed.
   */
  retryRun(run: Pick<Run, 'id' | 'job' | 'slot'>, reason?: string): Promise<{ run: Run; backfill: Backfill }>;
  setAllRunsFilter(filter: AllRunsFilter): void;
  loadMoreAllRuns(): Promise<void>;
}

/** Adds the counts of buckets with the same key (a bucket may be split over two pages). */
export function mergeBuckets(into: readonly LedgerBucket[], more: readonly LedgerBucket[]): LedgerBucket[] {
  const by = new Map(into.map((b) => [b.key, { ...b, counts: { ...b.counts } }]));
  for (const b of more) {
    const cur = by.get(b.key);
    if (!cur) {
      by.set(b.key, { ...b, counts: { ...b.counts } });
      continue;
    }
    cur.slots += b.slots;
    for (const [k, n] of Object.entries(b.counts) as Array<[keyof LedgerBucket['counts'], number]>) cur.counts[k] = (cur.counts[k] ?? 0) + n;
  }
  return [...by.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

export function createRunsSlice(ctx: SliceContext<RunsState>): Slice<RunsActions> {
  const { call, now } = ctx;
  const runs = () => ctx.get().runs;
  const setRuns = (patch: Partial<RunsState['runs']>) => ctx.set({ runs: { ...runs(), ...patch } });
  const setLedger = (patch: Partial<LedgerState>) => setRuns({ ledger: { ...runs().ledger, ...patch } });
  const setDays = (patch: Partial<BucketsState>) => setRuns({ days: { ...runs().days, ...patch } });
  const setHours = (patch: Partial<BucketsState>) => setRuns({ hours: { ...runs().hours, ...patch } });
  const setAll = (patch: Partial<AllRunsState>) => setRuns({ all: { ...runs().all, ...patch } });

  const backfills = resourceLoader(ctx, { get: () => runs().backfills, set: (backfills) => setRuns({ backfills }) }, async () => {
    const pages = await Promise.all(OPEN_BACKFILL_STATUSES.map((status) => call('backfills.list', { status, limit: 1000 })));
    return pages.flatMap((p) => p.items).sort((a, b) => (a.slotAt < b.slotAt ? -1 : a.slotAt > b.slotAt ? 1 : a.id - b.id));
  });

  let ledgerGen = 0;

  /** The weeks shown: from the Monday `weeks` weeks back (local days) to a week ahead. */
  function weeksRange(weeks: number): { from: string; to: string } {
    const t = now();
    const start = new Date(t);
    start.setHours(0, 0, 0, 0);
    start.setDate(start.getDate() - ((start.getDay() + 6) % 7) - (weeks - 1) * 7);
    return { from: start.toISOString(), to: new Date(t + 7 * 86_400_000).toISOString() };
  }

  /** Pages `jobs.ledger` over [from, to), at most `LEDGER_MAX_PAGES` pages (each repeats the previous page's last instant). */
  async function fetchSlots(gen: number, from: string, to: string): Promise<void> {
    const jobId = runs().ledger.jobId;
    if (!jobId) return;
    setLedger({ loading: true });
    try {
      const items: LedgerEntry[] = [];
      const seen = new Set<string>();
      let cursor = from;
      let truncated = false;
      for (let page = 0; ; page++) {
        const r = await call('jobs.ledger', { id: jobId, from: cursor, to, limit: LEDGER_PAGE });
        if (gen !== ledgerGen) return;
        for (const e of r.items) {
          if (seen.has(e.slot)) continue;
          seen.add(e.slot);
          items.push(e);
        }
        if (r.next === null) break;
        if (page + 1 >= LEDGER_MAX_PAGES) {
          truncated = true;
          break;
        }
        cursor = r.next;
      }
      setLedger({ items, truncated, from, to, loading: false, error: null, loadedAt: now() });
    } catch (e) {
      if (gen !== ledgerGen) return;
      setLedger({ loading: false, error: toUiError(e) });
    }
  }

  /** Day (or hour) counts over [from, to), merged into what is there when `merge`. */
  async function fetchBuckets(gen: number, target: 'days' | 'hours', from: string, to: string, merge: boolean): Promise<boolean> {
    const jobId = runs().ledger.jobId;
    if (!jobId) return false;
    const set = target === 'days' ? setDays : setHours;
    set({ loading: true });
    try {
      let items: LedgerBucket[] = merge ? runs()[target].items : [];
      let cursor: string | null = from;
      let zone: string | null = null;
      let pages = 0;
      // `from` is the start of a bucket: what this read counts replaces the old counts of that
      // bucket, and a bucket split over two pages of this read adds up (invariant 3).
      const fresh = new Set<string>();
      while (cursor !== null && pages < BUCKET_MAX_PAGES) {
        const r: LedgerBucketsResult = await call('jobs.ledgerBuckets', { id: jobId, from: cursor, to, by: target === 'days' ? 'day' : 'hour' });
        if (gen !== ledgerGen) return false;
        const keys = new Set(r.buckets.map((b) => b.key));
        items = mergeBuckets(
          items.filter((b) => fresh.has(b.key) || !keys.has(b.key)),
          r.buckets,
        );
        for (const k of keys) fresh.add(k);
        zone = r.zone;
        cursor = r.next;
        pages++;
      }
      set({ items, zone, complete: cursor === null, loading: false, error: null, loadedAt: now() });
      return true;
    } catch (e) {
      if (gen !== ledgerGen) return false;
      set({ loading: false, error: toUiError(e) });
      return false;
    }
  }

  /** The slot list for the current scope: every slot of the weeks (a job with few slots), or the hour drilled into. */
  async function fetchScopeSlots(gen: number): Promise<void> {
    const { weeks } = runs().ledger;
    const { days, scope } = runs();
    if (!isFrequent(days)) {
      const r = weeksRange(weeks);
      return fetchSlots(gen, r.from, r.to);
    }
    const range = scope.hour && days.zone ? scopeRange(scope.hour, days.zone) : null;
    if (!range) {
      setLedger({ items: [], truncated: false, from: null, to: null, loading: false, error: null, loadedAt: now() });
      return;
    }
    return fetchSlots(gen, range.from, range.to);
  }

  async function fetchHours(gen: number): Promise<void> {
    const { days, scope } = runs();
    const range = scope.day && days.zone ? scopeRange(scope.day, days.zone) : null;
    if (!isFrequent(days) || !range) {
      setRuns({ hours: emptyBuckets() });
      return;
    }
    if (runs().hours.day !== scope.day) setRuns({ hours: emptyBuckets(scope.day) });
    await fetchBuckets(gen, 'hours', range.from, range.to, false);
  }

  /** Everything the selected job shows: its day counts, then (by their shape) its slots and hours. */
  async function fetchAll(): Promise<void> {
    const gen = ledgerGen;
    const r = weeksRange(runs().ledger.weeks);
    if (!(await fetchBuckets(gen, 'days', r.from, r.to, false))) return;
    await Promise.all([fetchScopeSlots(gen), fetchHours(gen)]);
  }

  /** Live: the counts from yesterday on (the job's days), and what the slot list shows. */
  async function fetchRecent(): Promise<void> {
    const gen = ledgerGen;
    const r = weeksRange(runs().ledger.weeks);
    const zone = runs().days.zone;
    const yesterday = zone ? scopeRange(dateInZone(now() - 86_400_000, zone), zone) : null;
    if (runs().days.loadedAt === null || !yesterday) return fetchAll();
    const recent = yesterday.from > r.from ? yesterday.from : r.from;
    if (!(await fetchBuckets(gen, 'days', recent, r.to, true))) return;
    await Promise.all([fetchScopeSlots(gen), fetchHours(gen)]);
  }

  const ledger = taskLoader(ctx, fetchAll);
  const ledgerLive = taskLoader(ctx, fetchRecent);

  // ---- runs of every job --------------------------------------------------------------------

  async function fetchAllRuns(mode: 'reload' | 'more'): Promise<void> {
    const a = runs().all;
    if (mode === 'more' && (a.next === null || a.loading)) return;
    const gen = a.generation;
    setAll({ loading: true });
    try {
      const limit = mode === 'reload' ? Math.min(1000, Math.max(ALL_RUNS_PAGE, a.items.length)) : ALL_RUNS_PAGE;
      const page = await call('runs.list', { ...a.filter, limit, ...(mode === 'more' && a.next ? { after: a.next } : {}) });
      if (gen !== runs().all.generation) return;
      setAll({ items: mode === 'more' ? [...runs().all.items, ...page.items] : page.items, next: page.next, loading: false, error: null, loadedAt: now() });
    } catch (e) {
      if (gen !== runs().all.generation) return;
      setAll({ loading: false, error: toUiError(e) });
    }
  }
  const allRuns = taskLoader(ctx, () => fetchAllRuns('reload'));
  let allRunsWatched = false;

  const refreshRuns = async () => {
    await Promise.all([backfills.refresh(), runs().ledger.jobId ? ledger.refresh() : Promise.resolve(), allRunsWatched ? allRuns.refresh() : Promise.resolve()]);
  };

  /** After a backfill action: the runs and the job list now, the dashboard's counts when next due. */
  const refreshAfterChange = () => {
    void refreshRuns();
    void ctx.refresh('jobs');
    ctx.invalidate('dashboard');
  };

  const actions: RunsActions = {
    selectLedgerJob(jobId, weeks) {
      const cur = runs().ledger;
      const w = weeks ?? cur.weeks;
      if (cur.jobId === jobId && cur.weeks === w) return;
      ledgerGen++;
      setRuns({ ledger: { ...emptyLedger(w), jobId }, days: emptyBuckets(), hours: emptyBuckets() });
      // Straight away, not behind a (now superseded) request in flight: its answer is dropped.
      if (jobId) void fetchAll();
    },

    selectLedgerScope(scope) {
      const cur = runs().scope;
      if (cur.day === scope.day && cur.hour === scope.hour) return;
      setRuns({ scope });
      if (!runs().ledger.jobId || runs().days.loadedAt === null || !isFrequent(runs().days)) return;
      ledgerGen++;
      const gen = ledgerGen;
      if (cur.hour !== scope.hour) void fetchScopeSlots(gen);
      if (cur.day !== scope.day) void fetchHours(gen);
    },

    reloadLedger: () => ledger.refresh(),
    getRun: (id) => call('runs.get', { id }),

    backfillAction(b, action, reason) {
      const verb = { run_now: 'run', cancel: 'cancel', mark_done: 'mark done' }[action];
      return guarded(ctx.toast, `${verb} the backfill of ${b.job} ${b.slot}`, async () => {
        const r = await call('backfills.action', { id: b.id, action, reason });
        ctx.toast('success', `Backfill #${b.id} (${b.job} ${b.slot}): ${r.status}`, `Reason: ${reason}`);
        refreshAfterChange();
        return r;
      });
    },

    requestBackfill(jobId, slot, reason) {
      return guarded(ctx.toast, `queue ${slot} for backfill`, async () => {
        const r = await call('backfills.request', { jobId, slot, reason });
        ctx.toast('success', `Queued ${r.job} ${slot} for backfill`, `Reason: ${reason}`);
        refreshAfterChange();
        return r;
      });
    },

    retryRun(run, reason) {
      return guarded(ctx.toast, `retry ${run.job} ${run.slot}`, async () => {
        const r = await call('runs.retry', { id: run.id, ...(reason ? { reason } : {}) });
        ctx.toast('success', `Retrying ${r.run.job} ${r.run.slot} now`, 'It runs again as a new attempt of the same run; its failure item resolves itself once it succeeds.', undefined, runLink(r.run));
        refreshAfterChange();
        ctx.invalidate('inbox');
        return r;
      });
    },

    setAllRunsFilter(filter) {
      allRunsWatched = true;
      const clean: AllRunsFilter = Object.fromEntries(Object.entries(filter).filter(([, v]) => v !== undefined && v !== '')) as AllRunsFilter;
      if (JSON.stringify(clean) === JSON.stringify(runs().all.filter) && runs().all.loadedAt !== null) return;
      setRuns({ all: emptyAllRuns(clean, runs().all.generation + 1) });
      void allRuns.refresh();
    },

    loadMoreAllRuns: () => fetchAllRuns('more'),
  };

  return {
    actions,
    topics: {
      runs: {
        refresh: refreshRuns,
        invalidate() {
          backfills.invalidate();
          if (runs().ledger.jobId) ledgerLive.invalidate();
          if (allRunsWatched) allRuns.invalidate();
        },
      },
    },
    dispose() {
      backfills.dispose();
      ledger.dispose();
      ledgerLive.dispose();
      allRuns.dispose();
    },
  };
}
