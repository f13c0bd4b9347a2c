/**
 * Static validation of a job's time settings: contradictions and invalid values, in plain words.
 *
 * Invariants:
 * - Never throws for bad input and never reads the clock: checks that need a time range use
 *   `opts.fromMs` when given, otherwise the years the calendar's own dates cover.
 * - `error`: the job cannot work as configured (or never runs). `warning`: it works, but likely
 *   not as intended. An empty list means the settings are consistent.
 */
import { CronPattern } from 'croner';
import { CALENDAR_POLICY_LABELS, calendarPolicyWithoutCalendar, quoted } from '../../../common/job-labels';
import { DAY_MS, formatHHMM, MINUTE_MS, naiveDate, naiveDayStart, parseCivilDate, parseHHMM, naiveIsoWeekday } from './civil';
import { validateCalendar } from './calendar';
import { parseCron, validateCron, type ParsedCron } from './cron';
import { granularityOf } from './slot-key';
import { expectedSlots } from './slots';
import { isValidZone, offsetAt, resolveLocal, toNaive } from './zone';
import type { Calendar, CalendarPolicy, ExecutionWindow, Schedule, ValidationIssue } from './types';

const WEEKDAY_NAMES = ['', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];
const MONTH_NAMES = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const SIMULATION_MAX_YEARS = 10;
const SKIP_DAY = quoted(CALENDAR_POLICY_LABELS.skip);
const MOVE_DAY = quoted(CALENDAR_POLICY_LABELS.next_workday);

/**
 * Classic cron's rule: when both day fields are restricted, a day matching EITHER fires. Said in
 * words, because `0 0 29 2 1` reads like "Monday the 29th" and runs every Monday in February.
 */
function dayOrRule(parsed: ParsedCron): string | null {
  const pattern = new CronPattern(parsed.expr, undefined, { mode: '5-part' });
  if (pattern.starDOM || pattern.starDOW || pattern.useAndLogic) return null;
  const [, , dom = '', month = '', dow = ''] = parsed.fields;
  const plainDays = /^[0-7a-z,-]+$/i.test(dow);
  const isoDays = new Set<number>();
  pattern.dayOfWeek.forEach((v, i) => {
    if (v) isoDays.add(i === 0 ? 7 : i);
  });
  const dayWords = plainDays ? `every ${joinNames([...isoDays].sort((a, b) => a - b).map((d) => WEEKDAY_NAMES[d] ?? String(d)), 'or')}` : `every day matching '${dow}'`;
  const months = pattern.month.flatMap((v, i) => (v ? [MONTH_NAMES[i] ?? String(i + 1)] : []));
  const monthWords = month === '*' ? '' : ` in ${joinNames(months, 'and')}`;
  const domWords = /^\d+$/.test(dom) ? `day ${dom} of the month` : `the days of the month '${dom}'`;
  return `cron '${parsed.expr}' restricts both the day of the month and the day of the week, and cron then fires on a day that matches EITHER: it runs on ${dayWords}${monthWords} as well as on ${domWords}, not only when both match. To require both, write the day of the week with a '+' ('${parsed.fields.slice(0, 4).join(' ')} +${dow}')`;
}

/** Days in [fromMs, fromMs + 1 year) on which a local time of day does not exist (a DST gap), in `zone`. */
function gapDays(zone: string, minuteOfDay: number, fromMs: number): Array<{ date: string; gapStart: number; gapEnd: number }> {
  const out: Array<{ date: string; gapStart: number; gapEnd: number }> = [];
  const first = naiveDayStart(toNaive(zone, fromMs));
  for (let day = first; day < first + 366 * DAY_MS; day += DAY_MS) {
    const r = resolveLocal(zone, day + minuteOfDay * MINUTE_MS);
    if (r.kind !== 'gap') continue;
    // r.at is the transition: the wall clock jumps from (at + offset before) to (at + offset after).
    out.push({ date: naiveDate(day), gapStart: r.at + offsetAt(zone, r.at - 1), gapEnd: r.at + offsetAt(zone, r.at) });
  }
  return out;
}

const hhmmOfNaive = (naive: number): string => formatHHMM(Math.round((naive - naiveDayStart(naive)) / MINUTE_MS));

