/** Operations on tasks, the board around them (roles, expired locks, instances) and agent tokens. */
import { z } from 'zod';
import type { BulkTaskResult, Instance, Task, TaskCount, TaskPage, TokenInfo } from '../model';
import type { RolePause } from '../job-schema';
import { bulkTaskShape, checkBulkShape, countTasksInput, jsonValue, listTasksInput, perAttemptBudget, reason, roleName, taskId } from '../schemas';
import { verifySpec } from '../verify';
import { op } from './define';
import { bulkTaskResult, instance, page, rolePause, task, taskCount, taskPage, taskWithUsage, tokenInfo } from './shapes';

export const empty = z.strictObject({});
const priority = z.number().int().min(-1_000_000).max(1_000_000);
const BOTH = ['console', 'operator'] as const;
const CONSOLE = ['console'] as const;
const taskReply = z.object({ task });
const EDGE = { 200: '`{task}`: the task after the change' };

// ---- views the console shows (results of console-only operations) ----

export interface RoleSummary {
  role: string;
  /** Backlog with every dependency done: claimable now. */
  ready: number;
  /** Backlog waiting on dependencies. */
  waiting: number;
  inProgress: number;
  blocked: number;
  failed: number;
  done: number;
  onlineInstances: number;
  /** The oldest claimable task's age in ms (how long the queue has been stuck), or null. */
  oldestReadyAgeMs: number | null;
  /** Present while the whole role is paused: its jobs start nothing, its tasks are not handed out. */
  paused?: RolePause;
}
export const roleSummary = z.object({
  role: z.string(),
  ready: z.number(),
  waiting: z.number(),
  inProgress: z.number(),
  blocked: z.number(),
  failed: z.number(),
  done: z.number(),
  onlineInstances: z.number(),
  oldestReadyAgeMs: z.number().nullable(),
  paused: rolePause.optional(),
});

export interface ExpiredLockCard {
  id: number;
  taskId: number;
  title: string;
  role: string;
  holder: string;
  holderName: string | null;
  fence: number;
  reason: string;
  expiredAt: string;
  reclaimedBy: string | null;
  reclaimedByName: string | null;
  reclaimedAt: string | null;
}
const nstr = z.string().nullable();
export const expiredLockCard = z.object({
  id: z.number(),
  taskId: z.number(),
  title: z.string(),
  role: z.string(),
  holder: z.string(),
  holderName: nstr,
  fence: z.number(),
  reason: z.string(),
  expiredAt: z.string(),
  reclaimedBy: nstr,
  reclaimedByName: nstr,
  reclaimedAt: nstr,
});

export interface InstanceView extends Instance {
  /** Titles of the tasks whose locks it holds. */
  held: Array<{ taskId: number; title: string; expiresAt: string }>;
  /**
   * Tasks whose lock was taken away from it (force-release, expiry, cancel) while it was connected:
   * it was told (`lock_lost`) and has not reported since. Empty once it reports them or disconnects.
   */
  lostLocks: Array<{ taskId: number; title: string; reason: string; at: string }>;
  /** Job runs it has started and not finished (`runs.status = running`). */
  currentRuns: Array<{ runId: string; jobId: string; job: string; slot: string }>;
}
export const instanceView = instance.extend({
  held: z.array(z.object({ taskId: z.number(), title: z.string(), expiresAt: z.string() })),
  lostLocks: z.array(z.object({ taskId: z.number(), title: z.string(), reason: z.string(), at: z.string() })),
  currentRuns: z.array(z.object({ runId: z.string(), jobId: z.string(), job: z.string(), slot: z.string() })),
});

/** An agent token as the console lists it (the core's `TokenInfo`: never the secret). */
export type TokenView = TokenInfo;

