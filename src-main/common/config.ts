/** Scheduler timings. Defaults come from SPEC §2 and PROTOCOL §3; every one can be overridden. */
export interface SchedulerConfig {
  /** P4: lock window granted by a claim or a renew. */
  lockWindowS: number;
  /** An instance silent for longer than this goes OFFLINE and its locks expire. */
  heartbeatTimeoutS: number;
  /** Heartbeat cadence suggested to agents in the `hello` reply. */
  heartbeatIntervalMs: number;
  /** Watchdog safety sweep cadence. */
  sweepIntervalS: number;
  /** A repeated idempotency key inside this window returns the cached result. */
  idempotencyWindowS: number;
  /** After a socket closes, the instance may resume for this long before its locks expire. */
  reconnectGraceS: number;
  /** A `job_trigger` not acknowledged within this long is re-offered to another instance. */
  triggerAckTimeoutS: number;
  /**
   * Upper bound of the gap threshold: a stall, sleep or wall-clock step longer than this — or than
   * `heartbeatIntervalMs`, whichever is shorter — is a gap (core/time/gap-detector.ts).
   */
  clockJumpThresholdS: number;
  /**
   * The nice value (0–19) of the processes Gaffer starts for agents (managed agents and all they
   * start): above Gaffer's own 0, so a busy agent's CPU does not delay the claims Gaffer serves.
   */
  agentNice: number;
}

export const DEFAULT_CONFIG: SchedulerConfig = {
  lockWindowS: 7200,
  heartbeatTimeoutS: 120,
  heartbeatIntervalMs: 20_000,
  sweepIntervalS: 60,
  idempotencyWindowS: 300,
  reconnectGraceS: 10,
  triggerAckTimeoutS: 30,
  clockJumpThresholdS: 90,
  agentNice: 10,
};

/** SPEC §2: the recovery bound for an abandoned task, shown to the operator. */
export function recoveryBoundS(c: Pick<SchedulerConfig, 'lockWindowS' | 'heartbeatTimeoutS' | 'sweepIntervalS'>): number {
  return Math.min(c.lockWindowS, c.heartbeatTimeoutS) + c.sweepIntervalS;
}
