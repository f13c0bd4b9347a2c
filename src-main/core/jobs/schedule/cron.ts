/**
 * Cron expressions (5 fields, parsed by croner) and their wall-clock occurrences in an IANA zone.
 *
 * Invariants:
 * - Only classic 5-field cron is accepted (minute hour day-of-month month day-of-week, Vixie OR
 *   semantics when both day fields are restricted) plus croner's L / W / # extensions and the
 *   nicknames @yearly @annually @monthly @weekly @daily @midnight @hourly. `?` is rejected
 *   (croner would substitute the current time, which would make slots depend on "now").
 * - croner only answers "which local dates match" (it runs at UTC+0, i.e. on naive wall-clock
 *   time); the conversion of each local time to an instant is done by zone.ts (luxon), so DST is
 *   explicit: a nonexistent local time is shifted to the end of the gap (`shift_forward`) or
 *   reported as skipped (`skip`); a local time that occurs twice yields one occurrence, the earlier.
 * - Interval schedules are anchored at the Unix epoch: occurrences are the multiples of everyS
 *   seconds, so slots are identical across restarts.
 * - No function reads the clock; every range is half-open [from, to).
 */
import { Cron, CronPattern } from 'croner';
import { DAY_MS, MINUTE_MS, naiveDayStart, naiveLocal } from './civil';
import { resolveLocal, toNaive, type LocalKind } from './zone';
import { ScheduleError, type DstGapPolicy } from './types';
import { CRON_NICKNAMES as NICKNAMES } from '../../../common/cron-nicknames';


const FIELD_NAMES = ['minute', 'hour', 'day-of-month', 'month', 'day-of-week'] as const;
const FIELD_RANGES: ReadonlyArray<readonly [number, number]> = [
  [0, 59],
  [0, 23],
  [1, 31],
  [1, 12],
  [0, 7],
];

/** Trim, collapse whitespace and expand nicknames; the result is what slots are computed from. */
export function normalizeCron(expr: string): string {
  const trimmed = expr.trim().replace(/\s+/g, ' ');
  return NICKNAMES[trimmed.toLowerCase()] ?? trimmed;
}

/** The five fields of a (normalized) cron expression, or null when it does not have five. */
export function cronFields(expr: string): string[] | null {
  const parts = normalizeCron(expr).split(' ');
  return parts.length === 5 ? parts : null;
}

function describeFieldCountProblem(expr: string, n: number): string {
  if (expr.trim() === '') return 'cron expression is empty';
  if (expr.trim().startsWith('@')) {
    return `cron nickname '${expr.trim()}' is not supported (use @yearly, @monthly, @weekly, @daily, @hourly or 5 fields)`;
  }
  const extra = n === 6 || n === 7 ? ' Seconds and year fields are not supported.' : '';
  return `cron '${expr.trim()}' has ${n} field${n === 1 ? '' : 's'}; exactly 5 are required (minute hour day-of-month month day-of-week).${extra}`;
}

/** Plain numeric values outside a field's range, reported in the user's numbering. */
function rangeProblem(fields: string[]): string | null {
  for (let i = 0; i < 5; i++) {
    const field = fields[i] ?? '';
    const range = FIELD_RANGES[i];
    if (!range) continue;
    for (const item of field.split(',')) {
      const [base] = item.split('/');
      for (const token of (base ?? '').split('-')) {
        if (!/^\d+$/.test(token)) continue;
        const v = Number(token);
        if (v < range[0] || v > range[1]) {
          return `${FIELD_NAMES[i]} value ${v} is out of range ${range[0]}-${range[1]}`;
        }
      }
    }
  }
  return null;
}

/** Why a cron expression is unusable, or null when it is valid. */
export function validateCron(expr: unknown): string | null {
  if (typeof expr !== 'string') return 'cron expression must be a string';
  const normalized = normalizeCron(expr);
  const fields = normalized === '' ? [] : normalized.split(' ');
  if (fields.length !== 5) return describeFieldCountProblem(expr, fields.length);
  if (normalized.includes('?')) {
    return `cron '${normalized}' uses '?', which is not supported here; use '*'`;
  }
  const range = rangeProblem(fields);
  if (range) return `invalid cron '${normalized}': ${range}`;
  try {
    new CronPattern(normalized, undefined, { mode: '5-part' });
  } catch (e) {
    const msg = (e instanceof Error ? e.message : String(e)).replace(/^CronPattern:\s*/, '');
    return `invalid cron '${normalized}': ${msg}`;
  }
  return null;
}