export const taskOps = {
  'tasks.list': op<TaskPage>()({
    summary: 'List tasks (filter by role and status), paged by task id. With `q`, search titles, payload text and ids; a search reads a bounded number of rows per call.',
    input: listTasksInput,
    result: taskPage,
    callers: BOTH,
    reason: 'none',
    rest: [
      {
        method: 'GET',
        path: '/tasks',
        status: { 200: '`{items: [task], next, partial}`: `partial` is true when the search stopped at its scan budget before `limit` matches (page on with `next`)' },
        response: taskPage.extend({ items: z.array(taskWithUsage) }),
      },
    ],
  }),
  'tasks.get': op<Task>()({
    summary: 'One task, with its lock if it is held, and its latest `verification` (PROTOCOL §13) where its checks ran.',
    input: z.strictObject({ taskId }),
    result: task,
    callers: BOTH,
    reason: 'none',
    rest: [{ method: 'GET', path: '/tasks/:id', status: { 200: '`{task}`' }, response: z.object({ task: taskWithUsage }) }],
  }),
  'tasks.create': op<{ task: Task; replayed: boolean }>()({
    summary: 'Create a task. With an `Idempotency-Key` header (or `idempotencyKey`), a repeat within the idempotency window returns the first task.',
    input: z.strictObject({
      title: z.string().trim().min(1).max(500),
      role: roleName,
      priority: priority.optional(),
      payload: z.unknown().optional(),
      dependsOn: z.array(taskId).max(100).optional(),
      /** A spend cap on each attempt (PROTOCOL §8, §14); the console's new-task dialog sets it too. */
      budget: perAttemptBudget.optional(),
      /** "Done when…" (PROTOCOL §13): checks Gaffer runs itself before the task is done. */
      verify: verifySpec.optional(),
    }),
    result: z.object({ task, replayed: z.boolean() }),
    callers: BOTH,
    reason: 'none',
    rest: [{ method: 'POST', path: '/tasks', status: { 200: '`{task, replayed: true}`: the cached task of this idempotency key', 201: '`{task, replayed: false}`: created' } }],
  }),
  'tasks.reprioritise': op<Task>()({
    summary: 'Change the priority of a task (higher is claimed first; audited with the reason).',
    input: z.strictObject({ taskId, priority, reason }),
    result: task,
    callers: BOTH,
    reason: 'required',
    rest: [{ method: 'POST', path: '/tasks/:id/reprioritise', status: { 200: '`{task}`' }, response: taskReply }],
  }),
  'tasks.cancel': op<Task>()({
    summary: 'Cancel a task (audited with the reason).',
    input: z.strictObject({ taskId, reason }),
    result: task,
    callers: BOTH,
    reason: 'required',
    rest: [{ method: 'POST', path: '/tasks/:id/cancel', status: EDGE, response: taskReply }],
  }),
  /** With `payload`: "retry with changes" (the payload is replaced in the same step). */
  'tasks.retry': op<Task>()({
    summary: 'Put a failed task back into the backlog (audited with the reason); with `payload`, replace its payload in the same step ("retry with changes"); with `budget`, its spend cap per attempt from now on.',
    input: z.strictObject({ taskId, reason, payload: jsonValue.optional(), budget: perAttemptBudget.optional() }),
    result: task,
    callers: BOTH,
    reason: 'required',
    rest: [{ method: 'POST', path: '/tasks/:id/retry', status: EDGE, response: taskReply }],
  }),
  'tasks.unblock': op<Task>()({
    summary: 'Put a blocked task back into the backlog (audited with the reason); with `payload`, replace its payload in the same step; with `budget`, its spend cap per attempt from now on.',
    input: z.strictObject({ taskId, reason, payload: jsonValue.optional(), budget: perAttemptBudget.optional() }),
    result: task,
    callers: BOTH,
    reason: 'required',
    rest: [{ method: 'POST', path: '/tasks/:id/unblock', status: EDGE, response: taskReply }],
  }),
  'tasks.forceRelease': op<Task>()({
    summary: 'Force-release a held task: its lock is removed and it goes back to the backlog (audited with the reason).',
    input: z.strictObject({ taskId, reason }),
    result: task,
    callers: BOTH,
    reason: 'required',
    rest: [{ method: 'POST', path: '/tasks/:id/release', status: EDGE, response: taskReply }],
  }),
  'tasks.editPayload': op<Task>()({
    summary: 'Replace the payload of a task nobody holds and that is not finished (audited with the payload before and after, and the reason).',
    input: z.strictObject({ taskId, payload: jsonValue, reason }),
    result: task,
    callers: BOTH,
    reason: 'required',
    rest: [{ method: 'PUT', path: '/tasks/:id/payload', status: { 200: '`{task}`' }, response: taskReply }],
  }),
  'tasks.count': op<TaskCount>()({
    summary:
      'How many tasks a filter selects now (with `action`: only those it applies to), counted over a bounded scan; `through` is the highest task id now, for a bulk action over the same filter.',
    input: countTasksInput,
    result: taskCount,
    callers: BOTH,
    reason: 'none',
    rest: [{ method: 'GET', path: '/tasks/count', status: { 200: '`{count, exact, through}`: `exact` is false when counting stopped at its scan budget (at least `count`)' } }],
  }),
  'tasks.bulk': op<BulkTaskResult>()({
    summary:
      'One operator action (cancel, reprioritise, backlog, unblock) with one reason over up to 200 task `ids`, or over the next 200 tasks a `filter` selects after `after` (up to `through`). Each call is one short transaction; each changed task is audited on its own row with the `bulkId`.',
    input: z.strictObject(bulkTaskShape).superRefine(checkBulkShape),
    result: bulkTaskResult,
    callers: BOTH,
    reason: 'required',
    rest: [
      {
        method: 'POST',
        path: '/tasks/bulk',
        status: { 200: '`{bulkId, changed, skipped: [{taskId, code, message}], next, through}`: pass `next` as `after`, and `bulkId` and `through` back, until `next` is null' },
      },
    ],
  }),
  'roles.summary': op<RoleSummary[]>()({
    summary: 'Each role: ready, waiting, in progress, blocked, failed and done tasks, instances online, the oldest claimable task’s age, its pause.',
    input: empty,
    result: z.array(roleSummary),
    callers: CONSOLE,
    reason: 'none',
  }),
  'locks.expiredToday': op<ExpiredLockCard[]>()({
    summary: 'Locks that expired today (local day), with their holder and who reclaimed the task.',
    input: empty,
    result: z.array(expiredLockCard),
    callers: CONSOLE,
    reason: 'none',
  }),
  'instances.list': op<InstanceView[]>()({
    summary: 'Agent instances (connected processes) with their status and held locks.',
    input: empty,
    result: z.array(instanceView),
    callers: BOTH,
    reason: 'none',
    rest: [{ method: 'GET', path: '/instances', status: { 200: '`{items, next}`' }, response: page(instance) }],
  }),
  'tokens.list': op<TokenView[]>()({
    summary: 'List agent tokens (never their secrets).',
    input: empty,
    result: z.array(tokenInfo),
    callers: BOTH,
    reason: 'none',
    rest: [{ method: 'GET', path: '/tokens', status: { 200: '`{items, next}`' }, response: page(tokenInfo) }],
  }),
  'tokens.create': op<{ id: string; token: string }>()({
    summary: 'Create an agent token, optionally bound to a role. The secret (`token`) is in this reply only.',
    input: z.strictObject({ name: z.string().trim().min(1, 'a name is required').max(200), role: roleName.nullable().optional() }),
    result: z.object({ id: z.string(), token: z.string() }),
    callers: BOTH,
    reason: 'none',
    rest: [{ method: 'POST', path: '/tokens', status: { 201: '`{id, token, name, role, …}`' }, response: tokenInfo.extend({ token: z.string() }) }],
  }),
  'tokens.revoke': op<TokenView>()({
    summary: 'Revoke an agent token: its sessions are closed (4403) and it can no longer connect.',
    input: z.strictObject({ id: z.string().min(1).max(100), reason }),
    result: tokenInfo,
    callers: BOTH,
    reason: 'required',
    rest: [
      { method: 'POST', path: '/tokens/:id/revoke', status: { 200: '`{token}`' }, response: z.object({ token: tokenInfo }) },
      { method: 'DELETE', path: '/tokens/:id', summary: 'Revoke an agent token; the reason comes from `?reason=` or the body.', status: { 200: '`{token}`' }, response: z.object({ token: tokenInfo }) },
    ],
  }),
} as const;

