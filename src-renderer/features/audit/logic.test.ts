import { describe, expect, it } from 'vitest';
import { exportFraction, subjectLink } from './logic';

describe('audit view helpers', () => {
  it('reads subjects into links', () => {
    expect(subjectLink('task:12')).toEqual({ kind: 'task', id: '12' });
    expect(subjectLink('settings')).toEqual({ kind: 'other', id: 'settings' });
  });

  it('computes export progress', () => {
    expect(exportFraction(50, 100, false)).toBe(0.5);
    expect(exportFraction(150, 100, false)).toBe(0.99);
    expect(exportFraction(10, null, false)).toBeNull();
    expect(exportFraction(10, null, true)).toBe(1);
  });
});
