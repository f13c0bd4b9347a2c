import { describe, expect, it } from 'vitest';
import { expiryReason, isForceRelease } from './logic';

describe('expired-lock cards', () => {
  it('explains expiry reasons in plain words', () => {
    expect(expiryReason('heartbeat_timeout').label).toBe('holder stopped heartbeating');
    expect(expiryReason('force_release').label).toContain('operator');
    expect(expiryReason('something_new')).toEqual({ label: 'something new', tone: 'blocked' });
    expect(expiryReason('lock_window').label).not.toMatch(/P\d/);
    expect(isForceRelease('force_release')).toBe(true);
    expect(isForceRelease('heartbeat_timeout')).toBe(false);
  });
});
