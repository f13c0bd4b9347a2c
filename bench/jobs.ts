/**
 * Jobs benchmark (issue 4). Prints:
 *  - trigger latency: due instant → `job_trigger` received by a real agent process over the socket
 *    (real clock, 127.0.0.1), p50/p99/max, with 1 000 jobs scheduled. Shapes:
 *      spread: 1 000 interval jobs with periods 10–49 s (instants coincide at common multiples);
 *      burst:  1 000 jobs due at the very same instant, every 10 s (worst case);
 *      runner, runner-burst: the spread and burst shapes with the hub stubbed (the scheduler's own
 *      share of the latency);
 *    for every shape the server process's CPU per 1 000 triggers (a steadier figure than the wall
 *    latency on a loaded machine);
 *    for the burst shapes also the last trigger of each burst (its median and worst over the bursts);
 *    with GAFFER_BENCH_JOBS_TRACE=1, where each burst's last trigger spent its time (see `traceBursts`);
 *  - the route of one trigger (bench/trigger-route.ts): calls and files timer → ws.send, transactions;
 *  - slot computation: a year of slots of a daily job with a business calendar (and, for scale,
 *    a year of a 5-minute job), median of runs.
 * Run: npx tsx bench/jobs.ts   (GAFFER_BENCH_JOBS_SECONDS=30 sets the measuring time per shape)
 */
import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createCore, type Core } from '../src-main/core/create-core';
import { JobRunner } from '../src-main/core/jobs/engine/runner';
import { expectedSlots } from '../src-main/core/jobs/schedule';
import { attachAgentSocket } from '../src-main/server/agent-socket';
import { measureTriggerRoute, printTriggerRoute } from './trigger-route';
import { benchDir, machineInfo, median, percentile, printTable } from './util';

const SECONDS = Number(process.env.GAFFER_BENCH_JOBS_SECONDS ?? 30);
const JOBS = Number(process.env.GAFFER_BENCH_JOBS ?? 1000);
const AGENTS = Number(process.env.GAFFER_BENCH_JOBS_AGENTS ?? 2);

/**
 * An agent in its own process (as in real use): it acknowledges and completes every trigger and
 * records, on its own clock, how late each `job_trigger` arrived after its slot was due.
 */
const AGENT_SOURCE = `
const WebSocket = require(process.env.GAFFER_WS_PATH);
const [url, token, name] = process.argv.slice(2);
const ws = new WebSocket(url, { headers: { authorization: 'Bearer ' + token }, perMessageDeflate: false });
let seq = 0; let lat = [];
const send = (f) => ws.send(JSON.stringify(Object.assign({ id: ++seq }, f)));
ws.on('open', () => send({ type: 'hello', role: 'bench', name }));
ws.on('message', (data) => {
  const m = JSON.parse(data.toString());
  if (m.id === 1 && m.ok) process.send({ ready: true });
  if (m.type !== 'job_trigger' || 'ok' in m) return;
  lat.push([Date.now() - Date.parse(m.slotAt), m.slotAt]);
  send({ type: 'run_started', runId: m.runId });
  send({ type: 'run_result', runId: m.runId, outcome: 'success' });
});
setInterval(() => send({ type: 'heartbeat' }), 10000).unref();
process.on('message', (m) => { if (m === 'report') { process.send({ lat }); lat = []; } if (m === 'exit') process.exit(0); });
`;

interface Agent {
  child: ChildProcess;
  /** [ms late, slotAt] of each job_trigger since the last report. */
  report(): Promise<Array<[number, string]>>;
}

