import { describe, expect, it } from 'vitest';
import { normalizeJobSpec, type JobSpecInput } from '../../../src-main/common/job-schema';
import { dayAndTime, jobState, policySentences, preconditionSentence, previewNote } from './logic';

const base: JobSpecInput = { name: 'daily-report', role: 'reporter', schedule: { cron: '0 9 * * *', timezone: 'Asia/Shanghai' } };

describe('policy sentences', () => {
  it('explain the missed-window policy with the job’s own window and cadence', () => {
    const spec = normalizeJobSpec({ ...base, window: { start: '09:00', end: '10:00', recheckEveryS: 300 }, missedWindow: 'fold_into_next' });
    const s = policySentences(spec);
    expect(s.missedWindow).toBe(
      'If the 09:00–10:00 window (Asia/Shanghai) closes before the data is ready, this slot is folded into the next run (tomorrow’s, or the next workday’s): that run also covers it (oldest first), and nothing runs twice.',
    );
    expect(s.window).toContain('between 09:00 and 10:00 Asia/Shanghai time');
    expect(s.window).toContain('every 5 min');
    expect(policySentences(normalizeJobSpec({ ...base, missedWindow: 'run_now', toleranceS: 1800 })).missedWindow).toContain('up to 30 min later; past that it goes to the backfill queue');
    expect(policySentences(normalizeJobSpec({ ...base, missedWindow: 'run_now' })).missedWindow).toContain('within the tolerance you set');
    expect(policySentences(normalizeJobSpec(base)).missedWindow).toContain('skipped and recorded as missed');
    expect(policySentences(normalizeJobSpec({ ...base, schedule: { cron: '0 9 * * 1', timezone: 'UTC' }, missedWindow: 'fold_into_next' })).missedWindow).toContain('next week’s run');
  });

  it('explain retry, calendar, overlap, DST, backfill cap and execution conditions', () => {
    const spec = normalizeJobSpec({
      ...base,
      calendar: 'cn',
      calendarPolicy: 'next_workday',
      retry: { maxAttempts: 4, firstDelayS: 60, backoff: 'exponential' },
      overlap: 'queue_one',
      dstGapPolicy: 'skip',
      backfillCapPerTick: 0,
      executionConditions: { maxConcurrentPerRole: 2, maintenanceWindows: [{ start: '01:00', end: '02:00', days: [6, 7] }] },
    });
    const s = policySentences(spec, 'China 2026');
    expect(s.calendar).toBe('On a non-workday of calendar “China 2026” (weekend or holiday) the slot moves to the next workday; make-up workdays count as workdays.');
    expect(s.retry).toContain('retried up to 3 times, first after 1 min, doubling each time');
    expect(s.overlap).toContain('waits for it');
    expect(s.dstGapPolicy).toContain('skipped and recorded as “skipped: DST”');
    expect(s.backfillCapPerTick).toContain('Backfills never run on their own');
    expect(s.executionConditions).toContain('At most 2 runs of role reporter at once');
    expect(s.executionConditions).toContain('01:00–02:00 (Sat, Sun) Asia/Shanghai time');
    expect(policySentences(normalizeJobSpec({ ...base, retry: { maxAttempts: 1 } })).retry).toMatch(/^No retries/);
  });

  it('explain each precondition kind', () => {
    expect(preconditionSentence({ kind: 'signal', name: 'data-ready' }, 'reporter')).toBe('Ready when signal data-ready is set for {date} (POST /api/v1/signals), e.g. by the upstream job.');
    expect(preconditionSentence({ kind: 'file', path: '/d/{yesterday}.csv', check: 'modified_after', after: 'slot' }, 'r')).toContain('modified after the slot’s due time');
    expect(preconditionSentence({ kind: 'http', url: 'http://x/{date}', jsonField: 'ok', equals: true }, 'r')).toContain('its JSON field ok equals true');
    expect(preconditionSentence({ kind: 'command', argv: ['test', '-s', '/x'] }, 'r')).toContain('test -s /x exits with code 0');
    expect(preconditionSentence({ kind: 'agent', check: 'inbox' }, 'mailer')).toContain('online mailer agent');
  });
});

describe('list and preview helpers', () => {
  it('job state: disabled beats paused beats active', () => {
    expect(jobState({ enabled: false, paused: { at: '', by: 'a', reason: 'r', until: null, drain: false, role: false } }).label).toBe('Disabled');
    expect(jobState({ enabled: true, paused: { at: '', by: 'a', reason: 'r', until: null, drain: false, role: false } }).label).toBe('Paused');
    expect(jobState({ enabled: true, paused: null }).label).toBe('Active');
  });

  it('preview rows say why a slot moved, shifted or is skipped', () => {
    const p = { slot: '2026-10-01', at: '', local: '', opensAt: '', closesAt: '' };
    expect(previewNote({ ...p, disposition: 'calendar_skip', dayType: 'holiday' })).toBe('skipped: holiday');
    expect(previewNote({ ...p, disposition: 'dst_skip' })).toContain('DST gap');
    expect(previewNote({ ...p, disposition: 'due', movedFrom: '2026-10-03' })).toBe('moved from 2026-10-03 (non-workday)');
    expect(previewNote({ ...p, disposition: 'due', shifted: 'dst_gap' })).toBe('shifted past the DST gap');
    expect(previewNote({ ...p, disposition: 'due', dayType: 'extra_workday' })).toBe('make-up workday');
    expect(previewNote({ ...p, disposition: 'due', dayType: 'workday' })).toBe('');
  });
});

describe('rehearsal times', () => {
  it('are the job zone’s day and time, with seconds only when they are not zero', () => {
    expect(dayAndTime('2026-11-27T01:00:00.000Z', 'Asia/Shanghai')).toEqual({ day: 'Fri 27 Nov', time: '09:00' });
    expect(dayAndTime('2026-11-27T01:00:01.000Z', 'Asia/Shanghai')).toEqual({ day: 'Fri 27 Nov', time: '09:00:01' });
    // 23:30 UTC is already the next day in Shanghai.
    expect(dayAndTime('2026-11-30T23:30:00.000Z', 'Asia/Shanghai')).toEqual({ day: 'Tue 1 Dec', time: '07:30' });
    expect(dayAndTime('2026-11-30T23:30:00.000Z', 'UTC')).toEqual({ day: 'Mon 30 Nov', time: '23:30' });
  });
});
