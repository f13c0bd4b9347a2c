/**
 * Layer 2: every precondition kind returns ready / not_ready / error with a reason and evidence.
 * HTTP checks talk to a local server on 127.0.0.1:0; commands run without a shell.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { PreconditionInput } from '../../common/job-schema';
import { makeTestCore, tempDir, type TestCore } from '../tests/test-core';
import { startJobsHarness, succeed, until, type JobsHarness } from '../tests/jobs.testkit';
import { findIllFormedText } from '../../common/text';
import { evaluatePrecondition, tail, type CheckOutcome } from './preconditions';

let server: http.Server;
let base = '';
let core: TestCore | undefined;
let h: JobsHarness | undefined;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname === '/ready') res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ partition: { date: url.searchParams.get('d'), rows: 1200, done: true } }));
    else if (url.pathname === '/not-done') res.writeHead(200).end(JSON.stringify({ partition: { done: false } }));
    else if (url.pathname === '/down') res.writeHead(503).end('maintenance');
    else if (url.pathname === '/text') res.writeHead(200).end('hello');
    // JSON escapes spelling unpaired surrogates: valid JSON, but not text that can be stored.
    else if (url.pathname === '/lone') res.writeHead(200, { 'content-type': 'application/json' }).end('{"v":"k-\\ud800-x","o":{"k\\udc00":"\\udbff"}}');
    else if (url.pathname === '/slow') setTimeout(() => res.writeHead(200).end('{}'), 2000);
    else res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});
afterEach(() => {
  core?.close();
  core = undefined;
});

const ctx = { slot: '2027-01-01', slotAt: Date.parse('2027-01-01T01:00:00.000Z'), zone: 'Asia/Shanghai', role: 'reporter' };

async function check(p: PreconditionInput): Promise<CheckOutcome> {
  core ??= makeTestCore();
  return evaluatePrecondition(p, 0, ctx, { signals: core.signals, hub: core.hub });
}

describe('http', () => {
  it('ready when the status and JSON field match; the evidence shows the exact URL and the value', async () => {
    const r = await check({ kind: 'http', url: `${base}/ready?d={yesterday}`, jsonField: 'partition.done', equals: true });
    expect(r).toMatchObject({ verdict: 'ready', reason: 'field partition.done is true' });
    expect(r.evidence).toMatchObject({ url: `${base}/ready?d=2026-12-31`, status: 200, jsonField: 'partition.done', value: true, placeholders: { '{yesterday}': '2026-12-31' } });
  });
  it('not ready on a different value, a missing field, or another status', async () => {
    expect(await check({ kind: 'http', url: `${base}/not-done`, jsonField: 'partition.done', equals: true })).toMatchObject({ verdict: 'not_ready', reason: 'field partition.done is false, expected true' });
    expect(await check({ kind: 'http', url: `${base}/ready`, jsonField: 'partition.missing' })).toMatchObject({ verdict: 'not_ready' });
    const down = await check({ kind: 'http', url: `${base}/down` });
    expect(down).toMatchObject({ verdict: 'not_ready', reason: expect.stringMatching(/answered 503, expected 200/) });
    expect(down.evidence).toMatchObject({ status: 503, body: 'maintenance' });
  });
  it('an error (not "not ready") on timeout, refused connection, or a body that is not JSON', async () => {
    expect(await check({ kind: 'http', url: `${base}/slow`, timeoutS: 0.2 })).toMatchObject({ verdict: 'error', reason: expect.stringMatching(/timed out after 200 ms/) });
    expect(await check({ kind: 'http', url: 'http://127.0.0.1:1/x', timeoutS: 2 })).toMatchObject({ verdict: 'error' });
    expect(await check({ kind: 'http', url: `${base}/text`, jsonField: 'x' })).toMatchObject({ verdict: 'error', reason: expect.stringMatching(/did not answer JSON/) });
  });
});

describe('evidence from the outside world is storable text', () => {
  const node = process.execPath;
  it('an HTTP answer whose JSON spells unpaired surrogates: reason and evidence carry U+FFFD instead', async () => {
    const r = await check({ kind: 'http', url: `${base}/lone`, jsonField: 'v' });
    expect(r).toMatchObject({ verdict: 'ready', evidence: { value: 'k-\ufffd-x' } });
    const o = await check({ kind: 'http', url: `${base}/lone`, jsonField: 'o', equals: { x: 1 } });
    expect(o).toMatchObject({ verdict: 'not_ready', evidence: { value: { 'k\ufffd': '\ufffd' } } });
    for (const x of [r, o]) expect(findIllFormedText(x)).toBeUndefined();
  });
  it('a command output tail never starts with half an emoji', async () => {
    const out = `xy${'\ud83d\ude00'.repeat(300)}z`; // 603 code units: the last 500 begin on a low surrogate
    const r = await check({ kind: 'command', argv: [node, '-e', `process.stdout.write(${JSON.stringify(out)})`] });
    expect(r.verdict).toBe('ready');
    expect(r.evidence.stdout).toBe(`…${'\ud83d\ude00'.repeat(249)}z`);
    expect(findIllFormedText(r)).toBeUndefined();
    expect(tail('short')).toBe('short');
  });
});

describe('command', () => {
  const node = process.execPath;
  it('exit 0 is ready, another exit code is not ready, a missing program or a timeout is an error', async () => {
    expect(await check({ kind: 'command', argv: [node, '-e', 'process.exit(0)'] })).toMatchObject({ verdict: 'ready' });
    const three = await check({ kind: 'command', argv: [node, '-e', 'console.error("no rows"); process.exit(3)'] });
    expect(three).toMatchObject({ verdict: 'not_ready', reason: expect.stringMatching(/exited with 3/) });
    expect(three.evidence).toMatchObject({ exitCode: 3, stderr: expect.stringContaining('no rows') });
    expect(await check({ kind: 'command', argv: ['/definitely/not/a/program'] })).toMatchObject({ verdict: 'error', reason: expect.stringMatching(/cannot run/) });
    expect(await check({ kind: 'command', argv: [node, '-e', 'setTimeout(() => {}, 10000)'], timeoutS: 0.3 })).toMatchObject({ verdict: 'error', reason: expect.stringMatching(/did not finish within 300 ms/) });
  });
  it('no shell: a placeholder and shell syntax stay inside one argument', async () => {
    const marker = path.join(tempDir(), 'pwned');
    const r = await check({
      kind: 'command',
      argv: [node, '-e', 'process.exit(process.argv[1] === process.argv[2] ? 0 : 1)', `{yesterday}; touch ${marker}`, `2026-12-31; touch ${marker}`],
    });
    expect(r.verdict).toBe('ready');
    expect(fs.existsSync(marker)).toBe(false);
    expect(r.evidence).toMatchObject({ argv: expect.arrayContaining([`2026-12-31; touch ${marker}`]) });
  });
});

describe('file and signal', () => {
  it('file exists / modified after, with the resolved path and date range in the evidence', async () => {
    const dir = tempDir();
    const f = path.join(dir, 'orders-2026-12-31.csv');
    expect(await check({ kind: 'file', path: path.join(dir, 'orders-{yesterday}.csv') })).toMatchObject({ verdict: 'not_ready', reason: `${f} does not exist` });
    fs.writeFileSync(f, 'x');
    fs.utimesSync(f, new Date('2026-12-30T10:00:00Z'), new Date('2026-12-30T10:00:00Z'));
    expect(await check({ kind: 'file', path: path.join(dir, 'orders-{yesterday}.csv') })).toMatchObject({ verdict: 'ready' });
    const stale = await check({ kind: 'file', path: path.join(dir, 'orders-{yesterday}.csv'), check: 'modified_after', after: 'yesterday' });
    expect(stale.verdict).toBe('not_ready');
    // Local midnight of 2026-12-31 in Asia/Shanghai.
    expect(stale.evidence).toMatchObject({ path: f, modifiedAfter: { basis: 'yesterday', instant: '2026-12-30T16:00:00.000Z', zone: 'Asia/Shanghai' }, mtime: '2026-12-30T10:00:00.000Z' });
    fs.utimesSync(f, new Date('2026-12-31T10:00:00Z'), new Date('2026-12-31T10:00:00Z'));
    expect(await check({ kind: 'file', path: path.join(dir, 'orders-{yesterday}.csv'), check: 'modified_after', after: 'yesterday' })).toMatchObject({ verdict: 'ready' });
  });
  it('a signal is checked synchronously for the slot\'s business key (default {date})', () => {
    core = makeTestCore();
    core.signals.set({ name: 'data-ready', key: '2027-01-01', actor: 'etl' });
    const r = evaluatePrecondition({ kind: 'signal', name: 'data-ready' }, 0, ctx, { signals: core.signals, hub: core.hub });
    expect(r).toMatchObject({ verdict: 'ready', evidence: { key: '2027-01-01', setBy: 'etl' } });
  });
});

describe('through the runner', () => {
  it('agent precheck: the hub asks one instance of the role; not ready, then ready, with the agent\'s evidence', async () => {
    h = await startJobsHarness();
    const agent = await h.agent('reporter', succeed());
    let ready = false;
    agent.precheckAnswer = (p) => ({ ready, reason: ready ? 'token valid' : 'bot token expired', evidence: { checked: p.check, slot: p.slot } });
    const jobId = h.createJob({
      name: 'r',
      window: { start: '09:00', end: '10:00', recheckEveryS: 300 },
      preconditions: [{ kind: 'agent', check: 'bot-token-valid' }],
    });
    await h.advanceTo('2026-11-30T01:00:00.000Z');
    await until(() => h!.core.jobs.getRun(h!.run(jobId, '2026-11-30')!.id).checks.some((c) => c.name === 'agent:bot-token-valid'), 'first check');
    const first = h.core.jobs.explain(jobId, '2026-11-30T01:00:00.000Z').layers.preconditions.items[0]!;
    expect(first).toMatchObject({ verdict: 'not_ready', reason: expect.stringMatching(/bot token expired/) });
    expect(first.evidence).toMatchObject({ role: 'reporter', check: 'bot-token-valid', slot: '2026-11-30', instanceId: agent.instanceId, agentEvidence: { checked: 'bot-token-valid' } });
    ready = true;
    await h.advanceTo('2026-11-30T01:05:00.000Z');
    await until(() => h!.run(jobId, '2026-11-30')?.status === 'success', 'ran');
    expect(agent.prechecks.map((p) => p.slot)).toEqual(['2026-11-30', '2026-11-30']);
  });

  it('http precondition (asynchronous) gates the dispatch; an error is recorded as error, not as not ready', async () => {
    h = await startJobsHarness();
    const agent = await h.agent('reporter', succeed());
    const jobId = h.createJob({
      name: 'r',
      window: { start: '09:00', end: '10:00', recheckEveryS: 300 },
      preconditions: [{ kind: 'http', url: 'http://127.0.0.1:1/unreachable', timeoutS: 2, label: 'warehouse' }],
    });
    await h.advanceTo('2026-11-30T01:00:00.000Z');
    await until(() => h!.core.jobs.getRun(h!.run(jobId, '2026-11-30')!.id).checks.some((c) => c.name === 'warehouse'), 'checked');
    expect(h.core.jobs.getRun(h.run(jobId, '2026-11-30')!.id).checks.find((c) => c.name === 'warehouse')).toMatchObject({ verdict: 'error' });
    h.core.jobs.update(jobId, { preconditions: [{ kind: 'http', url: `${base}/ready`, jsonField: 'partition.done', label: 'warehouse' }] }, { actor: 't' });
    await h.advanceTo('2026-11-30T01:05:00.000Z');
    await until(() => h!.run(jobId, '2026-11-30')?.status === 'success', 'ran');
    expect(agent.triggers).toHaveLength(1);
    expect(agent.triggers[0]!.version).toBe(2);
  });
});
