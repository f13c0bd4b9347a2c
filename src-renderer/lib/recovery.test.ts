import { describe, expect, it } from 'vitest';
import { recoveryExplain } from './recovery';

describe('recovery bound', () => {
  it('explains the recovery bound with the P4/watchdog formula', () => {
    const r = recoveryExplain(180, { lockWindowS: 7200, heartbeatTimeoutS: 120, sweepIntervalS: 60 });
    expect(r.short).toBe('≈ 3 min');
    expect(r.long).toContain('min(lock window 7200 s, heartbeat timeout 120 s) + sweep interval 60 s = 180 s');
    expect(recoveryExplain(5, null).short).toBe('≈ 5 s');
  });
});
