/**
 * Input schemas shared by every boundary (agent socket, HTTP, IPC) and the core's public API.
 */
import { verifySpec } from './verify';
import { z } from 'zod';
import { BULK_TASK_ACTIONS, REPORT_STATUSES, TASK_STATUSES, type BulkTaskAction } from './model';
import { illFormedTextIssue } from './text';

export const roleName = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, 'a role is 1–64 letters, digits, "_", "-" or "."');
export const instanceId = z.string().min(1).max(100);
export const taskId = z.number().int().positive().max(Number.MAX_SAFE_INTEGER);
export const fence = z.number().int().positive().max(Number.MAX_SAFE_INTEGER);
export const reason = z.string().trim().min(1, 'a reason is required').max(2000);
export const actorName = z.string().min(1).max(200);
export const idempotencyKey = z.string().min(1).max(200);

const encoder = new TextEncoder();
/** True when `s` takes more than `max` bytes in UTF-8 (Node and browser; encodes only when it could). */
export function exceedsUtf8Bytes(s: string, max: number): boolean {
  return s.length * 3 > max && encoder.encode(s).length > max;
}

/** Any JSON value, bounded in size so one payload cannot bloat the database. */
export const MAX_JSON_BYTES = 64 * 1024;
/**
 * ... and in nesting: code that walks a value recursively (hashing, copying, rendering) must not
 * overflow the stack on `[[[[…]]]]` thousands of levels deep (an `internal` error, not a 400).
 */
export const MAX_JSON_DEPTH = 64;

/** True when `v` nests deeper than `max` arrays/objects. Iterative: safe on any depth. */
export function jsonDeeperThan(v: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[v, 1]];
  while (stack.length > 0) {
    const [x, depth] = stack.pop()!;
    if (x === null || typeof x !== 'object') continue;
    if (depth > max) return true;
    for (const child of Array.isArray(x) ? x : Object.values(x)) stack.push([child, depth + 1]);
  }
  return false;
}

export const jsonValue = z.unknown().superRefine((v, ctx) => {
  if (jsonDeeperThan(v, MAX_JSON_DEPTH)) {
    ctx.addIssue({ code: 'custom', message: `must nest at most ${MAX_JSON_DEPTH} levels deep` });
    return;
  }
  // Keys and values: a payload is stored (and audited) as UTF-8 text.
  const badText = illFormedTextIssue(v);
  if (badText) {
    ctx.addIssue({ code: 'custom', ...badText });
    return;
  }
  let text: string | undefined;
  try {
    text = JSON.stringify(v);
  } catch {
    ctx.addIssue({ code: 'custom', message: 'must be JSON-serialisable' });
    return;
  }
  if (text !== undefined && exceedsUtf8Bytes(text, MAX_JSON_BYTES)) {
    ctx.addIssue({ code: 'custom', message: `must be at most ${MAX_JSON_BYTES} bytes of JSON` });
  }
});

/**
 * A spend cap on one attempt (PROTOCOL §8): the job field `budget`, and the same on a task. An
 * attempt whose reported usage passes either cap is taken away at once (reason `budget`).
 */
export const perAttemptBudget = z.strictObject({
  maxCostUsdPerRun: z.number().positive().max(1_000_000).optional(),
  maxTokensPerRun: z.number().int().positive().max(1e12).optional(),
});
export type PerAttemptBudget = z.infer<typeof perAttemptBudget>;

export const createTaskInput = z.strictObject({
  title: z.string().trim().min(1, 'a title is required').max(500),
  role: roleName,
  priority: z.number().int().min(-1_000_000).max(1_000_000).optional(),
  payload: jsonValue.optional(),
  dependsOn: z.array(taskId).max(100).optional(),
  /** Past it, the holder gets `lock_lost` (`budget`) and the task is blocked for the operator. */
  budget: perAttemptBudget.optional(),
  /** "Done when…" (PROTOCOL §13): checks Gaffer runs itself before the task is done. */
  verify: verifySpec.optional(),
  idempotencyKey: idempotencyKey.optional(),
});
export type CreateTaskInput = z.infer<typeof createTaskInput>;

