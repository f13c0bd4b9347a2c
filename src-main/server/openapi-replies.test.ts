/**
 * The OpenAPI document against real replies: a server over a seeded core answers every GET route
 * that returns JSON, and each reply must validate against the schema its route documents (the
 * closed form: every field the reply holds is named, with its type). A GET route this test does
 * not know how to call fails it, so a new route brings its sample with it.
 */
import Ajv2020 from 'ajv/dist/2020';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_PREFIX, coreRoutes } from './api-v1';
import { startApiTestServer, type ApiTestServer } from './tests/api-server.testkit';
import type { Route } from './api/router';
import { testRequester } from './tests/http-request.testkit';
import { onlineInstance } from '../core/tests/test-core';
import { OPENAPI_PATH, responseSchema, routesWithoutResponseSchema } from './openapi';

const OPERATOR = 'op-secret-for-openapi-replies';
let api: ApiTestServer;
const request = testRequester(() => api.port, OPERATOR);

/** Seeded ids for the path parameters, and the queries a route needs. */
const sample: Record<string, string> = {};

beforeAll(async () => {
  api = await startApiTestServer(OPERATOR);
  const { core } = api;
  const actor = 'test';
  // "Done when…" with the evidence of a check run (PROTOCOL §13): `verify` and `verification` on the task.
  const verify = { checks: [{ kind: 'command' as const, name: 'tests', command: ['npm', 'test'] }], onFail: 'retry' as const, before: true };
  const task = core.tasks.create({ title: 'write the report', role: 'reporter', payload: { n: 1 }, verify }, { actor }).task;
  const evidence = (subject: string, before: boolean) =>
    core.store.write(() => {
      const id = core.verify.store.open(subject, 1, before, 0, 0);
      core.verify.store.finish(id, true, [{ name: 'tests', kind: 'command', passed: true, detail: 'exited with 0', durationMs: 12, outputTail: 'ok' }], 1);
    });
  evidence(`task:${task.id}`, true);
  core.tasks.create({ title: 'second', role: 'reporter', dependsOn: [task.id] }, { actor });
  core.signals.set({ name: 'data-ready', key: '2026-11-30', value: { rows: 3 }, actor });
  const token = core.tokens.create({ name: 'reporter-bot', role: 'reporter', actor });
  core.jobs.createCalendar({ id: 'cn-workdays', name: 'CN', timezone: 'Asia/Shanghai', workdays: [1, 2, 3, 4, 5], holidays: ['2026-10-01'], extraWorkdays: [] }, { actor });
  const { job } = core.jobs.create(
    { name: 'daily-report', role: 'reporter', schedule: { cron: '0 9 * * *', timezone: 'Asia/Shanghai' }, calendar: 'cn-workdays', preconditions: [{ kind: 'signal', name: 'data-ready' }], verify },
    { actor },
  );
  const trigger = core.jobs.triggerNow(job.id, { reason: 'sample run', actor });
  evidence(`run:${trigger.run.id}`, false);
  core.jobs.pauses.pauseRole('nightly', { reason: 'maintenance', actor });
  core.inbox.raise({ key: 'k1', kind: 'needs_human', subject: `run:${trigger.run.id}`, about: { runId: trigger.run.id, job: job.name, slot: trigger.run.slot }, entry: { error: 'which account?' } });
  const item = core.inbox.list({}).items[0]!;
  core.managed.create({ name: 'coder', role: 'reporter', command: ['claude', '-p', 'x'] }, { actor });
  // A claimed task whose attempt reported a workspace (PROTOCOL §15), so `/tasks/:id/artifacts` has a row to check.
  const built = core.tasks.create({ title: 'change the code', role: 'builder' }, { actor }).task;
  const inst = onlineInstance(core, 'builder');
  const { lock } = core.locks.claim({ instanceId: inst, role: 'builder' });
  const workspace = { branch: 'gaffer/k', base: 'abc', head: 'def', commits: 1, filesChanged: 1, insertions: 2, deletions: 0 };
  await core.logs.artifact(inst, { id: 1, type: 'artifact', taskId: built.id, kind: 'workspace', name: 'workspace', data: workspace, diff: '--- a/x\n+++ b/x\n', diffOffset: 0 });
  // …then it asked a question and the operator answered it, so the task carries an `answer`.
  core.locks.report({ instanceId: inst, taskId: built.id, fence: lock!.fence, status: 'blocked', note: 'which branch?' });
  core.tasks.unblock({ taskId: built.id, reason: 'use main', actor });
  Object.assign(sample, { built: String(built.id), task: String(task.id), run: trigger.run.id, job: job.id, item: String(item.id), token: token.id });
});
afterAll(() => api.close());

