/**
 * `/tasks/{id}/logs`, `/runs/{id}/logs`, `/logs/search`, `/usage` (PROTOCOL §5 plus additions):
 * pages of a task's or run's lines (`after` cursor, filters by attempt, stream and substring),
 * its attempts, a whole attempt as a text download, word search across logs, usage sums.
 */
import { z } from 'zod';
import { LOG_STREAMS, runSubject, taskSubject, USAGE_GROUPS, type LogSubject, type UsageTotals } from '../../common/logs';
import type { Core } from '../../core/create-core';
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
    const one = kind === 'tasks' ? 'task' : 'run';
    const params = kind === 'tasks' ? taskIdParams : runIdParams;
    return [
    {
      method: 'GET',
      path: `/${kind}/:id/logs`,
      doc: {
        summary: `A page of a ${one}'s log lines, oldest first (PROTOCOL §5); filter by attempt, stream and text.`,
        params,
        query: pageQuery,
        responses: { 200: '`{items: [{seq, at, attempt, stream, level, text, cutFrom?, marker?, kind?, data?}], next}`' },
      },
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
      method: 'GET',
      path: `/${kind}/:id/logs/attempts`,
      doc: { summary: `The attempts of a ${one}'s log: line ranges, cap, usage.`, params, query: emptyQuery, responses: { 200: '`{items: [attempt], next: null}`' } },
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
      method: 'GET',
      path: `/${kind}/:id/logs/download`,
      doc: {
        summary: `A whole attempt of a ${one}'s log as a text file (streamed).`,
        params,
        query: downloadQuery,
        responses: { 200: 'the attempt as text, one `<at> <stream> <text>` line per log line' },
        responseMediaTypes: ['text/plain'],
      },
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
      method: 'GET',
      path: '/logs/search',
      doc: { summary: 'Words across every log, newest first (the word index lags new lines by about a second).', query: searchQuery, responses: { 200: '`{items: [{subject, seq, …}], next: null}`' } },
      async handler(c) {
        const q = parseQuery(searchQuery, c);
        return ok({ items: await core.logs.search(q.q, q.limit ?? 100), next: null });
      },
    },
    {
      method: 'GET',
      path: '/usage',
      doc: { summary: 'Tokens and cost summed by role, job or local day (default: the last 30 days, by day).', query: usageQuery, responses: { 200: '`{items: [{key, inputTokens, outputTokens, costUsd}]}`' } },
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
