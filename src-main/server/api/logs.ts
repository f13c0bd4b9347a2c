/**
 * `/tasks/{id}/logs`, `/runs/{id}/logs`, `/logs/search`, `/usage` (PROTOCOL §5 plus additions):
 * pages of a task's or run's lines (`after` cursor, filters by attempt, stream and substring),
 * its attempts, a whole attempt as a text download, word search across logs, usage sums.
 */
import { z } from 'zod';
import { LOG_STREAMS, runSubject, taskSubject, USAGE_GROUPS, type LogSubject, type UsageTotals } from '../../common/logs';
import { GafferError } from '../../common/errors';
import type { Core } from '../../core/create-core';
import { opRoute, withDoc } from './define-route';
import { afterParam, emptyQuery, idParam, intParam, ok, parseParam, parseQuery, STREAMED, streamChunks, type ApiContext, type Route } from './router';

const pageQuery = z.strictObject({
  after: afterParam.optional(),
  limit: intParam(1, 5000).optional(),
  attempt: intParam(1).optional(),
  stream: z.enum(LOG_STREAMS).optional(),
  /** Case-insensitive substring. */
  q: z.string().min(1).max(500).optional(),
});
const downloadQuery = z.strictObject({ attempt: intParam(1) });
const diffQuery = z.strictObject({ attempt: intParam(1).optional() });
const instant = z.iso.datetime({ offset: true });
const searchQuery = z.strictObject({ q: z.string().min(1).max(500), limit: intParam(1, 500).optional() });
const usageQuery = z.strictObject({
  from: instant.optional(),
  to: instant.optional(),
  by: z.enum(USAGE_GROUPS).optional(),
  role: z.string().min(1).max(100).optional(),
  job: z.string().min(1).max(200).optional(),
});
const taskIdParams = { id: idParam };
const runIdParams = { id: z.string().min(1).max(100) };

type Kind = 'tasks' | 'runs';

/** The subject of `/tasks/:id…` or `/runs/:id…`, after checking the task or run exists (else 404). */
function subjectOf(core: Core, kind: Kind, c: ApiContext): LogSubject {
  if (kind === 'tasks') {
    const id = parseParam(taskIdParams.id, c, 'id');
    core.tasks.get(id);
    return taskSubject(id);
  }
  const id = parseParam(runIdParams.id, c, 'id');
  core.jobs.getRun(id);
  return runSubject(id);
}

/** A task or run object with its usage (all attempts) added, as PROTOCOL §5 says it carries. */
export function withUsage<T extends object>(core: Core, subject: LogSubject, o: T): T & { usage: UsageTotals } {
  return { ...o, usage: core.logs.usageOf(subject) };
}

export function logRoutes(core: Core): Route[] {
  const forKind = (kind: Kind): Route[] => {
    const params = kind === 'tasks' ? taskIdParams : runIdParams;
    return [
    {
      ...withDoc(opRoute('logs.page', `/${kind}/:id/logs`), { params, query: pageQuery }),
      async handler(c) {
        const subject = subjectOf(core, kind, c);
        const q = parseQuery(pageQuery, c);
        return ok(
          await core.logs.read({
            subject,
            limit: q.limit ?? 1000,
            ...(q.after !== undefined ? { after: q.after } : {}),
            ...(q.attempt !== undefined ? { attempt: q.attempt } : {}),
            ...(q.stream !== undefined ? { stream: q.stream } : {}),
            ...(q.q !== undefined ? { contains: q.q } : {}),
          }),
        );
      },
    },
    {
      ...withDoc(opRoute('logs.attempts', `/${kind}/:id/logs/attempts`), { params, query: emptyQuery }),
      async handler(c) {
        const subject = subjectOf(core, kind, c);
        parseQuery(emptyQuery, c);
        const usage = new Map(core.logs.usagePerAttempt(subject).map((u) => [u.attempt, u]));
        const items = (await core.logs.attempts(subject)).map((a) => {
          const u = usage.get(a.attempt);
          return { ...a, usage: { inputTokens: u?.inputTokens ?? 0, outputTokens: u?.outputTokens ?? 0, costUsd: u?.costUsd ?? 0 } };
        });
        return ok({ items, next: null });
      },
    },
    {
      ...withDoc(opRoute('logs.artifacts', `/${kind}/:id/artifacts`), { params, query: emptyQuery }),
      async handler(c) {
        const subject = subjectOf(core, kind, c);
        parseQuery(emptyQuery, c);
        return ok({ items: core.logs.artifactsOf(subject), next: null });
      },
    },
    {
      ...withDoc(opRoute('logs.diff', `/${kind}/:id/diff`), { params, query: diffQuery }),
      async handler(c): Promise<typeof STREAMED> {
        const subject = subjectOf(core, kind, c);
        const { attempt } = parseQuery(diffQuery, c);
        const d = core.logs.diffOf(subject, attempt);
        if (!d) throw new GafferError('not_found', `${kind === 'tasks' ? 'task' : 'run'} ${c.params.id} has no workspace diff${attempt !== undefined ? ` for attempt ${attempt}` : ''}`);
        c.res.writeHead(200, { 'content-type': 'text/x-diff; charset=utf-8', 'x-gaffer-attempt': String(d.attempt), 'cache-control': 'no-store' });
        c.res.end(d.diff);
        return STREAMED;
      },
    },
    {
      ...withDoc(opRoute('logs.download', `/${kind}/:id/logs/download`), { params, query: downloadQuery }),
      async handler(c): Promise<typeof STREAMED> {
        const subject = subjectOf(core, kind, c);
        const { attempt } = parseQuery(downloadQuery, c);
        const name = `gaffer-${subject.replace(':', '-')}-attempt-${attempt}.log`;
        c.res.writeHead(200, {
          'content-type': 'text/plain; charset=utf-8',
          'content-disposition': `attachment; filename="${name.replace(/[^\w.-]/g, '_')}"`,
          'cache-control': 'no-store',
        });
        await streamChunks(c.res, core.logs.text(subject, attempt));
        return STREAMED;
      },
    },
    ];
  };

  return [
    ...forKind('tasks'),
    ...forKind('runs'),
    {
      ...withDoc(opRoute('logs.search'), { query: searchQuery }),
      async handler(c) {
        const q = parseQuery(searchQuery, c);
        return ok({ items: await core.logs.search(q.q, q.limit ?? 100), next: null });
      },
    },
    {
      ...withDoc(opRoute('usage.summary'), { query: usageQuery }),
      handler(c) {
        const q = parseQuery(usageQuery, c);
        const now = core.clock.now();
        const to = q.to ? Date.parse(q.to) : now + 1;
        const from = q.from ? Date.parse(q.from) : to - 30 * 24 * 3600 * 1000;
        const filter = { ...(q.role ? { role: q.role } : {}), ...(q.job ? { job: q.job } : {}) };
        return ok({ items: core.logs.usageSummary(q.by ?? 'day', from, to, filter) });
      },
    },
  ];
}
