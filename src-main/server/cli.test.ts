import { describe, expect, it } from 'vitest';
import { parseCli } from './cli';

describe('heartbeat timings at start', () => {
  it('a heartbeat timeout too short for the default interval makes the interval follow it', () => {
    // Before: interval 20 000 ms with a 10 s timeout — an agent answering only pings went offline.
    expect(parseCli(['--heartbeat-timeout-s', '10'], {}).config).toEqual({ heartbeatTimeoutS: 10, heartbeatIntervalMs: 3333 });
    expect(parseCli(['--heartbeat-timeout-s=60'], {}).config).toEqual({ heartbeatTimeoutS: 60 });
    expect(parseCli([], {}).config).toEqual({});
  });

  it('refuses a timeout not longer than two explicit intervals, in one line', () => {
    expect(() => parseCli(['--heartbeat-timeout-s', '30', '--heartbeat-interval-ms', '20000'], {})).toThrow(
      '--heartbeat-timeout-s (30) must be more than twice the heartbeat interval (20000 ms): an agent that only answers pings would be taken offline while alive',
    );
    expect(() => parseCli(['--heartbeat-interval-ms', '60000'], {})).toThrow(/more than twice the heartbeat interval \(60000 ms\)/);
    expect(() => parseCli(['--heartbeat-timeout-s', '0.2'], {})).toThrow('--heartbeat-timeout-s must be at least 0.3');
    expect(parseCli(['--heartbeat-timeout-s', '4', '--heartbeat-interval-ms', '1000'], {}).config).toEqual({ heartbeatTimeoutS: 4, heartbeatIntervalMs: 1000 });
  });
});
