/**
 * The jobs slice of the console store: job list, slot ledger of one job, backfill queue and
 * calendars, plus the actions of the Jobs, Runs, "Why didn't it run?" and Calendars views.
 * Built by `createConsoleStore` with its `call` (connection status, typed errors) and `toast`.
 *
 * 1. One loader per resource (store/resource.ts): live `run.changed` / `job.changed` bursts
 *    collapse into at most one refetch per interval, and only for topics a mounted view watches.
 * 2. The ledger belongs to one job at a time; an answer for a job that is no longer selected is
 *    dropped (generation number), so switching jobs quickly never shows the wrong slots.
 * 3. Editor calls (validate / preview) are not stored: the editor owns its draft and drops stale
 *    answers itself. Saves and operator actions toast their outcome and refresh what they touch.
 */
import type { StoreApi } from 'zustand/vanilla';
import type { ConsoleArgs, ConsoleMethod, ConsoleResult, IcsImportResult, RunDetail, TriggerResult } from '../../src-main/common/console-api';
import type { Backfill, BackfillAction, BusinessCalendar, CalendarInput, Explanation, Job, JobIssue, JobSpecInput, JobSummary, LedgerEntry, PreviewResult } from '../../src-main/common/job-schema';
import type { Timers } from '../lib/debounce';
import { guarded as guardedAction, toUiError, type UiError } from '../lib/errors';
import { createLoader, emptyResource, type Loader, type Resource } from './resource';
import type { ConsoleState, ToastTone } from './types';

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

