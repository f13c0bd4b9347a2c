/** Maintenance windows: the local hours in which a job dispatches nothing (a layer-3 condition). Pure. */
import type { JobSpec } from '../../../common/job-schema';
import { localClock, localInstant } from '../time-util';

/** The maintenance window the instant falls in (job zone), if any, and when it ends. */
export function maintenanceAt(spec: JobSpec, now: number): { label: string; until: number } | null {
  const mws = spec.executionConditions.maintenanceWindows;
  if (!mws || mws.length === 0) return null;
  const zone = spec.schedule.timezone ?? 'UTC';
  const { minutes, weekday, date } = localClock(now, zone);
  for (const mw of mws) {
    if (mw.days && !mw.days.includes(weekday)) continue;
    const [sh, sm] = mw.start.split(':').map(Number) as [number, number];
    const [eh, em] = mw.end.split(':').map(Number) as [number, number];
    const s = sh * 60 + sm;
    const e = eh * 60 + em;
    if (minutes >= s && minutes < e) return { label: `${mw.start}–${mw.end}${mw.days ? ` (days ${mw.days.join(',')})` : ''}`, until: localInstant(zone, date, mw.end) };
  }
  return null;
}
