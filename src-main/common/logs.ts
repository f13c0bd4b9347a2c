/**
 * Log lines and usage (PROTOCOL §5): the shapes the core, the HTTP API, the console and the SDK
 * share. What an attempt printed and spent is kept apart from the audit chain (core/logs/).
 */

export const LOG_STREAMS = ['stdout', 'stderr', 'agent'] as const;
export type LogStream = (typeof LOG_STREAMS)[number];
export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/**
 * PROTOCOL §16: what a line is in a CLI's conversation. The CLI adapters (`--parse`) set it; a
 * line without one is plain output (`text`).
 */
export const LOG_LINE_KINDS = ['text', 'assistant', 'tool_call', 'tool_result', 'system', 'result', 'error'] as const;
export type LogLineKind = (typeof LOG_LINE_KINDS)[number];
/** PROTOCOL §16: a line's `data` (a tool's name, input and output, a message's model and usage) is at most this big as JSON. */
export const MAX_LOG_DATA_BYTES = 64 * 1024;

/** `task:<id>` or `run:<id>`, as in the audit's subjects. */
export type LogSubject = `task:${number}` | `run:${string}`;

export const taskSubject = (taskId: number): LogSubject => `task:${taskId}`;
export const runSubject = (runId: string): LogSubject => `run:${runId}`;

/** One stored line, as `GET /tasks/{id}/logs` returns it. */
export interface LogLine {
  /** Dense per task/run, across its attempts: the `after` cursor. */
  seq: number;
  at: string;
  attempt: number;
  stream: LogStream;
  level: LogLevel;
  text: string;
  /** Addition: the line was longer than the line limit; this many UTF-8 bytes were sent in all. */
  cutFrom?: number;
  /** Addition: `truncated` marks the one line that says the attempt's log reached its cap. */
  marker?: 'truncated';
  /** PROTOCOL §16: the line's part in a conversation, when the sender said. */
  kind?: LogLineKind;
  /**
   * PROTOCOL §16: structured detail of the line (≤ 64 KiB as JSON). A multi-line text is stored as
   * one line per piece: the first piece carries `kind` and `data`, the others the `kind` only.
   */
  data?: Record<string, unknown>;
}

export interface LogPage {
  items: LogLine[];
  /** Pass as `after` for the next page; null when this page reached the end of what is stored. */
  next: number | null;
}

export interface UsageTotals {
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
}

export const ZERO_USAGE: UsageTotals = { inputTokens: 0, outputTokens: 0, costUsd: 0 };

/** One attempt's log, as the console's attempt tabs show it. */
export interface LogAttempt {
  attempt: number;
  /** Lines stored (the truncation marker included). */
  lines: number;
  bytes: number;
  /** Seq range of the attempt's lines (attempts of one task/run never interleave). */
  firstSeq: number;
  lastSeq: number;
  firstAt: string;
  lastAt: string;
  /** The attempt reached its cap: later lines were dropped after one marker line. */
  truncated: boolean;
  /** Lines dropped past the cap. */
  dropped: number;
}

/** Retention and caps, kept in the settings row `logs.settings` and edited in Settings. */
export interface LogSettings {
  /** A line longer than this (UTF-8 bytes) is cut, with a marker. */
  maxLineBytes: number;
  /** Per attempt: once past either cap, one "truncated" marker and nothing more. */
  maxLinesPerAttempt: number;
  maxBytesPerAttempt: number;
  /** Whole segments older than this are deleted. */
  retentionDays: number;
  /**
   * All logs together take at most this on disk: enforced as lines are written (the oldest whole
   * segments are deleted to make room), not only by the retention sweep.
   */
  maxTotalMb: number;
  /** One agent token's log frames: this many bytes per second sustained … */
  logBytesPerSecondPerToken: number;
  /** … and this many at once (never below the 256 KiB frame limit, or a full frame could never pass). */
  logBurstBytesPerToken: number;
  /**
   * Log frames are refused (`unavailable`) while the disk of the data directory has less free
   * space than this, or than the main database's own size if that is more: the last free space
   * is the main database's (to grow, and for the copy a storage fault's rescue writes).
   */
  minFreeDiskMb: number;
}

export const DEFAULT_LOG_SETTINGS: LogSettings = {
  maxLineBytes: 16 * 1024,
  maxLinesPerAttempt: 2_000_000,
  maxBytesPerAttempt: 256 * 1024 * 1024,
  retentionDays: 14,
  maxTotalMb: 4096,
  logBytesPerSecondPerToken: 1024 * 1024,
  logBurstBytesPerToken: 8 * 1024 * 1024,
  minFreeDiskMb: 1024,
};

export const LOG_SETTINGS_LIMITS: { [K in keyof LogSettings]: { min: number; max: number } } = {
  maxLineBytes: { min: 256, max: 1024 * 1024 },
  maxLinesPerAttempt: { min: 100, max: 100_000_000 },
  maxBytesPerAttempt: { min: 64 * 1024, max: 64 * 1024 * 1024 * 1024 },
  retentionDays: { min: 1, max: 3650 },
  maxTotalMb: { min: 16, max: 10 * 1024 * 1024 },
  logBytesPerSecondPerToken: { min: 16 * 1024, max: 1024 * 1024 * 1024 },
  logBurstBytesPerToken: { min: 256 * 1024, max: 1024 * 1024 * 1024 },
  minFreeDiskMb: { min: 16, max: 1024 * 1024 },
};

/** What the log store holds right now (Settings shows it). */
export interface LogStorageStats {
  segments: number;
  /** On disk: the segment files and their write-ahead logs. */
  bytes: number;
  lines: number;
  oldestAt: string | null;
  /** Addition: why log frames are being refused right now (the disk's free-space floor), or null. */
  refusing?: LogRefusal | null;
}

/** Log frames are refused because the disk is nearly full (`GET /status` → `logs`, Settings → Logs). */
export interface LogRefusal {
  /** One sentence for the operator: what is happening and what to do. */
  message: string;
  /** When it started (ISO-8601). */
  since: string;
  freeBytes: number;
  floorBytes: number;
}

/** `GET /usage?by=`: the key is a role, a job id or a local day `YYYY-MM-DD`. */
export const USAGE_GROUPS = ['role', 'job', 'day'] as const;
export type UsageGroup = (typeof USAGE_GROUPS)[number];

export interface UsageRow extends UsageTotals {
  key: string;
}

/** One local day's usage of one role (and job: null for tasks). */
export interface DailyUsage extends UsageTotals {
  day: string;
  role: string;
  job: string | null;
}

/** The console's "most expensive runs this week". */
export interface CostlyRun extends UsageTotals {
  runId: string;
  jobId: string;
  job: string;
  slot: string;
}

/** PROTOCOL §15: one artifact of an attempt, as the HTTP API and the console read it. */
export interface ArtifactView {
  attempt: number;
  kind: 'workspace' | 'file' | 'link' | 'session';
  name: string;
  data: Record<string, unknown>;
  at: string;
  /** Kind `workspace`: the stored diff's length in characters. */
  diffChars?: number;
}

/** The workspace figures of a task's or run's latest attempt that has them ("+12 −3 in 2 files"). */
export interface ChangeSummary {
  attempt: number;
  filesChanged: number;
  insertions: number;
  deletions: number;
}
