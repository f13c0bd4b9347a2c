import { describe, expect, it } from 'vitest';
import { expiryReason } from './logic';

describe('expired-lock cards', () => {
  it('explains expiry reasons in plain words', () => {
    expect(expiryReason('heartbeat_timeout').label).toBe('holder stopped heartbeating');
    expect(expiryReason('force_release').label).toContain('operator');
    expect(expiryReason('something_new')).toEqual({ label: 'something new', tone: 'blocked' });
  });
});
