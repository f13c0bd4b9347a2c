/**
 * Time zones and business calendars through the runner (real agents, manual clock): DST spring
 * forward and fall back in two zones (no double run, no silent drop), "yesterday" across a year end
 * and month ends in precondition evidence, and a make-up workday on a Sunday.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../tests/test-core';
import { assertInvariants, startJobsHarness, succeed, until, type JobsHarness } from '../tests/jobs.testkit';
import { cnCalendar } from './schedule/fixtures.test-helpers';

let h: JobsHarness | undefined;

const iso = (ms: number) => new Date(ms).toISOString();

describe('DST through the runner', () => {
  it.each([
    // zone, cron, start, end, expected [slot, dispatch instant]
    [
      'America/New_York spring forward (02:30 does not exist on 2026-03-08)',
      'America/New_York',
      '30 2 * * *',
      '2026-03-07T00:00:00.000Z',
      '2026-03-10T00:00:00.000Z',
      [
        ['2026-03-07', '2026-03-07T07:30:00.000Z'],
        ['2026-03-08', '2026-03-08T07:00:00.000Z'], // shifted to 03:00 EDT
        ['2026-03-09', '2026-03-09T06:30:00.000Z'],
      ],
    ],
    [
      'America/New_York fall back (01:30 happens twice on 2026-11-01)',
      'America/New_York',
      '30 1 * * *',
      '2026-10-31T00:00:00.000Z',
      '2026-11-03T00:00:00.000Z',
      [
        ['2026-10-31', '2026-10-31T05:30:00.000Z'],
        ['2026-11-01', '2026-11-01T05:30:00.000Z'], // the earlier 01:30 only
        ['2026-11-02', '2026-11-02T06:30:00.000Z'],
      ],
    ],
    [
      'Europe/Berlin spring forward (02:30 does not exist on 2026-03-29)',
      'Europe/Berlin',
      '30 2 * * *',
      '2026-03-28T00:00:00.000Z',
      '2026-03-31T00:00:00.000Z',
      [
        ['2026-03-28', '2026-03-28T01:30:00.000Z'],
        ['2026-03-29', '2026-03-29T01:00:00.000Z'], // shifted to 03:00 CEST
        ['2026-03-30', '2026-03-30T00:30:00.000Z'],
      ],
    ],
    [
      'Europe/Berlin fall back (02:30 happens twice on 2026-10-25)',
      'Europe/Berlin',
      '30 2 * * *',
      '2026-10-24T00:00:00.000Z',
      '2026-10-27T00:00:00.000Z',
      [
        ['2026-10-24', '2026-10-24T00:30:00.000Z'],
        ['2026-10-25', '2026-10-25T00:30:00.000Z'],
        ['2026-10-26', '2026-10-26T01:30:00.000Z'],
      ],
    ],
  ] as const)('%s: one run per day at the right instant', async (_name, zone, cron, start, end, expected) => {
    h = await startJobsHarness({ start });
    const agent = await h.agent('ops', succeed());
    const jobId = h.createJob({ name: 'dst', role: 'ops', schedule: { cron, timezone: zone } });
    await h.advanceTo(end);
    await h.settle();
    expect(agent.triggers.map((t) => [t.slot, iso(t.receivedAt)])).toEqual(expected);
    expect(h.runs(jobId).map((r) => [r.slot, r.status])).toEqual(expected.map(([s]) => [s, 'success']));
    assertInvariants(h.core);
  });

  it('hourly job on the fall-back day (Berlin, 25 hours): 24 slots, the repeated hour runs once', async () => {
    h = await startJobsHarness({ start: '2026-10-24T21:30:00.000Z' });
    const agent = await h.agent('ops', succeed());
    const jobId = h.createJob({ name: 'hourly', role: 'ops', schedule: { cron: '0 * * * *', timezone: 'Europe/Berlin' } });
    // Local 2026-10-25 00:00 CEST = 2026-10-24T22:00Z … 23:00 CET = 2026-10-25T22:00Z.
    await h.advanceTo('2026-10-25T22:30:00.000Z');
    await h.settle();
    const day = agent.triggers.filter((t) => t.slot.startsWith('2026-10-25T'));
    expect(day).toHaveLength(24);
    expect(day.filter((t) => t.slot === '2026-10-25T02:00').map((t) => iso(t.receivedAt))).toEqual(['2026-10-25T00:00:00.000Z']);
    // The second 02:00 (01:00Z) has no run: it is the same slot.
    expect(agent.triggers.some((t) => t.receivedAt === Date.parse('2026-10-25T01:00:00.000Z'))).toBe(false);
    expect(h.runs(jobId).filter((r) => r.slot.startsWith('2026-10-25T')).every((r) => r.status === 'success')).toBe(true);
    assertInvariants(h.core);
  });

  it('hourly job on the spring-forward day (New York): 02:00 shifts onto 03:00, both run once, one after the other', async () => {
    h = await startJobsHarness({ start: '2026-03-08T04:30:00.000Z' });
    const agent = await h.agent('ops', succeed());
    const jobId = h.createJob({ name: 'hourly', role: 'ops', schedule: { cron: '0 * * * *', timezone: 'America/New_York' } });
    await h.advanceTo('2026-03-08T08:30:00.000Z');
    await h.settle();
    expect(agent.triggers.map((t) => [t.slot, iso(t.receivedAt)])).toEqual([
      ['2026-03-08T00:00', '2026-03-08T05:00:00.000Z'],
      ['2026-03-08T01:00', '2026-03-08T06:00:00.000Z'],
      ['2026-03-08T02:00', '2026-03-08T07:00:00.000Z'], // 02:00 does not exist: shifted to 03:00 EDT
      ['2026-03-08T03:00', '2026-03-08T07:00:00.000Z'],
      ['2026-03-08T04:00', '2026-03-08T08:00:00.000Z'],
    ]);
    expect(h.runs(jobId).map((r) => r.status)).toEqual(['success', 'success', 'success', 'success', 'success']);
    assertInvariants(h.core);
  });
});

describe('DST windows and intervals through the runner', () => {
  it('a window inside the spring-forward gap opens with its shifted slot and keeps its 15 minutes (New York, 2027-03-14)', async () => {
    h = await startJobsHarness({ start: '2027-03-13T12:00:00.000Z' });
    const agent = await h.agent('ops', succeed());
    const jobId = h.createJob({ name: 'gap-window', role: 'ops', schedule: { cron: '30 2 * * *', timezone: 'America/New_York' }, window: { start: '02:30', end: '02:45', recheckEveryS: 60 } });
    await h.advanceTo('2027-03-15T12:00:00.000Z');
    await h.settle();
    // 02:30 EST does not exist on 2027-03-14: the slot and its window move to 03:00 EDT = 07:00Z.
    expect(agent.triggers.map((t) => [t.slot, iso(t.receivedAt)])).toEqual([
      ['2027-03-14', '2027-03-14T07:00:00.000Z'],
      ['2027-03-15', '2027-03-15T06:30:00.000Z'],
    ]);
    const run = h.runs(jobId).find((r) => r.slot === '2027-03-14')!;
    expect([run.status, run.disposition, run.windowClosesAt]).toEqual(['success', 'ran', '2027-03-14T07:15:00.000Z']);
    assertInvariants(h.core);
  });

  it('a 15-minute interval keeps its four slots in the repeated hour (London, 2026-10-25)', async () => {
    h = await startJobsHarness({ start: '2026-10-24T23:50:00.000Z' });
    const agent = await h.agent('ops', succeed());
    const jobId = h.createJob({ name: 'quarterly', role: 'ops', schedule: { everyS: 900, timezone: 'Europe/London' } });
    await h.advanceTo('2026-10-25T02:05:00.000Z');
    await h.settle();
    expect(agent.triggers.map((t) => [t.slot, iso(t.receivedAt)])).toEqual([
      ['2026-10-25T01:00', '2026-10-25T00:00:00.000Z'],
      ['2026-10-25T01:15', '2026-10-25T00:15:00.000Z'],
      ['2026-10-25T01:30', '2026-10-25T00:30:00.000Z'],
      ['2026-10-25T01:45', '2026-10-25T00:45:00.000Z'],
      ['2026-10-25T01:00+00:00', '2026-10-25T01:00:00.000Z'],
      ['2026-10-25T01:15+00:00', '2026-10-25T01:15:00.000Z'],
      ['2026-10-25T01:30+00:00', '2026-10-25T01:30:00.000Z'],
      ['2026-10-25T01:45+00:00', '2026-10-25T01:45:00.000Z'],
      ['2026-10-25T02:00', '2026-10-25T02:00:00.000Z'],
    ]);
    expect(h.runs(jobId).every((r) => r.status === 'success')).toBe(true);
    // Each second-pass slot carries its own idempotency key and explains as itself.
    expect(new Set(agent.triggers.map((t) => t.idempotencyKey)).size).toBe(9);
    expect(h.core.jobs.explain(jobId, '2026-10-25T01:20:00.000Z').slot?.slot).toBe('2026-10-25T01:15+00:00');
    assertInvariants(h.core);
  });
});

describe('"yesterday" across year and month ends', () => {
  it.each([
    ['New Year', '2026-12-31T12:00:00.000Z', '2027-01-01T01:00:00.000Z', '2027-01-01', '2026-12-31'],
    ['month end (February)', '2026-02-28T12:00:00.000Z', '2026-03-01T01:00:00.000Z', '2026-03-01', '2026-02-28'],
    ['leap day', '2028-02-29T12:00:00.000Z', '2028-03-01T01:00:00.000Z', '2028-03-01', '2028-02-29'],
    ['30-day month', '2026-04-30T12:00:00.000Z', '2026-05-01T01:00:00.000Z', '2026-05-01', '2026-04-30'],
  ])('%s: the evidence shows the exact key and path checked', async (_name, start, due, slot, yesterday) => {
    const dir = tempDir('gaffer-files-');
    fs.writeFileSync(path.join(dir, `orders-${yesterday}.csv`), 'id,total\n');
    h = await startJobsHarness({ start });
    const jobId = h.createJob({
      name: 'report',
      schedule: { cron: '0 9 * * *', timezone: 'Asia/Shanghai' },
      window: { start: '09:00', end: '10:00', recheckEveryS: 300 },
      preconditions: [
        { kind: 'signal', name: 'data-ready', key: '{yesterday}' },
        { kind: 'file', path: path.join(dir, 'orders-{yesterday}.csv'), label: 'orders file' },
        { kind: 'file', path: path.join(dir, 'orders-{date-1}.csv'), check: 'modified_after', after: 'yesterday', label: 'fresh' },
      ],
    });
    await h.advanceTo(due);
    await until(() => h!.core.jobs.getRun(h!.run(jobId, slot)!.id).checks.filter((c) => c.layer === 'precondition').length === 3, 'checks');
    const e = h.core.jobs.explain(jobId, due);
    const [signal, file, fresh] = e.layers.preconditions.items;
    expect(signal).toMatchObject({ verdict: 'not_ready', reason: `signal data-ready is not set for ${yesterday}` });
    expect(signal!.evidence).toMatchObject({ key: yesterday, businessDate: slot, placeholders: { '{yesterday}': yesterday } });
    expect(file).toMatchObject({ name: 'orders file', verdict: 'ready' });
    expect(file!.evidence).toMatchObject({ path: path.join(dir, `orders-${yesterday}.csv`), exists: true, businessDate: slot });
    // modified_after 'yesterday' = local midnight of yesterday in the job zone (UTC+8).
    expect(fresh!.evidence).toMatchObject({ path: path.join(dir, `orders-${yesterday}.csv`), modifiedAfter: { basis: 'yesterday', instant: new Date(Date.parse(`${yesterday}T00:00:00+08:00`)).toISOString() } });
  });
});

describe('business calendar', () => {
  it('a make-up workday on a Sunday runs; the Saturday before is skipped (recorded); Golden Week is skipped', async () => {
    h = await startJobsHarness({ start: '2026-09-17T12:00:00.000Z' });
    const agent = await h.agent('reporter', succeed());
    h.core.jobs.createCalendar(cnCalendar, { actor: 'test' });
    const jobId = h.createJob({ name: 'cn', schedule: { cron: '0 9 * * *', timezone: 'Asia/Shanghai' }, calendar: 'cn-workdays', calendarPolicy: 'skip' });
    await h.advanceTo('2026-09-22T02:00:00.000Z');
    expect(agent.triggers.map((t) => t.slot)).toEqual(['2026-09-18', '2026-09-20', '2026-09-21', '2026-09-22']);
    expect(h.runs(jobId).map((r) => [r.slot, r.disposition])).toEqual([
      ['2026-09-18', 'ran'],
      ['2026-09-19', 'skipped_calendar'],
      ['2026-09-20', 'ran'],
      ['2026-09-21', 'ran'],
      ['2026-09-22', 'ran'],
    ]);
    const sat = h.core.jobs.explain(jobId, '2026-09-19T01:00:00.000Z');
    expect(sat.outcome).toMatch(/not a workday/);
    expect(sat.layers.time.reason).toMatch(/2026-09-19 is a weekend/);
    const sun = h.core.jobs.explain(jobId, '2026-09-20T01:00:00.000Z');
    expect(sun.layers.time.items[0]!.evidence).toMatchObject({ dayType: 'extra_workday' });
    // Forecast over Golden Week: 10-01 is a holiday, 10-10 (Saturday) a make-up workday.
    expect(h.core.jobs.explain(jobId, '2026-10-01T01:00:00.000Z').outcome).toMatch(/will not run: slot 2026-10-01 falls on a non-workday \(2026-10-01 is a holiday in calendar cn-workdays\)/);
    expect(h.core.jobs.explain(jobId, '2026-10-10T01:00:00.000Z').outcome).toMatch(/will run at 2026-10-10T01:00:00.000Z/);
    const p = h.core.jobs.preview(jobId, 3, '2026-09-30T12:00:00.000Z');
    expect(p.items.filter((i) => i.disposition === 'due').map((i) => i.slot)).toEqual(['2026-10-08', '2026-10-09', '2026-10-10']);
    assertInvariants(h.core);
  });

  it('next_workday: weekend slots move to Monday and run there one after another, each once', async () => {
    h = await startJobsHarness({ start: '2026-11-27T12:00:00.000Z' }); // Friday
    const agent = await h.agent('reporter', succeed());
    h.core.jobs.createCalendar({ id: 'mon-fri', name: 'Mon–Fri', timezone: 'Asia/Shanghai', workdays: [1, 2, 3, 4, 5], holidays: [], extraWorkdays: [] }, { actor: 'test' });
    const jobId = h.createJob({ name: 'nw', schedule: { cron: '0 9 * * *', timezone: 'Asia/Shanghai' }, calendar: 'mon-fri', calendarPolicy: 'next_workday' });
    const preview = h.core.jobs.preview(jobId, 3);
    expect(preview.items.map((i) => [i.slot, i.at, i.movedFrom ?? null])).toEqual([
      ['2026-11-28', '2026-11-30T01:00:00.000Z', '2026-11-28'],
      ['2026-11-29', '2026-11-30T01:00:00.000Z', '2026-11-29'],
      ['2026-11-30', '2026-11-30T01:00:00.000Z', null],
    ]);
    await h.advanceTo('2026-11-30T02:00:00.000Z');
    await h.settle();
    expect(agent.triggers.map((t) => t.slot)).toEqual(['2026-11-28', '2026-11-29', '2026-11-30']);
    expect(h.runs(jobId).map((r) => r.status)).toEqual(['success', 'success', 'success']);
    assertInvariants(h.core);
  });

  it('ICS import adds holidays and make-up workdays; jobs using the calendar follow', async () => {
    h = await startJobsHarness({ start: '2026-12-20T00:00:00.000Z' });
    h.core.jobs.createCalendar({ id: 'cn', name: 'CN', timezone: 'Asia/Shanghai', workdays: [1, 2, 3, 4, 5], holidays: [], extraWorkdays: [] }, { actor: 'test' });
    const jobId = h.createJob({ name: 'cn', schedule: { cron: '0 9 * * *', timezone: 'Asia/Shanghai' }, calendar: 'cn' });
    const ics = [
      'BEGIN:VCALENDAR',
      'VERSION:2.0',
      'PRODID:-//test//EN',
      'BEGIN:VEVENT',
      'UID:ny-2027',
      'DTSTART;VALUE=DATE:20270101',
      'DTEND;VALUE=DATE:20270102',
      'SUMMARY:New Year holiday',
      'END:VEVENT',
      'BEGIN:VEVENT',
      'UID:makeup-2027',
      'DTSTART;VALUE=DATE:20270103',
      'DTEND;VALUE=DATE:20270104',
      'SUMMARY:Make-up workday (补班)',
      'END:VEVENT',
      'END:VCALENDAR',
    ].join('\r\n');
    const r = h.core.jobs.importIcs('cn', { ics }, { actor: 'alice', reason: 'official 2027 schedule' });
    expect(r.calendar).toMatchObject({ holidays: ['2027-01-01'], extraWorkdays: ['2027-01-03'], version: 2 });
    expect(r.added).toEqual({ holidays: 1, extraWorkdays: 1 });
    const items = h.core.jobs.preview(jobId, 3, '2026-12-31T12:00:00.000Z').items;
    expect(items.map((i) => [i.slot, i.disposition, i.dayType])).toEqual([
      ['2027-01-01', 'calendar_skip', 'holiday'],
      ['2027-01-02', 'calendar_skip', 'weekend'],
      ['2027-01-03', 'due', 'extra_workday'],
      ['2027-01-04', 'due', 'workday'],
      ['2027-01-05', 'due', 'workday'],
    ]);
    expect(h.audit('calendar.import_ics')[0]).toMatchObject({ actor: 'alice', detail: { reason: 'official 2027 schedule', holidays: { added: ['2027-01-01'] } } });
  });
});
