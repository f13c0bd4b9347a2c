/**
 * The agent wire protocol (PROTOCOL.md §1), defined once. Messages are a discriminated union on
 * `type`; every frame from an agent is validated here and never again inside the core.
 * Names and meanings of v1 are fixed: add optional fields or new types, never rename or drop.
 */
import { z } from 'zod';
import { LOG_LEVELS, LOG_LINE_KINDS, LOG_STREAMS, MAX_LOG_DATA_BYTES, type UsageTotals } from './logs';
import { REPORT_STATUSES } from './model';
import { createTaskInput, fence, jsonValue, roleName, taskId } from './schemas';
import { refineWellFormedText } from './text';

export const PROTOCOL_VERSION = 1;

/** Frame size limit for the agent socket (bytes). Larger frames close the socket with 4413. */
export const MAX_FRAME_BYTES = 256 * 1024;

export const CLOSE_CODES = {
  protocolViolation: 4400,
  unauthorized: 4401,
  helloTimeout: 4408,
  tooLarge: 4413,
  rateLimited: 4429,
  /** Addition: the token was revoked while the socket was open, or it may not act for this role. */
  revoked: 4403,
  /** Addition: another connection resumed this instance (`hello` with its `instanceId`). */
  superseded: 4409,
  /** Addition: the instance went offline (e.g. heartbeat timeout); say `hello` again on a new socket. */
  instanceOffline: 4410,
  /** Addition: the agent stopped reading and its outgoing buffer overflowed. */
  slowConsumer: 4411,
  /** Standard 1001: the scheduler is shutting down; reconnect and resume. */
  goingAway: 1001,
  /** Standard 1013 (try again later): a `hello` that would exceed the connection cap. */
  tryAgainLater: 1013,
} as const;

const requestId = z.union([z.string().min(1).max(100), z.number().int().safe()]);

// ---- Requests (agent → Gaffer). Each carries `id` and `type`. ----

export const helloRequest = z.object({
  id: requestId,
  type: z.literal('hello'),
  role: roleName,
  name: z.string().trim().min(1).max(200),
  version: z.string().max(100).optional(),
  token: z.string().max(200).optional(),
  /** Addition: resume a disconnected instance within the reconnect grace (keeps its locks). */
  instanceId: z.string().min(1).max(100).optional(),
  /**
   * Addition: `false` says this instance takes no job runs — it is never offered a `job_trigger`
   * (an MCP session without `--jobs`, a task-only agent). Omitted or `true`: it takes runs.
   */
  takesRuns: z.boolean().optional(),
});

export const heartbeatRequest = z.object({ id: requestId, type: z.literal('heartbeat') });

export const claimRequest = z.object({ id: requestId, type: z.literal('claim'), role: roleName.optional() });

export const renewRequest = z.object({ id: requestId, type: z.literal('renew'), taskId, fence });

export const reportRequest = z.object({
  id: requestId,
  type: z.literal('report'),
  taskId,
  fence,
  status: z.enum(REPORT_STATUSES),
  note: z.string().max(10_000).optional(),
  output: jsonValue.optional(),
  /** PROTOCOL §10: once the report commits, claim the instance's next task in the same durable step. */
  claimNext: z.boolean().optional(),
});

/** The fields of `POST /tasks` (`createTaskInput`); unlike there, unknown fields pass (agents may be newer). */
export const createTaskRequest = z.object({ id: requestId, type: z.literal('create_task'), ...createTaskInput.shape });

export const runId = z.string().min(1).max(100);

export const runStartedRequest = z.object({ id: requestId, type: z.literal('run_started'), runId });

export const runStepRequest = z.object({
  id: requestId,
  type: z.literal('run_step'),
  runId,
  step: z.string().min(1).max(200),
  ref: z.string().max(2000).optional(),
});

export const ERROR_CLASSES = ['retryable', 'fatal', 'needs_human'] as const;
export type ErrorClass = (typeof ERROR_CLASSES)[number];

