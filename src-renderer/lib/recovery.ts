/** The recovery bound in words: how long an abandoned task waits before it can be claimed again. */
import type { SchedulerConfig } from '../../src-main/common/config';
import { formatDurationS } from './format';

/** "≈ 3 min (P4/watchdog): min(lock window 7200 s, heartbeat timeout 120 s) + sweep 60 s". */
export function recoveryExplain(boundS: number, c: Pick<SchedulerConfig, 'lockWindowS' | 'heartbeatTimeoutS' | 'sweepIntervalS'> | null): { short: string; long: string } {
  const short = `≈ ${boundS < 120 ? `${boundS} s` : formatDurationS(boundS)}`;
  const long = c
    ? `min(lock window ${c.lockWindowS} s, heartbeat timeout ${c.heartbeatTimeoutS} s) + sweep interval ${c.sweepIntervalS} s = ${boundS} s: the longest an abandoned task waits before it is claimable again.`
    : `${boundS} s: the longest an abandoned task waits before it is claimable again.`;
  return { short, long };
}
