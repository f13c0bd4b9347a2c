/**
 * Result schemas of the catalogue (common/ops): the shapes Gaffer answers with, as zod, so the
 * OpenAPI document can say what each success reply holds. The TypeScript types in model.ts,
 * job-schema.ts, attention.ts, logs.ts, … stay the types the code uses; each entry's `op<R>()` checks
 * at compile time that its schema accepts every value of its type (define.ts, invariant 1).
 *
 * Objects are `z.object`: the strict reply check of the tests (ops-replies.test.ts) lists every
 * field, while the published document leaves replies open to additions (PROTOCOL: fields are
 * added, never renamed).
 */
import { z } from 'zod';
import { DELIVERY_STATUSES, INBOX_KINDS, INBOX_STATES, WEBHOOK_FORMATS } from '../attention';
import { BACKFILL_STATUSES, RUN_DISPOSITIONS, RUN_STATUSES, RUN_TRIGGERS } from '../job-schema';
import { LOG_LEVELS, LOG_LINE_KINDS, LOG_STREAMS } from '../logs';
import { COMMAND_AGENT_PARSE_FORMATS, MANAGED_MODES, MANAGED_PROCESS_STATUSES } from '../managed-agents';
import { INSTANCE_STATUSES, TASK_STATUSES } from '../model';
import { ARTIFACT_KINDS } from '../protocol';
import { REHEARSAL_EVENT_KINDS, REHEARSAL_OUTCOMES, SCENARIO_NAMES } from '../rehearsal';
import { VERIFY_CHECK_KINDS, VERIFY_ON_FAIL } from '../verify';

/** An instant on the wire (ISO-8601). */
export const at = z.string();
const str = z.string();
const nstr = z.string().nullable();
const int = z.number().int();
const num = z.number();
const json = z.unknown();

/** `{items, next}` (a cursor page). */
export const page = <T extends z.ZodType, C extends z.ZodType = z.ZodNullable<z.ZodString>>(item: T, cursor?: C) =>
  z.object({ items: z.array(item), next: (cursor ?? nstr) as C });

// ---- "done when…" (verify.ts, PROTOCOL §13) ----

/** A declaration as saved: each check's own fields are open (`verifyCheck` in verify.ts is the input side). */
export const verifyDeclaration = z.object({
  checks: z.array(z.object({ kind: z.enum(VERIFY_CHECK_KINDS as [string, ...string[]]), name: str }).catchall(json)),
  onFail: z.enum(VERIFY_ON_FAIL).optional(),
  before: z.boolean().optional(),
});
export const verification = z.object({
  at,
  passed: z.boolean(),
  attempt: int,
  before: z.boolean().optional(),
  checks: z.array(
    z.object({ name: str, kind: z.enum(VERIFY_CHECK_KINDS as [string, ...string[]]), passed: z.boolean(), detail: str, durationMs: num, outputTail: str.optional() }),
  ),
});

// ---- tasks, instances, tokens, signals, audit (model.ts) ----

export const taskLock = z.object({ instanceId: str, fence: int, claimedAt: at, expiresAt: at });
export const task = z.object({
  id: int,
  title: str,
  role: str,
  status: z.enum(TASK_STATUSES),
  priority: int,
  payload: json,
  dependsOn: z.array(int),
  attempt: int,
  previouslyExpired: z.boolean(),
  fence: int,
  unmetDependencies: int,
  note: nstr,
  output: json,
  createdAt: at,
  updatedAt: at,
  lock: taskLock.nullable(),
  traceId: nstr,
  verify: verifyDeclaration.optional(),
  previousError: str.optional(),
  disposition: z.literal('already_done').optional(),
  verification: verification.optional(),
  answer: str.optional(),
  resumeSession: str.optional(),
});
export const usageTotals = z.object({ inputTokens: num, outputTokens: num, costUsd: num });
/** The HTTP API adds what a task or run spent (logs.ts `withUsage`). */
export const taskWithUsage = task.extend({ usage: usageTotals });
export const taskPage = page(task).extend({ partial: z.boolean() });
export const instance = z.object({
  id: str,
  role: str,
  name: str,
  version: nstr,
  status: z.enum(INSTANCE_STATUSES),
  connectedAt: at,
  lastHeartbeatAt: at,
  disconnectedAt: nstr,
  tokenId: nstr,
  heldTaskIds: z.array(int),
});
export const tokenInfo = z.object({ id: str, name: str, role: nstr, createdAt: at, revokedAt: nstr });
export const signal = z.object({ name: str, key: str, setAt: at, actor: str, value: json.optional() });
export const auditEvent = z.object({ id: int, at, type: str, actor: str, subject: str, detail: json, traceId: nstr, prevHash: str, hash: str });
export const auditPage = page(auditEvent).extend({ partial: z.boolean() });
export const bulkTaskResult = z.object({
  bulkId: str,
  changed: z.array(int),
  skipped: z.array(z.object({ taskId: int, code: str, message: str })),
  next: int.nullable(),
  through: int.nullable(),
});
export const taskCount = z.object({ count: int, exact: z.boolean(), through: int });
export const storageStatus = z.object({ state: z.enum(['fault', 'failing', 'tampered']), message: str, since: at });
export const auditChainProblem = z.object({ id: int, kind: z.enum(['gap', 'link', 'content']), reason: str });
export const auditLegacyTextRow = z.object({ id: int, fields: z.array(str), reason: str });

