import { describe, expect, it } from 'vitest';
import { isLogLine, logLine } from './protocol';

describe('isLogLine (the log line schema by hand)', () => {
  it('agrees with the schema, also for an `at` repeated line after line', () => {
    const at = '2026-12-01T10:00:00.000Z';
    const cases: unknown[] = [
      { text: 'a', at },
      { text: 'b', at }, // the same instant again: remembered as valid
      { text: 'c', at: '' },
      { text: 'd', at: 'yesterday' },
      { text: 'e', at: '2026-13-01T10:00:00.000Z' },
      { text: 'f', at },
      { text: 'g', at: '2026-12-01T10:00:00.001+01:00' },
      { text: 'h', at: 5 },
      { text: 'i', stream: 'stderr', level: 'warn', seq: 3 },
      { text: 'j', seq: 0 },
      { text: 'k', level: 'loud' },
      { text: 5 },
      'just a string',
      null,
      [],
    ];
    for (const c of cases) expect(isLogLine(c), JSON.stringify(c)).toBe(logLine.safeParse(c).success);
  });
});
