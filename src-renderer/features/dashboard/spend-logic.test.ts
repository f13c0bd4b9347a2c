import { describe, expect, it } from 'vitest';
import { capsDraftFrom, capsDraftProblems, capsDraftToInput, money, tokenCount } from './spend-logic';

describe('spend caps form', () => {
  const before = { globalDailyUsd: 50, perRoleDailyUsd: { dev: 10, ops: 5 }, timezone: null };

  it('saves what is listed; a role taken off the list loses its cap; an empty total means no cap', () => {
    const d = capsDraftFrom(before);
    expect(d).toEqual({ global: '50', roles: [{ role: 'dev', usd: '10' }, { role: 'ops', usd: '5' }], windows: [] });
    const next = { global: '', roles: [{ role: 'dev', usd: '12.5' }, { role: 'qa', usd: '1' }], windows: [] };
    expect(capsDraftProblems(next)).toEqual([]);
    expect(capsDraftToInput(next, before)).toEqual({ globalDailyUsd: null, perRoleDailyUsd: { dev: 12.5, ops: null, qa: 1 }, windows: [] });
  });

  it('edits the rolling spend windows: a role window, one over all roles; the list saved replaces the stored one', () => {
    const stored = { ...before, windows: [{ scope: 'role' as const, role: 'dev', hours: 5, maxTokens: 2_000_000 }] };
    const d = capsDraftFrom(stored);
    expect(d.windows).toEqual([{ role: 'dev', hours: '5', tokens: '2000000', usd: '' }]);
    const next = { ...d, windows: [{ role: 'dev', hours: '5', tokens: '1.5M', usd: '' }, { role: ' ', hours: '168', tokens: '', usd: '40' }] };
    expect(capsDraftProblems(next)).toEqual([]);
    expect(capsDraftToInput(next, stored).windows).toEqual([
      { scope: 'role', role: 'dev', hours: 5, maxTokens: 1_500_000 },
      { scope: 'global', hours: 168, maxCostUsd: 40 },
    ]);
    expect(capsDraftToInput({ ...d, windows: [] }, stored).windows).toEqual([]);
    expect([tokenCount('500k'), tokenCount('2,000,000'), tokenCount(''), tokenCount('1.5')]).toEqual([500_000, 2_000_000, null, Number.NaN]);
  });

  it('says what is wrong with a window before anything is sent', () => {
    const windows = [
      { role: 'bad role', hours: '0', tokens: '', usd: '' },
      { role: '', hours: '800', tokens: 'lots', usd: '-1' },
    ];
    expect(capsDraftProblems({ global: '', roles: [], windows })).toEqual([
      'Spend window 1: “bad role” is not a role name (letters, digits, “_”, “-” or “.”), or leave it empty for all roles.',
      'Spend window 1: its length is a number of hours above 0, at most 744 (31 days).',
      'Spend window 1: give it a token limit, a dollar limit, or both.',
      'Spend window 2: its length is a number of hours above 0, at most 744 (31 days).',
      'Spend window 2: the token limit is a whole number above 0 (e.g. 2000000 or 2M).',
      'Spend window 2: the dollar limit is an amount above 0.',
    ]);
  });

  it('says what the server would refuse', () => {
    expect(capsDraftProblems({ global: '0', roles: [{ role: 'bad role', usd: '3' }, { role: 'dev', usd: 'x' }, { role: 'dev', usd: '1' }], windows: [] })).toEqual([
      'The cap for all roles is an amount above 0, or empty for none.',
      '“bad role” is not a role name (letters, digits, “_”, “-” or “.”).',
      'The cap of role dev is an amount above 0.',
      'Role dev is listed twice.',
    ]);
    expect(money(3)).toBe('$3.00');
  });
});