export interface ValidateOptions {
  /** Start of the range used to check "never runs" (one year from here). */
  fromMs?: number;
}

function listDates(dates: Array<{ date: string }>): string {
  const shown = dates.slice(0, 3).map((d) => d.date);
  return dates.length > 3 ? `${shown.join(', ')} and ${dates.length - 3} more day(s)` : joinNames(shown);
}

function formatLength(minutes: number): string {
  const h = Math.floor(minutes / 60);
  const m = minutes % 60;
  return [h ? `${h} h` : '', m ? `${m} min` : ''].filter(Boolean).join(' ');
}

function listTimes(times: number[]): string {
  const shown = times.slice(0, 4).map(formatHHMM).join(', ');
  return times.length > 4 ? `${shown}, … (${times.length} times a day)` : shown;
}

function joinNames(names: string[], word = 'and'): string {
  if (names.length <= 1) return names.join('');
  return `${names.slice(0, -1).join(', ')} ${word} ${names[names.length - 1]}`;
}

export function validateSchedule(
  schedule: Schedule,
  window?: ExecutionWindow,
  calendar?: Calendar,
  calendarPolicy?: CalendarPolicy,
  opts: ValidateOptions = {},
): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const error = (field: string, message: string): void => {
    issues.push({ field, message, severity: 'error' });
  };
  const warning = (field: string, message: string): void => {
    issues.push({ field, message, severity: 'warning' });
  };

  // --- schedule -------------------------------------------------------------------------------
  let scheduleOk = false;
  let cronOk = false;
  const raw = schedule as unknown as Record<string, unknown> | null;
  if (typeof raw !== 'object' || raw === null) {
    error('schedule', 'the schedule is either a cron with a time zone or an interval in seconds');
  } else if ('cron' in raw && 'everyS' in raw) {
    error('schedule', 'the schedule has both a cron and an interval; use one of them');
  } else if ('cron' in raw) {
    const problem = validateCron(raw.cron);
    if (problem) error('schedule.cron', problem);
    else cronOk = true;
    if (raw.timezone === undefined) {
      error('schedule.timezone', 'a cron schedule needs a time zone, because its times are wall-clock times');
    } else if (!isValidZone(raw.timezone)) {
      error('schedule.timezone', `'${String(raw.timezone)}' is not a known IANA time zone (for example 'Europe/Berlin')`);
    }
    scheduleOk = cronOk && isValidZone(raw.timezone);
  } else if ('everyS' in raw) {
    const everyS = raw.everyS;
    if (typeof everyS !== 'number' || !Number.isFinite(everyS)) {
      error('schedule.everyS', 'the interval must be a number of seconds');
    } else if (everyS < 1) {
      error('schedule.everyS', `the interval is ${everyS} s; it must be at least 1 second`);
    } else if (!Number.isInteger(everyS)) {
      error('schedule.everyS', `the interval is ${everyS} s; use a whole number of seconds`);
    } else {
      scheduleOk = true;
    }
    if (raw.timezone !== undefined && !isValidZone(raw.timezone)) {
      error('schedule.timezone', `'${String(raw.timezone)}' is not a known IANA time zone (for example 'Europe/Berlin')`);
      scheduleOk = false;
    }
  } else {
    error('schedule', 'the schedule needs either a cron expression (with a time zone) or an interval in seconds');
  }

  const cronExpr = cronOk && raw && typeof raw.cron === 'string' ? raw.cron : undefined;
  const parsed = cronExpr !== undefined ? parseCron(cronExpr) : undefined;
  if (parsed && !parsed.cron.nextRun(new Date(Date.UTC(2000, 0, 1)))) {
    error('schedule.cron', `cron '${parsed.expr}' matches no date at all (for example February 30), so it never fires`);
    scheduleOk = false;
  }
  const orRule = parsed && scheduleOk ? dayOrRule(parsed) : null;
  if (orRule) warning('schedule.cron', orRule);
  const zoneOk = scheduleOk && (raw?.timezone === undefined || isValidZone(raw.timezone));
  const zone = zoneOk && typeof raw?.timezone === 'string' ? raw.timezone : 'UTC';

  // --- window ---------------------------------------------------------------------------------
  if (window !== undefined) {
    const start = parseHHMM(String(window.start));
    const end = parseHHMM(String(window.end), true);
    if (start === null) error('window.start', `window start '${String(window.start)}' is not a time HH:MM (00:00–23:59)`);
    if (end === null) error('window.end', `window end '${String(window.end)}' is not a time HH:MM (00:00–24:00)`);
    const r = window.recheckEveryS;
    if (typeof r !== 'number' || !Number.isFinite(r) || r <= 0) {
      error('window.recheckEveryS', `re-checking every ${String(r)} s is not possible; the window must be re-checked every N seconds with N > 0`);
    }
    if (start !== null && end !== null) {
      if (end <= start) {
        error(
          'window.end',
          `window end ${window.end} is not after its start ${window.start}; windows cannot cross midnight or be empty (use 24:00 for end of day)`,
        );
      } else {
        const lengthS = (end - start) * 60;
        if (typeof r === 'number' && Number.isFinite(r) && r > lengthS) {
          error(
            'window.recheckEveryS',
            `re-checking every ${r} s is longer than the window ${window.start}–${window.end} (${lengthS} s), so the first re-check would come after the window has closed`,
          );
        }
        if (parsed) {
          const inside = parsed.timesOfDay.some((t) => t >= start && t < end);
          if (!inside) {
            error(
              'window',
              `cron '${parsed.expr}' fires only at ${listTimes(parsed.timesOfDay)} local time, all outside the window ${window.start}–${window.end}, so it never fires inside its window`,
            );
          }
        } else if (scheduleOk && raw && typeof raw.everyS === 'number' && raw.everyS < 86_400) {
          warning(
            'window',
            `an interval slot comes every ${raw.everyS} s at any time of day, but only slots due inside the window ${window.start}–${window.end} can start: slots due earlier that day wait for the window to open, and slots due after it closes are recorded as missed`,
          );
        }
        if (zoneOk && opts.fromMs !== undefined && Number.isFinite(opts.fromMs)) {
          const lengthWords = formatLength(end - start);
          const startGaps = gapDays(zone, start, opts.fromMs);
          const endGaps = gapDays(zone, end, opts.fromMs).filter((g) => !startGaps.some((s) => s.date === g.date));
          const [g] = startGaps;
          if (g) {
            warning(
              'window.start',
              `on ${listDates(startGaps)} the clocks in ${zone} jump from ${hhmmOfNaive(g.gapStart)} to ${hhmmOfNaive(g.gapEnd)}, so the window start ${window.start} does not exist: on ${startGaps.length === 1 ? 'that day' : 'those days'} the window opens at ${hhmmOfNaive(g.gapEnd)}, with its slot, and keeps its ${lengthWords}`,
            );
          }
          const [e] = endGaps;
          if (e) {
            warning(
              'window.end',
              `on ${listDates(endGaps)} the clocks in ${zone} jump from ${hhmmOfNaive(e.gapStart)} to ${hhmmOfNaive(e.gapEnd)}, so the window end ${window.end} does not exist: on ${endGaps.length === 1 ? 'that day' : 'those days'} the window keeps its ${lengthWords} from ${window.start}`,
            );
          }
        }
      }
    }
  }

  // --- calendar -------------------------------------------------------------------------------
  const policyKnown = calendarPolicy === 'skip' || calendarPolicy === 'next_workday';
  if (calendarPolicy !== undefined && !policyKnown) {
    error('calendarPolicy', `'${String(calendarPolicy)}' is not a choice for non-workdays; use ${SKIP_DAY} or ${MOVE_DAY}`);
  }
  if (policyKnown && calendar === undefined) error('calendarPolicy', calendarPolicyWithoutCalendar(calendarPolicy));
  if (calendar === undefined) return issues;

  const calendarIssues = validateCalendar(calendar);
  issues.push(...calendarIssues);
  const calendarOk = !calendarIssues.some((i) => i.severity === 'error');
  if (!scheduleOk || !calendarOk) return issues;

  if (schedule.timezone === undefined) {
    warning(
      'schedule.timezone',
      `the interval has no time zone, so calendar '${calendar.id}' is looked up with UTC dates; set a time zone to use local dates`,
    );
  } else if (calendar.timezone !== zone) {
    warning(
      'calendar.timezone',
      `calendar '${calendar.id}' is meant for ${calendar.timezone} but the job runs in ${zone}; its dates are read as dates in ${zone}`,
    );
  }
  const policy = calendarPolicy ?? 'skip';
  const granularity = granularityOf(schedule);
  if (policy === 'next_workday' && granularity === 'minute') {
    warning(
      'calendarPolicy',
      `with ${MOVE_DAY} every slot of a non-workday moves to the next workday, so a job that runs several times a day piles up a whole weekend's runs on Monday; ${SKIP_DAY} is usually meant`,
    );
  }
  if (policy !== 'skip') return issues;

  // Static check: a cron restricted to weekdays that are never workdays.
  if (parsed && parsed.fields[2] === '*' && parsed.fields[4] !== '*') {
    const pattern = new CronPattern(parsed.expr, undefined, { mode: '5-part' });
    const isoDays = new Set<number>();
    pattern.dayOfWeek.forEach((v, i) => {
      if (v) isoDays.add(i === 0 ? 7 : i);
    });
    const workdays = new Set(calendar.workdays);
    if (isoDays.size > 0 && ![...isoDays].some((d) => workdays.has(d))) {
      const names = joinNames([...isoDays].sort((a, b) => a - b).map((d) => WEEKDAY_NAMES[d] ?? String(d)));
      const firstTime = (parsed.timesOfDay[0] ?? 0) * MINUTE_MS;
      const makeUps = calendar.extraWorkdays.filter((d) => {
        const naive = parseCivilDate(d);
        return naive !== null && isoDays.has(naiveIsoWeekday(naive)) && parsed.cron.match(new Date(naive + firstTime));
      });
      if (makeUps.length === 0) {
        error(
          'calendarPolicy',
          `cron '${parsed.expr}' fires only on ${names}, which is never a workday in calendar '${calendar.id}' and no make-up workday falls on it; with ${SKIP_DAY} the job never runs`,
        );
      } else {
        warning(
          'calendarPolicy',
          `cron '${parsed.expr}' fires only on ${names}, which is not a workday in calendar '${calendar.id}'; with ${SKIP_DAY} it runs only on the ${makeUps.length} make-up workday(s) ${makeUps.slice(0, 3).join(', ')}${makeUps.length > 3 ? ', …' : ''}`,
        );
      }
      return issues;
    }
  }

  // Simulation: daily/weekly/monthly crons over a year from opts.fromMs, or the calendar's years.
  if (!parsed || granularity === 'minute') return issues;
  let from: number;
  let to: number;
  if (opts.fromMs !== undefined && Number.isFinite(opts.fromMs)) {
    from = opts.fromMs;
    to = from + 366 * DAY_MS;
  } else {
    const years = [...calendar.holidays, ...calendar.extraWorkdays].map((d) => Number(d.slice(0, 4)));
    if (years.length === 0) return issues;
    const minYear = Math.min(...years);
    const maxYear = Math.min(Math.max(...years), minYear + SIMULATION_MAX_YEARS - 1);
    // The calendar years, as local midnights in the job's zone.
    from = resolveLocal(zone, Date.UTC(minYear, 0, 1)).at;
    to = resolveLocal(zone, Date.UTC(maxYear + 1, 0, 1)).at;
  }
  const slots = expectedSlots({ schedule, calendar, calendarPolicy: 'skip' }, from, to);
  const skipped = slots.filter((s) => s.disposition === 'calendar_skip');
  if (slots.length > 0 && !slots.some((s) => s.disposition === 'due')) {
    const range = `${slots[0]?.local.slice(0, 10)} … ${slots[slots.length - 1]?.local.slice(0, 10)}`;
    error(
      'calendarPolicy',
      `every one of the ${slots.length} occurrences of cron '${parsed.expr}' (${range}) falls on a non-workday of calendar '${calendar.id}'; with ${SKIP_DAY} the job never runs (choose ${MOVE_DAY} or change the cron)`,
    );
  } else if (skipped.length > 0 && skipped.length * 2 > slots.length) {
    warning(
      'calendarPolicy',
      `${skipped.length} of ${slots.length} occurrences of cron '${parsed.expr}' fall on non-workdays of calendar '${calendar.id}' and are skipped`,
    );
  }
  return issues;
}
