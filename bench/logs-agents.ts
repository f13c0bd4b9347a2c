/**
 * Agents for the logs benchmark, run in a CHILD process (forked by bench/logs.ts) so their CPU
 * does not share the server's event loop. Driven over IPC:
 *
 *   {cmd:'flood', url, token, agents, lineChars}  → {started: n}, then floods until
 *   {cmd:'pause'} / {cmd:'resume'}                → {paused} / {resumed}  (the handlers stop / go on logging)
 *   {cmd:'stop'}                                  → {lines, seconds}  (lines acknowledged by the server)
 *   {cmd:'latency', url, token, durationMs}       → {cycles, p50Ms, p99Ms, times}  (claim → report, one at a time;
 *                                                   `role` (default bench), `paceMs`: start a cycle at most every paceMs,
 *                                                   to stay under the hub's per-session request rate against a real server)
 *
 * Flooders use the SDK (its log outbox: batching, one frame in flight, acknowledgements), each
 * inside a claimed task, awaiting `ctx.log` as a well-behaved handler would.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import WebSocket from 'ws';
import { connect, type Agent } from '../src-main/sdk';
import { runQueueMs } from './proc';

// Wire JSON is whatever the peer sent: one deliberate escape hatch for reading it in benchmarks.
type Json = any;

/** `usageEvery`: also report usage (tokens and a model, priced by Gaffer) every N lines, as a streaming CLI adapter does per message (`ctx.usage`, not awaited). */
type Msg = { cmd: 'flood' | 'pause' | 'resume' | 'stop' | 'latency' | 'exit'; url: string; token: string; agents?: number; lineChars?: number; durationMs?: number; usageEvery?: number; role?: string; paceMs?: number; trace?: boolean };

const reply = (m: unknown) => process.send!(m);
let flood: { agents: Agent[]; stop: AbortController; acked: () => number; usage: () => number; started: number; done: Promise<unknown> } | undefined;
/** While set, the flooding handlers wait on it instead of logging. */
let paused: { promise: Promise<void>; release: () => void } | undefined;

function pause(): void {
  let release = () => {};
  const promise = new Promise<void>((r) => (release = r));
  paused ??= { promise, release };
}

function resume(): void {
  paused?.release();
  paused = undefined;
}

async function startFlood(m: Msg): Promise<void> {
  const stop = new AbortController();
  const agents = await Promise.all(Array.from({ length: m.agents ?? 4 }, (_, i) => connect({ url: m.url, token: m.token, role: 'flood', name: `flood-${i}` })));
  let acked = 0;
  let usageFrames = 0;
  let usageRefused = 0;
  const pad = 'x'.repeat(Math.max(0, (m.lineChars ?? 80) - 24));
  let started = 0;
  const done = Promise.all(
    agents.map((a, i) =>
      a.work(
        async (ctx) => {
          started++;
          let n = 0;
          while (!stop.signal.aborted) {
            if (paused) await paused.promise;
            else {
              await ctx.log(`agent ${i} line ${++n} ${pad}`);
              if (m.usageEvery && n % m.usageEvery === 0) {
                // Not awaited, as a streaming CLI adapter reports usage per message while it goes on
                // (the command agent's UsageReporter); the SDK sends it all before the report.
                usageFrames++;
                ctx.usage({ model: 'claude-sonnet-4-5', inputTokens: 1200, cacheReadTokens: 800, outputTokens: 80, estimated: true }).catch((e: unknown) => {
                  usageRefused++;
                  if (usageRefused === 1) console.error('usage refused:', e);
                });
              }
            }
          }
          acked += n;
        },
        { maxTasks: 1, idleDelayMs: 50 },
      ),
    ),
  );
  while (started < agents.length) await new Promise((r) => setTimeout(r, 5));
  flood = { agents, stop, acked: () => acked, usage: () => usageFrames, started: Date.now(), done };
  reply({ started: agents.length });
}