// ---- jobs, runs, backfills, calendars (job-schema.ts) ----

const dayType = z.enum(['workday', 'weekend', 'holiday', 'extra_workday']);
const slotDisposition = z.enum(['due', 'calendar_skip', 'dst_skip']);
const errorClass = z.enum(['retryable', 'fatal', 'needs_human', 'lost', 'undeliverable', 'budget']).nullable();
const checkVerdict = z.enum(['ready', 'not_ready', 'error']);
export const runRange = z.object({ slots: int, lastSlot: str, lastAt: at });
export const run = z.object({
  id: str,
  jobId: str,
  job: str,
  slot: str,
  slotAt: at,
  status: z.enum(RUN_STATUSES),
  disposition: z.enum(RUN_DISPOSITIONS),
  trigger: z.enum(RUN_TRIGGERS),
  attempt: int,
  retryCount: int,
  maxRetry: int,
  nextAttemptAt: nstr,
  windowClosesAt: nstr,
  deadline: nstr,
  instanceId: nstr,
  version: int,
  traceId: str,
  idempotencyKey: str,
  covers: z.array(str),
  coveredBy: nstr,
  range: runRange.optional(),
  lastError: nstr,
  errorClass,
  held: z.boolean(),
  output: json,
  createdAt: at,
  triggeredAt: nstr,
  startedAt: nstr,
  finishedAt: nstr,
  updatedAt: at,
});
export const runWithUsage = run.extend({ usage: usageTotals });
export const runStep = z.object({ step: str, ref: nstr, attempt: int, instanceId: str, at });
export const runApproval = z.object({ decision: z.literal('approved'), note: str, by: str, at });
export const backfill = z.object({
  id: int,
  jobId: str,
  job: str,
  slot: str,
  slotAt: at,
  runId: str,
  reason: str,
  status: z.enum(BACKFILL_STATUSES),
  attempts: int,
  instanceId: nstr,
  lastError: nstr,
  errorClass,
  version: int.nullable(),
  note: nstr,
  actor: str,
  createdAt: at,
  updatedAt: at,
  dispatchedAt: nstr,
  finishedAt: nstr,
  approval: runApproval.nullable(),
});
export const checkRecord = z.object({
  jobId: str,
  slot: str,
  layer: z.enum(['time', 'precondition', 'execution']),
  name: str,
  verdict: checkVerdict,
  reason: str,
  evidence: json,
  at,
  firstAt: at,
  count: int,
  changedAt: at,
});
export const pauseInfo = z.object({ at, by: str, reason: str, until: nstr, drain: z.boolean(), role: z.boolean() });
export const rolePause = z.object({ role: str, at, by: str, reason: str, until: nstr });
export const jobIssue = z.object({ field: str, message: str, severity: z.enum(['error', 'warning']) });
export const job = z.object({
  id: str,
  version: int,
  paused: pauseInfo.nullable(),
  createdAt: at,
  updatedAt: at,
  createdBy: str,
  updatedBy: str,
  nextCheckAt: nstr,
  name: str,
  role: str,
  description: str.optional(),
  schedule: z.object({ cron: str.optional(), timezone: str.optional(), everyS: num.optional() }),
  window: z.object({ start: str, end: str, recheckEveryS: num }).optional(),
  calendar: str.optional(),
  calendarPolicy: z.enum(['skip', 'next_workday']).optional(),
  /** The precondition inputs as saved (`preconditionInput` in job-schema.ts). */
  preconditions: z.array(z.object({ kind: str }).catchall(json)),
  retry: z.object({ maxAttempts: int, firstDelayS: num, backoff: z.enum(['fixed', 'exponential']) }),
  missedWindow: z.enum(['run_now', 'fold_into_next', 'skip_and_alert']),
  toleranceS: num.optional(),
  overlap: z.enum(['skip', 'queue_one', 'allow']),
  payload: json,
  enabled: z.boolean(),
  executionConditions: z.object({
    maxConcurrentPerRole: int.optional(),
    maintenanceWindows: z.array(z.object({ start: str, end: str, days: z.array(int).optional() })).optional(),
  }),
  dstGapPolicy: z.enum(['shift_forward', 'skip']),
  backfillCapPerTick: int,
  runTimeoutS: num,
  budget: z.object({ maxCostUsdPerRun: num.optional(), maxTokensPerRun: num.optional() }).optional(),
  verify: verifyDeclaration.optional(),
  loopBreaker: z.object({ sameErrorTimes: int }).optional(),
  maxAttemptsPerDay: int.optional(),
});
export const jobSummary = job.extend({
  nextSlot: z.object({ slot: str, at }).nullable(),
  lastRun: run.pick({ id: true, slot: true, status: true, disposition: true, finishedAt: true }).nullable(),
  openBackfills: int,
});
export const jobSettings = z.object({
  killSwitch: z.object({ on: z.boolean(), reason: nstr, by: nstr, at: nstr }),
  globalConcurrency: int.nullable(),
  loopBreaker: z.object({ sameErrorTimes: int }),
});
export const businessCalendar = z.object({
  id: str,
  name: str,
  timezone: str,
  workdays: z.array(int),
  holidays: z.array(str),
  extraWorkdays: z.array(str),
  version: int,
  updatedAt: at,
  updatedBy: str,
});
export const previewItem = z.object({
  slot: str,
  at,
  local: str,
  disposition: slotDisposition,
  dayType: dayType.optional(),
  movedFrom: str.optional(),
  shifted: z.literal('dst_gap').optional(),
  opensAt: at,
  closesAt: at,
});
export const previewResult = z.object({ items: z.array(previewItem), issues: z.array(jobIssue), timezone: str, truncated: z.boolean(), next: nstr });
const layerVerdictValue = z.enum(['ready', 'not_ready', 'error', 'unknown', 'will_check']);
const layerVerdict = z.object({
  verdict: layerVerdictValue,
  reason: str,
  items: z.array(
    z.object({ name: str, verdict: layerVerdictValue, reason: str, evidence: json.optional(), at: at.optional(), firstAt: at.optional(), count: int.optional(), changedAt: at.optional() }),
  ),
});
export const explanation = z.object({
  jobId: str,
  job: str,
  version: int,
  at,
  now: at,
  tense: z.enum(['past', 'future']),
  slot: previewItem.extend({ window: z.object({ opensAt: at, closesAt: at, latestStart: at }) }).nullable(),
  nextSlot: previewItem.nullable(),
  outcome: str,
  summary: str,
  layers: z.object({ time: layerVerdict, preconditions: layerVerdict, execution: layerVerdict }),
  run: run.nullable(),
  steps: z.array(runStep),
  backfills: z.array(backfill),
  trail: z.array(z.object({ id: int, at, type: str, actor: str, detail: json })),
  jobState: z.object({ enabled: z.boolean(), paused: pauseInfo.nullable(), killSwitch: jobSettings.shape.killSwitch }),
});
const ledgerDisposition = z.enum([...RUN_DISPOSITIONS, 'scheduled', 'not_evaluated', 'before_job']);
export const ledgerEntry = z.object({
  slot: str,
  at,
  local: nstr,
  expected: slotDisposition.nullable(),
  disposition: ledgerDisposition,
  status: z.enum(RUN_STATUSES).nullable(),
  run: run.nullable(),
  backfills: z.array(backfill),
});
export const ledgerResult = z.object({ items: z.array(ledgerEntry), next: nstr, counts: z.record(str, num) });
export const ledgerBucketsResult = z.object({
  zone: str,
  by: z.enum(['day', 'hour']),
  buckets: z.array(z.object({ key: str, first: at, slots: int, counts: z.record(str, num) })),
  next: nstr,
});
export const triggerChoices = z.object({
  jobId: str,
  job: str,
  now: at,
  zone: str,
  choices: z.array(
    z.object({
      which: z.enum(['current', 'previous', 'next']),
      slot: str,
      at,
      local: str,
      disposition: slotDisposition,
      dayType: dayType.optional(),
      effect: z.enum(['claim', 'dispatch', 'exists']),
      run: run.pick({ id: true, status: true, disposition: true }).nullable(),
    }),
  ),
  refused: nstr,
  preconditions: int,
});
export const downtimeSimulation = z.object({
  jobId: str,
  job: str,
  from: at,
  to: at,
  policy: z.enum(['run_now', 'fold_into_next', 'skip_and_alert']),
  toleranceS: num.nullable(),
  backfillCapPerTick: int,
  items: z.array(
    z.object({
      slot: str,
      at,
      local: str,
      windowClosesAt: at,
      decision: z.enum(['runs_late', 'runs_on_time', 'folded', 'skipped_alert', 'backfill_queued', 'skipped_calendar', 'skipped_dst', 'skipped_paused', 'skipped_kill_switch']),
      detail: str,
      coveredBy: str.optional(),
      backfillAt: at.optional(),
      range: runRange.optional(),
    }),
  ),
  summary: z.object({ slots: int, runLate: int, folded: int, skipped: int, backfills: int, dispatchesAtRestart: int, text: str }),
});
export const rehearsalResult = z.object({
  job: str,
  timezone: str,
  from: at,
  elapsedMs: num,
  scenarios: z.array(
    z.object({
      name: z.enum(SCENARIO_NAMES),
      title: str,
      story: str,
      outcome: z.enum(REHEARSAL_OUTCOMES),
      verdict: str,
      endsWell: z.boolean(),
      surprise: nstr,
      events: z.array(z.object({ at, kind: z.enum(REHEARSAL_EVENT_KINDS), detail: str, slot: str.optional(), attempt: int.optional(), surprise: z.boolean().optional() })),
      ledger: z.array(z.object({ slot: str, disposition: z.enum(RUN_DISPOSITIONS), attempts: int, status: z.enum(RUN_STATUSES), backfill: z.enum(BACKFILL_STATUSES).nullable() })),
    }),
  ),
});

