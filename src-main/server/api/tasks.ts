/** `/tasks…`: create (idempotent), list and search, get, the operator's edges, payload edits and bulk actions. */
import { z } from 'zod';
import { GafferError } from '../../common/errors';
import { taskSubject } from '../../common/logs';
import { BULK_TASK_ACTIONS, TASK_STATUSES } from '../../common/model';
import { bulkTaskShape, checkBulkShape, createTaskInput, idempotencyKey, jsonValue, reason, roleName, taskSearchText } from '../../common/schemas';
import { parseOrThrow } from '../../common/validate';
import type { Core } from '../../core/create-core';
import { withUsage } from './logs';
import { headerText } from '../guards';
import { afterParam, emptyQuery, idParam, intParam, limitParam, ok, parseBody, parseParam, parseQuery, type ApiContext, type Route } from './router';

const listQuery = z.strictObject({
  role: roleName.optional(),
  status: z.enum(TASK_STATUSES).optional(),
  q: taskSearchText.optional(),
  limit: limitParam.optional(),
  order: z.enum(['asc', 'desc']).optional(),
  after: afterParam.optional(),
  before: intParam(1).optional(),
});

const reasonBody = z.strictObject({ reason });
/** Retry and unblock may replace the payload in the same step. */
const backToBacklogBody = z.strictObject({ reason, payload: jsonValue.optional() });
const payloadBody = z.strictObject({ payload: jsonValue, reason });
const bulkBody = z.strictObject(bulkTaskShape).superRefine(checkBulkShape);
const countQuery = z.strictObject({
  role: roleName.optional(),
  status: z.enum(TASK_STATUSES).optional(),
  q: taskSearchText.optional(),
  action: z.enum(BULK_TASK_ACTIONS).optional(),
});
const reprioritiseBody = z.strictObject({ priority: z.number().int().min(-1_000_000).max(1_000_000), reason });

type Edge = 'release' | 'cancel' | 'retry' | 'unblock';

const EDGE_SUMMARY: Record<Edge, string> = {
  release: 'Force-release a held task: its lock is removed and it goes back to the backlog (audited with the reason).',
  cancel: 'Cancel a task (audited with the reason).',
  retry: 'Put a failed task back into the backlog (audited with the reason); with `payload`, replace its payload in the same step ("retry with changes").',
  unblock: 'Put a blocked task back into the backlog (audited with the reason); with `payload`, replace its payload in the same step.',
};
const idParams = { id: idParam };

