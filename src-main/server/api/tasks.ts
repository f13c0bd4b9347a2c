/** `/tasks…`: create (idempotent), list and search, get, the operator's edges, payload edits and bulk actions. */
import { z } from 'zod';
import { GafferError } from '../../common/errors';
import { taskSubject } from '../../common/logs';
import { BULK_TASK_ACTIONS, TASK_STATUSES, type Task } from '../../common/model';
import { OPS } from '../../common/ops';
import { createTaskInput, idempotencyKey, jsonValue, perAttemptBudget, reason, roleName, taskSearchText } from '../../common/schemas';
import { parseOrThrow } from '../../common/validate';
import type { Core } from '../../core/create-core';
import { OPERATOR_CALLER } from '../../core/tasks/idempotency-store';
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
const countQuery = z.strictObject({
  role: roleName.optional(),
  status: z.enum(TASK_STATUSES).optional(),
  q: taskSearchText.optional(),
  action: z.enum(BULK_TASK_ACTIONS).optional(),
});
const reprioritiseBody = z.strictObject({ priority: z.number().int().min(-1_000_000).max(1_000_000), reason });

/** The operator's actions on one task: each passes its body on to the core with the task id and the actor. */
const ACTIONS = {
  release: { op: 'tasks.forceRelease', body: reasonBody },
  cancel: { op: 'tasks.cancel', body: reasonBody },
  retry: { op: 'tasks.retry', body: backToBacklogBody },
  unblock: { op: 'tasks.unblock', body: backToBacklogBody },
  payload: { op: 'tasks.editPayload', body: payloadBody },
  reprioritise: { op: 'tasks.reprioritise', body: reprioritiseBody },
} as const;
type Action = keyof typeof ACTIONS;
const idParams = { id: idParam };

export function taskRoutes(core: Core): Route[] {
  const action = <A extends Action>(name: A, apply: (input: Parsed<(typeof ACTIONS)[A]['body']> & { taskId: number; actor: string }) => Task) => {
    const { op, body } = ACTIONS[name];
    return defineRoute({
      op,
      params: idParams,
      body,
      // TypeScript widens ACTIONS[name] to the union of the bodies; it is this action's body.
      handle: ({ params: { id }, body: input }, c) => ok({ task: apply({ ...(input as Parsed<(typeof ACTIONS)[A]['body']>), taskId: id, actor: c.actor }) }),
    });
  };

  return [
    defineRoute({
      op: 'tasks.create',
      body: createTaskInput,
      headers: { 'Idempotency-Key': idempotencyKey },
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
      op: 'tasks.list',
      query: listQuery,
      handle({ query }) {
        const page = core.tasks.list(query);
        return ok({ ...page, items: page.items.map((t) => withUsage(core, taskSubject(t.id), t)) });
      },
    }),
    defineRoute({
      op: 'tasks.count',
      query: countQuery,
      handle({ query: { action, ...filter } }) {
        return ok(core.bulkTasks.count({ filter, ...(action ? { action } : {}) }));
      },
    }),
    defineRoute({
      op: 'tasks.bulk',
      body: OPS['tasks.bulk'].input,
      handle: ({ body }, c) => ok(core.bulkTasks.apply({ ...body, actor: c.actor })),
    }),
    defineRoute({
      op: 'tasks.get',
      params: idParams,
      query: emptyQuery,
      handle({ params: { id } }) {
        const task = core.tasks.view(id);
        return ok({ task: withUsage(core, taskSubject(task.id), task) });
      },
    }),
    action('release', (input) => core.tasks.forceRelease(input)),
    action('cancel', (input) => core.tasks.cancel(input)),
    action('retry', (input) => core.tasks.retry(input)),
    action('unblock', (input) => core.tasks.unblock(input)),
    action('payload', (input) => core.tasks.editPayload(input)),
    action('reprioritise', (input) => core.tasks.reprioritise(input)),
  ];
}
