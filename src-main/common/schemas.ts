/**
 * Input schemas shared by every boundary (agent socket, HTTP, IPC) and the core's public API.
 */
import { z } from 'zod';
import { REPORT_STATUSES, TASK_STATUSES } from './model';
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

export const createTaskInput = z.strictObject({
  title: z.string().trim().min(1, 'a title is required').max(500),
  role: roleName,
  priority: z.number().int().min(-1_000_000).max(1_000_000).optional(),
  payload: jsonValue.optional(),
  dependsOn: z.array(taskId).max(100).optional(),
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

export const listTasksInput = z.strictObject({
  role: roleName.optional(),
  status: z.enum(TASK_STATUSES).optional(),
  limit: z.number().int().min(1).max(1000).optional(),
  /** `asc` (oldest first, cursor `after`) or `desc` (newest first, cursor `before`). */
  order: z.enum(['asc', 'desc']).optional(),
  after: z.number().int().min(0).optional(),
  before: z.number().int().min(1).optional(),
});
export type ListTasksInput = z.infer<typeof listTasksInput>;

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