// ---- attention (attention.ts) ----

export const inboxItem = z.object({
  id: int,
  kind: z.enum(INBOX_KINDS),
  severity: z.enum(['critical', 'warning', 'info']),
  subject: str,
  title: str,
  detail: str,
  at,
  lastAt: at,
  count: int,
  state: z.enum(INBOX_STATES),
  snoozedUntil: nstr,
  ackedAt: nstr,
  ackedBy: nstr,
  note: nstr,
  resolvedAt: nstr,
  resolution: nstr,
  evidence: z.record(str, json),
  updatedAt: at,
});
export const inboxCounts = z.object({ open: int, snoozed: int, critical: int, byKind: z.record(str, int) });
/** A rolling spend window (PROTOCOL §14) as stored. */
const spendWindowShape = {
  scope: z.enum(['global', 'role']),
  role: str.optional(),
  hours: num,
  maxTokens: num.optional(),
  maxCostUsd: num.optional(),
};
export const budgetsView = z.object({
  settings: z.object({ globalDailyUsd: num.nullable(), perRoleDailyUsd: z.record(str, num), timezone: nstr, windows: z.array(z.object(spendWindowShape)).optional() }),
  zone: str,
  day: str,
  resetsAt: at,
  measured: z.boolean(),
  caps: z.array(z.object({ scope: z.enum(['global', 'role']), role: nstr, capUsd: num, spentUsd: num, reached: z.boolean() })),
  /** The rolling spend windows now: spent against their caps, and when a used-up one frees. */
  windows: z.array(z.object({ ...spendWindowShape, tokens: num, costUsd: num, reached: z.boolean(), freesAt: nstr, name: str })).optional(),
});
export const notificationSettingsView = z.object({
  webhooks: z.array(
    z.object({
      id: str,
      name: nstr,
      url: str,
      events: z.array(z.enum(INBOX_KINDS)),
      format: z.enum(WEBHOOK_FORMATS),
      enabled: z.boolean(),
      secret: str,
      lastDelivery: z.object({ status: z.enum(DELIVERY_STATUSES), at, error: nstr }).nullable(),
    }),
  ),
  desktop: z.object({
    kinds: z.array(z.enum(INBOX_KINDS)),
    quietHours: z.object({ start: str, end: str, timezone: str.optional() }).nullable(),
  }),
  consoleUrl: str,
  consoleUrlSet: z.boolean(),
});
export const webhookSecret = z.object({ webhookId: str, secret: str });
export const delivery = z.object({
  id: int,
  webhookId: str,
  itemId: int.nullable(),
  itemTitle: nstr,
  kind: z.enum([...INBOX_KINDS, 'test']),
  status: z.enum(DELIVERY_STATUSES),
  attempts: int,
  nextAt: nstr,
  lastError: nstr,
  lastStatus: int.nullable(),
  createdAt: at,
  updatedAt: at,
  deliveredAt: nstr,
});
export const webhookTestResult = z.object({ webhookId: str, url: str, ok: z.boolean(), status: int.nullable(), error: nstr, ms: num });

