/** A job's schedule in words ("Monday to Friday at 08:30", "every 5 min") and how often it comes. */
import type { JobSchedule } from '../../src-main/common/job-schema';
import { CRON_NICKNAMES as NICKNAMES } from '../../src-main/common/cron-nicknames';

export const DAY_NAMES = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];
const MONTH_NAMES = ['', 'January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

const isNum = (s: string) => /^\d+$/.test(s);
const p2 = (n: number | string) => String(n).padStart(2, '0');

export function joinWords(xs: string[]): string {
  if (xs.length <= 1) return xs.join('');
  return `${xs.slice(0, -1).join(', ')} and ${xs[xs.length - 1]}`;
}

/** Day-of-week field in words, or null when it is not a simple list/range. */
function dowWords(f: string): string | null {
  if (f === '*') return null;
  const days = new Set<number>();
  for (const part of f.split(',')) {
    const r = /^(\d)(?:-(\d))?$/.exec(part);
    if (!r) return null;
    const a = Number(r[1]);
    const b = r[2] !== undefined ? Number(r[2]) : a;
    if (a > 7 || b > 7 || b < a) return null;
    for (let d = a; d <= b; d++) days.add(d % 7);
  }
  const sorted = [...days].sort((x, y) => ((x + 6) % 7) - ((y + 6) % 7)); // Monday first
  const key = sorted.join(',');
  if (key === '1,2,3,4,5') return 'Monday to Friday';
  if (key === '6,0') return 'on Saturday and Sunday';
  if (sorted.length === 7) return null;
  if (sorted.length === 1) return `every ${DAY_NAMES[sorted[0]!]}`;
  return `on ${joinWords(sorted.map((d) => DAY_NAMES[d]!))}`;
}

function timesWords(min: string, hour: string): string | null {
  if (!isNum(min)) return null;
  const hours = hour.split(',');
  if (!hours.every(isNum)) return null;
  return `at ${joinWords(hours.map((h) => `${p2(h)}:${p2(min)}`))}`;
}

/** A 5-field cron in words ("every day at 09:00", "Monday to Friday at 08:30"), or null when unusual. */
export function describeCron(expr: string): string | null {
  const norm = NICKNAMES[expr.trim().toLowerCase()] ?? expr.trim().replace(/\s+/g, ' ');
  const f = norm.split(' ');
  if (f.length !== 5) return null;
  const [min, hour, dom, mon, dow] = f as [string, string, string, string, string];
  // Sub-daily.
  if (dom === '*' && mon === '*' && dow === '*') {
    if (min === '*' && hour === '*') return 'every minute';
    const everyMin = /^\*\/(\d+)$/.exec(min);
    if (everyMin && hour === '*') return `every ${everyMin[1]} minutes`;
    if (isNum(min) && hour === '*') return `every hour at :${p2(min)}`;
    const everyHour = /^\*\/(\d+)$/.exec(hour);
    if (isNum(min) && everyHour) return `every ${everyHour[1]} hours at :${p2(min)}`;
    const hourRange = /^(\d+)-(\d+)$/.exec(hour);
    if (isNum(min) && hourRange) return `every hour from ${p2(hourRange[1]!)}:${p2(min)} to ${p2(hourRange[2]!)}:${p2(min)}`;
  }
  const at = timesWords(min, hour);
  if (!at) return null;
  const monthWords = mon === '*' ? '' : isNum(mon) && Number(mon) >= 1 && Number(mon) <= 12 ? ` in ${MONTH_NAMES[Number(mon)]}` : null;
  if (monthWords === null) return null;
  if (dom === '*' && dow === '*') return mon === '*' ? `every day ${at}` : `every day${monthWords} ${at}`;
  if (dom === '*') {
    const d = dowWords(dow);
    return d ? `${d}${monthWords} ${at}` : null;
  }
  if (dow === '*') {
    if (dom === 'L') return `on the last day of ${mon === '*' ? 'every month' : MONTH_NAMES[Number(mon)]} ${at}`;
    if (isNum(dom)) return `on day ${Number(dom)} of ${mon === '*' ? 'every month' : MONTH_NAMES[Number(mon)]} ${at}`;
  }
  return null;
}

/** "every 5 min", "every 2 h", "every 90 s". */
export function describeInterval(everyS: number): string {
  if (everyS % 86_400 === 0) return everyS === 86_400 ? 'every day' : `every ${everyS / 86_400} days`;
  if (everyS % 3600 === 0) return everyS === 3600 ? 'every hour' : `every ${everyS / 3600} h`;
  if (everyS % 60 === 0) return everyS === 60 ? 'every minute' : `every ${everyS / 60} min`;
  return `every ${everyS} s`;
}

/**
 * A schedule in words, without its zone. With a business calendar the days are its workdays:
 * "every workday at 09:00", never "every day" (the calendar skips or moves the others).
 */
export function describeSchedule(s: JobSchedule, calendar?: string | null): string {
  const words = typeof s.everyS === 'number' ? describeInterval(s.everyS) : s.cron ? (describeCron(s.cron) ?? `cron “${s.cron.trim()}”`) : 'no schedule';
  if (!calendar || words === 'no schedule') return words;
  return words.startsWith('every day') ? words.replace('every day', 'every workday') : `${words}, on workdays only`;
}

export type Granularity = 'minute' | 'day' | 'week' | 'month';

/** How often slots come, roughly (for sentences like "tomorrow's run"). */
export function granularity(s: JobSchedule): Granularity {
  if (typeof s.everyS === 'number') return s.everyS >= 86_400 ? 'day' : 'minute';
  const f = (NICKNAMES[s.cron?.trim().toLowerCase() ?? ''] ?? s.cron ?? '').trim().split(/\s+/);
  if (f.length !== 5) return 'day';
  const [min, hour, dom, , dow] = f as [string, string, string, string, string];
  if (!isNum(min) || !hour.split(',').every(isNum) || hour.includes(',')) return 'minute';
  if (dom !== '*' && dow === '*') return 'month';
  if (dom === '*' && dow !== '*' && dowWords(dow)?.startsWith('every ')) return 'week';
  return 'day';
}
