/** The HTTP side of logs and usage (PROTOCOL §5): pages, filters, attempts, download, search, `/usage`, `usage` on objects. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startApiTestServer, type ApiTestServer } from '../tests/api-server.testkit';
import { testRequester } from '../tests/http-request.testkit';
import { onlineInstance, type TestCore } from '../../core/tests/test-core';

const OPERATOR = 'op-secret-for-logs';
// Response bodies are arbitrary JSON that the tests index into freely.
type Json = any;

let api: ApiTestServer;
let core: TestCore;

beforeEach(async () => {
  api = await startApiTestServer(OPERATOR);
  ({ core } = api);
});

afterEach(() => api.close());

const request = testRequester(() => api.port, OPERATOR);
const get = (path: string) => request('GET', `/api/v1${path}`);

/** A task claimed by a fresh instance, with `attempts` attempts of logged lines. */
async function loggedTask(attempts: Array<Array<{ text: string; stream?: 'stdout' | 'stderr' | 'agent'; kind?: 'tool_call'; data?: Record<string, unknown> }>>) {
  const { task } = core.tasks.create({ title: 't', role: 'dev' }, { actor: 'test' });
  for (const [i, lines] of attempts.entries()) {
    const inst = onlineInstance(core);
    const { lock } = core.locks.claim({ instanceId: inst, role: 'dev' });
    await core.logs.log(inst, { id: 1, type: 'log', taskId: task.id, lines });
    await core.logs.usage(inst, { id: 2, type: 'usage', taskId: task.id, inputTokens: 10, outputTokens: 5, costUsd: 0.25 });
    core.locks.report({ instanceId: inst, taskId: task.id, fence: lock!.fence, status: i === attempts.length - 1 ? 'done' : 'backlog' });
  }
  return task.id;
}

describe('logs over HTTP', () => {
  it('pages a task log with after, filters by attempt, stream and substring, and 404s an unknown task', async () => {
    const id = await loggedTask([
      [{ text: 'a1' }, { text: 'a2', stream: 'stderr' }, { text: 'a3' }],
      [{ text: 'b1 Needle' }, { text: 'b2', stream: 'stderr' }],
    ]);
    const p1 = await get(`/tasks/${id}/logs?limit=2`);
    expect(p1.status).toBe(200);
    expect(p1.body.items.map((l: Json) => [l.seq, l.attempt, l.text])).toEqual([
      [1, 1, 'a1'],
      [2, 1, 'a2'],
    ]);
    expect(Object.keys(p1.body.items[0]).sort()).toEqual(['at', 'attempt', 'level', 'seq', 'stream', 'text']);
    const p2 = await get(`/tasks/${id}/logs?after=${p1.body.next}`);
    expect(p2.body).toMatchObject({ items: [{ seq: 3 }, { seq: 4 }, { seq: 5 }], next: null });
    expect((await get(`/tasks/${id}/logs?attempt=2&stream=stderr`)).body.items.map((l: Json) => l.text)).toEqual(['b2']);
    expect((await get(`/tasks/${id}/logs?q=needle`)).body.items.map((l: Json) => l.seq)).toEqual([4]);
    expect((await get('/tasks/999/logs')).status).toBe(404);
    expect((await get(`/tasks/${id}/logs?stream=video`)).body.error).toMatchObject({ code: 'bad_request' });
    expect((await get(`/tasks/${id}/logs?limit=0`)).status).toBe(400);

    const attempts = await get(`/tasks/${id}/logs/attempts`);
    expect(attempts.body.items.map((a: Json) => [a.attempt, a.lines, a.firstSeq, a.lastSeq, a.usage.costUsd])).toEqual([
      [1, 3, 1, 3, 0.25],
      [2, 2, 4, 5, 0.25],
    ]);
  });

  it('returns each line\'s conversation kind and data (PROTOCOL §16)', async () => {
    const id = await loggedTask([[{ text: 'plain' }, { text: 'tool Bash: ls', kind: 'tool_call', data: { name: 'Bash', input: { command: 'ls' } } }]]);
    const items = (await get(`/tasks/${id}/logs`)).body.items;
    expect(items[0].kind).toBeUndefined();
    expect(items[1]).toMatchObject({ text: 'tool Bash: ls', kind: 'tool_call', data: { name: 'Bash', input: { command: 'ls' } } });
  });

  it('downloads a whole attempt as a text file', async () => {
    const id = await loggedTask([[{ text: '\x1b[32mok\x1b[0m' }, { text: 'bad', stream: 'stderr' }], [{ text: 'other attempt' }]]);
    const d = await get(`/tasks/${id}/logs/download?attempt=1`);
    expect(d.status).toBe(200);
    expect(d.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(d.headers['content-disposition']).toBe(`attachment; filename="gaffer-task-${id}-attempt-1.log"`);
    expect(d.text.split('\n').filter(Boolean).map((l) => l.replace(/^\S+ /, ''))).toEqual(['stdout \x1b[32mok\x1b[0m', 'stderr bad']);
    expect((await get(`/tasks/${id}/logs/download`)).status).toBe(400);
  });

  it('carries usage on task objects and sums it by role and day', async () => {
    const id = await loggedTask([[{ text: 'x' }], [{ text: 'y' }]]);
    expect((await get(`/tasks/${id}`)).body.task.usage).toEqual({ inputTokens: 20, outputTokens: 10, costUsd: 0.5 });
    expect((await get('/tasks')).body.items[0].usage).toEqual({ inputTokens: 20, outputTokens: 10, costUsd: 0.5 });
    expect((await get('/usage?by=role')).body.items).toEqual([{ key: 'dev', inputTokens: 20, outputTokens: 10, costUsd: 0.5 }]);
    const byDay = (await get('/usage?by=day')).body.items;
    expect(byDay).toHaveLength(1);
    expect(byDay[0]).toMatchObject({ key: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/), costUsd: 0.5 });
    expect((await get('/usage?by=job')).body.items).toEqual([]);
    expect((await get('/usage?by=week')).status).toBe(400);
  });

  it('finds words across logs', async () => {
    await loggedTask([[{ text: 'the build failed on step 3' }]]);
    await loggedTask([[{ text: 'all fine' }]]);
    const r = await get('/logs/search?q=failed');
    expect(r.body.items.map((h: Json) => [h.subject, h.text])).toEqual([[expect.stringMatching(/^task:\d+$/), 'the build failed on step 3']]);
    expect((await get('/logs/search')).status).toBe(400);
  });
});
