/**
 * Pure logic of the Runs view: the slot ledger as a calendar heat-map (expected vs actual, one
 * cell per local day of the job's zone, coloured by the worst thing that happened that day), the
 * day and hour counts a frequent job is read by, the backfill actions and the slot list's filters.
 */
import { RUN_DISPOSITIONS, RUN_STATUSES, type Backfill, type LedgerBucket, type LedgerEntry, type Run, type RunDisposition, type RunStatus } from '../../../src-main/common/job-schema';
import { addDays, isoWeekday } from '../../lib/days';
import type { AllRunsFilter } from '../../store/slices/runs';
import { actorWords, backfillReasonWords, type LedgerDisposition } from '../../lib/run-words';
import { dateInZone } from '../../lib/zones';

/** The heat-map's colours, from the operator's point of view. */
export type HeatClass =
  | 'held'
  | 'failed'
  | 'missed'
  | 'not_ready'
  | 'skipped'
  | 'pending'
  | 'backfilled'
  | 'ok'
  | 'skipped_calendar'
  | 'upcoming'
  | 'before_job'
  | 'none';

/** Worst first: a day shows the first class any of its slots has. */
export const HEAT_ORDER: HeatClass[] = ['held', 'failed', 'missed', 'not_ready', 'skipped', 'pending', 'backfilled', 'ok', 'skipped_calendar', 'upcoming', 'before_job', 'none'];

/** Classes that say nothing happened yet or could happen: not counted in the totals. */
const NOT_COUNTED = new Set<HeatClass>(['upcoming', 'before_job', 'none']);

export const HEAT_META: Record<HeatClass, { label: string; hint: string }> = {
  held: { label: 'held', hint: 'ran and failed; held for review (fatal or needs a human)' },
  failed: { label: 'failed', hint: 'ran and failed' },
  missed: { label: 'missed', hint: 'the window passed without a run (Gaffer off, or past the tolerance)' },
  not_ready: { label: 'skipped: not ready', hint: 'preconditions were not ready when the window closed — not a failure' },
  skipped: { label: 'skipped: operator / policy', hint: 'paused, disabled, kill switch, overlap, quota or maintenance' },
  pending: { label: 'pending', hint: 'due and not finished yet: waiting, running or retrying' },
  backfilled: { label: 'backfilled', hint: 'run later from the backfill queue, or folded into a later run' },
  ok: { label: 'ran ok', hint: 'ran successfully' },
  skipped_calendar: { label: 'skipped: calendar', hint: 'not a workday (or a DST gap): nothing was expected' },
  upcoming: { label: 'upcoming', hint: 'not due yet' },
  before_job: { label: 'before the job existed', hint: 'the schedule has a slot, but the job was created later: nothing was expected' },
  none: { label: 'no slot', hint: 'the schedule has no slot that day' },
};

export function heatClassOf(d: LedgerDisposition): HeatClass {
  switch (d) {
    case 'ran':
    case 'already_done':
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
    case 'verifying':
    case 'retry_scheduled':
      return 'pending';
    case 'scheduled':
      return 'upcoming';
    case 'before_job':
      return 'before_job';
  }
}

