/**
 * The day of a daily cap without rebuilding it per read (budgets.ts `dayOf`): the machine's zone is
 * read at most once a minute (each read builds an Intl.DateTimeFormat, which was most of a usage
 * report's CPU), and a day computed once is reused only while the instant is inside it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { makeTestCore, type TestCore } from '../tests/test-core';

let core: TestCore | undefined;
const tz = process.env.TZ;
afterEach(() => {
  core?.close();
  core = undefined;
  if (tz === undefined) delete process.env.TZ;
  else process.env.TZ = tz;
});

const op = { actor: 'operator:test' };

describe('budgets: the day of the daily caps', () => {
  it('reads the machine’s zone at most once a minute, and moves to the next day at midnight', () => {
    process.env.TZ = 'UTC';
    core = makeTestCore();
    core.clock.jump(Date.parse('2026-11-30T23:59:00.000Z') - core.clock.now());
    expect(core.budgets.put({ perRoleDailyUsd: { dev: 5 }, ...op })).toMatchObject({ zone: 'UTC', day: '2026-11-30' });
    process.env.TZ = 'Asia/Tokyo'; // the machine's zone changes: seen within a minute, not on every read
    expect(core.budgets.view()).toMatchObject({ zone: 'UTC', day: '2026-11-30' });
    core.clock.advance(30_000);
    expect(core.budgets.view()).toMatchObject({ zone: 'UTC', day: '2026-11-30' });
    core.clock.advance(30_000);
    expect(core.budgets.view()).toMatchObject({ zone: 'Asia/Tokyo', day: '2026-12-01', resetsAt: '2026-12-01T15:00:00.000Z' });
    process.env.TZ = 'UTC';
    core.clock.advance(60_000);
    // Past midnight UTC (00:01): the day computed before is not reused for an instant outside it.
    expect(core.budgets.view()).toMatchObject({ zone: 'UTC', day: '2026-12-01', resetsAt: '2026-12-02T00:00:00.000Z' });
    expect(core.budgets.dayOf(Date.parse('2026-11-30T12:00:00.000Z'))).toMatchObject({ day: '2026-11-30' });
    expect(core.budgets.dayOf(Date.parse('2026-12-01T12:00:00.000Z'))).toMatchObject({ day: '2026-12-01' });
  });
});