export function taskRoutes(core: Core): Route[] {
  const edge = (name: Edge): Route => ({
    method: 'POST',
    path: `/tasks/:id/${name}`,
    doc: { summary: EDGE_SUMMARY[name], params: idParams, body: name === 'retry' || name === 'unblock' ? backToBacklogBody : reasonBody, responses: { 200: '`{task}`: the task after the change' } },
    async handler(c: ApiContext) {
      const taskId = parseParam(idParam, c, 'id');
      if (name === 'retry' || name === 'unblock') {
        const { reason: why, payload } = await parseBody(backToBacklogBody, c);
        const input = { taskId, reason: why, actor: c.actor, ...(payload === undefined ? {} : { payload }) };
        return ok({ task: name === 'retry' ? core.tasks.retry(input) : core.tasks.unblock(input) });
      }
      const { reason: why } = await parseBody(reasonBody, c);
      const input = { taskId, reason: why, actor: c.actor };
      return ok({ task: name === 'release' ? core.tasks.forceRelease(input) : core.tasks.cancel(input) });
    },
  });

  return [
    {
      method: 'POST',
      path: '/tasks',
      doc: {
        summary: 'Create a task. With an `Idempotency-Key` header (or `idempotencyKey`), a repeat within the idempotency window returns the first task.',
        body: createTaskInput,
        headers: { 'Idempotency-Key': idempotencyKey },
        responses: { 200: '`{task, replayed: true}`: the cached task of this idempotency key', 201: '`{task, replayed: false}`: created' },
      },
      async handler(c) {
        const body = await parseBody(createTaskInput, c);
        const header = headerText(c.req, 'Idempotency-Key');
        const fromHeader = header === undefined ? undefined : parseOrThrow(idempotencyKey, header, 'header "Idempotency-Key"');
        if (fromHeader !== undefined && body.idempotencyKey !== undefined && body.idempotencyKey !== fromHeader) {
          throw new GafferError('bad_request', 'the Idempotency-Key header and the body\'s "idempotencyKey" differ');
        }
        const key = fromHeader ?? body.idempotencyKey;
        const { task, replayed } = core.tasks.create({ ...body, ...(key === undefined ? {} : { idempotencyKey: key }) }, { actor: c.actor });
        return ok({ task, replayed }, replayed ? 200 : 201, {
          location: `/api/v1/tasks/${task.id}`,
          ...(key === undefined ? {} : { 'idempotent-replayed': String(replayed) }),
        });
      },
    },
    {
      method: 'GET',
      path: '/tasks',
      doc: {
        summary: 'List tasks (filter by role and status), paged by task id. With `q`, search titles, payload text and ids; a search reads a bounded number of rows per call.',
        query: listQuery,
        responses: { 200: '`{items: [task], next, partial}`: `partial` is true when the search stopped at its scan budget before `limit` matches (page on with `next`)' },
      },
      handler(c) {
        const page = core.tasks.list(parseQuery(listQuery, c));
        return ok({ ...page, items: page.items.map((t) => withUsage(core, taskSubject(t.id), t)) });
      },
    },
    {
      method: 'GET',
      path: '/tasks/count',
      doc: {
        summary: 'How many tasks a filter selects now (with `action`: only those it applies to), counted over a bounded scan; `through` is the highest task id now, for a bulk action over the same filter.',
        query: countQuery,
        responses: { 200: '`{count, exact, through}`: `exact` is false when counting stopped at its scan budget (at least `count`)' },
      },
      handler(c) {
        const { action, ...filter } = parseQuery(countQuery, c);
        return ok(core.bulkTasks.count({ filter, ...(action ? { action } : {}) }));
      },
    },
    {
      method: 'POST',
      path: '/tasks/bulk',
      doc: {
        summary: `One operator action (cancel, reprioritise, backlog, unblock) with one reason over up to 200 task \`ids\`, or over the next 200 tasks a \`filter\` selects after \`after\` (up to \`through\`). Each call is one short transaction; each changed task is audited on its own row with the \`bulkId\`.`,
        body: bulkBody,
        responses: { 200: '`{bulkId, changed, skipped: [{taskId, code, message}], next, through}`: pass `next` as `after`, and `bulkId` and `through` back, until `next` is null' },
      },
      async handler(c) {
        const body = await parseBody(bulkBody, c);
        return ok(core.bulkTasks.apply({ ...body, actor: c.actor }));
      },
    },
    {
      method: 'GET',
      path: '/tasks/:id',
      doc: { summary: 'One task, with its lock if it is held.', params: idParams, query: emptyQuery, responses: { 200: '`{task}`' } },
      handler(c) {
        parseQuery(emptyQuery, c);
        const task = core.tasks.get(parseParam(idParam, c, 'id'));
        return ok({ task: withUsage(core, taskSubject(task.id), task) });
      },
    },
    edge('release'),
    edge('cancel'),
    edge('retry'),
    edge('unblock'),
    {
      method: 'PUT',
      path: '/tasks/:id/payload',
      doc: { summary: 'Replace the payload of a task nobody holds and that is not finished (audited with the payload before and after, and the reason).', params: idParams, body: payloadBody, responses: { 200: '`{task}`' } },
      async handler(c) {
        const taskId = parseParam(idParam, c, 'id');
        const { payload, reason: why } = await parseBody(payloadBody, c);
        return ok({ task: core.tasks.editPayload({ taskId, payload, reason: why, actor: c.actor }) });
      },
    },
    {
      method: 'POST',
      path: '/tasks/:id/reprioritise',
      doc: { summary: 'Change the priority of a task (higher is claimed first; audited with the reason).', params: idParams, body: reprioritiseBody, responses: { 200: '`{task}`' } },
      async handler(c) {
        const taskId = parseParam(idParam, c, 'id');
        const { priority, reason: why } = await parseBody(reprioritiseBody, c);
        return ok({ task: core.tasks.reprioritise({ taskId, priority, reason: why, actor: c.actor }) });
      },
    },
  ];
}
