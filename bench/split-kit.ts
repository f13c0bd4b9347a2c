/**
 * What bench/flood-split.ts and bench/export-split.ts share: a real headless Gaffer with
 * bench/flood-split-server.mjs preloaded (its figures dumped on SIGURG), the probe's traced latency
 * window, and one window's split of the probe's requests into out / in / back (flood-split.ts says
 * what each means) with the server's threads, loop and collections.
 */
import fs from 'node:fs';
import path from 'node:path';
import { startHeadless, withPreloads, type Headless } from './headless-proc';
import { percentile, type Child } from './util';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What flood-split-server.mjs writes when the server gets SIGURG (and restarts from). */
export interface ServerDump {
  gc: Record<string, { n: number; sumMs: number; maxMs: number }>;
  loop: { p50Ms: number; p99Ms: number; maxMs: number; elu: number };
  threads: Array<{ tid: number; main: boolean; name: string; nice: number; cpuMs: number; runQueueMs: number; slices: number }>;
  /** id, read, sent (epoch ms), the main thread's CPU ms and run-queue ms between the two, and the niced threads' CPU ms meanwhile. */
  requests: Array<[number, number, number, number, number, number]>;
}

/** The probe's window (bench/logs-agents.ts `latency` with `trace`). */
export interface ProbeWindow {
  times: number[];
  runQueueMs: number;
  trace: Array<[number, number, number]>;
}

/**
 * Starts the server with the split's preload (and `nodeOptions` for the server only). The server
 * runs in a session of its own: a bench killed from outside would leave it running, so the bench
 * bounds itself (`deadlineS`) and stops the server on the way out.
 */
export async function startSplitServer(dir: string, name: string, deadlineS: number, nodeOptions = ''): Promise<{ g: Headless; dump: () => Promise<ServerDump> }> {
  const splitFile = path.join(dir, 'split.json');
  const g = await startHeadless(dir, [], {
    NODE_OPTIONS: `${withPreloads(new URL('./flood-split-server.mjs', import.meta.url))} ${nodeOptions}`.trim(),
    GAFFER_BENCH_SPLIT_FILE: splitFile,
  });
  const deadline = setTimeout(() => {
    console.error(`${name}: past its deadline; stopping the server`);
    void g.stop().finally(() => process.exit(2));
  }, deadlineS * 1000);
  deadline.unref();
  const dump = async (): Promise<ServerDump> => {
    fs.rmSync(splitFile, { force: true });
    process.kill(g.serverPid, 'SIGURG');
    for (let i = 0; i < 200 && !fs.existsSync(splitFile); i++) await sleep(10);
    await sleep(20);
    return JSON.parse(fs.readFileSync(splitFile, 'utf8')) as ServerDump;
  };
  return { g, dump };
}

/** One traced latency window of the probe (paced as the isolation bench's). */
export async function probeWindow(probe: Child, g: Headless, token: string, ms: number, paceMs: number): Promise<ProbeWindow> {
  probe.send({ cmd: 'latency', url: g.agentUrl, token, durationMs: ms, role: 'dev', paceMs, trace: true });
  return (await probe.next()) as ProbeWindow;
}

/**
 * One window's split: `head` and `tail` are the table's shared columns (the bench puts its own
 * between and after them), `others` the server's other threads by CPU, `pct` a time as % of the window.
 */
export function splitWindow(p: ProbeWindow, s: ServerDump, wallMs: number) {
  const server = new Map(s.requests.map(([id, read, sent, cpu, runq, bg]) => [id, { read, sent, cpu, runq, bg }]));
  // One cycle = the claim (odd id after hello) and its report; split each request.
  const reqs = p.trace
    .map(([id, send, recv]) => ({ id, send, recv, srv: server.get(id) }))
    .filter((r) => r.srv && r.send > 0)
    .map((r) => ({ id: r.id, out: r.srv!.read - r.send, inn: r.srv!.sent - r.srv!.read, cpu: r.srv!.cpu, runq: r.srv!.runq, bg: r.srv!.bg, back: r.recv - r.srv!.sent, total: r.recv - r.send }));
  // The two processes' wall clocks (timeOrigin + now) differ by a constant: take it out, assuming
  // the fastest one-way trips are equal both ways.
  const theta = (Math.min(...reqs.map((r) => r.back)) - Math.min(...reqs.map((r) => r.out))) / 2;
  for (const r of reqs) {
    r.out += theta;
    r.back -= theta;
  }
  const sorted = (f: (r: (typeof reqs)[number]) => number) => reqs.map(f).sort((a, b) => a - b);
  const p99 = percentile(sorted((r) => r.total), 99);
  const slow = reqs.filter((r) => r.total >= p99);
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  const main = s.threads.find((t) => t.main)!;
  const others = s.threads.filter((t) => !t.main).sort((a, b) => b.cpuMs - a.cpuMs);
  const cycles = p.times.length;
  const times = [...p.times].sort((a, b) => a - b);
  const pct = (ms: number) => ((ms / wallMs) * 100).toFixed(0);
  return {
    pct,
    others,
    head: {
      'cycle p50/p99 ms': `${percentile(times, 50).toFixed(1)} / ${percentile(times, 99).toFixed(1)}`,
      'req p50 out/in/back ms': `${percentile(sorted((r) => r.out), 50).toFixed(2)} / ${percentile(sorted((r) => r.inn), 50).toFixed(2)} / ${percentile(sorted((r) => r.back), 50).toFixed(2)}`,
      'req p99 ms': p99.toFixed(2),
      'slowest 1 %: out/in/back ms': `${mean(slow.map((r) => r.out)).toFixed(1)} / ${mean(slow.map((r) => r.inn)).toFixed(1)} / ${mean(slow.map((r) => r.back)).toFixed(1)}`,
      // "in" of the slowest 1 % split by the main thread's schedstat: on a CPU / ready but not running / the rest (asleep: fsync, disk).
      'slowest 1 % in: cpu/runq/asleep ms': `${mean(slow.map((r) => r.cpu)).toFixed(1)} / ${mean(slow.map((r) => r.runq)).toFixed(1)} / ${mean(slow.map((r) => r.inn - r.cpu - r.runq)).toFixed(1)}`,
      // The niced threads' (log or export worker's) CPU while requests were being served, as % of the time they were.
      'niced threads CPU in "in", %': ((100 * reqs.reduce((a, r) => a + r.bg, 0)) / Math.max(1e-9, reqs.reduce((a, r) => a + r.inn, 0))).toFixed(1),
      'in p50 cpu/runq/asleep ms': `${percentile(sorted((r) => r.cpu), 50).toFixed(2)} / ${percentile(sorted((r) => r.runq), 50).toFixed(2)} / ${percentile(sorted((r) => r.inn - r.cpu - r.runq), 50).toFixed(2)}`,
      'main: CPU % / runq ms per cycle / runq µs per slice': `${pct(main.cpuMs)} / ${(main.runQueueMs / cycles).toFixed(2)} / ${((main.runQueueMs / Math.max(1, main.slices)) * 1000).toFixed(0)}`,
      'loop delay p99 / max ms, ELU': `${s.loop.p99Ms.toFixed(1)} / ${s.loop.maxMs.toFixed(1)}, ${s.loop.elu.toFixed(2)}`,
    },
    tail: {
      'GC kind: n / sum / max ms': Object.entries(s.gc).map(([k, v]) => `${k}: ${v.n} / ${v.sumMs.toFixed(0)} / ${v.maxMs.toFixed(1)}`).join('; '),
      'probe runq ms/cycle': (p.runQueueMs / cycles).toFixed(2),
    },
  };
}
