/**
 * Pure logic of the Runs view: the slot ledger as a calendar heat-map (expected vs actual, one
 * cell per local day of the job's zone, coloured by the worst thing that happened that day), the
 * backfill actions and the slot list's filters.
 */
import type { Backfill, LedgerEntry } from '../../../src-main/common/job-schema';
import { addDays, isoWeekday } from '../../lib/days';
import type { LedgerDisposition } from '../../lib/run-words';
import { dateInZone } from '../../lib/zones';

/** The heat-map's colours, from the operator's point of view. */
export type HeatClass = 'held' | 'failed' | 'missed' | 'not_ready' | 'skipped' | 'pending' | 'backfilled' | 'ok' | 'skipped_calendar' | 'none';

/** Worst first: a day shows the first class any of its slots has. */
export const HEAT_ORDER: HeatClass[] = ['held', 'failed', 'missed', 'not_ready', 'skipped', 'pending', 'backfilled', 'ok', 'skipped_calendar', 'none'];

export const HEAT_META: Record<HeatClass, { label: string; hint: string }> = {
  held: { label: 'held', hint: 'ran and failed; held for review (fatal or needs a human)' },
  failed: { label: 'failed', hint: 'ran and failed' },
  missed: { label: 'missed', hint: 'the window passed without a run (Gaffer off, or past the tolerance)' },
  not_ready: { label: 'skipped: not ready', hint: 'preconditions were not ready when the window closed — not a failure' },
  skipped: { label: 'skipped: operator / policy', hint: 'paused, disabled, kill switch, overlap, quota or maintenance' },
  pending: { label: 'pending', hint: 'scheduled, waiting, running or retrying' },
  backfilled: { label: 'backfilled', hint: 'run later from the backfill queue, or folded into a later run' },
  ok: { label: 'ran ok', hint: 'ran successfully' },
  skipped_calendar: { label: 'skipped: calendar', hint: 'not a workday (or a DST gap): nothing was expected' },
  none: { label: 'no slot', hint: 'the schedule has no slot that day' },
};

export function heatClassOf(d: LedgerDisposition): HeatClass {
  switch (d) {
    case 'ran':
      return 'ok';
    case 'failed':
    case 'rejected':
      return 'failed';
    case 'held':
      return 'held';
    case 'missed':
    case 'not_evaluated':
      return 'missed';
    case 'skipped_not_ready':
      return 'not_ready';
    case 'skipped_calendar':
    case 'skipped_dst':
      return 'skipped_calendar';
    case 'skipped_overlap':
    case 'skipped_paused':
    case 'skipped_kill_switch':
    case 'skipped_disabled':
    case 'skipped_maintenance':
    case 'skipped_quota':
    case 'skipped_budget':
      return 'skipped';
    case 'backfilled':
    case 'folded':
      return 'backfilled';
    case 'waiting':
    case 'dispatched':
    case 'running':
    case 'retry_scheduled':
    case 'scheduled':
      return 'pending';
    case 'before_job':
      return 'none';
  }
}



export interface HeatDay {
  /** Local date in the job's zone. */
  day: string;
  cls: HeatClass;
  /** Slots of that day by heat class. */
  counts: Partial<Record<HeatClass, number>>;
  slots: number;
  /** After today (in the job's zone): only forecasts. */
  future: boolean;
}

/** The local day (job zone) a ledger entry belongs to. */
export function entryDay(e: Pick<LedgerEntry, 'local' | 'at'>, zone: string): string {
  return e.local ? e.local.slice(0, 10) : dateInZone(Date.parse(e.at), zone);
}



/**
 * The heat-map grid: `weeks` columns of Monday…Sunday ending with the week after `today` (so the
 * next slots show as pending), each day coloured by the worst class of its slots.
 */
