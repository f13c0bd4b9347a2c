import { describe, expect, it } from 'vitest';
import { capsDraftFrom, capsDraftProblems, capsDraftToInput, money } from './spend-logic';

describe('spend caps form', () => {
  const before = { globalDailyUsd: 50, perRoleDailyUsd: { dev: 10, ops: 5 }, timezone: null };

  it('saves what is listed; a role taken off the list loses its cap; an empty total means no cap', () => {
    const d = capsDraftFrom(before);
    expect(d).toEqual({ global: '50', roles: [{ role: 'dev', usd: '10' }, { role: 'ops', usd: '5' }] });
    const next = { global: '', roles: [{ role: 'dev', usd: '12.5' }, { role: 'qa', usd: '1' }] };
    expect(capsDraftProblems(next)).toEqual([]);
    expect(capsDraftToInput(next, before)).toEqual({ globalDailyUsd: null, perRoleDailyUsd: { dev: 12.5, ops: null, qa: 1 } });
  });

  it('says what the server would refuse', () => {
    expect(capsDraftProblems({ global: '0', roles: [{ role: 'bad role', usd: '3' }, { role: 'dev', usd: 'x' }, { role: 'dev', usd: '1' }] })).toEqual([
      'The cap for all roles is an amount above 0, or empty for none.',
      '“bad role” is not a role name (letters, digits, “_”, “-” or “.”).',
      'The cap of role dev is an amount above 0.',
      'Role dev is listed twice.',
    ]);
    expect(money(3)).toBe('$3.00');
  });
});