async function stopFlood(): Promise<void> {
  const f = flood!;
  f.stop.abort();
  resume();
  await f.done; // each handler returns, its outbox drains, its task is reported
  const seconds = (Date.now() - f.started) / 1000;
  await Promise.all(f.agents.map((a) => a.close({ timeoutMs: 1000 })));
  const cpu = process.cpuUsage();
  reply({ lines: f.acked(), usageFrames: f.usage(), seconds, cpuS: (cpu.user + cpu.system) / 1e6 });
}

async function latency(m: Msg): Promise<void> {
  const ws = new WebSocket(m.url, { headers: { authorization: `Bearer ${m.token}` }, perMessageDeflate: false });
  await new Promise((res, rej) => {
    ws.once('open', res);
    ws.once('error', rej);
  });
  let seq = 0;
  const waiting = new Map<number, (r: Json) => void>();
  // `trace` (bench/flood-split.ts): each request's id, send and reply time, epoch ms (sub-ms), to
  // line up with the server's own read and send times of the same request.
  const wall = () => performance.timeOrigin + performance.now();
  const trace: Array<[number, number, number]> = [];
  const sentAt = new Map<number, number>();
  ws.on('message', (d) => {
    const r = JSON.parse(d.toString());
    if (m.trace) trace.push([r.id, sentAt.get(r.id) ?? 0, wall()]);
    waiting.get(r.id)?.(r);
    waiting.delete(r.id);
  });
  const req = (f: Record<string, unknown>): Promise<Json> =>
    new Promise((res) => {
      const id = ++seq;
      waiting.set(id, res);
      if (m.trace) sentAt.set(id, wall());
      ws.send(JSON.stringify({ id, ...f }));
    });
  await req({ type: 'hello', role: m.role ?? 'bench', name: 'latency', takesRuns: false });
  const times: number[] = [];
  // This process's own share of the wait (bench/logs-gap.ts): how long its main thread stood ready
  // on a run queue while another process had the CPU, and its event loop's delay.
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const runDelay0 = runQueueMs();
  const end = Date.now() + (m.durationMs ?? 3000);
  while (Date.now() < end) {
    const t0 = performance.now();
    const c = await req({ type: 'claim' });
    if (!c.ok || !c.result.task) throw new Error(`claim failed: ${JSON.stringify(c)}`);
    const r = await req({ type: 'report', taskId: c.result.task.id, fence: c.result.lock.fence, status: 'done' });
    if (!r.ok) throw new Error(`report failed: ${JSON.stringify(r)}`);
    times.push(performance.now() - t0);
    const wait = t0 + (m.paceMs ?? 0) - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }
  ws.close();
  times.sort((a, b) => a - b);
  const pct = (p: number) => times[Math.min(times.length - 1, Math.ceil((p / 100) * times.length) - 1)]!;
  delay.disable();
  reply({ cycles: times.length, p50Ms: pct(50), p99Ms: pct(99), times, runQueueMs: runQueueMs() - runDelay0, loopP99Ms: delay.percentile(99) / 1e6, ...(m.trace ? { trace } : {}) });
}

// Forked in a session of its own (bench/util.ts spawnChild): gone with the bench that drives it.
process.on('disconnect', () => process.exit(0));

process.on('message', (m: Msg) => {
  const toggle = (paused: boolean) => Promise.resolve(paused ? pause() : resume()).then(() => reply(paused ? { paused } : { resumed: true }));
  const run =
    m.cmd === 'flood'
      ? startFlood(m)
      : m.cmd === 'pause' || m.cmd === 'resume'
        ? toggle(m.cmd === 'pause')
        : m.cmd === 'stop'
          ? stopFlood()
          : m.cmd === 'latency'
            ? latency(m)
            : Promise.resolve(process.exit(0));
  run.catch((e: unknown) => reply({ error: e instanceof Error ? e.stack : String(e) }));
});
reply({ up: true });
