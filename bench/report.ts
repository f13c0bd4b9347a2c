/**
 * Writes bench/REPORT.md (+ SVG charts in bench/charts/) from the figures of a `npm run bench` run.
 * Charts are plain SVG so they render on any Markdown viewer without a plotting dependency.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export type Results = Record<string, Record<string, number>>;

interface Bar {
  label: string;
  value: number;
  /** A second, lighter value drawn behind (e.g. the ceiling). */
  ref?: number;
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');

/** A horizontal bar chart; `ref` values draw as a grey bar behind (ceiling/target). */
export function barChart(title: string, unit: string, bars: Bar[], opts: { target?: { value: number; label: string } } = {}): string {
  const W = 640;
  const rowH = 30;
  const left = 230;
  const top = 40;
  const H = top + bars.length * rowH + 40;
  const max = Math.max(...bars.map((b) => Math.max(b.value, b.ref ?? 0)), opts.target?.value ?? 0) * 1.1 || 1;
  const x = (v: number) => left + ((W - left - 90) * v) / max;
  const fmt = (v: number) => (v >= 100 ? Math.round(v).toLocaleString('en') : v.toFixed(v >= 10 ? 1 : 2));
  const rows = bars
    .map((b, i) => {
      const y = top + i * rowH;
      return [
        `<text x="${left - 8}" y="${y + 19}" text-anchor="end">${esc(b.label)}</text>`,
        b.ref !== undefined ? `<rect x="${left}" y="${y + 5}" width="${x(b.ref) - left}" height="20" fill="#d0d7de"/>` : '',
        `<rect x="${left}" y="${y + 8}" width="${Math.max(1, x(b.value) - left)}" height="14" fill="#3b82f6"/>`,
        `<text x="${x(Math.max(b.value, b.ref ?? 0)) + 6}" y="${y + 19}">${fmt(b.value)}${b.ref !== undefined ? ` / ${fmt(b.ref)}` : ''}</text>`,
      ].join('');
    })
    .join('\n');
  const target = opts.target
    ? `<line x1="${x(opts.target.value)}" x2="${x(opts.target.value)}" y1="${top - 4}" y2="${H - 34}" stroke="#dc2626" stroke-dasharray="4 3"/>` +
      `<text x="${x(opts.target.value)}" y="${H - 20}" text-anchor="middle" fill="#dc2626">${esc(opts.target.label)}</text>`
    : '';
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="system-ui, sans-serif" font-size="12">
<rect width="${W}" height="${H}" fill="white"/>
<text x="12" y="22" font-size="14" font-weight="600">${esc(title)}</text>
<text x="${W - 12}" y="22" text-anchor="end" fill="#57606a">${esc(unit)}</text>
${rows}
${target}
</svg>
`;
}

/** The isolation bench's cases, in order: [figure key, label] (bench/isolation.ts). */
export const ISOLATION_LABELS: ReadonlyArray<readonly [string, string]> = [
  ['idle', 'nothing else (idle)'],
  ['flood', 'log flood: 4 agents, usage every 10 lines'],
  ['burst', '1,000 jobs due at once'],
  ['catchup', 'sleep catch-up: every-second job, 1 day'],
  ['chatty', 'chatty managed agent (`yes`)'],
  ['export', 'audit export of the whole log'],
  ['verify', '4 verification commands of 10 s'],
];

/**
 * The chart of `npm run bench -- isolation`: each case's p99 ÷ its round's idle p99 (the median of the
 * rounds) against the target, 2×. A ratio, not milliseconds: each round has its own idle baseline.
 */
export function isolationChart(f: Record<string, number>): string {
  const cases = ISOLATION_LABELS.filter(([k]) => k !== 'idle' && f[`${k}.p99Ratio`] !== undefined);
  return barChart("another agent's claim+report p99 ÷ idle while something else runs (median of the rounds)", '× idle', cases.map(([k, label]) => ({ label: label.replace(/`/g, '').slice(0, 34), value: f[`${k}.p99Ratio`]! })), {
    target: { value: 2, label: '2× idle' },
  });
}