export interface ParsedCron {
  /** Normalized expression. */
  expr: string;
  fields: string[];
  /** Matching times of day, minutes after local midnight, ascending. */
  timesOfDay: number[];
  /** croner instance evaluated at UTC+0, i.e. on naive wall-clock time. Never scheduled. */
  cron: Cron;
}

const parsedCache = new Map<string, ParsedCron>();

/** Parse (memoised) or throw a ScheduleError with validateCron's message. */
export function parseCron(expr: string): ParsedCron {
  const normalized = normalizeCron(expr);
  const hit = parsedCache.get(normalized);
  if (hit) return hit;
  const problem = validateCron(expr);
  if (problem) throw new ScheduleError(problem);
  const pattern = new CronPattern(normalized, undefined, { mode: '5-part' });
  const timesOfDay: number[] = [];
  for (let h = 0; h < 24; h++) {
    if (!pattern.hour[h]) continue;
    for (let m = 0; m < 60; m++) if (pattern.minute[m]) timesOfDay.push(h * 60 + m);
  }
  const cron = new Cron(normalized, { utcOffset: 0, mode: '5-part', paused: true });
  const parsed: ParsedCron = { expr: normalized, fields: normalized.split(' '), timesOfDay, cron };
  if (parsedCache.size > 1000) parsedCache.clear();
  parsedCache.set(normalized, parsed);
  return parsed;
}

/**
 * Naive local wall-clock times matching the cron, in [naiveFrom, naiveTo), ascending.
 * croner finds each matching date; the times of day are the same on every matching date.
 */
export function cronNaiveTimes(parsed: ParsedCron, naiveFrom: number, naiveTo: number): number[] {
  const out: number[] = [];
  let cursor = naiveDayStart(naiveFrom);
  while (cursor < naiveTo) {
    const next = parsed.cron.nextRun(new Date(cursor - 1));
    if (!next) break;
    const day = naiveDayStart(next.getTime());
    if (day >= naiveTo) break;
    for (const tod of parsed.timesOfDay) {
      const t = day + tod * MINUTE_MS;
      if (t >= naiveFrom && t < naiveTo) out.push(t);
    }
    cursor = day + DAY_MS;
  }
  return out;
}

export interface CronOccurrence {
  /** Nominal local wall-clock time `YYYY-MM-DDTHH:MM`. */
  local: string;
  /** Instant (UTC ms) the local time maps to (see zone.ts for gap/overlap rules). */
  at: number;
  /** `gap`: the local time did not exist; `ambiguous`: it occurred twice and `at` is the first. */
  dst: LocalKind;
  /** True when dst is `gap` and the policy is `skip`: the occurrence never runs. */
  skipped: boolean;
}

/**
 * Wall-clock occurrences of `cron` in `timezone` whose instant falls in [fromMs, toMs), ordered by
 * instant then local time. Under `shift_forward`, a gap occurrence can share its instant with the
 * occurrence at the end of the gap (an hourly job's 02:00 and 03:00 on a spring-forward day);
 * both are returned, as they are different local times.
 */
export function cronOccurrences(
  cron: string,
  timezone: string,
  fromMs: number,
  toMs: number,
  dstGapPolicy: DstGapPolicy = 'shift_forward',
): CronOccurrence[] {
  const parsed = parseCron(cron);
  if (!(toMs > fromMs)) return [];
  // One day of margin on each side covers any offset; results are filtered on the instant.
  const naiveFrom = toNaive(timezone, fromMs) - DAY_MS;
  const naiveTo = toNaive(timezone, toMs) + DAY_MS;
  const out: CronOccurrence[] = [];
  for (const naive of cronNaiveTimes(parsed, naiveFrom, naiveTo)) {
    const r = resolveLocal(timezone, naive);
    if (r.at < fromMs || r.at >= toMs) continue;
    out.push({ local: naiveLocal(naive), at: r.at, dst: r.kind, skipped: r.kind === 'gap' && dstGapPolicy === 'skip' });
  }
  out.sort((a, b) => a.at - b.at || (a.local < b.local ? -1 : a.local > b.local ? 1 : 0));
  return out;
}

/** Epoch-anchored interval instants (multiples of everyS seconds) in [fromMs, toMs). */
export function intervalInstants(everyS: number, fromMs: number, toMs: number): number[] {
  if (!Number.isInteger(everyS) || everyS < 1) {
    throw new ScheduleError(`everyS must be a whole number of seconds >= 1 (got ${String(everyS)})`);
  }
  const period = everyS * 1000;
  const out: number[] = [];
  for (let t = Math.ceil(fromMs / period) * period; t < toMs; t += period) out.push(t);
  return out;
}