export const runResultRequest = z
  .object({
    id: requestId,
    type: z.literal('run_result'),
    runId,
    outcome: z.enum(['success', 'failed']),
    /** With `failed` only; a `failed` result without one counts as `retryable`. */
    errorClass: z.enum(ERROR_CLASSES).optional(),
    error: z.string().max(10_000).optional(),
    output: jsonValue.optional(),
  })
  .superRefine((r, ctx) => {
    if (r.outcome === 'success' && r.errorClass !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['errorClass'], message: 'a success has no errorClass (send outcome "failed" with it)' });
    }
  });

export const precheckResultRequest = z.object({
  id: requestId,
  type: z.literal('precheck_result'),
  requestId: z.string().min(1).max(100),
  ready: z.boolean(),
  reason: z.string().max(2000).optional(),
  evidence: jsonValue.optional(),
});

/** PROTOCOL §5: the most lines one `log` frame may carry (the frame size limit applies too). */
export const MAX_LOG_LINES_PER_FRAME = 10_000;

export const logLine = z.object({
  text: z.string().max(MAX_FRAME_BYTES),
  stream: z.enum(LOG_STREAMS).optional(),
  level: z.enum(LOG_LEVELS).optional(),
  at: z.iso.datetime({ offset: true }).optional(),
  /**
   * Addition: the line's number within the attempt (1, 2, 3, … ascending). A line whose `seq` is
   * at or below one already stored for the attempt is a resend and is not stored again.
   */
  seq: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).optional(),
  /** PROTOCOL §16: the line's part in a conversation (set by the CLI adapters). */
  kind: z.enum(LOG_LINE_KINDS).optional(),
  /** PROTOCOL §16: structured detail, an object of at most 64 KiB as JSON. */
  data: z
    .record(z.string(), z.unknown())
    .refine((d) => isLogData(d), { message: `data must be a JSON object of at most ${MAX_LOG_DATA_BYTES} bytes` })
    .optional(),
});

export type LogLineInput = z.infer<typeof logLine>;

const STREAM_SET: ReadonlySet<unknown> = new Set(LOG_STREAMS);
const LINE_KIND_SET: ReadonlySet<unknown> = new Set(LOG_LINE_KINDS);
const utf8 = new TextEncoder();

/** A log line's `data`: a plain JSON object whose JSON is at most MAX_LOG_DATA_BYTES (PROTOCOL §16). */
export function isLogData(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  let json: string | undefined;
  try {
    json = JSON.stringify(v);
  } catch {
    return false; // a cycle, a BigInt: not JSON
  }
  if (json === undefined) return false;
  // Three bytes per UTF-16 unit at most: the exact count only for a text near the limit.
  return json.length * 3 <= MAX_LOG_DATA_BYTES || utf8.encode(json).length <= MAX_LOG_DATA_BYTES;
}
const LEVEL_SET: ReadonlySet<unknown> = new Set(LOG_LEVELS);
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})$/;

/** The last `at` found valid: lines logged in the same millisecond share it (checked once, not per line). */
let validAt: string | undefined;

function isInstant(at: unknown): boolean {
  if (typeof at !== 'string') return false;
  if (at === validAt) return true;
  if (!ISO_INSTANT.test(at) || Number.isNaN(Date.parse(at))) return false;
  validAt = at;
  return true;
}

/** `logLine` by hand: the schema's rules without its per-object cost (a frame may hold 10 000 lines). */
export function isLogLine(v: unknown): boolean {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const l = v as Record<string, unknown>;
  if (typeof l.text !== 'string' || l.text.length > MAX_FRAME_BYTES) return false;
  if (l.stream !== undefined && !STREAM_SET.has(l.stream)) return false;
  if (l.level !== undefined && !LEVEL_SET.has(l.level)) return false;
  if (l.seq !== undefined && !(Number.isSafeInteger(l.seq) && (l.seq as number) >= 1)) return false;
  if (l.at !== undefined && !isInstant(l.at)) return false;
  if (l.kind !== undefined && !LINE_KIND_SET.has(l.kind)) return false;
  if (l.data !== undefined && !isLogData(l.data)) return false;
  return true;
}

