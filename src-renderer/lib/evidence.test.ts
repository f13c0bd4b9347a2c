import { describe, expect, it } from 'vitest';
import { evidenceLabel, evidenceRows, splitInstants } from './evidence';

describe('evidence rows', () => {
  it('flattens evidence one level', () => {
    expect(evidenceRows({ path: '/d/2026-11-29.csv', existsNow: false, window: { opensAt: 'a', closesAt: 'b' }, calendar: null, list: [1, 2] })).toEqual([
      { key: 'path', value: '/d/2026-11-29.csv' },
      { key: 'existsNow', value: 'false' },
      { key: 'window.opensAt', value: 'a' },
      { key: 'window.closesAt', value: 'b' },
      { key: 'calendar', value: '—' },
      { key: 'list', value: '[1,2]' },
    ]);
    expect(evidenceRows(null)).toEqual([]);
    expect(evidenceRows('x')).toEqual([{ key: 'value', value: '"x"' }]);
  });

  it('reads keys as words', () => {
    expect(['window.opensAt', 'setNow', 'businessDate', 'dayType', 'slot', 'run_id', 'maxAgeS', 'elapsedMs', 'status'].map(evidenceLabel)).toEqual(['window · opens at', 'set now', 'business date', 'day type', 'slot', 'run id', 'max age (s)', 'elapsed (ms)', 'status']);
  });

  it('marks instants, in the rows and inside reasons, to show them in local time', () => {
    expect(evidenceRows({ setAt: '2026-11-30T01:02:03.000Z', key: '2026-11-30' })).toEqual([
      { key: 'setAt', value: '2026-11-30T01:02:03.000Z', instant: '2026-11-30T01:02:03.000Z' },
      { key: 'key', value: '2026-11-30' },
    ]);
    expect(splitInstants('window 2026-11-30T01:00:00.000Z – 2026-11-30T02:00:00+08:00 on 2026-11-30')).toEqual([
      'window ',
      { iso: '2026-11-30T01:00:00.000Z' },
      ' – ',
      { iso: '2026-11-30T02:00:00+08:00' },
      ' on 2026-11-30',
    ]);
  });
});