export const claimInput = z.strictObject({ instanceId, role: roleName.optional() });
export type ClaimInput = z.infer<typeof claimInput>;
export const renewInput = z.strictObject({ instanceId, taskId, fence });
export type RenewInput = z.infer<typeof renewInput>;
export const reportInput = z.strictObject({
  instanceId,
  taskId,
  fence,
  status: z.enum(REPORT_STATUSES),
  note: z.string().max(10_000).optional(),
  output: jsonValue.optional(),
});
export type ReportInput = z.infer<typeof reportInput>;

export const operatorTaskAction = z.strictObject({ taskId, reason, actor: actorName });
export const reprioritiseInput = z.strictObject({
  taskId,
  priority: z.number().int().min(-1_000_000).max(1_000_000),
  reason,
  actor: actorName,
});

/** Text to find in a task's title or payload, or its id (`42`, `#42`). */
export const taskSearchText = z.string().trim().min(1, 'type something to search for').max(200);

/** Which tasks: by role, status and text (title, payload, id). Shared by the list, the count and bulk actions. */
export const taskFilterShape = {
  role: roleName.optional(),
  status: z.enum(TASK_STATUSES).optional(),
  q: taskSearchText.optional(),
};
export const taskFilter = z.strictObject(taskFilterShape);
export type TaskFilter = z.infer<typeof taskFilter>;

export const listTasksInput = z.strictObject({
  ...taskFilterShape,
  limit: z.number().int().min(1).max(1000).optional(),
  /** `asc` (oldest first) or `desc` (newest first). */
  order: z.enum(['asc', 'desc']).optional(),
  /** The previous page's `next`: the tasks after it in the list's order (ascending: higher ids; descending: lower). */
  after: z.number().int().min(0).optional(),
  /** Descending lists: only ids below it (the console's cursor; `after` does the same). */
  before: z.number().int().min(1).optional(),
});
export type ListTasksInput = z.infer<typeof listTasksInput>;

export const taskPriority = z.number().int().min(-1_000_000).max(1_000_000);

/** Retry and unblock may change the payload in the same step ("retry with changes"). */
export const retryTaskInput = operatorTaskAction.extend({
  payload: jsonValue.optional(),
  /** PROTOCOL §14: the task's spend cap per attempt from its next attempt on (replaces the one it had). */
  budget: perAttemptBudget.optional(),
});
export const editPayloadInput = z.strictObject({ taskId, payload: jsonValue, reason, actor: actorName });

// ---- Acting on many tasks at once (bulk actions). ----

/** Tasks one bulk call changes at most: one short transaction each, so claims get through between calls. */
export const BULK_CHUNK = 200;
/** Names the calls of one bulk action in every audit row it writes (the first call's answer gives it). */
export const bulkId = z.string().regex(/^bulk_[A-Za-z0-9_-]{6,40}$/, 'a bulk id is "bulk_" and 6–40 letters, digits, "_" or "-"');

/**
 * One chunk of a bulk action: either up to `BULK_CHUNK` task ids, or the next matches of a
 * filter after task id `after` (and at most `through`: the selection as it was when asked).
 */
export const bulkTaskShape = {
  action: z.enum(BULK_TASK_ACTIONS),
  reason,
  /** The new priority (reprioritise only). */
  priority: taskPriority.optional(),
  ids: z.array(taskId).min(1).max(BULK_CHUNK).optional(),
  filter: taskFilter.optional(),
  after: z.number().int().min(0).optional(),
  through: taskId.optional(),
  bulkId: bulkId.optional(),
};