/**
 * The `lines` of a `log` frame: each line must be a `logLine`. Checked by hand on the hot path;
 * a line that fails is parsed with the schema for the exact issue (`lines[3].level: …`).
 */
const logLines = z
  .array(z.unknown())
  .min(1)
  .max(MAX_LOG_LINES_PER_FRAME)
  .superRefine((lines, ctx) => {
    for (let i = 0; i < lines.length; i++) {
      if (isLogLine(lines[i])) continue;
      const r = logLine.safeParse(lines[i]);
      for (const issue of r.success ? [{ code: 'custom' as const, message: 'invalid log line', path: [] }] : r.error.issues) {
        ctx.addIssue({ code: 'custom', message: issue.message, path: [i, ...issue.path] });
      }
      return;
    }
  })
  .transform((lines) => lines as LogLineInput[]);

/** `taskId` or `runId`, exactly one (checked by the handler, which names the field). */
export const logRequest = z.object({
  id: requestId,
  type: z.literal('log'),
  taskId: taskId.optional(),
  runId: runId.optional(),
  /** Addition: the claim's fence; a stale one is `not_holder` (lines of an attempt that lost its lock). */
  fence: fence.optional(),
  lines: logLines,
});

const tokens = z.number().int().min(0).max(1e12);

export const usageRequest = z.object({
  id: requestId,
  type: z.literal('usage'),
  taskId: taskId.optional(),
  runId: runId.optional(),
  fence: fence.optional(),
  inputTokens: tokens.optional(),
  outputTokens: tokens.optional(),
  costUsd: z.number().min(0).max(1e6).optional(),
  model: z.string().min(1).max(200).optional(),
  /** PROTOCOL §14: the part of `inputTokens` read from / written to the prompt cache (priced apart). */
  cacheReadTokens: tokens.optional(),
  cacheWriteTokens: tokens.optional(),
  /** The cost is an estimate (priced by Gaffer from tokens, or the agent's own guess). */
  estimated: z.boolean().optional(),
  /** These figures are the attempt's totals: they replace the sum so far (a CLI's own final cost). */
  final: z.boolean().optional(),
});

/** PROTOCOL §15: what an attempt produced. */
export const ARTIFACT_KINDS = ['workspace', 'file', 'link', 'session'] as const;
export type ArtifactKind = (typeof ARTIFACT_KINDS)[number];
/** A workspace's diff is kept up to this many characters per attempt (PROTOCOL §15: 1 MiB). */
export const MAX_DIFF_CHARS = 1024 * 1024;
/** One frame carries at most this much of a diff; a longer one comes in parts (`diffOffset`). */
export const MAX_DIFF_PART_CHARS = 192 * 1024;

/**
 * `artifact` (PROTOCOL §15). Additions for `kind: workspace`: `diff` (a part of the unified diff)
 * and `diffOffset` (where that part starts: 0, or the characters already sent, so a long diff
 * arrives in parts under the frame limit; `data` of a later part is ignored).
 */
export const artifactRequest = z.object({
  id: requestId,
  type: z.literal('artifact'),
  taskId: taskId.optional(),
  runId: runId.optional(),
  fence: fence.optional(),
  kind: z.enum(ARTIFACT_KINDS),
  name: z.string().min(1).max(200),
  data: jsonValue.refine((v) => typeof v === 'object' && v !== null && !Array.isArray(v), 'must be a JSON object'),
  diff: z.string().max(MAX_DIFF_PART_CHARS).optional(),
  diffOffset: z.number().int().min(0).max(MAX_DIFF_CHARS).optional(),
});

/** Every frame, whatever its type: its strings are stored as UTF-8 (common/text.ts). */
export const agentRequest = z.discriminatedUnion('type', [
  helloRequest,
  heartbeatRequest,
  claimRequest,
  renewRequest,
  reportRequest,
  createTaskRequest,
  runStartedRequest,
  runStepRequest,
  runResultRequest,
  precheckResultRequest,
  logRequest,
  usageRequest,
  artifactRequest,
]).superRefine(refineWellFormedText);

