import { afterEach, describe, expect, it } from 'vitest';
import { makeTestCore, type TestCore } from '../tests/test-core';

let core: TestCore | undefined;
afterEach(() => {
  core?.close();
  core = undefined;
});
const who = { actor: 'operator:test' };

describe('"run now" says which slot it runs before it runs', () => {
  it('at 18:23, a job due at 19:00 falls in yesterday’s slot: the choices say so, and name today’s as next', () => {
    core = makeTestCore();
    core.clock.advance(Date.parse('2026-11-30T18:23:00.000Z') - core.clock.now());
    const id = core.jobs.create({ name: 'evening', role: 'etl', schedule: { cron: '0 19 * * *', timezone: 'UTC' } }, who).job.id;
    const c = core.jobs.triggerChoices(id);
    expect(c.choices.map((x) => [x.which, x.slot, x.at, x.effect])).toEqual([
      ['current', '2026-11-29', '2026-11-29T19:00:00.000Z', 'claim'],
      ['previous', '2026-11-28', '2026-11-28T19:00:00.000Z', 'claim'],
      ['next', '2026-11-30', '2026-11-30T19:00:00.000Z', 'claim'],
    ]);
    expect(c).toMatchObject({ zone: 'UTC', refused: null, preconditions: 0 });
    // What "run now" takes without a slot is the current choice.
    const t = core.jobs.triggerNow(id, { reason: 'numbers needed', actor: 'op' });
    expect(t.run.slot).toBe('2026-11-29');
    const after = core.jobs.triggerChoices(id).choices[0]!;
    expect(after).toMatchObject({ slot: '2026-11-29', run: { id: t.run.id } });
    expect(after.effect).not.toBe('claim');
  });

  it('on a weekend a workday job’s current slot is the skipped day (said so), the previous is the last workday', () => {
    core = makeTestCore();
    core.clock.advance(Date.parse('2026-12-05T12:00:00.000Z') - core.clock.now()); // a Saturday
    core.jobs.createCalendar({ id: 'weekdays', name: 'Weekdays', timezone: 'UTC', workdays: [1, 2, 3, 4, 5], holidays: [], extraWorkdays: [] }, who);
    const id = core.jobs.create({ name: 'report', role: 'etl', schedule: { cron: '0 9 * * *', timezone: 'UTC' }, calendar: 'weekdays', preconditions: [{ kind: 'signal', name: 'data-ready' }] }, who).job.id;
    const c = core.jobs.triggerChoices(id);
    expect(c.choices.map((x) => [x.which, x.slot, x.disposition])).toEqual([
      ['current', '2026-12-05', 'calendar_skip'],
      ['previous', '2026-12-04', 'due'],
      ['next', '2026-12-06', 'calendar_skip'],
    ]);
    expect(c.preconditions).toBe(1);
  });

  it('says why nothing can be triggered while the kill switch is on', () => {
    core = makeTestCore();
    const id = core.jobs.create({ name: 'x', role: 'etl', schedule: { cron: '0 9 * * *', timezone: 'UTC' } }, who).job.id;
    core.jobs.setKillSwitch({ on: true, reason: 'incident', actor: 'op' });
    expect(core.jobs.triggerChoices(id).refused).toMatch(/kill switch is on .*incident/);
  });
});
