/** `/tasks…`: create (idempotent), list and search, get, the operator's edges, payload edits and bulk actions. */
import { z } from 'zod';
import { GafferError } from '../../common/errors';
import { taskSubject } from '../../common/logs';
import { BULK_TASK_ACTIONS, TASK_STATUSES, type Task } from '../../common/model';
import { bulkTaskShape, checkBulkShape, createTaskInput, idempotencyKey, jsonValue, perAttemptBudget, reason, roleName, taskSearchText } from '../../common/schemas';
import { parseOrThrow } from '../../common/validate';
import type { Core } from '../../core/create-core';
import { OPERATOR_CALLER } from '../../core/tasks/idempotency';
import { withUsage } from './logs';
import { headerText } from '../guards';
import { defineRoute, type Parsed } from './define-route';
import { afterParam, emptyQuery, idParam, intParam, limitParam, ok, reasonBody, type Route } from './router';

const listQuery = z.strictObject({
  role: roleName.optional(),
  status: z.enum(TASK_STATUSES).optional(),
  q: taskSearchText.optional(),
  limit: limitParam.optional(),
  order: z.enum(['asc', 'desc']).optional(),
  after: afterParam.optional(),
  before: intParam(1).optional(),
});

/** Retry and unblock may replace the payload in the same step. */
const backToBacklogBody = z.strictObject({ reason, payload: jsonValue.optional(), budget: perAttemptBudget.optional() });
const payloadBody = z.strictObject({ payload: jsonValue, reason });
const bulkBody = z.strictObject(bulkTaskShape).superRefine(checkBulkShape);
const countQuery = z.strictObject({
  role: roleName.optional(),
  status: z.enum(TASK_STATUSES).optional(),
  q: taskSearchText.optional(),
  action: z.enum(BULK_TASK_ACTIONS).optional(),
});
const reprioritiseBody = z.strictObject({ priority: z.number().int().min(-1_000_000).max(1_000_000), reason });

/** The operator's actions on one task: each passes its body on to the core with the task id and the actor. */
const ACTIONS = {
  release: { method: 'POST', body: reasonBody, summary: 'Force-release a held task: its lock is removed and it goes back to the backlog (audited with the reason).' },
  cancel: { method: 'POST', body: reasonBody, summary: 'Cancel a task (audited with the reason).' },
  retry: {
    method: 'POST',
    body: backToBacklogBody,
    summary: 'Put a failed task back into the backlog (audited with the reason); with `payload`, replace its payload in the same step ("retry with changes").',
  },
  unblock: { method: 'POST', body: backToBacklogBody, summary: 'Put a blocked task back into the backlog (audited with the reason); with `payload`, replace its payload in the same step.' },
  payload: { method: 'PUT', body: payloadBody, summary: 'Replace the payload of a task nobody holds and that is not finished (audited with the payload before and after, and the reason).' },
  reprioritise: { method: 'POST', body: reprioritiseBody, summary: 'Change the priority of a task (higher is claimed first; audited with the reason).' },
} as const;
type Action = keyof typeof ACTIONS;
const EDGE_RESPONSES = { 200: '`{task}`: the task after the change' };
const idParams = { id: idParam };

export function taskRoutes(core: Core): Route[] {
  const action = <A extends Action>(name: A, apply: (input: Parsed<(typeof ACTIONS)[A]['body']> & { taskId: number; actor: string }) => Task, responses = EDGE_RESPONSES) => {
    const { method, body, summary } = ACTIONS[name];
    return defineRoute({
      method,
      path: `/tasks/:id/${name}`,
      summary,
      params: idParams,
      body,
      responses,
      // TypeScript widens ACTIONS[name] to the union of the bodies; it is this action's body.
      handle: ({ params: { id }, body: input }, c) => ok({ task: apply({ ...(input as Parsed<(typeof ACTIONS)[A]['body']>), taskId: id, actor: c.actor }) }),
    });
  };

  return [
    defineRoute({
      method: 'POST',
      path: '/tasks',
      summary: 'Create a task. With an `Idempotency-Key` header (or `idempotencyKey`), a repeat within the idempotency window returns the first task.',
      body: createTaskInput,
      headers: { 'Idempotency-Key': idempotencyKey },
      responses: { 200: '`{task, replayed: true}`: the cached task of this idempotency key', 201: '`{task, replayed: false}`: created' },
      handle({ body }, c) {
        const header = headerText(c.req, 'Idempotency-Key');
        const fromHeader = header === undefined ? undefined : parseOrThrow(idempotencyKey, header, 'header "Idempotency-Key"');
        if (fromHeader !== undefined && body.idempotencyKey !== undefined && body.idempotencyKey !== fromHeader) {
          throw new GafferError('bad_request', 'the Idempotency-Key header and the body\'s "idempotencyKey" differ');
        }
        const key = fromHeader ?? body.idempotencyKey;
        const { task, replayed } = core.tasks.create({ ...body, ...(key === undefined ? {} : { idempotencyKey: key }) }, { actor: c.actor, caller: OPERATOR_CALLER });
        return ok({ task, replayed }, replayed ? 200 : 201, {
          location: `/api/v1/tasks/${task.id}`,
          ...(key === undefined ? {} : { 'idempotent-replayed': String(replayed) }),
        });
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/tasks',
      summary: 'List tasks (filter by role and status), paged by task id. With `q`, search titles, payload text and ids; a search reads a bounded number of rows per call.',
      query: listQuery,
      responses: { 200: '`{items: [task], next, partial}`: `partial` is true when the search stopped at its scan budget before `limit` matches (page on with `next`)' },
      handle({ query }) {
        const page = core.tasks.list(query);
        return ok({ ...page, items: page.items.map((t) => withUsage(core, taskSubject(t.id), t)) });
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/tasks/count',
      summary: 'How many tasks a filter selects now (with `action`: only those it applies to), counted over a bounded scan; `through` is the highest task id now, for a bulk action over the same filter.',
      query: countQuery,
      responses: { 200: '`{count, exact, through}`: `exact` is false when counting stopped at its scan budget (at least `count`)' },
      handle({ query: { action, ...filter } }) {
        return ok(core.bulkTasks.count({ filter, ...(action ? { action } : {}) }));
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/tasks/bulk',
      summary: `One operator action (cancel, reprioritise, backlog, unblock) with one reason over up to 200 task \`ids\`, or over the next 200 tasks a \`filter\` selects after \`after\` (up to \`through\`). Each call is one short transaction; each changed task is audited on its own row with the \`bulkId\`.`,
      body: bulkBody,
      responses: { 200: '`{bulkId, changed, skipped: [{taskId, code, message}], next, through}`: pass `next` as `after`, and `bulkId` and `through` back, until `next` is null' },
      handle: ({ body }, c) => ok(core.bulkTasks.apply({ ...body, actor: c.actor })),
    }),
    defineRoute({
      method: 'GET',
      path: '/tasks/:id',
      summary: 'One task, with its lock if it is held.',
      params: idParams,
      query: emptyQuery,
      responses: { 200: '`{task}`' },
      handle({ params: { id } }) {
        const task = core.tasks.get(id);
        return ok({ task: withUsage(core, taskSubject(task.id), task) });
      },
    }),
    action('release', (input) => core.tasks.forceRelease(input)),
    action('cancel', (input) => core.tasks.cancel(input)),
    action('retry', (input) => core.tasks.retry(input)),
    action('unblock', (input) => core.tasks.unblock(input)),
    action('payload', (input) => core.tasks.editPayload(input), { 200: '`{task}`' }),
    action('reprioritise', (input) => core.tasks.reprioritise(input), { 200: '`{task}`' }),
  ];
}
