/** Instants and durations in a rehearsal's plain words, in the job's zone. */
import { DateTime } from 'luxon';

export class ZoneWords {
  constructor(readonly zone: string) {}

  /** `09:40` (with seconds when they are not zero), and the day too when it is not `ref`'s local day. */
  time(ms: number, ref?: number): string {
    if (ref === undefined || this.date(ref) === this.date(ms)) return this.clock(ms);
    return this.moment(ms);
  }

  /** `Mon 30 Nov 09:40`. */
  moment(ms: number): string {
    return `${DateTime.fromMillis(ms, { zone: this.zone }).toFormat('ccc d LLL')} ${this.clock(ms)}`;
  }

  private clock(ms: number): string {
    const dt = DateTime.fromMillis(ms, { zone: this.zone });
    return dt.toFormat(dt.second === 0 && dt.millisecond === 0 ? 'HH:mm' : 'HH:mm:ss');
  }

  /** The local date of an instant (`2026-11-30`). */
  date(ms: number): string {
    return DateTime.fromMillis(ms, { zone: this.zone }).toISODate() ?? '';
  }
}

/** `45 s`, `5 min`, `2 h 30 min`, `3 days`. */
export function duration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 120) return `${s} s`;
  const min = Math.round(s / 60);
  if (min < 120) return `${min} min`;
  const h = Math.floor(min / 60);
  if (h < 48) return min % 60 ? `${h} h ${min % 60} min` : `${h} h`;
  return `${Math.round(h / 24)} days`;
}

/** `1st`, `2nd`, `3rd`, `4th`. */
export function ordinal(n: number): string {
  const t = n % 100;
  if (t >= 11 && t <= 13) return `${n}th`;
  return `${n}${['th', 'st', 'nd', 'rd'][n % 10] ?? 'th'}`;
}