export function heatGrid(entries: readonly LedgerEntry[], zone: string, today: string, weeks: number): HeatDay[][] {
  const byDay = new Map<string, Partial<Record<HeatClass, number>>>();
  for (const e of entries) {
    const day = entryDay(e, zone);
    const c = heatClassOf(e.disposition);
    const m = byDay.get(day) ?? {};
    m[c] = (m[c] ?? 0) + 1;
    byDay.set(day, m);
  }
  const thisMonday = addDays(today, 1 - isoWeekday(today));
  const first = addDays(thisMonday, -7 * (weeks - 1));
  const cols: HeatDay[][] = [];
  for (let w = 0; w <= weeks; w++) {
    const col: HeatDay[] = [];
    for (let i = 0; i < 7; i++) {
      const day = addDays(first, w * 7 + i);
      const counts = byDay.get(day) ?? {};
      const slots = Object.values(counts).reduce((n, x) => n + (x ?? 0), 0);
      const cls = HEAT_ORDER.find((c) => (counts[c] ?? 0) > 0) ?? 'none';
      col.push({ day, cls, counts, slots, future: day > today });
    }
    cols.push(col);
  }
  return cols;
}

/** Tooltip of a heat-map cell: the day and what its slots did. */
export function heatTitle(d: HeatDay): string {
  if (d.slots === 0) return `${d.day}: no slot`;
  const parts = HEAT_ORDER.filter((c) => d.counts[c]).map((c) => `${d.counts[c]} ${HEAT_META[c].label}`);
  return `${d.day}: ${d.slots} slot${d.slots === 1 ? '' : 's'} — ${parts.join(', ')}`;
}

/** Counts of the whole range by heat class (the legend's numbers). */
export function heatTotals(entries: readonly LedgerEntry[]): Partial<Record<HeatClass, number>> {
  const out: Partial<Record<HeatClass, number>> = {};
  for (const e of entries) {
    const c = heatClassOf(e.disposition);
    out[c] = (out[c] ?? 0) + 1;
  }
  return out;
}

/** Which backfill actions apply (the server checks again). */
export function backfillActions(b: Pick<Backfill, 'status'>): Array<'run_now' | 'cancel' | 'mark_done'> {
  switch (b.status) {
    case 'queued':
    case 'held':
    case 'failed':
      return ['run_now', 'cancel', 'mark_done'];
    case 'dispatched':
    case 'done':
    case 'cancelled':
      return [];
  }
}

/** Slots that can be put in the backfill queue by hand (finished without success, none queued). */
export function canRequestBackfill(e: Pick<LedgerEntry, 'run' | 'backfills'>): boolean {
  if (!e.run) return false;
  if (e.run.status === 'pending' || e.run.status === 'running' || e.run.status === 'success') return false;
  return !e.backfills.some((b) => b.status === 'queued' || b.status === 'held' || b.status === 'dispatched');
}

export type LedgerFilter = 'past' | 'problems' | 'runs' | 'upcoming' | 'all';

export const LEDGER_FILTERS: Array<{ id: LedgerFilter; label: string; hint: string }> = [
  { id: 'past', label: 'Due so far', hint: 'slots due up to now since the job exists, newest first' },
  { id: 'problems', label: 'Problems', hint: 'failed, held, missed, not ready, or in the backfill queue' },
  { id: 'runs', label: 'With a run', hint: 'slots that have a run record' },
  { id: 'upcoming', label: 'Upcoming', hint: 'the next slots, soonest first' },
  { id: 'all', label: 'All', hint: 'every slot of the range, newest first' },
];

const PROBLEMS = new Set<LedgerDisposition>(['failed', 'held', 'missed', 'not_evaluated', 'skipped_not_ready']);

/** The slot list for a filter: past slots newest first, upcoming ones soonest first. */
export function filterLedger(items: readonly LedgerEntry[], filter: LedgerFilter, now: number): LedgerEntry[] {
  const newestFirst = [...items].reverse();
  switch (filter) {
    case 'past':
      return newestFirst.filter((e) => (Date.parse(e.at) <= now && e.disposition !== 'before_job') || e.run !== null);
    case 'problems':
      return newestFirst.filter((e) => PROBLEMS.has(e.disposition) || e.backfills.some((b) => b.status === 'queued' || b.status === 'held' || b.status === 'failed'));
    case 'runs':
      return newestFirst.filter((e) => e.run !== null);
    case 'upcoming':
      return items.filter((e) => Date.parse(e.at) > now && e.run === null);
    case 'all':
      return newestFirst;
  }
}
