import { describe, expect, it } from 'vitest';
import { keepEqual } from './keep-equal';

describe('keepEqual', () => {
  it('the same data again keeps the old references, at every depth', () => {
    const prev = { items: [{ id: 1, tags: ['a'] }, { id: 2, tags: [] }], next: null, total: { count: 2, exact: true } };
    const again = JSON.parse(JSON.stringify(prev)) as typeof prev;
    expect(keepEqual(prev, again)).toBe(prev);
  });

  it('a changed row gets a new identity, and so do the containers holding it; every other row keeps its own', () => {
    const prev = { items: [{ id: 1, title: 'a' }, { id: 2, title: 'b' }, { id: 3, title: 'c' }], total: { count: 3 } };
    const next = { items: [{ id: 1, title: 'a' }, { id: 2, title: 'B' }, { id: 3, title: 'c' }], total: { count: 3 } };
    const out = keepEqual(prev, next);
    expect(out).not.toBe(prev);
    expect(out).toEqual(next);
    expect(out.items).not.toBe(prev.items);
    expect(out.items[0]).toBe(prev.items[0]);
    expect(out.items[1]).not.toBe(prev.items[1]);
    expect(out.items[1]).toEqual({ id: 2, title: 'B' });
    expect(out.items[2]).toBe(prev.items[2]);
    expect(out.total).toBe(prev.total);
  });

  it('added, removed and retyped fields, longer and shorter arrays, and non-plain objects are changes', () => {
    expect(keepEqual({ a: 1 }, { a: 1, b: undefined })).toEqual({ a: 1, b: undefined });
    expect(keepEqual({ a: 1, b: 2 }, { a: 1 })).toEqual({ a: 1 });
    expect(keepEqual({ a: 1 }, { a: '1' })).toEqual({ a: '1' });
    const prev = [1, 2];
    expect(keepEqual(prev, [1, 2, 3])).toEqual([1, 2, 3]);
    expect(keepEqual(prev, [1])).toEqual([1]);
    expect(keepEqual([1], { 0: 1 })).toEqual({ 0: 1 });
    const d1 = new Date(0);
    const d2 = new Date(0);
    expect(keepEqual(d1, d2)).toBe(d2);
    expect(keepEqual(null, { a: 1 })).toEqual({ a: 1 });
  });
});