export type AgentRequest = z.infer<typeof agentRequest>;
export type AgentRequestType = AgentRequest['type'];
export type AgentRequestOf<T extends AgentRequestType> = Extract<AgentRequest, { type: T }>;
export const AGENT_REQUEST_TYPES = agentRequest.options.map((o) => o.shape.type.value) as AgentRequestType[];

// ---- Replies (Gaffer → agent), same `id` as the request. ----

export interface OkReply<R = unknown> {
  id: string | number;
  ok: true;
  result: R;
}
export interface ErrorReply {
  id: string | number | null;
  ok: false;
  error: { code: string; status: number; message: string };
}
export type Reply<R = unknown> = OkReply<R> | ErrorReply;

export interface HelloResult {
  instanceId: string;
  heartbeatIntervalMs: number;
  lockWindowS: number;
  serverTime: string;
  /** Additions. */
  /** An instance silent (no heartbeat, no ping or pong) for this long goes offline. */
  heartbeatTimeoutS: number;
  reconnectGraceS: number;
  protocolVersion: number;
  /** Addition: true when `hello.instanceId` was resumed (its locks are still held). */
  resumed?: boolean;
  /** Addition: the locks the instance holds right now (non-empty only on resume). */
  locks?: HeldLock[];
}

/** Addition: one lock held by the instance, as reported on resume. */
export interface HeldLock {
  taskId: number;
  fence: number;
  expiresAt: string;
}

// Results of the other requests (shapes fixed by PROTOCOL.md §1; `Task` is common/model's).
export interface HeartbeatResult {
  serverTime: string;
}
export interface ClaimReplyResult<TaskT = unknown> {
  task: TaskT | null;
  /** Present when `task` is not null. */
  lock?: { fence: number; expiresAt: string };
}
export interface RenewResult {
  expiresAt: string;
}
export interface ReportResult<TaskT = unknown> {
  task: TaskT;
  /** Addition: the same report had already taken effect (a harmless repeat). Always present. */
  replayed: boolean;
  /**
   * PROTOCOL §10, with `claimNext: true` only: the task claimed in the same durable step, as
   * `claim` answers it. A replayed report never claims (`{task: null}`): claim as usual.
   */
  next?: ClaimReplyResult<TaskT>;
}
export interface CreateTaskResult<TaskT = unknown> {
  task: TaskT;
  replayed: boolean;
}
/** `run_started`, `run_step` and `precheck_result` answer `{}`. */
export type EmptyResult = Record<string, never>;
export interface RunResultResult<RunT = unknown> {
  run: RunT;
  /** Addition: the same result had already been recorded (a harmless repeat). Always present. */
  replayed: boolean;
  /** Addition: set when the result finished a backfill of the run. */
  backfill?: unknown;
}

/** The `result` of each request type's ok reply. */
export interface AgentResults<TaskT = unknown, RunT = unknown> {
  hello: HelloResult;
  heartbeat: HeartbeatResult;
  claim: ClaimReplyResult<TaskT>;
  renew: RenewResult;
  report: ReportResult<TaskT>;
  create_task: CreateTaskResult<TaskT>;
  run_started: EmptyResult;
  run_step: EmptyResult;
  run_result: RunResultResult<RunT>;
  precheck_result: EmptyResult;
  log: LogResult;
  usage: UsageResult;
  artifact: ArtifactResult;
}
export type AgentResultOf<T extends AgentRequestType> = AgentResults[T];

export interface LogResult {
  /** Lines of the frame Gaffer has taken care of: stored, recognised as resent, or counted past the cap. */
  accepted: number;
  /** Additions: how they split up. */
  stored: number;
  duplicates: number;
  dropped: number;
  /** The attempt's log reached its cap (one marker line says so; later lines are only counted). */
  truncated: boolean;
  /** The highest per-line `seq` stored for the attempt (0: none): resend only what is above it. */
  lastSeq: number;
}

