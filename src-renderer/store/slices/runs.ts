/**
 * The runs slice: the slot ledger of one job (expected vs actual over a few weeks) and the open
 * backfill queue of every job, plus run details and the backfill actions.
 *
 * 1. The ledger belongs to one job at a time; an answer for a job that is no longer selected is
 *    dropped (generation number), so switching jobs quickly never shows the wrong slots.
 * 2. A very frequent job has more slots than the console fetches: the newest are kept and the
 *    ledger says it was truncated.
 */
import type { RunDetail } from '../../../src-main/common/console-api';
import type { Backfill, BackfillAction, LedgerEntry } from '../../../src-main/common/job-schema';
import { guarded, toUiError, type UiError } from '../../lib/errors';
import { emptyResource, type Resource } from '../resource';
import { resourceLoader, taskLoader, type Slice, type SliceContext } from '../slice';

export interface LedgerState {
  jobId: string | null;
  /** How many weeks back the heat-map and the slot list reach. */
  weeks: number;
  items: LedgerEntry[];
  /** More slots than the console fetches (a very frequent job): the oldest are left out. */
  truncated: boolean;
  /** Start of what `items` cover: the range asked for, or the oldest slot kept when truncated. */
  from: string | null;
  to: string | null;
  loading: boolean;
  error: UiError | null;
  loadedAt: number | null;
}

export interface RunsState {
  runs: {
    /** Open backfills (queued, held, failed, in flight) of every job, oldest slot first. */
    backfills: Resource<Backfill[]>;
    ledger: LedgerState;
  };
}

export const DEFAULT_LEDGER_WEEKS = 6;
/** Ledger pages fetched at most in one pass (5000 slots each), and slots kept at most. */
const LEDGER_MAX_PAGES = 4;
const LEDGER_PAGE = 5000;
const LEDGER_MAX_SLOTS = LEDGER_MAX_PAGES * LEDGER_PAGE;
/** Pages at most of the second pass that collects the newest slots of a very frequent job. */
const LEDGER_MAX_SLIDE_PAGES = 4 * LEDGER_MAX_PAGES;
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

export const initialRunsState = (): RunsState => ({ runs: { backfills: emptyResource(), ledger: emptyLedger() } });

export interface RunsActions {
  selectLedgerJob(jobId: string | null, weeks?: number): void;
  reloadLedger(): Promise<void>;
  getRun(id: string): Promise<RunDetail>;
  backfillAction(b: Pick<Backfill, 'id' | 'job' | 'slot'>, action: BackfillAction, reason: string): Promise<Backfill>;
  requestBackfill(jobId: string, slot: string, reason: string): Promise<Backfill>;
}

export function createRunsSlice(ctx: SliceContext<RunsState>): Slice<RunsActions> {
  const { call, now } = ctx;
  const runs = () => ctx.get().runs;
  const setRuns = (patch: Partial<RunsState['runs']>) => ctx.set({ runs: { ...runs(), ...patch } });
  const setLedger = (patch: Partial<LedgerState>) => setRuns({ ledger: { ...runs().ledger, ...patch } });

  const backfills = resourceLoader(ctx, { get: () => runs().backfills, set: (backfills) => setRuns({ backfills }) }, async () => {
    const pages = await Promise.all(OPEN_BACKFILL_STATUSES.map((status) => call('backfills.list', { status, limit: 1000 })));
    return pages.flatMap((p) => p.items).sort((a, b) => (a.slotAt < b.slotAt ? -1 : a.slotAt > b.slotAt ? 1 : a.id - b.id));
  });

  let ledgerGen = 0;

  /**
   * Pages `jobs.ledger` forward (oldest first: the only order it has) from `start`, at most
   * `maxPages` pages, keeping the newest `LEDGER_MAX_SLOTS` slots seen. Null when the selection
   * moved on meanwhile; `complete` when it reached `to`.
   */
  async function pageLedger(jobId: string, gen: number, start: string, to: string, maxPages: number): Promise<{ items: LedgerEntry[]; complete: boolean; lastAt: string } | null> {
    let items: LedgerEntry[] = [];
    const seen = new Set<string>();
    let cursor = start;
    for (let page = 0; ; page++) {
      const r = await call('jobs.ledger', { id: jobId, from: cursor, to, limit: LEDGER_PAGE });
      if (gen !== ledgerGen) return null;
      // Each page repeats the previous page's last instant (the cursor is inclusive).
      for (const e of r.items) {
        if (seen.has(e.slot)) continue;
        seen.add(e.slot);
        items.push(e);
      }
      if (items.length > LEDGER_MAX_SLOTS) items = items.slice(items.length - LEDGER_MAX_SLOTS);
      if (r.next === null) return { items, complete: true, lastAt: to };
      if (page + 1 >= maxPages) return { items, complete: false, lastAt: r.next };
      cursor = r.next;
    }
  }

  async function fetchLedger(): Promise<void> {
    const { jobId, weeks } = runs().ledger;
    if (!jobId) return;
    const gen = ledgerGen;
    setLedger({ loading: true });
    // From the Monday `weeks` weeks back (local days) to a week ahead: expected vs actual, and what is coming.
    const t = now();
    const start = new Date(t);
    start.setHours(0, 0, 0, 0);
    start.setDate(start.getDate() - ((start.getDay() + 6) % 7) - (weeks - 1) * 7);
    const from = start.toISOString();
    const to = new Date(t + 7 * 86_400_000).toISOString();
    try {
      let got = await pageLedger(jobId, gen, from, to, LEDGER_MAX_PAGES);
      if (!got) return;
      const truncated = !got.complete;
      if (truncated) {
        // More slots than the console fetches (a very frequent job): keep the newest. The ledger
        // only pages oldest first, so start again nearer `to` — 90% of the span that held a full
        // load before — and slide forward to the end, keeping the newest slots seen.
        const fromMs = Date.parse(from);
        const toMs = Date.parse(to);
        const span = Math.max(1, Math.floor((Date.parse(got.lastAt) - fromMs) * 0.9));
        const later = new Date(Math.min(toMs - 1, Math.max(fromMs, toMs - span))).toISOString();
        got = await pageLedger(jobId, gen, later, to, LEDGER_MAX_SLIDE_PAGES);
        if (!got) return;
      }
      const items = got.items;
      setLedger({ items, truncated, from: truncated ? (items[0]?.at ?? from) : from, to, loading: false, error: null, loadedAt: now() });
    } catch (e) {
      if (gen !== ledgerGen) return;
      setLedger({ loading: false, error: toUiError(e) });
    }
  }
  const ledger = taskLoader(ctx, fetchLedger);

  const refreshRuns = async () => {
    await Promise.all([backfills.refresh(), runs().ledger.jobId ? ledger.refresh() : Promise.resolve()]);
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
      setRuns({ ledger: { ...emptyLedger(w), jobId } });
      // Straight away, not behind a (now superseded) request in flight: its answer is dropped.
      if (jobId) void fetchLedger();
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
  };

  return {
    actions,
    topics: {
      runs: {
        refresh: refreshRuns,
        invalidate() {
          backfills.invalidate();
          if (runs().ledger.jobId) ledger.invalidate();
        },
      },
    },
    dispose() {
      backfills.dispose();
      ledger.dispose();
    },
  };
}
