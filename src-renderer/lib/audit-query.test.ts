import { describe, expect, it } from 'vitest';
import { EMPTY_AUDIT_FORM, formToQuery, isFiltered, localInputToIso, normaliseSubject, sameQuery } from './audit-query';

describe('audit filter → query mapping', () => {
  it('maps an empty form to an unfiltered query', () => {
    expect(formToQuery(EMPTY_AUDIT_FORM)).toEqual({ query: {}, error: null });
    expect(isFiltered({})).toBe(false);
  });

  it('maps each field, trimming, with several types as `types`', () => {
    const { query, error } = formToQuery({ ...EMPTY_AUDIT_FORM, type: ' lock.expire ', actor: ' inst-1 ', subject: '42', text: ' timeout ' });
    expect(error).toBeNull();
    expect(query).toEqual({ type: 'lock.expire', actor: 'inst-1', subject: 'task:42', text: 'timeout' });
    expect(formToQuery({ ...EMPTY_AUDIT_FORM, type: 'lock.claim, lock.release lock.claim' }).query).toEqual({ types: ['lock.claim', 'lock.release'] });
    expect(isFiltered(query)).toBe(true);
  });

  it('maps local times to UTC instants and refuses an inverted range', () => {
    const from = localInputToIso('2026-11-30T09:00');
    expect(from).toBe(new Date(2026, 10, 30, 9, 0).toISOString());
    const ok = formToQuery({ ...EMPTY_AUDIT_FORM, from: '2026-11-30T09:00', to: '2026-11-30T10:00' });
    expect(ok.query.from).toBe(from);
    expect(ok.error).toBeNull();
    const bad = formToQuery({ ...EMPTY_AUDIT_FORM, from: '2026-11-30T10:00', to: '2026-11-30T09:00' });
    expect(bad.error).toMatch(/before/);
    expect(bad.query.from).toBeUndefined();
    expect(formToQuery({ ...EMPTY_AUDIT_FORM, from: 'yesterday' }).error).toMatch(/not a date/);
  });

  it('normalises subjects and compares queries', () => {
    expect(normaliseSubject('#7')).toBe('task:7');
    expect(normaliseSubject('instance:abc')).toBe('instance:abc');
    expect(sameQuery({ type: 'a' }, { type: 'a', limit: 5 } as never)).toBe(true);
    expect(sameQuery({ type: 'a' }, { type: 'b' })).toBe(false);
  });
});
