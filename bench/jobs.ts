/**
 * Jobs benchmark (issue 4). Prints:
 *  - trigger latency: due instant → `job_trigger` received by a real agent process over the socket
 *    (real clock, 127.0.0.1), p50/p99/max, with 1 000 jobs scheduled. Shapes:
 *      spread: 1 000 interval jobs with periods 10–49 s (instants coincide at common multiples);
 *      burst:  1 000 jobs due at the very same instant, every 10 s (worst case);
 *      runner: the spread shape with the hub stubbed (the scheduler's own share of the latency);
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
import { expectedSlots } from '../src-main/core/jobs/schedule';
import { attachAgentSocket } from '../src-main/server/agent-socket';
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
  lat.push(Date.now() - Date.parse(m.slotAt));
  send({ type: 'run_started', runId: m.runId });
  send({ type: 'run_result', runId: m.runId, outcome: 'success' });
});
setInterval(() => send({ type: 'heartbeat' }), 10000).unref();
process.on('message', (m) => { if (m === 'report') { process.send({ lat }); lat = []; } if (m === 'exit') process.exit(0); });
`;

interface Agent {
  child: ChildProcess;
  report(): Promise<number[]>;
}

async function agent(url: string, token: string, name: string): Promise<Agent> {
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
        const on = (m: { lat?: number[] }) => {
          if (!m.lat) return;
          child.off('message', on);
          resolve(m.lat);
        };
        child.on('message', on);
        child.send('report');
      }),
  };
}

type Shape = 'spread' | 'burst' | 'runner';

/**
 * `runner`: the spread shape with the hub replaced by a stub that records when the runner hands each
 * trigger over — the scheduler's own share of the latency, without sockets and agent processes.
 */
async function runnerOnly(): Promise<{ p50: number; p99: number; max: number; n: number; perS: number }> {
  const core: Core = createCore({ dataDir: benchDir('jobs-runner') });
  const latencies: number[] = [];
  const hub = core.hub as unknown as { connectedInstances: () => string[]; pushJobTrigger: (role: string, t: { slotAt: string }) => Promise<never> };
  hub.connectedInstances = () => ['stub'];
  hub.pushJobTrigger = (_role, t) => {
    latencies.push(Date.now() - Date.parse(t.slotAt));
    return new Promise<never>(() => {});
  };
  core.start();
  for (let i = 0; i < JOBS; i++) {
    core.jobs.create({ name: `job-${i}`, role: 'bench', schedule: { everyS: 10 + (i % 40) }, missedWindow: 'skip_and_alert', retry: { maxAttempts: 1 }, overlap: 'allow' }, { actor: 'bench' });
  }
  await new Promise((r) => setTimeout(r, 10_000));
  latencies.length = 0;
  const t0 = Date.now();
  await new Promise((r) => setTimeout(r, SECONDS * 1000));
  const sorted = [...latencies].sort((a, b) => a - b);
  core.close();
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted[sorted.length - 1] ?? NaN, n: sorted.length, perS: sorted.length / ((Date.now() - t0) / 1000) };
}

async function latencyRun(shape: 'spread' | 'burst'): Promise<{ p50: number; p99: number; max: number; n: number; perS: number }> {
  const core: Core = createCore({ dataDir: benchDir(`jobs-${shape}`), hub: { ratePerSecond: 100_000, rateBurst: 200_000 } });
  const server = http.createServer((_q, r) => r.writeHead(404).end());
  attachAgentSocket(server, core, {});
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/agent`;
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
  await new Promise((r) => setTimeout(r, SECONDS * 1000));
  const latencies = (await Promise.all(agents.map((a) => a.report()))).flat();
  const n = latencies.length;
  const sorted = [...latencies].sort((a, b) => a - b);
  for (const a of agents) a.child.send('exit');
  core.close();
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted[sorted.length - 1] ?? NaN, n, perS: n / ((Date.now() - t0) / 1000) };
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
  const shapes = (process.env.GAFFER_BENCH_JOBS_SHAPES ?? 'spread,burst,runner').split(',').filter((x): x is Shape => x === 'spread' || x === 'burst' || x === 'runner');
  for (const shape of shapes) {
    const r = shape === 'runner' ? await runnerOnly() : await latencyRun(shape);
    figures[`triggerP50Ms.${shape}`] = r.p50;
    figures[`triggerP99Ms.${shape}`] = r.p99;
    figures[`triggerMaxMs.${shape}`] = r.max;
    figures[`triggersPerS.${shape}`] = r.perS;
    rows.push({
      shape:
        shape === 'spread'
          ? `spread: ${JOBS} jobs, every 10–49 s`
          : shape === 'burst'
            ? `burst: ${JOBS} jobs due at once, every 10 s`
            : `runner only (hub stubbed): spread`,
      triggers: r.n,
      'per s': Math.round(r.perS),
      'p50 ms': r.p50,
      'p99 ms': r.p99,
      'max ms': r.max,
      target: 'p99 < 100 ms',
    });
  }
  printTable(`Trigger latency: due instant → job_trigger received by an agent process over ws (real clock, ${AGENTS} agent processes, ${SECONDS} s each)`, rows);
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