// ---- logs and usage (logs.ts) ----

export const logLine = z.object({
  seq: int,
  at,
  attempt: int,
  stream: z.enum(LOG_STREAMS),
  level: z.enum(LOG_LEVELS),
  text: str,
  cutFrom: int.optional(),
  marker: z.literal('truncated').optional(),
  kind: z.enum(LOG_LINE_KINDS).optional(),
  data: z.record(str, json).optional(),
});
export const logPage = z.object({ items: z.array(logLine), next: int.nullable() });
export const logAttempt = z.object({ attempt: int, lines: int, bytes: int, firstSeq: int, lastSeq: int, firstAt: at, lastAt: at, truncated: z.boolean(), dropped: int });
export const logRefusal = z.object({ message: str, since: at, freeBytes: num, floorBytes: num });
/** PROTOCOL §15: one artifact of an attempt. */
export const artifactView = z.object({ attempt: int, kind: z.enum(ARTIFACT_KINDS), name: str, data: z.record(str, json), at, diffChars: int.optional() });
export const changeSummary = z.object({ attempt: int, filesChanged: int, insertions: int, deletions: int });
export const usageRow = usageTotals.extend({ key: str });
export const dailyUsage = usageTotals.extend({ day: str, role: str, job: nstr });
export const costlyRun = usageTotals.extend({ runId: str, jobId: str, job: str, slot: str });