export interface JobsState {
  list: Resource<JobSummary[]>;
  calendars: Resource<BusinessCalendar[]>;
  /** Open backfills (queued, held, failed, in flight) of every job, oldest slot first. */
  backfills: Resource<Backfill[]>;
  ledger: LedgerState;
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

export function initialJobsState(): JobsState {
  return { list: emptyResource(), calendars: emptyResource(), backfills: emptyResource(), ledger: emptyLedger() };
}

export type JobActionKind = 'trigger' | 'pause' | 'resume' | 'enable' | 'disable';

export interface SaveJobInput {
  /** Absent: create. */
  id?: string;
  spec: JobSpecInput;
  reason?: string;
  expectedVersion?: number;
}

export interface JobsActions {
  selectLedgerJob(jobId: string | null, weeks?: number): void;
  reloadLedger(): Promise<void>;
  getJob(id: string): Promise<Job>;
  validateJob(spec: Record<string, unknown>): Promise<{ ok: boolean; issues: JobIssue[] }>;
  previewJob(args: ConsoleArgs<'jobs.preview'>): Promise<PreviewResult>;
  saveJob(input: SaveJobInput): Promise<{ job: Job; warnings: JobIssue[] }>;
  jobAction(kind: JobActionKind, job: Pick<Job, 'id' | 'name'>, reason: string): Promise<Job | TriggerResult>;
  explainJob(id: string, at?: string): Promise<Explanation>;
  getRun(id: string): Promise<RunDetail>;
  backfillAction(b: Pick<Backfill, 'id' | 'job' | 'slot'>, action: BackfillAction, reason: string): Promise<Backfill>;
  requestBackfill(jobId: string, slot: string, reason: string): Promise<Backfill>;
  validateCalendar(calendar: Record<string, unknown>): Promise<{ ok: boolean; issues: JobIssue[] }>;
  saveCalendar(input: { create: boolean; calendar: CalendarInput; reason?: string }): Promise<BusinessCalendar>;
  importIcs(id: string, ics: string, mode: 'merge' | 'replace', reason: string): Promise<IcsImportResult>;
}

export interface JobsSliceDeps {
  get: () => ConsoleState;
  set: StoreApi<ConsoleState>['setState'];
  call: <M extends ConsoleMethod>(method: M, args: ConsoleArgs<M>) => Promise<ConsoleResult<M>>;
  toast: (tone: ToastTone, title: string, body?: string, code?: string) => void;
  /** Other resources an action touches (the dashboard's counts). */
  invalidateDashboard: () => void;
  now: () => number;
  timers: Timers;
  refreshMs: number;
}

export interface JobsSlice {
  actions: JobsActions;
  refresh(topic: 'jobs' | 'runs' | 'calendars'): Promise<void>;
  invalidate(topic: 'jobs' | 'runs' | 'calendars'): void;
  dispose(): void;
}

const ACTION_WORDS: Record<JobActionKind, { done: string; failed: string }> = {
  trigger: { done: 'Triggered', failed: 'trigger' },
  pause: { done: 'Paused', failed: 'pause' },
  resume: { done: 'Resumed', failed: 'resume' },
  enable: { done: 'Enabled', failed: 'enable' },
  disable: { done: 'Disabled', failed: 'disable' },
};

export function createJobsSlice(d: JobsSliceDeps): JobsSlice {
  const { get, set, call, now, timers } = d;
  const setJobs = (patch: Partial<JobsState>) => set({ jobs: { ...get().jobs, ...patch } });
  const setLedger = (patch: Partial<LedgerState>) => setJobs({ ledger: { ...get().jobs.ledger, ...patch } });

  const loader = <K extends 'list' | 'calendars' | 'backfills'>(key: K, fetch: () => Promise<JobsState[K] extends Resource<infer T> ? T : never>): Loader =>
    createLoader({
      fetch,
      get: () => get().jobs[key] as Resource<unknown>,
      set: (r: Resource<unknown>) => setJobs({ [key]: r } as Partial<JobsState>),
      now,
      timers,
      minIntervalMs: d.refreshMs,
    } as never);

  const listLoader = loader('list', async () => {
    const out: JobSummary[] = [];
    let after: string | undefined;
    for (let i = 0; i < 20; i++) {
      const page = await call('jobs.list', { limit: 1000, ...(after !== undefined ? { after } : {}) });
      out.push(...page.items);
      if (page.next === null) break;
      after = page.next;
    }
    return out;
  });
  const calendarsLoader = loader('calendars', () => call('calendars.list', {}));
  const backfillsLoader = loader('backfills', async () => {
    const pages = await Promise.all(OPEN_BACKFILL_STATUSES.map((status) => call('backfills.list', { status, limit: 1000 })));
    return pages.flatMap((p) => p.items).sort((a, b) => (a.slotAt < b.slotAt ? -1 : a.slotAt > b.slotAt ? 1 : a.id - b.id));
  });

  // ---- ledger of the selected job ------------------------------------------------------------
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
    const { jobId, weeks } = get().jobs.ledger;
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
  const ledgerLoader = createLoader<null>({
    fetch: async () => {
      await fetchLedger();
      return null;
    },
    get: () => emptyResource<null>(),
    set: () => {},
    now,
    timers,
    minIntervalMs: d.refreshMs,
  });

  /** After an operator action: what it touched is fetched now (not at the next live tick). */
  const refreshAfterChange = () => {
    void listLoader.refresh();
    void backfillsLoader.refresh();
    if (get().jobs.ledger.jobId) void ledgerLoader.refresh();
    d.invalidateDashboard();
  };

  const guarded = <T>(what: string, fn: () => Promise<T>): Promise<T> => guardedAction(d.toast, what, fn);

  const actions: JobsActions = {
    selectLedgerJob(jobId, weeks) {
      const cur = get().jobs.ledger;
      const w = weeks ?? cur.weeks;
      if (cur.jobId === jobId && cur.weeks === w) return;
      ledgerGen++;
      setJobs({ ledger: { ...emptyLedger(w), jobId } });
      // Straight away, not behind a (now superseded) request in flight: its answer is dropped.
      if (jobId) void fetchLedger();
    },
    reloadLedger: () => ledgerLoader.refresh(),
    getJob: (id) => call('jobs.get', { id }),
    validateJob: (spec) => call('jobs.validate', { spec }),
    previewJob: (args) => call('jobs.preview', args),

    async saveJob(input) {
      const r = input.id
        ? await call('jobs.update', { id: input.id, spec: input.spec, reason: input.reason ?? '', ...(input.expectedVersion !== undefined ? { expectedVersion: input.expectedVersion } : {}) })
        : await call('jobs.create', { spec: input.spec, ...(input.reason ? { reason: input.reason } : {}) });
      d.toast('success', input.id ? `Saved ${r.job.name}: now version ${r.job.version}` : `Created job ${r.job.name} (version ${r.job.version})`, r.warnings.length ? `${r.warnings.length} warning(s): ${r.warnings[0]!.message}` : undefined);
      refreshAfterChange();
      return r;
    },

    jobAction(kind, job, reason) {
      return guarded(`${ACTION_WORDS[kind].failed} ${job.name}`, async () => {
        let out: Job | TriggerResult;
        switch (kind) {
          case 'trigger': {
            const r = await call('jobs.trigger', { id: job.id, reason });
            d.toast(r.dispatched ? 'success' : 'info', r.dispatched ? `Triggered ${job.name} (${r.run.slot})` : `${job.name}: ${r.created ? 'slot claimed' : 'nothing new'}`, r.message);
            out = r;
            break;
          }
          case 'pause':
            out = await call('jobs.pause', { id: job.id, reason });
            break;
          case 'resume':
            out = await call('jobs.resume', { id: job.id, reason });
            break;
          case 'enable':
          case 'disable':
            out = await call('jobs.setEnabled', { id: job.id, enabled: kind === 'enable', reason });
            break;
        }
        if (kind !== 'trigger') d.toast(kind === 'pause' || kind === 'disable' ? 'warning' : 'success', `${ACTION_WORDS[kind].done} ${job.name}`, `Reason: ${reason}`);
        refreshAfterChange();
        return out;
      });
    },

    explainJob: (id, at) => call('jobs.explain', { id, ...(at ? { at } : {}) }),
    getRun: (id) => call('runs.get', { id }),

    backfillAction(b, action, reason) {
      const verb = { run_now: 'run', cancel: 'cancel', mark_done: 'mark done' }[action];
      return guarded(`${verb} the backfill of ${b.job} ${b.slot}`, async () => {
        const r = await call('backfills.action', { id: b.id, action, reason });
        d.toast('success', `Backfill #${b.id} (${b.job} ${b.slot}): ${r.status}`, `Reason: ${reason}`);
        refreshAfterChange();
        return r;
      });
    },

    requestBackfill(jobId, slot, reason) {
      return guarded(`queue ${slot} for backfill`, async () => {
        const r = await call('backfills.request', { jobId, slot, reason });
        d.toast('success', `Queued ${r.job} ${slot} for backfill`, `Reason: ${reason}`);
        refreshAfterChange();
        return r;
      });
    },

    validateCalendar: (calendar) => call('calendars.validate', { calendar }),

    async saveCalendar({ create, calendar, reason }) {
      let r: BusinessCalendar;
      if (create) r = await call('calendars.create', { calendar, ...(reason ? { reason } : {}) });
      else {
        const { id, ...body } = calendar;
        r = await call('calendars.update', { id, calendar: body, reason: reason ?? '' });
      }
      d.toast('success', `${create ? 'Created' : 'Saved'} calendar ${r.id} (version ${r.version})`);
      void calendarsLoader.refresh();
      listLoader.invalidate();
      return r;
    },

    importIcs(id, ics, mode, reason) {
      return guarded('import the .ics file', async () => {
        const r = await call('calendars.importIcs', { id, ics, mode, reason });
        d.toast('success', `Imported into ${id}: +${r.added.holidays} holidays, +${r.added.extraWorkdays} make-up workdays`, r.warnings.length ? `${r.warnings.length} warning(s)` : undefined);
        void calendarsLoader.refresh();
        listLoader.invalidate();
        return r;
      });
    },
  };

  return {
    actions,
    refresh(topic) {
      switch (topic) {
        case 'jobs':
          return listLoader.refresh();
        case 'runs':
          return Promise.all([backfillsLoader.refresh(), get().jobs.ledger.jobId ? ledgerLoader.refresh() : Promise.resolve()]).then(() => undefined);
        case 'calendars':
          return calendarsLoader.refresh();
      }
    },
    invalidate(topic) {
      switch (topic) {
        case 'jobs':
          listLoader.invalidate();
          return;
        case 'runs':
          backfillsLoader.invalidate();
          if (get().jobs.ledger.jobId) ledgerLoader.invalidate();
          return;
        case 'calendars':
          calendarsLoader.invalidate();
          return;
      }
    },
    dispose() {
      for (const l of [listLoader, calendarsLoader, backfillsLoader, ledgerLoader]) l.dispose();
    },
  };
}
