import { describe, expect, it } from 'vitest';
import { evidenceRows } from './evidence';

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
});
