import { describe, expect, it } from 'vitest';
import { ManualTimers } from '../testing/manual-timers';
import { debounce } from './debounce';

describe('debounce', () => {
  it('runs once with the last arguments after the quiet period', () => {
    const t = new ManualTimers();
    const seen: string[] = [];
    const d = debounce((s: string) => seen.push(s), 250, t);
    d('a');
    t.advance(100);
    d('ab');
    t.advance(100);
    d('abc');
    expect(seen).toEqual([]);
    expect(d.pending).toBe(true);
    t.advance(249);
    expect(seen).toEqual([]);
    t.advance(1);
    expect(seen).toEqual(['abc']);
    expect(d.pending).toBe(false);
  });

  it('flushes and cancels', () => {
    const t = new ManualTimers();
    const seen: number[] = [];
    const d = debounce((n: number) => seen.push(n), 250, t);
    d(1);
    d.flush();
    expect(seen).toEqual([1]);
    d(2);
    d.cancel();
    t.advance(1000);
    expect(seen).toEqual([1]);
    expect(t.pending).toBe(0);
  });
});