/** Counts by disposition → counts by heat class. */
export function heatCounts(counts: LedgerBucket['counts']): Partial<Record<HeatClass, number>> {
  const out: Partial<Record<HeatClass, number>> = {};
  for (const [d, n] of Object.entries(counts) as Array<[LedgerDisposition, number]>) {
    const c = heatClassOf(d);
    out[c] = (out[c] ?? 0) + n;
  }
  return out;
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
 * The heat-map grid from the day counts: `weeks` columns of Monday…Sunday ending with the week
 * after `today` (so the next slots show as upcoming), each day coloured by the worst class of its slots.
 */
export function heatGrid(days: ReadonlyArray<Pick<LedgerBucket, 'key' | 'counts'>>, today: string, weeks: number): HeatDay[][] {
  const byDay = new Map(days.map((b) => [b.key, heatCounts(b.counts)]));
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

/** Counts of the whole range by heat class (the legend's numbers): only slots due by now, since the job exists. */
export function heatTotals(days: ReadonlyArray<Pick<LedgerBucket, 'counts'>>): Partial<Record<HeatClass, number>> {
  const out: Partial<Record<HeatClass, number>> = {};
  for (const b of days) {
    for (const [c, n] of Object.entries(heatCounts(b.counts)) as Array<[HeatClass, number]>) {
      if (NOT_COUNTED.has(c)) continue;
      out[c] = (out[c] ?? 0) + n;
    }
  }
  return out;
}

/** One row of a day or hour table: its slots grouped the way the operator reads them. */
export interface BucketRow {
  key: string;
  slots: number;
  ok: number;
  problems: number;
  skipped: number;
  pending: number;
  upcoming: number;
  /** Slots before the job existed. */
  before: number;
  /** The worst class: the row's colour. */
  cls: HeatClass;
}

/** Rows with something due since the job exists (a day all before the job, or all still to come, says nothing yet). */
export function dueRows(rows: readonly BucketRow[]): BucketRow[] {
  return rows.filter((r) => r.upcoming + r.before < r.slots);
}

export function bucketRow(b: Pick<LedgerBucket, 'key' | 'slots' | 'counts'>): BucketRow {
  const c = heatCounts(b.counts);
  const n = (...k: HeatClass[]) => k.reduce((sum, x) => sum + (c[x] ?? 0), 0);
  return {
    key: b.key,
    slots: b.slots,
    ok: n('ok', 'backfilled'),
    problems: n('held', 'failed', 'missed', 'not_ready'),
    skipped: n('skipped', 'skipped_calendar'),
    pending: n('pending'),
    upcoming: n('upcoming'),
    before: n('before_job'),
    cls: HEAT_ORDER.find((x) => (c[x] ?? 0) > 0) ?? 'none',
  };
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
  // A backfill already completed it (the run keeps its failed status; its disposition says backfilled).
  if (e.run.disposition === 'backfilled') return false;
  return !e.backfills.some((b) => b.status === 'queued' || b.status === 'held' || b.status === 'dispatched');
}

/**
 * Whether "Retry now" applies: a run that ended failed for good and has not run again since (not
 * backfilled, no backfill running). A held run is approved or rejected instead, and a rejected one
 * stays as the operator decided. The server checks again.
 */
export function canRetryRun(e: Pick<LedgerEntry, 'run' | 'backfills'>): boolean {
  const r = e.run;
  if (!r || r.status !== 'failed' || r.disposition !== 'failed' || r.held) return false;
  return !e.backfills.some((b) => b.status === 'dispatched' || b.status === 'held');
}

/** A run held for review (needs a human, or stopped by its cap) waits for an approval; the server re-checks. */
export function canApproveRun(r: Pick<Run, 'held' | 'disposition'> | null): boolean {
  return !!r && r.held && r.disposition !== 'backfilled' && r.disposition !== 'rejected';
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

// ---- the runs of every job ----------------------------------------------------------------

const RUN_STATUS_SET = new Set<string>(RUN_STATUSES);
const RUN_DISPOSITION_SET = new Set<string>(RUN_DISPOSITIONS);

/** The operator's local midnight of `YYYY-MM-DD` as an ISO instant (null when it is no date). */
function localMidnight(day: string): string | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day);
  if (!m) return null;
  const t = new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3])).getTime();
  return Number.isFinite(t) ? new Date(t).toISOString() : null;
}

/** `#/runs?all=1&job=…&status=…&disposition=…&from=2026-11-01&to=2026-11-30` → the server's filter (days are the operator's, `to` included). */
export function filterOfAllRunsQuery(q: Record<string, string>): AllRunsFilter {
  const from = q.from ? localMidnight(q.from) : null;
  const to = q.to ? localMidnight(addDays(q.to, 1)) : null;
  return {
    ...(q.job ? { job: q.job } : {}),
    ...(q.status && RUN_STATUS_SET.has(q.status) ? { status: q.status as RunStatus } : {}),
    ...(q.disposition && RUN_DISPOSITION_SET.has(q.disposition) ? { disposition: q.disposition as RunDisposition } : {}),
    ...(from ? { from } : {}),
    ...(to ? { to } : {}),
  };
}

/** The route query of the all-jobs ledger (empty fields dropped). */
export function allRunsQuery(q: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = { all: '1' };
  for (const k of ['job', 'status', 'disposition', 'from', 'to']) if (q[k]) out[k] = q[k]!;
  return out;
}

/** The backfill that completed the slot, if one did (the newest done one). */
export function completingBackfill(backfills: readonly Backfill[]): Backfill | null {
  return [...backfills].reverse().find((b) => b.status === 'done') ?? null;
}

/** What happened to a slot's run, in the order it happened: its own attempt, then each backfill's queueing, dispatch and end. */
export function slotTimeline(run: Pick<Run, 'createdAt' | 'triggeredAt' | 'startedAt' | 'finishedAt' | 'status'>, backfills: readonly Backfill[]): Array<{ at: string; what: string }> {
  const out: Array<{ at: string; what: string }> = [{ at: run.createdAt, what: 'claimed' }];
  if (run.triggeredAt) out.push({ at: run.triggeredAt, what: 'triggered' });
  if (run.startedAt) out.push({ at: run.startedAt, what: 'started' });
  if (run.finishedAt) out.push({ at: run.finishedAt, what: `finished (${run.status})` });
  for (const b of backfills) {
    out.push({ at: b.createdAt, what: `queued for backfill #${b.id} (${backfillReasonWords(b.reason)})` });
    if (b.approval) out.push({ at: b.approval.at, what: `approved by ${actorWords(b.approval.by)}: “${b.approval.note}”` });
    if (b.dispatchedAt) out.push({ at: b.dispatchedAt, what: `backfill #${b.id} dispatched${b.instanceId ? ` to ${b.instanceId}` : ''}` });
    if (b.finishedAt) out.push({ at: b.finishedAt, what: `backfill #${b.id} ${b.status === 'done' ? (b.dispatchedAt ? 'done' : 'marked done by hand') : b.status}` });
  }
  // Causal order, not clock order: a claim and its trigger share a millisecond.
  return out;
}
