import { describe, expect, it } from 'vitest';
import { enterForeground, leaveForeground, stepAside } from './foreground';

describe('foreground (the count background workers step aside for)', () => {
  it('never goes below zero: a stray leave cannot hide a later request', () => {
    const flag = new Int32Array(new SharedArrayBuffer(4));
    leaveForeground(flag);
    expect(flag[0]).toBe(0);
    enterForeground(flag);
    enterForeground(flag);
    leaveForeground(flag);
    expect(flag[0]).toBe(1);
    leaveForeground(flag);
    leaveForeground(flag);
    expect(flag[0]).toBe(0);
  });

  it('stepAside returns at once when nothing is served, and sleeps at most maxMs while something is', () => {
    const flag = new Int32Array(new SharedArrayBuffer(4));
    expect(stepAside(flag, 1000)).toBeLessThan(50);
    enterForeground(flag);
    const slept = stepAside(flag, 60);
    expect(slept).toBeGreaterThanOrEqual(59);
    expect(slept).toBeLessThan(1000);
  });
});
