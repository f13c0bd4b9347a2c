/**
 * Storage of business calendars. Writes run inside the caller's `store.write`.
 *
 * Invariants:
 * 1. A calendar's day lists are stored sorted and without duplicates; every write bumps `version`.
 * 2. `scheduleCalendar` hands the schedule library one object per (id, version), so the library's
 *    per-object memo holds until the calendar changes.
 */
import type { BusinessCalendar } from '../../common/job-schema';
import type { Db } from '../db/open';
import { toCalendar, type CalendarRow } from './rows';
import type { Calendar } from './schedule';

export class CalendarRepo {
  private readonly q;
  private readonly cache = new Map<string, Calendar>();

  constructor(db: Db) {
    this.q = {
      byId: db.prepare<[string], CalendarRow>('SELECT * FROM calendars WHERE id = ?'),
      all: db.prepare<[], CalendarRow>('SELECT * FROM calendars ORDER BY id'),
      insert: db.prepare(
        `INSERT INTO calendars (id, name, timezone, workdays, holidays, extra_workdays, version, created_at, updated_at, updated_by)
         VALUES (@id, @name, @timezone, @workdays, @holidays, @extra_workdays, 1, @now, @now, @actor)`,
      ),
      update: db.prepare(
        `UPDATE calendars SET name = @name, timezone = @timezone, workdays = @workdays, holidays = @holidays,
           extra_workdays = @extra_workdays, version = version + 1, updated_at = @now, updated_by = @actor WHERE id = @id`,
      ),
    };
  }

  get(id: string): BusinessCalendar | undefined {
    const r = this.q.byId.get(id);
    return r && toCalendar(r);
  }

  all(): BusinessCalendar[] {
    return this.q.all.all().map(toCalendar);
  }

  insert(c: Calendar, actor: string, now: number): void {
    this.q.insert.run(params(c, actor, now));
  }

  /** Replaces the calendar's contents (version + 1). */
  replace(c: Calendar, actor: string, now: number): void {
    this.q.update.run(params(c, actor, now));
  }

  /** The calendar as the schedule library wants it (one object per version, so its memo holds). */
  scheduleCalendar(id: string): Calendar | undefined {
    const c = this.get(id);
    if (!c) return undefined;
    const key = `${c.id}@${c.version}`;
    let cal = this.cache.get(key);
    if (!cal) {
      cal = { id: c.id, name: c.name, timezone: c.timezone, workdays: c.workdays, holidays: c.holidays, extraWorkdays: c.extraWorkdays };
      if (this.cache.size > 200) this.cache.clear();
      this.cache.set(key, cal);
    }
    return cal;
  }
}

function params(c: Calendar, actor: string, now: number) {
  return {
    id: c.id,
    name: c.name,
    timezone: c.timezone,
    workdays: JSON.stringify([...new Set(c.workdays)].sort()),
    holidays: JSON.stringify([...new Set(c.holidays)].sort()),
    extra_workdays: JSON.stringify([...new Set(c.extraWorkdays)].sort()),
    now,
    actor,
  };
}