// ---- managed agents (managed-agents.ts) ----

export const managedAgent = z.object({
  id: str,
  name: str,
  role: str,
  command: z.array(str),
  mode: z.enum(MANAGED_MODES),
  instances: int,
  cwd: nstr,
  env: z.record(str, str),
  timeoutS: int.nullable(),
  shell: z.boolean(),
  parse: z.enum(COMMAND_AGENT_PARSE_FORMATS).nullable(),
  workspace: z
    .object({ repo: str, base: str.optional(), keep: z.enum(['always', 'failed', 'never']).optional(), onRetry: z.enum(['resume', 'fresh']).optional(), sandbox: z.boolean().optional() })
    .nullable(),
  desired: z.enum(['running', 'stopped']),
  version: int,
  createdAt: at,
  updatedAt: at,
  updatedBy: str,
  tokenId: nstr,
  supervised: z.boolean(),
  processes: z.array(
    z.object({
      instance: int,
      pid: int.nullable(),
      status: z.enum(MANAGED_PROCESS_STATUSES),
      startedAt: nstr,
      restarts: int,
      lastExit: z.object({ code: int.nullable(), signal: nstr, at, description: str }).nullable(),
      instanceId: nstr,
      nextStartAt: nstr,
      message: nstr,
      version: int,
      recentOutput: z.array(z.object({ at, stream: z.enum(['stdout', 'stderr']), text: str })).optional(),
    }),
  ),
});
