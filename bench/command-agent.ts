/**
 * Command-agent benchmark (issue 13). Prints:
 *  - tasks/s through `gaffer agent` running `true`, as managed agents of a real Gaffer (core and
 *    local server in this process, synchronous=FULL; the agents are their own processes, started
 *    by the supervisor exactly as in use), with 1 and with 8 instances;
 *  - the time per task with 1 instance against a bare `child_process.spawn('true')` measured in
 *    the same run, alternating rounds (target: within 1.5× of the bare spawn, i.e. Gaffer adds
 *    at most half a spawn). The bare spawn is timed twice: in this process (which holds Gaffer,
 *    its database and the console server: a fork of it costs more) and in a plain Node process of
 *    its own (bench/hub-agents.ts), the cheaper and stricter reference;
 *  - where the added time goes, against a minimal agent measured in the same rounds: raw protocol,
 *    the same bare spawn per task, then `report` with `claimNext` (one round trip, one durable
 *    commit, PROTOCOL §10), in a process of its own (bench/hub-agents.ts). What it adds to the bare
 *    spawn in that same process is the least any agent pays for Gaffer's round trip; what the
 *    command agent adds on top is its own (payload and output files, environment, process group,
 *    SDK).
 * A task's time through the agent is payload file + spawn + wait for the group to end + output
 * file + report and next claim (one round trip, one durable commit); the bare spawn is only the
 * spawn and the wait. Tasks are queued before the agents look, and timed from the first claim to
 * the last report. The per-connection rate limit is lifted (as in bench/hub.ts): its default of
 * 200 requests/s would cap one agent at 200 tasks/s (5 ms a task) and the round-trip agent far
 * lower, measuring the limiter instead of the agent. Everything else is as in use.
 * Run: npx tsx bench/command-agent.ts   (GAFFER_BENCH_AGENT_TASKS=2000 sets the tasks per round)
 */
import { spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createCore, type Core } from '../src-main/core/create-core';
import { startManagedAgents } from '../src-main/server/managed';
import { startServer } from '../src-main/server/server';
import { benchDir, median, printTable, spawnChild, stopChild, type Child } from './util';

const TASKS = Number(process.env.GAFFER_BENCH_AGENT_TASKS ?? 1500);
const ROUNDS = Number(process.env.GAFFER_BENCH_AGENT_ROUNDS ?? 3);
const BARE_SPAWNS = Number(process.env.GAFFER_BENCH_AGENT_BARE ?? 1000);
/** How long each round measures the minimal agent (after a short warm-up). */
const MINIMAL_MS = Number(process.env.GAFFER_BENCH_AGENT_MINIMAL_MS ?? 3000);
const MINIMAL_ROLE = 'bench-minimal';

/** Sequential bare spawns of `true` with piped stdio, as the agent spawns it: ms per spawn. */
async function bareSpawnMs(n: number): Promise<number> {
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    await new Promise<void>((resolve, reject) => {
      const c = spawn('true', [], { stdio: ['pipe', 'pipe', 'pipe'], detached: true });
      c.once('error', reject);
      c.once('close', () => resolve());
      c.stdin.on('error', () => {}); // `true` does not read its stdin
      c.stdin.end('{}\n');
    });
  }
  return (performance.now() - t0) / n;
}

interface Round {
  tasksPerS: number;
  msPerTask: number;
}

function seed(core: Core, n: number, role = 'bench'): void {
  core.store.write(() => {
    for (let i = 0; i < n; i++) core.tasks.create({ title: `bench ${i}`, role, payload: { i } }, { actor: 'bench' });
  });
}

/** Sequential bare spawns of `true`, the same way, in the plain process of bench/hub-agents.ts: ms per spawn. */
async function bareSpawnInOwnProcessMs(child: Child, n: number): Promise<number> {
  child.send({ cmd: 'spawn', spawn: ['true'], n });
  return ((await child.next()) as { msPerSpawn: number }).msPerSpawn;
}

/**
 * ms per task of the minimal agent (its own process): bare spawn of `true`, then `report` +
 * `claimNext`, on tasks of a role the command agents do not take.
 */
