/**
 * Public API of the schedule library: pure functions over schedules, calendars and slot keys.
 * All instants are UTC epoch ms; nothing here reads the clock, touches a database or sets timers.
 */
export type {
  Calendar,
  CalendarPolicy,
  CronSchedule,
  DayType,
  DstGapPolicy,
  ExecutionWindow,
  IntervalSchedule,
  Schedule,
  SlotDisposition,
  SlotGranularity,
  SlotOccurrence,
  SlotSpec,
  ValidationIssue,
} from './types';
export { ScheduleError } from './types';
export { cronOccurrences, intervalInstants, normalizeCron, validateCron } from './cron';
export type { CronOccurrence } from './cron';
export {
  granularityOf,
  parseSlotKey,
  shiftBusinessDate,
  slotKeyAt,
  slotKeyOfLocal,
} from './slot-key';
export type { ParsedSlotKey } from './slot-key';
export {
  CalendarError,
  dayType,
  isWorkday,
  nextWorkday,
  validateCalendar,
  NEXT_WORKDAY_SEARCH_DAYS,
} from './calendar';
export { IcsParseError, parseIcsCalendar, MAKE_UP_WORKDAY_PATTERN } from './ics';
export type { IcsCalendarData, IcsParseOptions } from './ics';
export { expectedSlots, nextSlots, SCAN_HORIZON_MS, slotAt, slotScanMeter, slotsBefore, windowFor } from './slots';
export type { BackwardScanOptions, ScanOptions, SlotAtResult, SlotWindow } from './slots';
export { validateSchedule } from './validate';
export type { ValidateOptions } from './validate';
export { isValidZone, resolveLocal } from './zone';