/** The REPORT.md section of `npm run bench -- isolation` (`chartLink`: the chart's Markdown). */
export function isolationSection(f: Record<string, number>, chartLink: string, load: string): string {
  const rows = ISOLATION_LABELS.filter(([k]) => f[`${k}.p99Ms`] !== undefined).map(([k, label]) => {
    const ratio = f[`${k}.p99Ratio`]!;
    return `| ${k === 'export' && f.auditRows ? `audit export, ${n0(f.auditRows)} rows` : label} | ${f[`${k}.p50Ms`]!.toFixed(1)} | ${f[`${k}.p99Ms`]!.toFixed(1)} | ${n2(f[`${k}.p50Ratio`])} | ${n2(ratio)} | ${n2(f[`${k}.p99RatioWorst`])} | ${ratio <= 2 ? 'yes' : '**no**'} | ${Math.round(f[`${k}.maxMs`] ?? NaN)} | ${f[`${k}.cycles`] ?? ''} | ${Math.round(f[`${k}.serverCpuPct`] ?? NaN)} |`;
  });
  const rounds = f.rounds ?? 1;
  return `## Isolation: another agent's claim+report while something else runs

\`npm run bench -- isolation\` (\`GAFFER_BENCH_ISOLATION_ROUNDS\`, default 3; \`GAFFER_BENCH_ISOLATION_SECONDS\`, each window,
default 8 s). One real headless Gaffer; one probe agent (its own process) claims and reports one task at a time, a
cycle at most every ${f.paceMs ?? 12} ms (the hub's per-session request rate), for ${f.seconds ?? 8} s per case while, in turn, each
load below runs. ${rounds} round(s): each round measures the idle baseline, then every case; a case's ratios are to its
own round's idle window. The figures are the median of the rounds; "worst round" is the highest p99 ratio of any
round. Target (issue 32): p99 within 2× of idle in every case. Load average at the end: ${load}.

${chartLink}

| case | p50 ms | p99 ms | p50 ÷ idle | p99 ÷ idle | worst round | within 2× | max ms | cycles | server CPU % |
|---|---|---|---|---|---|---|---|---|---|
${rows.join('\n')}`;
}

const n0 = (v: number | undefined) => (v === undefined ? 'n/a' : Math.round(v).toLocaleString('en'));
const n2 = (v: number | undefined) => (v === undefined ? 'n/a' : v.toFixed(2));
const n1 = (v: number | undefined) => (v === undefined ? 'n/a' : v.toFixed(1));

