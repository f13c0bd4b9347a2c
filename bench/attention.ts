/**
 * Attention benchmark (issues 15 and 27). Prints:
 *  - needs_human → webhook: time from an agent sending a `needs_human` run_result (over the agent
 *    socket on 127.0.0.1, real clock) to the webhook POST about it arriving at a receiver on
 *    127.0.0.1, p50/p99/max over N held runs (target p99 < 1 s on loopback). One process, one clock
 *    (performance.now) for both ends.
 *  - run_failed → webhook: the same from the final failed attempt of a run (a retryable failure
 *    with no retry left) to the signed `run_failed` POST (target p99 < 1 s).
 *  - the inbox's sweep with 1 000 jobs: the dead-man's switch and the stuck-queue check, per sweep.
 * Run: npx tsx bench/attention.ts   (GAFFER_BENCH_ATTENTION_RUNS=300 sets N)
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { createCore } from '../src-main/core/create-core';
import { attachAgentSocket } from '../src-main/server/agent-socket';
import { benchDir, median, percentile, printTable } from './util';

const RUNS = Number(process.env.GAFFER_BENCH_ATTENTION_RUNS ?? 300);

type Ending = { kind: 'needs_human'; errorClass: 'needs_human'; error: string } | { kind: 'run_failed'; errorClass: 'retryable'; error: string };
const NEEDS_HUMAN: Ending = { kind: 'needs_human', errorClass: 'needs_human', error: 'approve the refund?' };
const FAILED_FOR_GOOD: Ending = { kind: 'run_failed', errorClass: 'retryable', error: 'npm test: 3 failing' };

/** From the agent's final run_result to the webhook POST about it, one run at a time. */
async function resultToWebhook(ending: Ending): Promise<{ n: number; p50: number; p99: number; max: number }> {
  const core = createCore({ dataDir: benchDir(`attention-${ending.kind}`) });
  core.start();
  const sentAt = new Map<string, number>();
  const lat: number[] = [];
  const receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const at = performance.now();
      // needs_human is about the run (run:<id>), run_failed about its job (job:<id>).
      const { subject } = JSON.parse(body) as { subject: string };
      const t0 = sentAt.get(subject.slice(subject.indexOf(':') + 1));
      if (t0 !== undefined) lat.push(at - t0);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  core.attention.notifications.put({ webhooks: [{ url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`, events: [ending.kind] }], actor: 'bench' });

  const server = http.createServer((_req, res) => res.writeHead(404).end());
  attachAgentSocket(server, core);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const token = core.tokens.create({ name: 'bench', role: 'bench', actor: 'bench' }).token;
  const ws = new WebSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}/agent`, { headers: { authorization: `Bearer ${token}` }, perMessageDeflate: false });
  let seq = 0;
  const send = (f: Record<string, unknown>) => ws.send(JSON.stringify({ id: ++seq, ...f }));
  await new Promise<void>((resolve) => {
    ws.on('open', () => send({ type: 'hello', role: 'bench', name: 'bench-1' }));
    ws.on('message', (data) => {
      const m = JSON.parse(data.toString()) as { type?: string; ok?: boolean; id?: number; runId?: string; jobId?: string };
      if (m.id === 1 && m.ok) resolve();
      if (m.type !== 'job_trigger' || 'ok' in m) return;
      send({ type: 'run_started', runId: m.runId });
      sentAt.set(ending.kind === 'needs_human' ? m.runId! : m.jobId!, performance.now());
      send({ type: 'run_result', runId: m.runId, outcome: 'failed', errorClass: ending.errorClass, error: ending.error });
    });
  });

  const jobs: string[] = [];
  for (let i = 0; i < RUNS; i++) jobs.push(core.jobs.create({ name: `refund-${i}`, role: 'bench', schedule: { everyS: 86_400 }, retry: { maxAttempts: 1 } }, { actor: 'bench' }).job.id);
  // One at a time, as holds arrive in practice (a burst would measure the queue, not the path).
  for (const id of jobs) {
    const before = lat.length;
    core.jobs.triggerNow(id, { reason: 'bench', actor: 'bench' });
    const t = Date.now();
    while (lat.length === before && Date.now() - t < 10_000) await new Promise((r) => setTimeout(r, 1));
  }
  ws.close();
  await core.attention.webhooks.settled();
  server.closeAllConnections();
  receiver.closeAllConnections();
  await Promise.all([new Promise((r) => server.close(r)), new Promise((r) => receiver.close(r))]);
  core.close();
  const sorted = [...lat].sort((a, b) => a - b);
  return { n: lat.length, p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted[sorted.length - 1] ?? NaN };
}

function sweepWithJobs(n: number): { ms: number } {
  const core = createCore({ dataDir: benchDir('attention-sweep') });
  for (let i = 0; i < n; i++) core.jobs.create({ name: `job-${i}`, role: `r${i % 20}`, schedule: { everyS: 300 + (i % 60) * 10 } }, { actor: 'bench' });
  for (let i = 0; i < 200; i++) core.tasks.create({ title: `t${i}`, role: `r${i % 20}` }, { actor: 'bench' });
  const times: number[] = [];
  for (let i = 0; i < 9; i++) {
    const t = performance.now();
    core.attention.checks.runAll();
    times.push(performance.now() - t);
  }
  core.close();
  return { ms: median(times) };
}

export async function runAttentionBench(): Promise<Record<string, number>> {
  const r = await resultToWebhook(NEEDS_HUMAN);
  printTable('needs_human result → webhook POST received (loopback, real clock, one hold at a time)', [
    { holds: r.n, 'p50 ms': r.p50, 'p99 ms': r.p99, 'max ms': r.max, target: 'p99 < 1000 ms' },
  ]);
  const f = await resultToWebhook(FAILED_FOR_GOOD);
  printTable('final failed attempt → signed run_failed webhook POST received (loopback, real clock, one run at a time)', [
    { runs: f.n, 'p50 ms': f.p50, 'p99 ms': f.p99, 'max ms': f.max, target: 'p99 < 1000 ms' },
  ]);
  const s = sweepWithJobs(1000);
  printTable('Inbox sweep (dead-man’s switch + stuck queues), median of 9', [{ jobs: 1000, roles: 20, 'ms per sweep': s.ms, target: '(one sweep a minute)' }]);
  return {
    needsHumanWebhookP50Ms: r.p50,
    needsHumanWebhookP99Ms: r.p99,
    needsHumanWebhookMaxMs: r.max,
    runFailedWebhookP50Ms: f.p50,
    runFailedWebhookP99Ms: f.p99,
    runFailedWebhookMaxMs: f.max,
    inboxSweep1000JobsMs: s.ms,
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await runAttentionBench();
  process.exit(0);
}
