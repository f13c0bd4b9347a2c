import { describe, expect, it } from 'vitest';
import { newId } from './ids';

describe('row ids', () => {
  it('sort as text in the order they were made, within a millisecond and across', () => {
    const at = Date.UTC(2026, 11, 5, 12, 0, 0);
    const ids: string[] = [];
    // 200 ids per millisecond across 70 ms: the counter's low character passes every value, and
    // the time's low character crosses the spots where base64url's order is not ASCII order.
    for (let ms = 0; ms < 70; ms++) for (let i = 0; i < 200; i++) ids.push(newId('run', at + ms));
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('keep their shape: a prefix and 12 base64url characters', () => {
    expect(newId('task')).toMatch(/^task_[A-Za-z0-9_-]{12}$/);
  });
});
