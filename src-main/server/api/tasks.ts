/** `/tasks…`: create (idempotent), list, get, and the operator's edges. */
import { z } from 'zod';
import { GafferError } from '../../common/errors';
import { taskSubject } from '../../common/logs';
import { TASK_STATUSES } from '../../common/model';
import { createTaskInput, idempotencyKey, reason, roleName } from '../../common/schemas';
import { parseOrThrow } from '../../common/validate';
import type { Core } from '../../core/create-core';
import { withUsage } from './logs';
import { headerText } from '../guards';
import { afterParam, emptyQuery, idParam, intParam, limitParam, ok, parseBody, parseParam, parseQuery, type ApiContext, type Route } from './router';

const listQuery = z.strictObject({
  role: roleName.optional(),
  status: z.enum(TASK_STATUSES).optional(),
  limit: limitParam.optional(),
  order: z.enum(['asc', 'desc']).optional(),
  after: afterParam.optional(),
  before: intParam(1).optional(),
});

const reasonBody = z.strictObject({ reason });
const reprioritiseBody = z.strictObject({ priority: z.number().int().min(-1_000_000).max(1_000_000), reason });

type Edge = 'release' | 'cancel' | 'retry' | 'unblock';

const EDGE_SUMMARY: Record<Edge, string> = {
  release: 'Force-release a held task: its lock is removed and it goes back to the backlog (audited with the reason).',
  cancel: 'Cancel a task (audited with the reason).',
  retry: 'Put a failed or cancelled task back into the backlog (audited with the reason).',
  unblock: 'Put a blocked task back into the backlog (audited with the reason).',
};
const idParams = { id: idParam };

export function taskRoutes(core: Core): Route[] {
  const edge = (name: Edge): Route => ({
    method: 'POST',
    path: `/tasks/:id/${name}`,
    doc: { summary: EDGE_SUMMARY[name], params: idParams, body: reasonBody, responses: { 200: '`{task}`: the task after the change' } },
    async handler(c: ApiContext) {
      const taskId = parseParam(idParam, c, 'id');
      const { reason: why } = await parseBody(reasonBody, c);
      const input = { taskId, reason: why, actor: c.actor };
      const task =
        name === 'release'
          ? core.tasks.forceRelease(input)
          : name === 'cancel'
            ? core.tasks.cancel(input)
            : name === 'retry'
              ? core.tasks.retry(input)
              : core.tasks.unblock(input);
      return ok({ task });
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
      doc: { summary: 'List tasks (filter by role and status), paged by task id.', query: listQuery, responses: { 200: '`{items: [task], next}`' } },
      handler(c) {
        const page = core.tasks.list(parseQuery(listQuery, c));
        return ok({ ...page, items: page.items.map((t) => withUsage(core, taskSubject(t.id), t)) });
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
