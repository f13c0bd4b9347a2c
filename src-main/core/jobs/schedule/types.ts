/**
 * Shared types of the schedule library.
 *
 * Invariants:
 * - Every instant is a UTC epoch-millisecond `number`; nothing here reads the clock.
 * - Dates are civil dates `YYYY-MM-DD` (no zone); times of day are `HH:MM` wall-clock strings.
 * - A slot key is the business key of one occurrence in the job's zone; a run ledger keeps at most
 *   one run per (job, slot key).
 */
import type { CalendarInput } from '../../../common/job-schema';

/** A cron schedule (5 fields, wall clock of `timezone`) or an epoch-anchored interval. */
export type Schedule = CronSchedule | IntervalSchedule;

export interface CronSchedule {
  cron: string;
  /** IANA zone, e.g. `Europe/Berlin`. */
  timezone: string;
}

export interface IntervalSchedule {
  /** Period in whole seconds (>= 1). Slots fall on multiples of this period since the Unix epoch. */
  everyS: number;
  /** Zone used for slot keys and calendar dates; UTC when omitted. */
  timezone?: string;
}

/** A business calendar's rules: the shape of its validated input (`calendarInput`), without the stored version. */
export type Calendar = CalendarInput;

export type CalendarPolicy = 'skip' | 'next_workday';

export type DayType = 'workday' | 'weekend' | 'holiday' | 'extra_workday';

/**
 * What happens to a local time that does not exist (spring forward):
 * - `shift_forward`: it is due at the first valid instant after the gap (02:30 → 03:00 in New York);
 * - `skip`: the slot is reported with disposition `dst_skip` and never runs.
 */
export type DstGapPolicy = 'shift_forward' | 'skip';

export type SlotGranularity = 'minute' | 'day' | 'week' | 'month';

export interface ExecutionWindow {
  /** `HH:MM` local time in the job's zone, inclusive. */
  start: string;
  /** `HH:MM` local time, exclusive; `24:00` means the end of the day. Must be after `start`. */
  end: string;
  /** Re-check period inside the window, seconds (> 0 and <= window length). */
  recheckEveryS: number;
}

/** Everything that decides which slots a job has. */
export interface SlotSpec {
  schedule: Schedule;
  calendar?: Calendar;
  /** Only meaningful with a calendar; defaults to `skip` when a calendar is given. */
  calendarPolicy?: CalendarPolicy;
  /** Defaults to `shift_forward`. */
  dstGapPolicy?: DstGapPolicy;
  /** Defaults to `granularityOf(schedule)`. */
  granularity?: SlotGranularity;
}

export type SlotDisposition = 'due' | 'calendar_skip' | 'dst_skip';

export interface SlotOccurrence {
  /** Business key in the job's zone (`2026-11-30`, `2026-W48`, `2026-11`, `2026-11-30T09:00`). */
  slot: string;
  /** UTC ms when the slot is due (for skipped slots: when it would have been due). */
  at: number;
  /**
   * Nominal local wall-clock time `YYYY-MM-DDTHH:MM` (`:SS` appended for sub-minute intervals) at
   * which the slot is due, before DST resolution. For a slot moved by `next_workday` this is the
   * time on the workday it moved to; `movedFrom` holds the original date.
   */
  local: string;
  /** Day type of the slot's own (original) date; present only when a calendar is in use. */
  dayType?: DayType;
  disposition: SlotDisposition;
  /** Set when the nominal local time did not exist and `at` was moved to the end of the gap. */
  shifted?: 'dst_gap';
  /** Original local date `YYYY-MM-DD` when `next_workday` moved the slot to a later workday. */
  movedFrom?: string;
}

export interface ValidationIssue {
  /** Dotted path of the offending setting, e.g. `schedule.cron`, `window.end`, `calendarPolicy`. */
  field: string;
  /** Plain-words explanation of what is wrong and why. */
  message: string;
  /** `error`: the job cannot work as configured. `warning`: it works, but probably not as meant. */
  severity: 'error' | 'warning';
}

/** Thrown for invalid input to the schedule functions (bad cron, unknown zone, …). */
export class ScheduleError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ScheduleError';
  }
}