/** The rules a bulk call's fields obey together (one selection; a priority exactly for reprioritise). */
export function checkBulkShape(a: { action: BulkTaskAction; priority?: number | undefined; ids?: number[] | undefined; filter?: TaskFilter | undefined; after?: number | undefined; through?: number | undefined }, ctx: z.RefinementCtx): void {
  if ((a.ids === undefined) === (a.filter === undefined)) ctx.addIssue({ code: 'custom', path: ['ids'], message: 'give either ids or filter' });
  if (a.ids !== undefined && (a.after !== undefined || a.through !== undefined)) ctx.addIssue({ code: 'custom', path: ['after'], message: 'after and through page a filter, not a list of ids' });
  if (a.action === 'reprioritise' && a.priority === undefined) ctx.addIssue({ code: 'custom', path: ['priority'], message: 'reprioritise needs the new priority' });
  if (a.action !== 'reprioritise' && a.priority !== undefined) ctx.addIssue({ code: 'custom', path: ['priority'], message: `${a.action} takes no priority` });
}

export const bulkTaskInput = z.strictObject({ ...bulkTaskShape, actor: actorName }).superRefine(checkBulkShape);
export type BulkTaskInput = z.infer<typeof bulkTaskInput>;

/** How many tasks a filter selects now (for a bulk action: only those the action applies to). */
export const countTasksInput = z.strictObject({ filter: taskFilter, action: z.enum(BULK_TASK_ACTIONS).optional() });

export const registerInstanceInput = z.strictObject({
  role: roleName,
  name: z.string().trim().min(1).max(200),
  version: z.string().max(100).optional(),
  tokenId: z.string().max(100).nullable().optional(),
  /** Resume a disconnected instance within the reconnect grace. */
  resume: instanceId.optional(),
});
export type RegisterInstanceInput = z.infer<typeof registerInstanceInput>;

// ---- Signals (readiness flags for a business key). ----

export const signalName = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/, 'a signal name is 1–128 letters, digits, "_", "-", "." or ":"');
/** A business key: `2026-11-30`, `2026-W48`, `2026-11-30T09:00`, or any printable label. */
export const signalKey = z
  .string()
  .min(1)
  .max(200)
  .refine((k) => ![...k].some((ch) => ch.charCodeAt(0) < 0x20 || ch.charCodeAt(0) === 0x7f), 'a signal key must not contain control characters');

export const setSignalInput = z.strictObject({
  name: signalName,
  key: signalKey,
  actor: actorName,
  value: jsonValue.optional(),
  /** Why it was set by hand (kept in the audit row); agents and scripts usually give none. */
  reason: reason.optional(),
});
export type SetSignalInput = z.infer<typeof setSignalInput>;

export const clearSignalInput = z.strictObject({ name: signalName, key: signalKey, actor: actorName, reason });

export const listSignalsInput = z.strictObject({
  name: signalName.optional(),
  key: signalKey.optional(),
  limit: z.number().int().min(1).max(1000).optional(),
  after: z.string().max(1000).optional(),
});
export type ListSignalsInput = z.infer<typeof listSignalsInput>;

// ---- Audit browser and export filters. ----

export const AUDIT_MAX_LIMIT = 1000;
const auditField = z.string().min(1).max(200);
const instant = z.union([z.iso.datetime({ offset: true }), z.number().int().min(0)]);

/** Filters shared by the audit query, its count and the export. `from` is inclusive, `to` exclusive. */
export const auditFilterShape = {
  type: auditField.optional(),
  /** Several types at once (OR). Combined with `type` if both are given. */
  types: z.array(auditField).min(1).max(20).optional(),
  actor: auditField.optional(),
  subject: auditField.optional(),
  from: instant.optional(),
  to: instant.optional(),
  /** Case-insensitive substring of the event detail (a bounded scan). */
  text: z.string().min(1).max(200).optional(),
  /** Cursor bounds (event ids, exclusive). */
  after: z.number().int().min(0).optional(),
  before: z.number().int().min(1).optional(),
};

export const auditQueryInput = z.strictObject({
  ...auditFilterShape,
  limit: z.number().int().min(1).max(AUDIT_MAX_LIMIT).optional(),
  /** `asc` (default, oldest first, cursor → `after`) or `desc` (newest first, cursor → `before`). */
  order: z.enum(['asc', 'desc']).optional(),
});
export type AuditQueryInput = z.input<typeof auditQueryInput>;

export const auditFilterInput = z.strictObject(auditFilterShape);
export type AuditFilterInput = z.input<typeof auditFilterInput>;
