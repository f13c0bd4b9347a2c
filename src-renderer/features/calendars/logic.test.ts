import { describe, expect, it } from 'vitest';
import { emptyCalendarForm, formFromCalendar, parseDates, upcomingDates, validateCalendarForm } from './logic';

describe('calendar form', () => {
  it('parses dates one per line or separated by commas', () => {
    expect(parseDates('2026-01-01\n 2026-01-02, 2026-01-03;\n\n')).toEqual(['2026-01-01', '2026-01-02', '2026-01-03']);
  });

  it('validates at the field: shape, real dates, both lists, duplicates', () => {
    const f = { ...emptyCalendarForm('Asia/Shanghai'), id: 'cn', name: 'China', holidays: '2026-10-01\n2026-10-01\n2026-02-30\nsoon', extraWorkdays: '2026-10-01' };
    const v = validateCalendarForm(f);
    expect(v.valid).toBe(false);
    const by = (field: string) => v.issues.filter((i) => i.field === field).map((i) => i.message);
    expect(by('holidays').some((m) => m.includes('“soon”'))).toBe(true);
    expect(by('holidays').some((m) => m.includes('2026-02-30'))).toBe(true);
    expect(by('holidays').some((m) => m.includes('listed twice'))).toBe(true);
    expect(by('extraWorkdays').some((m) => m.includes('both a holiday and a make-up workday'))).toBe(true);
    expect(validateCalendarForm({ ...emptyCalendarForm('UTC'), id: '', name: '' }).issues.map((i) => i.field)).toEqual(expect.arrayContaining(['id', 'name']));
    const ok = validateCalendarForm({ ...f, holidays: '2026-10-01', extraWorkdays: '2026-10-10' });
    expect(ok).toMatchObject({ valid: true, calendar: { id: 'cn', workdays: [1, 2, 3, 4, 5], holidays: ['2026-10-01'], extraWorkdays: ['2026-10-10'] } });
  });

  it('round-trips a stored calendar; lists upcoming dates', () => {
    const c = { id: 'cn', name: 'China', timezone: 'Asia/Shanghai', workdays: [5, 1, 2, 3, 4], holidays: ['2026-01-01', '2026-10-01'], extraWorkdays: ['2026-10-10'], version: 1, updatedAt: '', updatedBy: '' };
    const v = validateCalendarForm(formFromCalendar(c));
    expect(v.calendar).toEqual({ id: 'cn', name: 'China', timezone: 'Asia/Shanghai', workdays: [1, 2, 3, 4, 5], holidays: c.holidays, extraWorkdays: c.extraWorkdays });
    expect(upcomingDates(c, '2026-06-01')).toEqual([
      { day: '2026-10-01', kind: 'holiday' },
      { day: '2026-10-10', kind: 'extra_workday' },
    ]);
  });
});
