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
      { text: 'l', kind: 'tool_call', data: { name: 'Bash', input: { command: 'ls' } } },
      { text: 'm', kind: 'chat' },
      { text: 'n', data: ['not', 'an', 'object'] },
      { text: 'o', data: 'text' },
      { text: 'p', kind: 'result', data: { big: 'x'.repeat(64 * 1024) } },
      { text: 'q', kind: 'result', data: { fits: 'x'.repeat(60 * 1024) } },
      'just a string',
      null,
      [],
    ];
    for (const c of cases) expect(isLogLine(c), JSON.stringify(c)).toBe(logLine.safeParse(c).success);
  });

  it('takes a conversation kind and a data object of at most 64 KiB (PROTOCOL §16)', () => {
    const ok = (l: unknown) => isLogLine(l) && logLine.safeParse(l).success;
    expect(ok({ text: 'a', kind: 'assistant', data: { model: 'm', usage: { inputTokens: 1 } } })).toBe(true);
    expect(ok({ text: 'a', kind: 'chat' })).toBe(false);
    expect(ok({ text: 'a', data: [1] })).toBe(false);
    expect(ok({ text: 'a', data: { s: 'x'.repeat(64 * 1024) } })).toBe(false);
    expect(ok({ text: 'a', data: { s: 'é'.repeat(30 * 1024) } })).toBe(true);
    expect(ok({ text: 'a', data: { s: 'é'.repeat(33 * 1024) } })).toBe(false); // 2 bytes each in UTF-8
  });
});