export function writeReport(dir: string, machine: string, at: string, r: Results, load?: string): string {
  const charts = path.join(dir, 'charts');
  fs.mkdirSync(charts, { recursive: true });
  const sections: string[] = [];
  const chart = (name: string, svg: string) => {
    fs.writeFileSync(path.join(charts, `${name}.svg`), svg);
    return `![${name}](charts/${name}.svg)`;
  };

  if (r.core) {
    const sizes = Object.keys(r.core).filter((k) => k.startsWith('claimReportPerS@')).map((k) => Number(k.split('@')[1]));
    const bars = sizes.map((s) => ({ label: `${s.toLocaleString('en')} queued`, value: r.core![`claimReportPerS@${s}`]!, ref: r.core!.barePairsPerS! }));
    sections.push(`## Claim + report throughput vs queue size (in-process, synchronous=FULL)

${chart('core-throughput', barChart('claim+report per second (blue) vs two bare FULL transactions (grey)', 'tasks/s', bars))}

| queued | claim+report /s | vs bare FULL pairs | WAL pages per claim / report |
|---|---|---|---|
${sizes.map((s) => `| ${s.toLocaleString('en')} | ${n0(r.core![`claimReportPerS@${s}`])} | ${((r.core![`vsBare@${s}`] ?? 0) * 100).toFixed(0)} % | ${n1(r.core![`walPagesPerClaim@${s}`])} / ${n1(r.core![`walPagesPerReport@${s}`])} |`).join('\n')}

Flatness (throughput at the smallest ÷ largest queue): **${n2(r.core.flatnessRatio)}×** (target ≤ 1.3×). Bare ceiling ${n0(r.core.barePairsPerS)} pairs/s.
Each ratio is the median over rounds in which the bare pair and the core alternate on the same disk.${
      r.floor
        ? `

SQL floor (\`bench/floor.ts\`: the same statements with no application code around them): one transaction per claim and per report reaches **${((r.floor.singleVsBare ?? 0) * 100).toFixed(0)} %** of the bare pairs; batched as group commit does it, ${n2(r.floor.batchCpuUsPerTask)} µs CPU per task.`
        : ''
    }`);
  }

  if (r.baseline) {
    sections.push(`## Baseline: what the claim lock buys

| implementation | claim+report /s | two processes racing on 2 000 tasks |
|---|---|---|
| naive "select then update" | ${n0(r.baseline.naiveClaimReportPerS)} | ${n0(r.baseline.naiveRaceDoubleClaims)} tasks handed out twice |
| Gaffer claim lock (with audit, fence, expiry) | ${n0(r.baseline.gafferClaimReportPerS)} | ${n0(r.baseline.gafferRaceDoubleClaims)} handed out twice |`);
  }

  if (r.hub) {
    const h = r.hub;
    const agents = [1, 10, 50].filter((n) => h[`hub.tasksPerSec.${n}`] !== undefined);
    const bars = agents.flatMap((n) => [
      { label: `${n} agent${n > 1 ? 's' : ''}, claim→report`, value: h[`hub.tasksPerSec.${n}`]!, ref: h[`bare.tasksPerSec.${n}`] },
      { label: `${n} agent${n > 1 ? 's' : ''}, report+claimNext`, value: h[`hub.claimNext.tasksPerSec.${n}`] ?? 0, ref: h[`bare.claimNext.tasksPerSec.${n}`] },
    ]);
    if (h['bullmq.tasksPerSec.50'] !== undefined) bars.push({ label: 'BullMQ, 50 workers', value: h['bullmq.tasksPerSec.50'], ref: undefined });
    const floor = r.floor?.batchCpuUsPerTask;
    sections.push(`## Hub round trips vs agents (over the WebSocket, durable; best of several runs, hub, peer and ceiling alike)

${chart('hub-throughput', barChart('hub tasks/s (blue) vs bare ws request/reply ceiling (grey)', 'tasks/s', bars))}

Two shapes in the same rounds: *claim→report* (two round trips per task) and *report+claimNext* (PROTOCOL §10: the
report's reply carries the next task, one round trip and one group-commit op per task).

| agents | claim→report tasks/s | p99 ms | ops/commit | server CPU µs/task | report+claimNext tasks/s | p99 ms | server CPU µs/task | bare ws (two / one round trip) | bare CPU µs/task (two / one) |
|---|---|---|---|---|---|---|---|---|---|
${agents
  .map(
    (n) =>
      `| ${n} | ${n0(h[`hub.tasksPerSec.${n}`])} | ${n2(h[`hub.p99Ms.${n}`])} | ${h[`hub.opsPerCommit.${n}`] ?? 'n/a'} | ${n1(h[`hub.cpuUsPerTask.${n}`])} | ${n0(h[`hub.claimNext.tasksPerSec.${n}`])} | ${n2(h[`hub.claimNext.p99Ms.${n}`])} | ${n1(h[`hub.claimNext.cpuUsPerTask.${n}`])} | ${n0(h[`bare.tasksPerSec.${n}`])} / ${n0(h[`bare.claimNext.tasksPerSec.${n}`])} | ${n1(h[`bare.cpuUsPerTask.${n}`])} / ${n1(h[`bare.claimNext.cpuUsPerTask.${n}`])} |`,
  )
  .join('\n')}
${
  h['bullmq.tasksPerSec.50'] !== undefined
    ? `
**Against the durable peer**, same machine, same rounds: BullMQ on \`redis-server --appendfsync always\`, 50 workers
(concurrency 1, empty processor, completed jobs kept as BullMQ does by default) drained **${n0(h['bullmq.tasksPerSec.50'])} jobs/s**
(redis-server CPU ${n1(h['bullmq.serverCpuUsPerTask.50'])} µs per job). The hub with report+claimNext: **${n2(h['hub.claimNext.vsBullmq.50'])}×** that
(target ≥ 1.3×); with two round trips per task ${n2((h['hub.tasksPerSec.50'] ?? 0) / h['bullmq.tasksPerSec.50'])}× (target ≥ 1.0×).
`
    : '\n(The BullMQ peer was skipped: redis-server is not installed.)\n'
}
Server CPU per task at 50 agents: **${n1(h['hub.claimNext.cpuUsPerTask.50'])} µs** with report+claimNext (target ≤ 75 µs; ${n1(h['hub.cpuUsPerTask.50'])} µs claim→report), beside
${n1(h['bare.claimNext.cpuUsPerTask.50'])} µs for the bare \`ws\` server answering the same frames${floor !== undefined ? ` and the SQL floor's ${n1(floor)} µs (the claim's and the report's statements alone, batched as group commit does)` : ''}.
At 50 agents the hub reaches **${h['hub.vsBarePct.50'] ?? 'n/a'} %** of the bare ceiling's tasks/s (${h['hub.claimNext.vsBarePct.50'] ?? 'n/a'} % with report+claimNext, against the one-round-trip ceiling);
by server CPU per task, ${h['hub.vsBareCpuPct.50'] ?? 'n/a'} % and ${h['hub.claimNext.vsBareCpuPct.50'] ?? 'n/a'} %. With group commit off: ${n0(h['hub.noGroupCommit.tasksPerSec.50'])} tasks/s.
Memory with 500 idle agents: **${h['idle500.rssMb'] ?? 'n/a'} MB** RSS (target < 150 MB). A crashed agent's task is claimable again after **${h['crash.reclaimableS'] ?? 'n/a'} s** with default settings (target < 15 s).`);
  }

  if (r.startup) {
    const s = r.startup;
    sections.push(`## Start-up on a big database (1 000 000 audit rows, 100 000 tasks, 1 000 jobs)

\`npm start -- --headless\`, timed from the spawn (median of 3 starts; one untimed start first builds \`out/\` if stale):

| from | to | ms |
|---|---|---|
| process start | console URL printed | ${n0(s['startup.urlPrintedMs'])} |
| process start | console page served (\`GET /\`) | **${n0(s['startup.consoleServedMs'])}** (target < 2 000) |
| process start | dashboard answered (console RPC) | ${n0(s['startup.dashboardAnsweredMs'])} |
| navigation (Chromium) | first contentful paint | ${n0(s['startup.firstContentfulPaintMs'])} |
| navigation (Chromium) | the dashboard's figures on screen | ${n0(s['startup.dashboardPaintedMs'])} |`);
  }

  if (r.idle) {
    const i = r.idle;
    sections.push(`## Idle cost (200 jobs, 20 idle agents, 60 s, measured from outside through /proc)

| figure | value |
|---|---|
| server CPU | **${n2(i['idle.cpuPctOfCore'])} %** of one core (target < 1 %) |
| wake-ups (voluntary context switches, all threads) | **${n2(i['idle.wakeupsPerS'])} /s** (main thread ${n2(i['idle.mainThreadWakeupsPerS'])} /s; target < 2 /s) — the agents send ${n2(i['idle.agentHeartbeatsPerS'])} heartbeats/s, each read and committed |
| read as | the clock pulse 1 /s + ${n2(i['idle.agentHeartbeatsPerS'])} heartbeat reads/s + as many durable heartbeat commits, each ${n2(i['idle.wakeupsPerDurableCommit'])} wake-ups on this disk (the fsync's sleeps, probed in the same run): ${n2(1 + (i['idle.agentHeartbeatsPerS'] ?? NaN) * (1 + (i['idle.wakeupsPerDurableCommit'] ?? NaN)))} /s |
| the same 200 jobs, no agent connected | ${n2(i['idle.noAgents.cpuPctOfCore'])} % of one core, ${n2(i['idle.noAgents.wakeupsPerS'])} wake-ups/s (main thread ${n2(i['idle.noAgents.mainThreadWakeupsPerS'])} /s, of which the gap detector's clock pulse is 1 /s; the rest are V8's worker threads) |
| the start chain | ${n0(i['idle.chainNodeProcesses'])} Node processes (npm, the server), ${n1(i['idle.chainRssMb'])} MB RSS in all (server ${n1(i['idle.serverRssMb'])} MB) |`);
  }

  if (r.jobs) {
    const keys = Object.keys(r.jobs);
    sections.push(`## Jobs

| figure | value |
|---|---|
${keys.map((k) => `| ${k} | ${Number.isInteger(r.jobs![k]) ? n0(r.jobs![k]) : n2(r.jobs![k])} |`).join('\n')}`);
    const p50 = keys.find((k) => /p50/i.test(k) && /latency|trigger/i.test(k));
    const p99 = keys.find((k) => /p99/i.test(k) && /latency|trigger/i.test(k));
    if (p50 && p99) {
      sections.push(chart('trigger-latency', barChart('trigger latency: due instant → job_trigger at the agent', 'ms', [
        { label: 'p50', value: r.jobs[p50]! },
        { label: 'p99', value: r.jobs[p99]! },
      ], { target: { value: 100, label: 'p99 target 100 ms' } })));
    }
  }

  if (r.audit) {
    const q = Object.keys(r.audit).filter((k) => k.startsWith('query:'));
    sections.push(`## Audit browser at ${n0(r.audit.rows)} rows

${chart('audit-queries', barChart(`audit queries over ${n0(r.audit.rows)} rows (median)`, 'ms', q.map((k) => ({ label: k.slice(6).slice(0, 34), value: r.audit![k]! })), { target: { value: 200, label: '200 ms' } }))}

Export (JSONL, whole log): ${n0(r.audit.exportRowsPerS)} rows/s with peak heap growth ${n2(r.audit.exportPeakHeapGrowthMb)} MiB (bounded memory). Chain verification: ${n0(r.audit.verifyRowsPerS)} rows/s.`);
  }

  if (r.logs) {
    const l = r.logs;
    sections.push(`## Logs: ingest through the hub and a claim+report beside it

4 SDK agents flood (each awaiting \`ctx.log\`, one frame in flight); another agent claims and reports one task at a time, in windows that alternate between no flood and the flood (5 pairs; the flood paused and drained between), so a change in the machine's background load falls on both sides.

| | lines/s | claim+report p50 | p99 |
|---|---|---|---|
| no flood | — | ${n2(l.idleP50Ms)} ms | ${n2(l.idleP99Ms)} ms |
| 4 agents flooding | ${n0(l.ingestLinesPerS)} | ${n2(l.floodP50Ms)} ms | ${n2(l.floodP99Ms)} ms |

Targets: ≥ 100 000 lines/s; median within 1.5× of idle (measured ${n2(l.medianRatio)}×). During the flood the server's main thread was busy ${n0(l.mainThreadBusyPct)} % of the time and the server process used ${n0(l.serverCpuPct)} % of one CPU.
Storage: ${n0(l.bytesPerLine)} bytes per 80-character line on disk, ${n0(l.bytesPerLineIndexed)} with the word index.`);
  }

  if (r.agent) {
    sections.push(`## Command agent (\`gaffer agent\` running \`true\`, as managed agents)

| instances | tasks/s |
|---|---|
| 1 | ${n0(r.agent.tasksPerS1)} |
| 8 | ${n0(r.agent.tasksPerS8)} |

Per task with one instance: ${n2(r.agent.msPerTask1)} ms against ${n2(r.agent.bareSpawnOwnProcessMs)} ms for a bare \`child_process.spawn('true')\` in a plain process in the same run: **${n2(r.agent.overheadRatioOwnProcess)}×** (target ≤ 1.5×; ${n2(r.agent.overheadRatio)}× against ${n2(r.agent.bareSpawnMs)} ms for the same spawn from the bench's own process, which holds Gaffer): Gaffer adds ${n2(r.agent.addedMs1)} ms, ${n2(r.agent.addedPerBareSpawn)} of a bare spawn (target ≤ 0.5).
Of that, ${n2(r.agent.minimalAddedMs)} ms is what any agent pays: a minimal agent (raw protocol, the same bare spawn in the same plain process, then report+claimNext: one round trip, one durable commit) takes ${n2(r.agent.minimalAgentMs)} ms a task in the same rounds; the command agent's own part (payload and output files, environment, process group, SDK) is ${n2(r.agent.agentOwnMs)} ms.`);
  }

  if (r.attention) {
    const a = r.attention;
    sections.push(`## Never silent: from the failure to the operator's webhook

Loopback receiver, real clock, one at a time: from the agent's final \`run_result\` to the webhook POST about it arriving.

| what | p50 | p99 | max | target |
|---|---|---|---|---|
| a run held, \`needs_human\` | ${n2(a.needsHumanWebhookP50Ms)} ms | ${n2(a.needsHumanWebhookP99Ms)} ms | ${n2(a.needsHumanWebhookMaxMs)} ms | p99 < 1 s |
| the final failed attempt, signed \`run_failed\` | ${n2(a.runFailedWebhookP50Ms)} ms | ${n2(a.runFailedWebhookP99Ms)} ms | ${n2(a.runFailedWebhookMaxMs)} ms | p99 < 1 s |

The inbox's sweep (dead-man's switch and stuck queues) over 1 000 jobs: ${n2(a.inboxSweep1000JobsMs)} ms.`);
  }

  if (r.isolation) sections.push(isolationSection(r.isolation, chart('isolation', isolationChart(r.isolation)), load ?? 'n/a'));

  const md = `# Gaffer benchmark report

Generated by \`npm run bench\` on ${at}.
Machine: ${machine}.
Every figure is printed by a benchmark, never asserted by a test. Disk-bound figures on a shared VM
are noisy; ratios are taken between runs made side by side in the same process.${load ? `\nMachine load during the run (1-minute load average, ${load}).` : ''}

${sections.join('\n\n')}
`;
  const file = path.join(dir, 'REPORT.md');
  fs.writeFileSync(file, md);
  return file;
}

/** `npx tsx bench/report.ts`: writes REPORT.md again from the last full run's figures (bench/.results.json). */
if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const last = JSON.parse(fs.readFileSync(path.join(here, '.results.json'), 'utf8')) as { machine: string; at: string; results: Results; load?: string };
  console.log(`report written to ${writeReport(here, last.machine, last.at, last.results, process.env.GAFFER_BENCH_LOAD ?? last.load)}`);
}
