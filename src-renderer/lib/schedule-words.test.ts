import { describe, expect, it } from 'vitest';
import { describeCron, describeInterval, describeSchedule, granularity } from './schedule-words';

describe('schedule in words', () => {
  it('describes the common cron shapes', () => {
    expect(describeCron('0 9 * * *')).toBe('every day at 09:00');
    expect(describeCron('30 8 * * 1-5')).toBe('Monday to Friday at 08:30');
    expect(describeCron('0 10 * * 1')).toBe('every Monday at 10:00');
    expect(describeCron('0 10 * * 0')).toBe('every Sunday at 10:00');
    expect(describeCron('0 10 * * 7')).toBe('every Sunday at 10:00');
    expect(describeCron('0 10 * * 6,0')).toBe('on Saturday and Sunday at 10:00');
    expect(describeCron('0 9,17 * * 1,3,5')).toBe('on Monday, Wednesday and Friday at 09:00 and 17:00');
    expect(describeCron('*/5 * * * *')).toBe('every 5 minutes');
    expect(describeCron('15 * * * *')).toBe('every hour at :15');
    expect(describeCron('0 */2 * * *')).toBe('every 2 hours at :00');
    expect(describeCron('0 9-17 * * *')).toBe('every hour from 09:00 to 17:00');
    expect(describeCron('0 6 1 * *')).toBe('on day 1 of every month at 06:00');
    expect(describeCron('0 6 L * *')).toBe('on the last day of every month at 06:00');
    expect(describeCron('0 0 1 1 *')).toBe('on day 1 of January at 00:00');
    expect(describeCron('@daily')).toBe('every day at 00:00');
    expect(describeCron('0 9 * * 1#2')).toBeNull();
    expect(describeCron('nope')).toBeNull();
    expect(describeSchedule({ cron: '0 9 * * 1#2' })).toBe('cron “0 9 * * 1#2”');
  });

  it('names workdays, never every day, when a business calendar decides the days', () => {
    expect(describeSchedule({ cron: '0 9 * * *' }, 'cn-workdays')).toBe('every workday at 09:00');
    expect(describeSchedule({ everyS: 86_400 }, 'cn-workdays')).toBe('every workday');
    expect(describeSchedule({ cron: '30 8 * * 1-5' }, 'cn-workdays')).toBe('Monday to Friday at 08:30, on workdays only');
    expect(describeSchedule({ cron: '*/5 * * * *' }, 'cn-workdays')).toBe('every 5 minutes, on workdays only');
    expect(describeSchedule({ cron: '0 9 * * *' }, null)).toBe('every day at 09:00');
  });

  it('describes intervals and tells how often slots come', () => {
    expect(describeInterval(300)).toBe('every 5 min');
    expect(describeInterval(3600)).toBe('every hour');
    expect(describeInterval(7200)).toBe('every 2 h');
    expect(describeInterval(86_400)).toBe('every day');
    expect(describeInterval(90)).toBe('every 90 s');
    expect(granularity({ cron: '0 9 * * *' })).toBe('day');
    expect(granularity({ cron: '0 9 * * 1' })).toBe('week');
    expect(granularity({ cron: '0 9 1 * *' })).toBe('month');
    expect(granularity({ cron: '*/5 * * * *' })).toBe('minute');
    expect(granularity({ everyS: 300 })).toBe('minute');
  });
});
