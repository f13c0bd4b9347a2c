/** Shared test fixtures (not a test file). */
import type { Calendar } from './types';

/** Mainland-China style 2026 calendar: Golden Week plus make-up workdays on a Sunday and a Saturday. */
export const cnCalendar: Calendar = {
  id: 'cn-workdays',
  name: 'China workdays 2026',
  timezone: 'Asia/Shanghai',
  workdays: [1, 2, 3, 4, 5],
  holidays: ['2026-10-01', '2026-10-02', '2026-10-03', '2026-10-04', '2026-10-05', '2026-10-06', '2026-10-07'],
  extraWorkdays: ['2026-09-20', '2026-10-10'],
};

export const weekdaysUtc: Calendar = {
  id: 'mon-fri',
  name: 'Monday to Friday',
  timezone: 'UTC',
  workdays: [1, 2, 3, 4, 5],
  holidays: [],
  extraWorkdays: [],
};