export interface ArtifactResult {
  accepted: boolean;
  /** Addition (`kind: workspace`): the diff's characters stored so far; send the next part from here. */
  diffChars?: number;
}

export interface UsageResult {
  /** The attempt's running total. */
  usage: UsageTotals;
}

// ---- Pushes (Gaffer → agent), no `id`. ----
// One schema per push: the hub sends only values of these types (`encodePush`), the SDK parses every
// push with `agentPush`. Parsing is lenient where the contract may grow: unknown fields are dropped,
// reasons are any string (the known ones are listed), so an older agent still acts on a newer push.

const instantText = z.string().min(1).max(40);

export const jobTriggerPush = z.object({
  type: z.literal('job_trigger'),
  runId,
  jobId: z.string().min(1),
  job: z.string().min(1),
  slot: z.string().min(1),
  attempt: z.number().int().positive(),
  payload: z.unknown(),
  idempotencyKey: z.string().min(1),
  deadline: instantText,
  completedSteps: z.array(z.string()),
  version: z.number().int(),
  traceId: z.string(),
  // Additions.
  /** The slot's nominal instant. */
  slotAt: instantText.optional(),
  /** What made this run: `schedule`, `catch_up` or `manual`. */
  trigger: z.string().optional(),
  /** Set when this attempt runs a backfill of the slot. */
  backfillId: z.number().int().positive().optional(),
  /** Older slot keys this run also covers (`fold_into_next`), oldest first. */
  covers: z.array(z.string()).optional(),
  /** The previous attempt's error, on a retry. */
  previousError: z.string().optional(),
  /** The operator approved this held run (PROTOCOL §8): their note, who and when. */
  approval: z.object({ decision: z.literal('approved'), note: z.string(), by: z.string(), at: instantText, session: z.string().optional() }).optional(),
});

export const precheckPush = z.object({
  type: z.literal('precheck'),
  requestId: z.string().min(1),
  check: z.string().min(1),
  slot: z.string().min(1),
});

/** PROTOCOL §4: why a lock was taken away from its holder. */
export const LOCK_LOST_REASONS = ['force_release', 'expired', 'cancelled', 'budget'] as const;
export type LockLostReason = (typeof LOCK_LOST_REASONS)[number];

/** Addition (PROTOCOL §4): the instance's lock on a task was removed by anything but its own `report`. */
export const lockLostPush = z.object({
  type: z.literal('lock_lost'),
  taskId,
  fence,
  /** One of LOCK_LOST_REASONS (any string is accepted: reasons may be added). */
  reason: z.string(),
});

/** PROTOCOL §4: why a run attempt was taken away from the instance that acknowledged it. */
export const RUN_CANCEL_REASONS = ['operator', 'deadline', 'budget', 'kill_switch'] as const;
export type RunCancelReason = (typeof RUN_CANCEL_REASONS)[number];

/** Addition (PROTOCOL §4): the run attempt this instance acknowledged must stop now. */
export const runCancelledPush = z.object({
  type: z.literal('run_cancelled'),
  runId,
  /** One of RUN_CANCEL_REASONS (any string is accepted: reasons may be added). */
  reason: z.string(),
});

export const agentPush = z.discriminatedUnion('type', [jobTriggerPush, precheckPush, lockLostPush, runCancelledPush]);

export type AgentPush = z.infer<typeof agentPush>;
export type AgentPushType = AgentPush['type'];
export type AgentPushOf<T extends AgentPushType> = Extract<AgentPush, { type: T }>;
export type JobTriggerPush = AgentPushOf<'job_trigger'>;
export type PrecheckPush = AgentPushOf<'precheck'>;
export type LockLostPush = AgentPushOf<'lock_lost'>;
export type RunCancelledPush = AgentPushOf<'run_cancelled'>;
export const AGENT_PUSH_TYPES = agentPush.options.map((o) => o.shape.type.value) as AgentPushType[];
