import { describe, expect, it } from 'vitest';
import { EMPTY_AUDIT_FORM, formFromRouteQuery, formToQuery, formToRouteQuery, isFiltered, localInputToIso, normaliseSubject, sameQuery } from './audit-query';

describe('audit filter → query mapping', () => {
  it('maps an empty form to an unfiltered query', () => {
    expect(formToQuery(EMPTY_AUDIT_FORM)).toEqual({ query: {}, error: null, notes: [] });
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

describe('audit filters as people type them', () => {
  it('reads an actor family as a prefix and an instance name as its id', () => {
    const alias = (n: string) => (n === 'dev-worker-1' ? 'inst_abc' : null);
    expect(formToQuery({ ...EMPTY_AUDIT_FORM, actor: 'operator' }, alias).query).toEqual({ actor: 'operator:*' });
    expect(formToQuery({ ...EMPTY_AUDIT_FORM, actor: 'Operator' }, alias).query).toEqual({ actor: 'operator:*' });
    expect(formToQuery({ ...EMPTY_AUDIT_FORM, actor: 'agent:' }, alias).query).toEqual({ actor: 'agent:*' });
    const byName = formToQuery({ ...EMPTY_AUDIT_FORM, actor: 'dev-worker-1' }, alias);
    expect(byName.query).toEqual({ actor: 'inst_abc' });
    expect(byName.notes).toEqual(['actor “dev-worker-1” is instance inst_abc']);
    expect(formToQuery({ ...EMPTY_AUDIT_FORM, actor: 'watchdog' }, alias).query).toEqual({ actor: 'watchdog' });
  });

  it('reads a type family or a trailing dot or star as a prefix', () => {
    expect(formToQuery({ ...EMPTY_AUDIT_FORM, type: 'lock.*' }).query).toEqual({ type: 'lock.*' });
    expect(formToQuery({ ...EMPTY_AUDIT_FORM, type: 'lock.' }).query).toEqual({ type: 'lock.*' });
    expect(formToQuery({ ...EMPTY_AUDIT_FORM, type: 'lock' }).query).toEqual({ type: 'lock.*' });
    expect(formToQuery({ ...EMPTY_AUDIT_FORM, type: 'lock.claim operator' }).query).toEqual({ types: ['lock.claim', 'operator.*'] });
  });

  it('carries the typed filter in the URL and back; nothing the URL does not name carries over', () => {
    const form = { ...EMPTY_AUDIT_FORM, actor: ' operator ', type: 'lock.*' };
    expect(formToRouteQuery(form)).toEqual({ actor: 'operator', type: 'lock.*' });
    expect(formFromRouteQuery({ actor: 'operator', type: 'lock.*', task: '5' })).toEqual({ ...EMPTY_AUDIT_FORM, actor: 'operator', type: 'lock.*' });
    expect(formFromRouteQuery({})).toEqual(EMPTY_AUDIT_FORM);
  });
});