async function minimalAgentMs(core: Core, minimal: Child, url: string, token: string): Promise<number> {
  // A task takes a spawn and a durable commit, never under 1.5 ms here: enough never to run dry.
  seed(core, Math.ceil((MINIMAL_MS + 300) / 1.5) + 100, MINIMAL_ROLE);
  minimal.send({ cmd: 'run', url, token, agents: 1, warmupMs: 300, durationMs: MINIMAL_MS, claimNext: true, role: MINIMAL_ROLE, spawn: ['true'] });
  const r = (await minimal.next()) as { cycles: number; seconds: number; empty: number };
  if (r.empty > 0 || r.cycles === 0) throw new Error(`the minimal agent ran out of tasks (${r.cycles} cycles, ${r.empty} empty claims)`);
  return (r.seconds * 1000) / r.cycles;
}

/** Drains `TASKS` tasks through `instances` managed command agents; timed from first claim to last done. */
async function agentRound(core: Core, instances: number): Promise<Round> {
  const agent = core.managed.list().find((a) => a.name === 'bench-true');
  if (!agent) core.managed.create({ name: 'bench-true', role: 'bench', command: ['true'], instances }, { actor: 'bench' });
  else if (agent.instances !== instances) core.managed.update('bench-true', { instances }, { actor: 'bench' });
  // Wait until every instance is online and idle (nothing to claim yet).
  const t0 = Date.now();
  while (core.managed.get('bench-true').processes.filter((p) => p.status === 'running' && p.instanceId).length < instances) {
    if (Date.now() - t0 > 60_000) throw new Error('the managed agents did not come online');
    await new Promise((r) => setTimeout(r, 50));
  }
  let first = 0;
  let last = 0;
  let done = 0;
  const claimed = core.events.on('task.claimed', () => {
    if (first === 0) first = performance.now();
  });
  const finished = new Promise<void>((resolve) => {
    const sub = core.events.on('task.changed', (e) => {
      if (e.to !== 'done' || e.task.role !== 'bench') return;
      if (++done === TASKS) {
        last = performance.now();
        sub.dispose();
        resolve();
      }
    });
  });
  seed(core, TASKS);
  let timer: NodeJS.Timeout | undefined;
  const stuck = new Promise<'stuck'>((r) => (timer = setTimeout(() => r('stuck'), 300_000)));
  const outcome = await Promise.race([finished, stuck]);
  clearTimeout(timer);
  claimed.dispose();
  if (outcome === 'stuck') {
    const out = core.managed.get('bench-true').processes.flatMap((p) => (p.recentOutput ?? []).map((l) => `${p.instance} ${l.stream} ${l.text}`));
    throw new Error(`only ${done} of ${TASKS} tasks done after 5 minutes; the agents' recent output:\n${out.join('\n')}`);
  }
  const s = (last - first) / 1000;
  return { tasksPerS: TASKS / s, msPerTask: ((last - first) / TASKS) * instances };
}

