/**
 * The audit slice: the audit browser's filtered list (newest first, paged by id cursor), its
 * live tail, the total, the streamed export and the chain verification.
 *
 * 1. A filter change starts a new generation; pages and counts of an older generation are dropped.
 * 2. While the list is scrolled to the top it follows the live tail (rows newer than its top are
 *    prepended); scrolled away, new rows are only counted (`unseen`) until the operator asks.
 * 3. Typed fields are debounced (`filterDebounceMs`); a form edit that maps to the same query
 *    does not reload.
 */
import type { AuditExportArgs, AuditVerifyResult } from '../../../src-main/common/console-api';
import type { AuditEvent } from '../../../src-main/common/model';
import { EMPTY_AUDIT_FORM, formToQuery, isFiltered, sameQuery, type AuditFilterForm, type AuditQueryArgs } from '../../lib/audit-query';
import { toUiError, type UiError } from '../../lib/errors';
import { taskLoader, type Slice, type SliceContext } from '../slice';

export const AUDIT_PAGE_SIZE = 200;
/** Keeps the list bounded when following a fast live tail (older rows reload by paging). */
export const MAX_LIVE_ROWS = 20_000;

export interface ExportState {
  running: boolean;
  format: 'jsonl' | 'csv' | null;
  rows: number;
  bytes: number;
  /** Rows expected, when known (an unfiltered range); null shows an indeterminate bar. */
  total: number | null;
  startedAt: number | null;
  finishedAt: number | null;
  result: { file: string; rows: number } | null;
  cancelled: boolean;
  error: UiError | null;
}

export interface AuditState {
  form: AuditFilterForm;
  /** The query the list shows (mapped from the form), without paging fields. */
  query: AuditQueryArgs;
  formError: string | null;
  /** How typed words were read ("operator" → every operator:…), shown under the filter. */
  formNotes: string[];
  items: AuditEvent[];
  /** `before` cursor for the next (older) page; null when the end was reached. */
  next: number | null;
  loading: boolean;
  error: UiError | null;
  /** The last page stopped at the scan budget: more matches may lie further back. */
  partial: boolean;
  /** Pages fetched for the current query (the first page counts as 1). */
  pages: number;
  selectedId: number | null;
  /** Rows appended since the list was loaded that are not shown yet. */
  unseen: number;
  /** The list is scrolled to the top: new rows are prepended live. */
  following: boolean;
  /** Matching rows for the current query (counted up to a cap), once known. */
  total: { count: number; exact: boolean } | null;
  /** Milliseconds the last first page took (request → state), for the status line. */
  firstPageMs: number | null;
  generation: number;
  export: ExportState;
  verify: { running: boolean; result: AuditVerifyResult | null; error: UiError | null; at: number | null };
}

export interface AuditSliceState {
  audit: AuditState;
}

const emptyExport = (): ExportState => ({
  running: false,
  format: null,
  rows: 0,
  bytes: 0,
  total: null,
  startedAt: null,
  finishedAt: null,
  result: null,
  cancelled: false,
  error: null,
});

export const initialAuditState = (): AuditSliceState => ({
  audit: {
    form: { ...EMPTY_AUDIT_FORM },
    query: {},
    formError: null,
    formNotes: [],
    items: [],
    next: null,
    loading: false,
    error: null,
    partial: false,
    pages: 0,
    selectedId: null,
    unseen: 0,
    following: true,
    total: null,
    firstPageMs: null,
    generation: 0,
    export: emptyExport(),
    verify: { running: false, result: null, error: null, at: null },
  },
});

export interface AuditActions {
  setAuditForm(patch: Partial<AuditFilterForm>, opts?: { immediate?: boolean }): void;
  resetAuditFilter(): void;
  applyAuditFilterNow(): void;
  reloadAudit(): Promise<void>;
  loadMoreAudit(): Promise<void>;
  selectAudit(id: number | null): void;
  setAuditFollowing(following: boolean): void;
  showUnseenAudit(): Promise<void>;
  verifyAudit(): Promise<void>;
  exportAudit(format: 'jsonl' | 'csv'): Promise<void>;
  clearExport(): void;
}

