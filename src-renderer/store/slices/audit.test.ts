import { describe, expect, it } from 'vitest';
import type { AuditEvent } from '../../../src-main/common/model';
import { prependNewer } from './audit';

const ev = (id: number): AuditEvent => ({ id, at: '', type: 't', actor: 'a', subject: 's', detail: null, traceId: null, prevHash: '', hash: '' });

describe('audit list maintenance', () => {
  it('prepends newer rows without duplicates, or replaces the list across a gap', () => {
    const list = [ev(5), ev(4), ev(3)];
    expect(prependNewer(list, [ev(7), ev(6), ev(5)], false).map((e) => e.id)).toEqual([7, 6, 5, 4, 3]);
    expect(prependNewer(list, [], false)).toBe(list);
    expect(prependNewer(list, [ev(900), ev(899)], true).map((e) => e.id)).toEqual([900, 899]);
  });
});