export async function runCommandAgentBench(): Promise<Record<string, number>> {
  const dir = benchDir('command-agent');
  const core = createCore({ dataDir: dir, hub: { ratePerSecond: 1e9, rateBurst: 1e9 } });
  core.start();
  const server = await startServer(core, { port: 0, operatorToken: 'gfo_bench-operator-token-0123456789' });
  // Agents poll every 5 s when idle; the rounds queue their tasks while the agents wait, so the
  // first claim of a round may come up to 5 s after the tasks: not part of the timed span.
  const managed = await startManagedAgents(core, server);
  const minimal = (await spawnChild(path.join(path.dirname(fileURLToPath(import.meta.url)), 'hub-agents.ts'))).child;
  const minimalToken = core.tokens.create({ name: 'bench-minimal', role: MINIMAL_ROLE, actor: 'bench' }).token;
  const one: Round[] = [];
  const bare: number[] = [];
  const bareOwn: number[] = [];
  const minimalMs: number[] = [];
  const eight: Round[] = [];
  const loads = [os.loadavg()[0]!];
  try {
    await bareSpawnMs(50); // warm up
    await bareSpawnInOwnProcessMs(minimal, 50);
    for (let r = 0; r < ROUNDS; r++) {
      bare.push(await bareSpawnMs(BARE_SPAWNS));
      bareOwn.push(await bareSpawnInOwnProcessMs(minimal, BARE_SPAWNS));
      one.push(await agentRound(core, 1));
      minimalMs.push(await minimalAgentMs(core, minimal, server.agentUrl, minimalToken));
      console.log(
        `round ${r + 1}: bare spawn ${bareOwn[r]!.toFixed(2)} ms (plain process) / ${bare[r]!.toFixed(2)} ms (this process), ` +
          `gaffer agent ${one[r]!.msPerTask.toFixed(2)} ms, minimal agent ${minimalMs[r]!.toFixed(2)} ms a task; load ${os.loadavg()[0]!.toFixed(1)}`,
      );
    }
    for (let r = 0; r < ROUNDS; r++) eight.push(await agentRound(core, 8));
    loads.push(os.loadavg()[0]!);
  } finally {
    await stopChild(minimal);
    await managed.stop();
    await server.close();
    core.close();
  }
  const perTask1 = median(one.map((r) => r.msPerTask));
  const bareMs = median(bare);
  const bareOwnMs = median(bareOwn);
  // Per round, against the bare spawn in a process of its own: what the agent adds, how much of
  // it any agent pays (the minimal agent runs in that same process), and the command agent's own.
  const added = one.map((r, i) => r.msPerTask - bareOwn[i]!);
  const minimalAdded = minimalMs.map((m, i) => m - bareOwn[i]!);
  const agentOwn = one.map((r, i) => r.msPerTask - minimalMs[i]!);
  const out = {
    tasksPerS1: median(one.map((r) => r.tasksPerS)),
    tasksPerS8: median(eight.map((r) => r.tasksPerS)),
    msPerTask1: perTask1,
    bareSpawnMs: bareMs,
    bareSpawnsPerS: 1000 / bareMs,
    overheadRatio: median(one.map((r, i) => r.msPerTask / bare[i]!)),
    bareSpawnOwnProcessMs: bareOwnMs,
    overheadRatioOwnProcess: median(one.map((r, i) => r.msPerTask / bareOwn[i]!)),
    addedMs1: median(added),
    addedPerBareSpawn: median(added.map((a, i) => a / bareOwn[i]!)),
    minimalAgentMs: median(minimalMs),
    minimalAddedMs: median(minimalAdded),
    agentOwnMs: median(agentOwn),
    tasks: TASKS,
  };
  const rows = (label: string, bareOf: number[]) => ({ 'bare spawn in': label, 'bare spawn ms': median(bareOf), 'task ÷ bare spawn': median(one.map((r, i) => r.msPerTask / bareOf[i]!)) });
  printTable(`gaffer agent running \`true\` (managed, ${TASKS} tasks per round, median of ${ROUNDS} rounds)`, [
    { instances: 1, 'tasks/s': out.tasksPerS1, 'ms per task': perTask1, ...rows('a plain process of its own', bareOwn) },
    { instances: 1, 'tasks/s': out.tasksPerS1, 'ms per task': perTask1, ...rows("this process (Gaffer's)", bare) },
    { instances: 8, 'tasks/s': out.tasksPerS8, 'ms per task': median(eight.map((r) => r.msPerTask)), 'bare spawn in': '', 'bare spawn ms': NaN, 'task ÷ bare spawn': NaN },
  ]);
  printTable('where the time added to a bare spawn goes (1 instance, ms per task, medians of the per-round figures; bare spawn in a plain process)', [
    { part: 'added by Gaffer: the task through `gaffer agent` − the bare spawn', ms: out.addedMs1, 'per bare spawn': out.addedPerBareSpawn },
    { part: 'of it, any agent: a minimal agent (raw protocol, bare spawn, report+claimNext) − the bare spawn', ms: out.minimalAddedMs, 'per bare spawn': out.minimalAddedMs / bareOwnMs },
    { part: "of it, the command agent's own: `gaffer agent` − the minimal agent", ms: out.agentOwnMs, 'per bare spawn': out.agentOwnMs / bareOwnMs },
  ]);
  console.log(
    `\nper task with 1 instance: ${perTask1.toFixed(2)} ms vs ${bareOwnMs.toFixed(2)} ms for a bare spawn of \`true\` in a plain process → ${out.overheadRatioOwnProcess.toFixed(2)}× ` +
      `(${out.overheadRatio.toFixed(2)}× against ${bareMs.toFixed(2)} ms in this process; target ≤ 1.5×); Gaffer adds ${out.addedMs1.toFixed(2)} ms = ${out.addedPerBareSpawn.toFixed(2)} of a bare spawn (target ≤ 0.5), ` +
      `of which a minimal agent pays ${out.minimalAddedMs.toFixed(2)} ms; load ${loads.map((l) => l.toFixed(1)).join(' → ')} on ${os.cpus().length} CPUs`,
  );
  return out;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await runCommandAgentBench();
