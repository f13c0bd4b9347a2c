import { describe, expect, it } from 'vitest';
import { parseCli, splitKnownArgs } from './cli';

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

describe('--secrets-key-file (the desktop app keeps the secrets key in the data directory)', () => {
  it('a bare flag, off by default, kept by the split of Electron\'s argv', () => {
    expect(parseCli([], {}).secretsKeyFile).toBe(false);
    expect(parseCli(['--secrets-key-file'], {}).secretsKeyFile).toBe(true);
    expect(splitKnownArgs(['.', '--secrets-key-file', '--no-sandbox', '--port', '7400']).known).toEqual(['--secrets-key-file', '--port', '7400']);
  });

  it('the operator token comes from the environment the shell passes (its own, plus the tokens it was handed)', () => {
    expect(parseCli([], { GAFFER_OPERATOR_TOKEN: 'gfo_given' }).operatorToken).toBe('gfo_given');
  });
});

describe('--agent-nice', () => {
  it('sets the CPU priority of the agents Gaffer starts (0 to 19); anything else is refused in one line', () => {
    expect(parseCli(['--agent-nice', '15'], {}).config).toEqual({ agentNice: 15 });
    expect(parseCli(['--agent-nice=0'], {}).config).toEqual({ agentNice: 0 });
    for (const bad of ['20', '-1', '2.5', 'low']) expect(() => parseCli(['--agent-nice', bad], {})).toThrow('--agent-nice must be a whole number from 0 to 19');
    expect(splitKnownArgs(['--agent-nice', '5', '--inspect']).known).toEqual(['--agent-nice', '5']);
  });
});