export async function agent(url: string, token: string, name: string): Promise<Agent> {
  const file = path.join(benchDir('agent'), 'agent.cjs');
  fs.writeFileSync(file, AGENT_SOURCE);
  const require = createRequire(import.meta.url);
  const child = fork(file, [url, token, name], { env: { ...process.env, GAFFER_WS_PATH: require.resolve('ws') }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  await new Promise<void>((resolve, reject) => {
    child.once('error', reject);
    child.on('message', (m: { ready?: boolean }) => m.ready && resolve());
  });
  return {
    child,
    report: () =>
      new Promise((resolve) => {
        const on = (m: { lat?: Array<[number, string]> }) => {
          if (!m.lat) return;
          child.off('message', on);
          resolve(m.lat);
        };
        child.on('message', on);
        child.send('report');
      }),
  };
}

type Shape = 'spread' | 'burst' | 'runner' | 'runner-burst';

interface LatencyFigures {
  p50: number;
  p99: number;
  max: number;
  n: number;
  perS: number;
  /** The latest trigger of each burst (burst shapes): its median and worst, ms after the due instant. */
  lastOfBurstMedian?: number;
  lastOfBurstMax?: number;
  /** Server process CPU (user + system) per 1 000 triggers, ms. */
  cpuMsPer1000?: number;
}

function figuresOf(latencies: number[], seconds: number, slots: string[] = []): LatencyFigures {
  const sorted = [...latencies].sort((a, b) => a - b);
  const out: LatencyFigures = { p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted[sorted.length - 1] ?? NaN, n: sorted.length, perS: sorted.length / seconds };
  if (slots.length === latencies.length && slots.length > 0) {
    const last = new Map<string, number>();
    slots.forEach((slot, i) => last.set(slot, Math.max(last.get(slot) ?? -Infinity, latencies[i]!)));
    const lasts = [...last.values()];
    out.lastOfBurstMedian = median(lasts);
    out.lastOfBurstMax = Math.max(...lasts);
  }
  return out;
}

/**
 * `runner` / `runner-burst`: the spread (or burst) shape with the hub replaced by a stub that
 * records when the engine hands each trigger over and acknowledges and completes it at once (as a
 * fast agent would) — the scheduler's own share of the latency and its CPU, without sockets and
 * agent processes. The stub speaks both the engine's port (pick/send) and the hub's older
 * `pushJobTrigger`, so the same file measures a base without the port.
 */
async function runnerOnly(burst: boolean): Promise<LatencyFigures> {
  const core: Core = createCore({ dataDir: benchDir(burst ? 'jobs-runner-burst' : 'jobs-runner') });
  const latencies: number[] = [];
  const slots: string[] = [];
  type Sink = { runStarted(i: string, r: object): object; runResult(i: string, r: object): object };
  type Trigger = { runId: string; slotAt: string };
  const hub = core.hub as unknown as {
    connectedInstances: () => string[];
    runTakers: () => string[];
    setRunSink: (s: Sink | undefined) => void;
    pick: (role: string, exclude: ReadonlySet<string>) => string | null;
    send: (id: string, push: { type: string } & Partial<Trigger>) => boolean;
    pushJobTrigger: (role: string, t: Trigger) => Promise<unknown>;
  };
  let sink: Sink | undefined;
  // Acknowledged and completed a moment later, all that arrived meanwhile in one transaction (as
  // the hub's group commit would): the runner's figures are not buried under per-message fsyncs.
  const toComplete: string[] = [];
  const complete = (runId: string) => {
    toComplete.push(runId);
    if (toComplete.length > 1) return;
    setImmediate(() =>
      // Closed meanwhile (the measuring time ended): nothing to complete.
      core.db.open &&
      core.store.write(() => {
        for (const id of toComplete.splice(0)) {
          try {
            sink?.runStarted('stub', { type: 'run_started', runId: id });
            sink?.runResult('stub', { type: 'run_result', runId: id, outcome: 'success' });
          } catch {
            // A run taken away meanwhile: nothing to complete.
          }
        }
      }),
    );
  };
  const received = (t: Trigger) => {
    latencies.push(Date.now() - Date.parse(t.slotAt));
    slots.push(t.slotAt);
  };
  hub.connectedInstances = () => ['stub'];
  hub.runTakers = () => ['stub'];
  hub.setRunSink = (s) => (sink = s);
  hub.pick = (_role, exclude) => (exclude.has('stub') ? null : 'stub');
  hub.send = (_id, push) => {
    if (push.type !== 'job_trigger') return true;
    received(push as Trigger);
    complete(push.runId!);
    return true;
  };
  hub.pushJobTrigger = (_role, t) => {
    received(t);
    complete(t.runId);
    return new Promise((resolve) => setImmediate(() => resolve({ status: 'acknowledged', runId: t.runId, instanceId: 'stub', offeredTo: ['stub'] })));
  };
  core.start();
  for (let i = 0; i < JOBS; i++) {
    const everyS = burst ? 10 : 10 + (i % 40);
    core.jobs.create({ name: `job-${i}`, role: 'bench', schedule: { everyS }, missedWindow: 'skip_and_alert', retry: { maxAttempts: 1 }, overlap: 'allow' }, { actor: 'bench' });
  }
  await new Promise((r) => setTimeout(r, 10_000));
  latencies.length = 0;
  slots.length = 0;
  const t0 = Date.now();
  const cpu0 = process.cpuUsage();
  await new Promise((r) => setTimeout(r, SECONDS * 1000));
  const cpu = process.cpuUsage(cpu0);
  const out = figuresOf(latencies, (Date.now() - t0) / 1000, burst ? slots : []);
  out.cpuMsPer1000 = latencies.length ? (cpu.user + cpu.system) / 1000 / (latencies.length / 1000) : NaN;
  core.close();
  return out;
}

/**
 * GAFFER_BENCH_JOBS_TRACE=1 (burst shape): the wall clock of each burst from its due instant to its
 * last trigger at an agent, split into the runner's slices (their CPU, their commits), the time
 * between slices (the event loop's other work: the acknowledgements and results read from the
 * sockets, their group commits) and the delivery after the last slice. Hooks the runner's slices and
 * the COMMIT statements of this process until the returned report runs; it prints one line per burst.
 */
function traceBursts(core: Core): (got: Array<[number, string]>) => void {
  const at = () => performance.timeOrigin + performance.now();
  const slices: Array<{ start: number; end: number; cpu: number; commitMs: number }> = [];
  const commits: Array<{ at: number; ms: number; inPass: boolean }> = [];
  let inPass = false;
  const runner = JobRunner.prototype as unknown as { pass: (budgetEnd: number) => boolean };
  const pass = runner.pass;
  runner.pass = function (this: unknown, budgetEnd: number) {
    const start = at();
    const c0 = process.cpuUsage();
    inPass = true;
    try {
      return pass.call(this, budgetEnd);
    } finally {
      inPass = false;
      const c = process.cpuUsage(c0);
      const end = at();
      const commitMs = commits.filter((x) => x.inPass && x.at >= start).reduce((n, x) => n + x.ms, 0);
      if (end - start > 1) slices.push({ start, end, cpu: (c.user + c.system) / 1000, commitMs });
    }
  };
  const stmt = Object.getPrototypeOf(core.db.prepare('SELECT 1')) as { run: (...a: unknown[]) => unknown };
  const run = stmt.run;
  stmt.run = function (this: { source: string }, ...a: unknown[]) {
    if (this.source !== 'COMMIT') return run.apply(this, a);
    const t = at();
    try {
      return run.apply(this, a);
    } finally {
      commits.push({ at: t, ms: at() - t, inPass });
    }
  };
  return (got) => {
    runner.pass = pass;
    stmt.run = run;
    const last = new Map<string, number>();
    for (const [ms, slotAt] of got) last.set(slotAt, Math.max(last.get(slotAt) ?? -Infinity, ms));
    for (const [slotAt, lastMs] of [...last].sort()) {
      const due = Date.parse(slotAt);
      const own = slices.filter((s) => s.start >= due && s.start < due + lastMs);
      if (own.length === 0) continue;
      const first = own[0]!;
      const end = own[own.length - 1]!.end;
      const sum = (xs: number[]) => xs.reduce((n, x) => n + x, 0);
      const between = end - first.start - sum(own.map((s) => s.end - s.start));
      const otherCommits = commits.filter((c) => !c.inPass && c.at >= first.start && c.at < end);
      const f = (x: number) => x.toFixed(0);
      console.log(
        `  burst ${slotAt}: last trigger at ${f(lastMs)} ms = timer ${f(first.start - due)} + ${own.length} slices ${f(sum(own.map((s) => s.end - s.start)))} ` +
          `(CPU ${f(sum(own.map((s) => s.cpu)))}, commits ${f(sum(own.map((s) => s.commitMs)))}) + between slices ${f(between)} ` +
          `(${otherCommits.length} other commits ${f(sum(otherCommits.map((c) => c.ms)))}) + delivery ${f(due + lastMs - end)}; slices ${own.map((s) => f(s.end - s.start)).join(' / ')} ms`,
      );
    }
  };
}

async function latencyRun(shape: 'spread' | 'burst'): Promise<LatencyFigures> {
  const core: Core = createCore({ dataDir: benchDir(`jobs-${shape}`), hub: { ratePerSecond: 100_000, rateBurst: 200_000 } });
  const server = http.createServer((_q, r) => r.writeHead(404).end());
  attachAgentSocket(server, core, {});
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/agent`;
  const trace = shape === 'burst' && process.env.GAFFER_BENCH_JOBS_TRACE ? traceBursts(core) : undefined;
  core.start();
  const agents: Agent[] = [];
  for (let i = 0; i < AGENTS; i++) agents.push(await agent(url, core.tokens.create({ name: `b${i}`, role: 'bench', actor: 'bench' }).token, `bench-${i}`));
  for (let i = 0; i < JOBS; i++) {
    const everyS = shape === 'burst' ? 10 : 10 + (i % 40);
    core.jobs.create({ name: `job-${i}`, role: 'bench', schedule: { everyS }, missedWindow: 'skip_and_alert', retry: { maxAttempts: 1 }, overlap: 'allow' }, { actor: 'bench' });
  }
  // Warm up one period, then measure.
  await new Promise((r) => setTimeout(r, 10_000));
  await Promise.all(agents.map((a) => a.report()));
  const t0 = Date.now();
  const cpu0 = process.cpuUsage();
  await new Promise((r) => setTimeout(r, SECONDS * 1000));
  const cpu = process.cpuUsage(cpu0);
  const got = (await Promise.all(agents.map((a) => a.report()))).flat();
  const seconds = (Date.now() - t0) / 1000;
  trace?.(got);
  for (const a of agents) a.child.send('exit');
  core.close();
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
  const out = figuresOf(got.map(([ms]) => ms), seconds, shape === 'burst' ? got.map(([, slotAt]) => slotAt) : []);
  // The server process only (the agents are processes of their own).
  out.cpuMsPer1000 = got.length ? (cpu.user + cpu.system) / 1000 / (got.length / 1000) : NaN;
  return out;
}

function slotComputation(): { dailyCalendarMs: number; dailySlots: number; fiveMinMs: number; fiveMinSlots: number } {
  // A mainland-China style calendar for a whole year: holidays and make-up workdays.
  const calendar = {
    id: 'cn',
    name: 'CN 2027',
    timezone: 'Asia/Shanghai',
    workdays: [1, 2, 3, 4, 5],
    holidays: ['2027-01-01', '2027-02-05', '2027-02-06', '2027-02-07', '2027-02-08', '2027-02-09', '2027-02-10', '2027-02-11', '2027-04-05', '2027-05-01', '2027-05-02', '2027-05-03', '2027-06-09', '2027-09-15', '2027-10-01', '2027-10-02', '2027-10-03', '2027-10-04', '2027-10-05', '2027-10-06', '2027-10-07'],
    extraWorkdays: ['2027-01-31', '2027-02-20', '2027-04-25', '2027-09-26', '2027-10-09'],
  };
  const from = Date.parse('2027-01-01T00:00:00+08:00');
  const to = Date.parse('2028-01-01T00:00:00+08:00');
  const daily = { schedule: { cron: '0 9 * * *', timezone: 'Asia/Shanghai' }, calendar, calendarPolicy: 'next_workday' as const };
  const fiveMin = { schedule: { everyS: 300, timezone: 'Europe/Berlin' } };
  const time = (fn: () => number) => {
    const runs: number[] = [];
    let count = 0;
    for (let i = 0; i < 15; i++) {
      // A fresh calendar object each run: no memo carried over from the previous run.
      const t0 = performance.now();
      count = fn();
      runs.push(performance.now() - t0);
    }
    return { ms: median(runs), count };
  };
  const d = time(() => expectedSlots({ ...daily, calendar: { ...calendar } }, from, to).length);
  const f = time(() => expectedSlots(fiveMin, from, to).length);
  return { dailyCalendarMs: d.ms, dailySlots: d.count, fiveMinMs: f.ms, fiveMinSlots: f.count };
}

export async function runJobsBench(): Promise<Record<string, number>> {
  console.log(`\nmachine: ${machineInfo()}`);
  const figures: Record<string, number> = {};
  const rows: Array<Record<string, string | number>> = [];
  const SHAPES: Shape[] = ['spread', 'burst', 'runner', 'runner-burst'];
  const shapes = (process.env.GAFFER_BENCH_JOBS_SHAPES ?? SHAPES.join(',')).split(',').filter((x): x is Shape => (SHAPES as string[]).includes(x));
  const label: Record<Shape, string> = {
    spread: `spread: ${JOBS} jobs, every 10–49 s`,
    burst: `burst: ${JOBS} jobs due at once, every 10 s`,
    runner: 'runner only (hub stubbed): spread',
    'runner-burst': 'runner only (hub stubbed): burst',
  };
  const burst = (shape: Shape) => shape === 'burst' || shape === 'runner-burst';
  for (const shape of shapes) {
    const r = shape === 'runner' || shape === 'runner-burst' ? await runnerOnly(shape === 'runner-burst') : await latencyRun(shape);
    figures[`triggerP50Ms.${shape}`] = r.p50;
    figures[`triggerP99Ms.${shape}`] = r.p99;
    figures[`triggerMaxMs.${shape}`] = r.max;
    figures[`triggersPerS.${shape}`] = r.perS;
    if (r.lastOfBurstMax !== undefined) {
      figures[`lastOfBurstMedianMs.${shape}`] = r.lastOfBurstMedian!;
      figures[`lastOfBurstMaxMs.${shape}`] = r.lastOfBurstMax;
    }
    if (r.cpuMsPer1000 !== undefined) figures[`cpuMsPer1000Triggers.${shape}`] = r.cpuMsPer1000;
    rows.push({
      shape: label[shape],
      triggers: r.n,
      'per s': Math.round(r.perS),
      'p50 ms': r.p50,
      'p99 ms': r.p99,
      'max ms': r.max,
      'last of burst ms (median / max)': r.lastOfBurstMax === undefined ? '' : `${r.lastOfBurstMedian} / ${r.lastOfBurstMax}`,
      'CPU ms per 1 000': r.cpuMsPer1000 === undefined ? '' : Math.round(r.cpuMsPer1000),
      target: burst(shape) ? 'last of burst < 250 ms' : 'p99 < 100 ms',
    });
  }
  printTable(`Trigger latency: due instant → job_trigger received by an agent process over ws (real clock, ${AGENTS} agent processes, ${SECONDS} s each)`, rows);
  const route = await measureTriggerRoute();
  printTriggerRoute(route);
  figures.routeCallsToSend = route.callsToSend;
  figures.routeCoreFilesToSend = route.coreFilesToSend;
  figures.routeTransactionsPerTrigger = route.transactions;
  const s = slotComputation();
  figures.yearDailyCalendarMs = s.dailyCalendarMs;
  figures.yearFiveMinuteMs = s.fiveMinMs;
  printTable('Slot computation (median of 15 runs)', [
    { what: 'a year of a daily job with a calendar (next_workday)', slots: s.dailySlots, ms: s.dailyCalendarMs, target: '< 50 ms' },
    { what: 'a year of a 5-minute job (Europe/Berlin, 2 DST changes)', slots: s.fiveMinSlots, ms: s.fiveMinMs, target: '(scale)' },
  ]);
  return figures;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await runJobsBench();
  process.exit(0);
}
