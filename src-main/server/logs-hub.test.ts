/**
 * `log` and `usage` frames (PROTOCOL §5) through the real agent socket and the log worker:
 * only the holder may send them, lines come back complete and in order across a reconnect and a
 * restart of Gaffer on the same data directory, and a resend stores nothing twice.
 */
import { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../common/clock';
import { tempDir } from '../core/tests/test-core';
import { startHarness, TestAgent, until, type Harness } from './tests/agent-socket.testkit';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function harness(opts: Parameters<typeof startHarness>[0] = {}): Promise<Harness> {
  const h = await startHarness({ ...opts, hub: { pingIntervalMs: 0 } });
  cleanups.push(async () => {
    await h.close();
    await h.core.logs.close();
  });
  return h;
}

async function agent(h: Harness, token = h.token('dev'), extra: Record<string, unknown> = {}): Promise<TestAgent> {
  const a = await TestAgent.hello(h.url, token, 'dev', 'a', extra);
  cleanups.push(() => a.close());
  return a;
}

const numbered = (from: number, n: number, prefix = 'line') => Array.from({ length: n }, (_, i) => ({ text: `${prefix} ${from + i}`, seq: from + i }));

async function claimOne(h: Harness, a: TestAgent, title = 'work') {
  h.core.tasks.create({ title, role: 'dev' }, { actor: 'test' });
  const r = await a.request('claim');
  expect(r.ok).toBe(true);
  return r.result as { task: { id: number; attempt: number }; lock: { fence: number } };
}

describe('log and usage frames', () => {
  it('the holder logs and reports usage; others get not_holder and nothing is stored', async () => {
    const h = await harness();
    const holder = await agent(h);
    const other = await agent(h);
    const { task, lock } = await claimOne(h, holder);

    const ok = await holder.request('log', { taskId: task.id, fence: lock.fence, lines: [{ text: 'hello', stream: 'stdout' }, { text: 'oops', stream: 'stderr', level: 'error' }] });
    expect(ok).toMatchObject({ ok: true, result: { accepted: 2, stored: 2, duplicates: 0, truncated: false } });
    const u1 = await holder.request('usage', { taskId: task.id, inputTokens: 100, outputTokens: 20, costUsd: 0.0015, model: 'm' });
    const u2 = await holder.request('usage', { taskId: task.id, inputTokens: 50, costUsd: 0.0005 });
    expect(u1.result).toEqual({ usage: { inputTokens: 100, outputTokens: 20, costUsd: 0.0015 } });
    expect(u2.result).toEqual({ usage: { inputTokens: 150, outputTokens: 20, costUsd: 0.002 } });

    for (const [type, extra] of [
      ['log', { lines: [{ text: 'intruder' }] }],
      ['usage', { inputTokens: 1 }],
    ] as const) {
      const r = await other.request(type, { taskId: task.id, ...extra });
      expect(r).toMatchObject({ ok: false, error: { code: 'not_holder', status: 409 } });
      const stale = await holder.request(type, { taskId: task.id, fence: lock.fence + 1, ...extra });
      expect(stale.error?.code).toBe('not_holder');
    }
    // A run nobody acknowledged, a task that does not exist, both ids, neither.
    expect((await holder.request('log', { runId: 'run_nope', lines: [{ text: 'x' }] })).error?.code).toBe('not_found');
    expect((await holder.request('log', { taskId: 999, lines: [{ text: 'x' }] })).error?.code).toBe('not_found');
    expect((await holder.request('log', { taskId: task.id, runId: 'r', lines: [{ text: 'x' }] })).error).toMatchObject({ code: 'bad_request', message: expect.stringContaining('exactly one') });
    expect((await holder.request('log', { lines: [{ text: 'x' }] })).error?.code).toBe('bad_request');
    expect((await holder.request('log', { taskId: task.id, lines: [] })).error?.code).toBe('bad_request');
    const badLevel = await holder.request('log', { taskId: task.id, lines: [{ text: 'ok' }, { text: 'x', level: 'loud' }] });
    expect(badLevel.error).toMatchObject({ code: 'bad_request', message: expect.stringMatching(/lines.*1.*level/) });
    const badAt = await holder.request('log', { taskId: task.id, lines: [{ text: 'x', at: 'yesterday' }] });
    expect(badAt.error).toMatchObject({ code: 'bad_request', message: expect.stringMatching(/lines.*0.*at/) });
    expect((await holder.request('log', { taskId: task.id, lines: [{ text: 'x', seq: 0 }] })).error?.code).toBe('bad_request');
    expect((await holder.request('log', { taskId: task.id, lines: ['just a string'] })).error?.code).toBe('bad_request');
    expect((await holder.request('usage', { taskId: task.id, costUsd: -1 })).error?.code).toBe('bad_request');

    const page = await h.core.logs.read({ subject: `task:${task.id}`, limit: 100 });
    expect(page.items.map((l) => [l.seq, l.attempt, l.stream, l.level, l.text])).toEqual([
      [1, 1, 'stdout', 'info', 'hello'],
      [2, 1, 'stderr', 'error', 'oops'],
    ]);
    expect(h.core.logs.usageOf(`task:${task.id}`)).toEqual({ inputTokens: 150, outputTokens: 20, costUsd: 0.002 });

    // After the report the former holder may no longer log.
    await holder.request('report', { taskId: task.id, fence: lock.fence, status: 'done' });
    expect((await holder.request('log', { taskId: task.id, lines: [{ text: 'late' }] })).error?.code).toBe('not_holder');
  });

  it('a burst of log frames goes through the ingest queue a slice at a time, pausing the socket past its mark; every line is stored once, in order', async () => {
    // Each slice runs one frame (sliceMs 0); above 2 KiB waiting the socket is no longer read.
    const h = await harness({ socket: { ingest: { sliceMs: 0, highWaterBytes: 2048, lowWaterBytes: 0 } } });
    const holder = await agent(h);
    const { task, lock } = await claimOne(h, holder);
    const frames = Array.from({ length: 20 }, (_, f) => ['log', { taskId: task.id, fence: lock.fence, lines: numbered(f * 10 + 1, 10, 'x'.repeat(100)) }] as [string, Record<string, unknown>]);
    const replies = await holder.together([...frames, ['usage', { taskId: task.id, inputTokens: 5, costUsd: 0.01 }]]);
    expect(replies.every((r) => r.ok)).toBe(true);
    expect(replies.at(-1)!.result).toEqual({ usage: { inputTokens: 5, outputTokens: 0, costUsd: 0.01 } });
    expect(h.agentSocket.ingest.slices).toBeGreaterThanOrEqual(21);
    expect(h.agentSocket.ingest.pauses).toBeGreaterThanOrEqual(1);
    const page = await h.core.logs.read({ subject: `task:${task.id}`, limit: 500 });
    expect(page.items.map((l) => l.seq)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    // A claim is not an ingest frame: handled where it is read, after the burst as before.
    expect((await claimOne(h, holder, 'next')).task.id).toBeGreaterThan(task.id);
  });

  it('a frame with an unstorable line is refused whole and names the line', async () => {
    const h = await harness();
    const a = await agent(h);
    const { task } = await claimOne(h, a);
    const r = await a.text(`{"id":"x","type":"log","taskId":${task.id},"lines":[{"text":"fine"},{"text":"bad \\ud800"}]}`, 'x');
    expect(r.error).toMatchObject({ code: 'bad_request', message: expect.stringContaining('lines.1.text') });
    expect((await h.core.logs.read({ subject: `task:${task.id}`, limit: 10 })).items).toEqual([]);
  });

  it('frames read by the log worker (any key order) answer as parsed frames do, and cannot name two tasks', async () => {
    const h = await harness();
    const a = await agent(h);
    const other = await agent(h);
    const { task, lock } = await claimOne(h, a, 'mine');
    const { task: theirs } = await claimOne(h, other, 'theirs');
    const frame = (body: string, id: string) => a.text(body, id);

    // The Python package's order (lines first, id and type last) and a spaced frame (the parsed path).
    expect((await frame(`{"taskId":${task.id},"lines":[{"text":"one","seq":1}],"id":"p1","type":"log"}`, 'p1')).result).toMatchObject({ accepted: 1, stored: 1, lastSeq: 1 });
    expect((await frame(`{ "id": "p2", "type": "log", "taskId": ${task.id}, "lines": [ {"text": "two", "seq": 2} ] }`, 'p2')).result).toMatchObject({ stored: 1, lastSeq: 2 });
    // A fence after the lines is checked all the same.
    expect((await frame(`{"id":"p3","type":"log","taskId":${task.id},"lines":[{"text":"x"}],"fence":${lock.fence + 1}}`, 'p3')).error).toMatchObject({ code: 'not_holder', message: expect.stringContaining('stale') });
    expect((await frame(`{"id":"p4","type":"log","taskId":${task.id},"lines":[{"text":"three","seq":3}],"fence":${lock.fence}}`, 'p4')).result).toMatchObject({ stored: 1 });
    // The held task before the lines, another one after: refused whole, nothing stored anywhere.
    const smuggled = await frame(`{"id":"p5","type":"log","taskId":${task.id},"lines":[{"text":"smuggled"}],"taskId":${theirs.id}}`, 'p5');
    expect(smuggled.error).toMatchObject({ code: 'bad_request', message: expect.stringContaining('repeats a key') });
    // A header key repeated before the lines, or in a spaced frame (the parsed path, where
    // JSON.parse would keep the last value): refused whole too, naming the key.
    for (const [body, id] of [
      [`{"id":"p8","type":"log","taskId":${theirs.id},"taskId":${task.id},"lines":[{"text":"smuggled"}]}`, 'p8'],
      [`{ "id": "p9", "type": "log", "taskId": ${task.id}, "lines": [ {"text": "smuggled"} ], "taskId": ${theirs.id} }`, 'p9'],
      [`{"id":"p10","type":"log","taskId":${task.id},"task\\u0049d":${theirs.id},"lines":[{"text":"smuggled"}]}`, 'p10'],
    ] as const) {
      expect((await frame(body, id)).error, body).toMatchObject({ code: 'bad_request', message: expect.stringMatching(/repeats a key.*"taskId"/) });
    }
    // A non-holder's invalid frame is still a bad request first, its valid one not_holder.
    expect((await frame(`{"id":"p6","type":"log","taskId":${theirs.id},"lines":[]}`, 'p6')).error?.code).toBe('bad_request');
    expect((await frame(`{"id":"p7","type":"log","taskId":${theirs.id},"lines":[{"text":"x"}]}`, 'p7')).error?.code).toBe('not_holder');

    const texts = async (id: number) => (await h.core.logs.read({ subject: `task:${id}`, limit: 10 })).items.map((l) => l.text);
    expect(await texts(task.id)).toEqual(['one', 'two', 'three']);
    expect(await texts(theirs.id)).toEqual([]);
    // p1 and p4 were parsed by the worker (as bytes: never decoded on the main thread), p2 (spaced) on the main thread.
    expect(h.core.logs.stats).toMatchObject({ frames: 3, textFrames: 2, byteFrames: 2 });
  });

  it('a large log frame reaches the log worker as its bytes, never decoded or detached here; one whose header is not at its start is decoded first, as before', async () => {
    const h = await harness();
    const a = await agent(h);
    const { task, lock } = await claimOne(h, a);
    const posted = vi.spyOn(Worker.prototype, 'postMessage');
    cleanups.push(() => posted.mockRestore());
    const ingests = () => posted.mock.calls.filter(([m]) => (m as { op?: string }).op === 'ingest');
    const lines = (from: number) => Array.from({ length: 400 }, (_, i) => ({ text: `${'é'.repeat(100)} ${from + i}`, seq: from + i }));

    // The SDK's order: the header first, then ~100 KiB of lines.
    const big = JSON.stringify({ id: 'b1', type: 'log', taskId: task.id, fence: lock.fence, lines: lines(1) });
    expect((await a.text(big, 'b1')).result).toMatchObject({ stored: 400, lastSeq: 400 });
    const [sent, transfer] = ingests()[0] as [{ args: { batch: { texts: Array<{ text?: string; bytes?: Uint8Array }> } } }, unknown];
    expect(sent.args.batch.texts).toHaveLength(1);
    expect(sent.args.batch.texts[0]!.text).toBeUndefined();
    // Copied, not transferred: a detached buffer would slow every typed-array loop of this thread (service.ts invariant 6).
    expect(transfer).toBeUndefined();
    expect(sent.args.batch.texts[0]!.bytes!.byteLength).toBe(Buffer.byteLength(big));
    expect(h.core.logs.stats).toMatchObject({ textFrames: 1, byteFrames: 1 });

    // The lines before the header (another client's order), past the bytes the header is read from:
    // decoded on the main thread, read by the worker as text, stored all the same.
    const late = JSON.stringify({ lines: lines(401), taskId: task.id, id: 'b2', type: 'log' });
    expect((await a.text(late, 'b2')).result).toMatchObject({ stored: 400, lastSeq: 800 });
    expect(h.core.logs.stats).toMatchObject({ textFrames: 2, byteFrames: 1 });
    const page = await h.core.logs.read({ subject: `task:${task.id}`, limit: 1000 });
    expect(page.items.map((l) => l.text)).toEqual([...lines(1), ...lines(401)].map((l) => l.text));
  });

  it('resends after a reconnect and after a restart of Gaffer store every line once, in order', async () => {
    const dataDir = tempDir('gaffer-logs-restart-');
    const clock = new ManualClock();
    let h = await harness({ dataDir, clock });
    const token = h.token('dev');
    let a = await agent(h, token);
    const { task, lock } = await claimOne(h, a);
    const instanceId = a.instanceId;
    const send = (ag: TestAgent, from: number, n: number) => ag.request('log', { taskId: task.id, fence: lock.fence, lines: numbered(from, n) });

    expect((await send(a, 1, 100)).result).toMatchObject({ stored: 100, lastSeq: 100 });
    // Lines 101..150 are sent, then the connection drops before the agent sees the reply.
    void send(a, 101, 50);
    a.kill();
    await until(() => h.core.instances.get(instanceId).status === 'disconnected', 'disconnect');
    a = await agent(h, token, { instanceId });
    expect(a.instanceId).toBe(instanceId);
    // The SDK resends everything it holds unacknowledged (here 101..150) plus new lines.
    const r = await send(a, 101, 80);
    expect(r.error).toBeUndefined();
    expect(r.result.lastSeq).toBe(180);

    // Gaffer stops (after its worker closes the segment) and starts again on the same directory.
    a.kill();
    await h.close();
    await h.core.logs.close();
    h = await harness({ dataDir, clock });
    a = await agent(h, token, { instanceId });
    expect(a.instanceId).toBe(instanceId);
    const again = await send(a, 150, 51); // 150..180 again, then 181..200
    expect(again.result).toMatchObject({ duplicates: 31, stored: 20, lastSeq: 200 });

    const all = [];
    let after = 0;
    for (;;) {
      const page = await h.core.logs.read({ subject: `task:${task.id}`, after, limit: 64 });
      all.push(...page.items);
      if (page.next === null) break;
      after = page.next;
    }
    expect(all.map((l) => l.text)).toEqual(numbered(1, 200).map((l) => l.text));
    expect(all.map((l) => l.seq)).toEqual(numbered(1, 200).map((l) => l.seq));
  });
});
