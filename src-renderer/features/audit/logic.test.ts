import { describe, expect, it } from 'vitest';
import type { AuditEvent } from '../../../src-main/common/model';
import { EMPTY_AUDIT_FORM, exportFraction, formToQuery, isFiltered, localInputToIso, normaliseSubject, prependNewer, sameQuery, subjectLink } from './logic';

const ev = (id: number): AuditEvent => ({ id, at: '', type: 't', actor: 'a', subject: 's', detail: null, traceId: null, prevHash: '', hash: '' });

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
    expect(subjectLink('task:12')).toEqual({ kind: 'task', id: '12' });
    expect(subjectLink('settings')).toEqual({ kind: 'other', id: 'settings' });
  });
});

describe('audit list maintenance', () => {
  it('prepends newer rows without duplicates, or replaces the list across a gap', () => {
    const list = [ev(5), ev(4), ev(3)];
    expect(prependNewer(list, [ev(7), ev(6), ev(5)], false).map((e) => e.id)).toEqual([7, 6, 5, 4, 3]);
    expect(prependNewer(list, [], false)).toBe(list);
    expect(prependNewer(list, [ev(900), ev(899)], true).map((e) => e.id)).toEqual([900, 899]);
  });

  it('computes export progress', () => {
    expect(exportFraction(50, 100, false)).toBe(0.5);
    expect(exportFraction(150, 100, false)).toBe(0.99);
    expect(exportFraction(10, null, false)).toBeNull();
    expect(exportFraction(10, null, true)).toBe(1);
  });
});
