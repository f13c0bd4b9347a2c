/** `Where`: optional filters become bound conditions, in order; none gives no clause. */
import { expect, it } from 'vitest';
import { Where } from './where';

it('skips filters that are not given, keeps the order of conditions and parameters', () => {
  const w = new Where().equals('state', undefined).and('id < ?', 9).equals('kind', 'stalled').and('(a < ? OR b = ?)', 1, 'x');
  expect(w.sql()).toBe('WHERE id < ? AND kind = ? AND (a < ? OR b = ?)');
  expect(w.params).toEqual([9, 'stalled', 1, 'x']);
  expect(new Where().equals('role', undefined).sql()).toBe('');
});