/** The URL to GET for a route (path parameters filled from the seeded world, required queries given). */
function urlFor(r: Route): string | undefined {
  const byPath: Record<string, string> = {
    '/tasks/:id': `/tasks/${sample.task}`,
    '/tasks/:id/logs': `/tasks/${sample.task}/logs`,
    '/tasks/:id/logs/attempts': `/tasks/${sample.task}/logs/attempts`,
    '/tasks/:id/artifacts': `/tasks/${sample.built}/artifacts`,
    '/runs/:id': `/runs/${sample.run}`,
    '/runs/:id/artifacts': `/runs/${sample.run}/artifacts`,
    '/runs/:id/logs': `/runs/${sample.run}/logs`,
    '/runs/:id/logs/attempts': `/runs/${sample.run}/logs/attempts`,
    '/jobs/:id': `/jobs/${sample.job}`,
    '/jobs/:id/explain': `/jobs/${sample.job}/explain`,
    '/jobs/:id/preview': `/jobs/${sample.job}/preview?count=3`,
    '/jobs/:id/ledger': `/jobs/${sample.job}/ledger`,
    '/jobs/:id/simulate': `/jobs/${sample.job}/simulate?from=2026-11-25T00:00:00Z&to=2026-11-30T08:00:00Z`,
    '/jobs/:id/forecast': `/jobs/${sample.job}/forecast`,
    '/usage/forecast': '/usage/forecast?by=job',
    '/calendars/:id': '/calendars/cn-workdays',
    '/signals/:name/:key': '/signals/data-ready/2026-11-30',
    '/inbox/:id': `/inbox/${sample.item}`,
    '/managed-agents/:id': '/managed-agents/coder',
    '/logs/search': '/logs/search?q=report',
  };
  if (byPath[r.path]) return byPath[r.path];
  return r.path.includes(':') ? undefined : r.path;
}

describe('every GET route answers what its schema documents', () => {
  it('every route of the table has a response schema (or is not JSON)', () => {
    expect(routesWithoutResponseSchema(coreRoutes(api.core))).toEqual([]);
  });

  it('each JSON reply of a seeded server validates against its route’s documented schema', async () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    const routes = coreRoutes(api.core).filter((r) => r.method === 'GET' && (r.doc?.responseMediaTypes ?? ['application/json']).includes('application/json'));
    const failures: string[] = [];
    let checked = 0;
    for (const r of routes) {
      const url = urlFor(r);
      if (!url) {
        failures.push(`${r.path}: no sample URL (add one to urlFor)`);
        continue;
      }
      const reply = await request('GET', API_PREFIX + url);
      if (reply.status !== 200) {
        failures.push(`${url}: HTTP ${reply.status} ${JSON.stringify(reply.body).slice(0, 200)}`);
        continue;
      }
      const validate = ajv.compile(responseSchema(r.doc!.response!, { closed: true }));
      if (!validate(reply.body)) failures.push(`${url}: ${ajv.errorsText(validate.errors, { separator: '; ' }).slice(0, 600)}`);
      checked++;
    }
    expect(failures).toEqual([]);
    expect(checked).toBeGreaterThan(35);
  });

  it('the published document carries the same schemas, open to added fields', async () => {
    const doc = (await request('GET', API_PREFIX + OPENAPI_PATH)).body;
    const task = doc.paths['/tasks/{id}'].get.responses['200'].content['application/json'].schema;
    expect(task.properties.task.required).toEqual(expect.arrayContaining(['id', 'title', 'status', 'lock', 'usage']));
    const replies = Object.values(doc.paths as Record<string, Record<string, { responses: Record<string, unknown> }>>).flatMap((item) => Object.values(item).map((o) => o.responses));
    expect(JSON.stringify(replies)).not.toContain('"additionalProperties":false');
    // A reply with an extra field still validates against the published (open) schema.
    const ajv = new Ajv2020({ strict: false });
    const reply = (await request('GET', `${API_PREFIX}/tasks/${sample.task}`)).body;
    expect(ajv.validate(task, { ...reply, task: { ...reply.task, addedLater: 1 } })).toBe(true);
    expect(ajv.validate(task, { task: { ...reply.task, status: 'sleeping' } })).toBe(false);
  });
});