/**
 * Merges newer rows (newest first) on top of the list, dropping duplicates. If the newer page
 * did not reach down to the list (`gap`), the list is replaced so nothing in between is hidden.
 */
export function prependNewer(list: AuditEvent[], newer: AuditEvent[], gap: boolean): AuditEvent[] {
  if (gap) return newer;
  if (newer.length === 0) return list;
  const top = list[0]?.id ?? 0;
  const fresh = newer.filter((e) => e.id > top);
  return fresh.length ? [...fresh, ...list] : list;
}

export interface AuditSliceOptions {
  /** How long typed filters wait before they apply (250 ms by default). */
  filterDebounceMs?: number;
  /** An actor the operator typed by name (an instance's) → its id, when one is known. */
  actorAlias?: (name: string) => string | null;
}

export function createAuditSlice(ctx: SliceContext<AuditSliceState>, o: AuditSliceOptions = {}): Slice<AuditActions> {
  const filterDebounceMs = o.filterDebounceMs ?? 250;
  const { call, now, timers } = ctx;
  const audit = () => ctx.get().audit;
  const setAudit = (patch: Partial<AuditState>) => ctx.set({ audit: { ...audit(), ...patch } });

  /** Loads pages until the list has enough rows to fill the screen (partial pages may be short). */
  async function auditPage(mode: 'first' | 'more'): Promise<void> {
    const a = audit();
    if (mode === 'more' && (a.loading || a.next === null)) return;
    const gen = mode === 'first' ? a.generation + 1 : a.generation;
    const started = now();
    if (mode === 'first') setAudit({ generation: gen, items: [], next: null, loading: true, error: null, partial: false, pages: 0, unseen: 0, selectedId: null, total: null });
    else setAudit({ loading: true });
    let fetched = 0;
    try {
      for (let round = 0; round < 8; round++) {
        const cur = audit();
        const before = mode === 'first' && round === 0 ? undefined : (cur.next ?? undefined);
        const page = await call('audit.query', { ...cur.query, order: 'desc', limit: AUDIT_PAGE_SIZE, ...(before === undefined ? {} : { before }) });
        if (audit().generation !== gen) return;
        const items = [...audit().items, ...page.items];
        fetched += page.items.length;
        const next = page.next === null ? null : Number(page.next);
        setAudit({
          items,
          next,
          partial: page.partial,
          pages: audit().pages + 1,
          ...(mode === 'first' && round === 0 ? { firstPageMs: now() - started } : {}),
        });
        if (mode === 'first' && round === 0) void countAudit(gen);
        // A partial page (scan budget) with few matches: keep going a little so the screen fills.
        if (next === null || fetched >= AUDIT_PAGE_SIZE / 2 || !page.partial) break;
      }
      setAudit({ loading: false });
    } catch (e) {
      if (audit().generation !== gen) return;
      setAudit({ loading: false, error: toUiError(e) });
    }
  }

  /** The total for the status line and the export's progress; never blocks the list. */
  async function countAudit(gen: number): Promise<void> {
    try {
      const { limit: _l, order: _o, ...filter } = audit().query;
      const total = await call('audit.count', filter);
      if (audit().generation === gen) setAudit({ total });
    } catch {
      // The count is a nicety: the list works without it.
    }
  }

  /** Following the live tail: fetch rows newer than the top of the list. */
  const tail = taskLoader(ctx, async () => {
    const a = audit();
    if (a.loading || !a.following) return;
    const gen = a.generation;
    const top = a.items[0]?.id ?? 0;
    const page = await call('audit.query', { ...a.query, order: 'desc', limit: AUDIT_PAGE_SIZE, after: top });
    const cur = audit();
    if (cur.generation !== gen) return;
    const gap = page.next !== null;
    let items = prependNewer(cur.items, page.items, gap);
    let next = gap ? Number(page.next) : cur.next;
    if (items.length > MAX_LIVE_ROWS) {
      items = items.slice(0, MAX_LIVE_ROWS);
      next = items[items.length - 1]!.id;
    }
    setAudit({ items, next, unseen: 0, ...(gap ? { partial: page.partial } : {}) });
  });

  let filterTimer: unknown;
  const clearFilterTimer = () => {
    if (filterTimer !== undefined) timers.clearTimeout(filterTimer);
    filterTimer = undefined;
  };
  const applyFilter = () => {
    clearFilterTimer();
    const a = audit();
    const { query, error, notes } = formToQuery(a.form, o.actorAlias);
    setAudit({ formError: error, formNotes: notes });
    if (sameQuery(query, a.query) && a.pages > 0) return;
    setAudit({ query });
    void auditPage('first');
  };

  const actions: AuditActions = {
    setAuditForm(patch, o) {
      setAudit({ form: { ...audit().form, ...patch } });
      clearFilterTimer();
      if (o?.immediate) applyFilter();
      else filterTimer = timers.setTimeout(applyFilter, filterDebounceMs);
    },
    resetAuditFilter() {
      setAudit({ form: { ...EMPTY_AUDIT_FORM } });
      applyFilter();
    },
    applyAuditFilterNow: applyFilter,
    reloadAudit: () => auditPage('first'),
    loadMoreAudit: () => auditPage('more'),
    selectAudit(id) {
      setAudit({ selectedId: id });
    },
    setAuditFollowing(following) {
      const a = audit();
      if (a.following === following) return;
      setAudit({ following });
      if (following && a.unseen > 0) tail.invalidate();
    },
    async showUnseenAudit() {
      setAudit({ following: true });
      await tail.refresh();
    },

    async verifyAudit() {
      setAudit({ verify: { ...audit().verify, running: true, error: null } });
      try {
        const result = await call('audit.verify', {});
        setAudit({ verify: { running: false, result, error: null, at: now() } });
      } catch (e) {
        setAudit({ verify: { running: false, result: null, error: toUiError(e), at: now() } });
      }
    },

    async exportAudit(format) {
      const a = audit();
      if (a.export.running) return;
      const { limit: _l, order: _o, ...filter } = a.query;
      const args: AuditExportArgs = { ...filter, format };
      // The count when known; without filters, ids are dense, so the newest id bounds the export.
      const total = a.total ? a.total.count : !isFiltered(a.query) ? (a.items[0]?.id ?? null) : null;
      setAudit({ export: { ...emptyExport(), running: true, format, total, startedAt: now() } });
      let lastPaint = 0;
      try {
        const r = await ctx.exportAudit(args, (p) => {
          const t = now();
          if (!p.done && t - lastPaint < 100) return;
          lastPaint = t;
          setAudit({ export: { ...audit().export, rows: p.rows, bytes: p.bytes } });
        });
        const ex = audit().export;
        setAudit({ export: { ...ex, running: false, finishedAt: now(), result: r, cancelled: r === null, rows: r?.rows ?? ex.rows } });
        if (r) ctx.toast('success', `Exported ${r.rows.toLocaleString('en-US')} rows`, r.file);
      } catch (e) {
        const err = toUiError(e);
        setAudit({ export: { ...audit().export, running: false, finishedAt: now(), error: err } });
        ctx.toast('error', 'Export failed', err.message, err.code);
      }
    },
    clearExport() {
      setAudit({ export: emptyExport() });
    },
  };

  return {
    actions,
    topics: {
      audit: {
        refresh: () => (audit().pages === 0 ? auditPage('first') : Promise.resolve()),
        invalidate(inv) {
          const a = audit();
          if (a.following) {
            if (a.pages > 0) tail.invalidate();
          } else if (inv && inv.auditAppended > 0) setAudit({ unseen: a.unseen + inv.auditAppended });
        },
      },
    },
    dispose() {
      clearFilterTimer();
      tail.dispose();
    },
  };
}
