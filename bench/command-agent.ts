/**
 * Command-agent benchmark (issue 13). Prints:
 *  - tasks/s through `gaffer agent` running `true`, as managed agents of a real Gaffer (core and
 *    local server in this process, synchronous=FULL; the agents are their own processes, started
 *    by the supervisor exactly as in use), with 1 and with 8 instances;
 *  - the time per task with 1 instance against a bare `child_process.spawn('true')` measured in
 *    the same run, alternating rounds (target: within 1.5× of the bare spawn).
 * A task's time through the agent is claim (a durable commit) + payload file + spawn + wait for the
 * group to end + output file + report (a durable commit); the bare spawn is only the spawn and the
 * wait. Tasks are queued before the agents look, and timed from the first claim to the last report.
 * Run: npx tsx bench/command-agent.ts   (GAFFER_BENCH_AGENT_TASKS=2000 sets the tasks per round)
 */
import { spawn } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { createCore, type Core } from '../src-main/core/create-core';
import { startManagedAgents } from '../src-main/server/managed';
import { startServer } from '../src-main/server/server';
import { benchDir, median, printTable } from './util';

const TASKS = Number(process.env.GAFFER_BENCH_AGENT_TASKS ?? 1500);
const ROUNDS = Number(process.env.GAFFER_BENCH_AGENT_ROUNDS ?? 3);
const BARE_SPAWNS = Number(process.env.GAFFER_BENCH_AGENT_BARE ?? 1000);

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

function seed(core: Core, n: number): void {
  core.store.write(() => {
    for (let i = 0; i < n; i++) core.tasks.create({ title: `bench ${i}`, role: 'bench', payload: { i } }, { actor: 'bench' });
  });
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
  const core = createCore({ dataDir: dir });
  core.start();
  const server = await startServer(core, { port: 0, operatorToken: 'gfo_bench-operator-token-0123456789' });
  // Agents poll every 5 s when idle; the rounds queue their tasks while the agents wait, so the
  // first claim of a round may come up to 5 s after the tasks: not part of the timed span.
  const managed = await startManagedAgents(core, server);
  const one: Round[] = [];
  const bare: number[] = [];
  const eight: Round[] = [];
  try {
    await bareSpawnMs(50); // warm up
    for (let r = 0; r < ROUNDS; r++) {
      bare.push(await bareSpawnMs(BARE_SPAWNS));
      one.push(await agentRound(core, 1));
    }
    for (let r = 0; r < ROUNDS; r++) eight.push(await agentRound(core, 8));
  } finally {
    await managed.stop();
    await server.close();
    core.close();
  }
  const perTask1 = median(one.map((r) => r.msPerTask));
  const bareMs = median(bare);
  const ratios = one.map((r, i) => r.msPerTask / bare[i]!);
  const out = {
    tasksPerS1: median(one.map((r) => r.tasksPerS)),
    tasksPerS8: median(eight.map((r) => r.tasksPerS)),
    msPerTask1: perTask1,
    bareSpawnMs: bareMs,
    bareSpawnsPerS: 1000 / bareMs,
    overheadRatio: median(ratios),
    tasks: TASKS,
  };
  printTable(`gaffer agent running \`true\` (managed, ${TASKS} tasks per round, median of ${ROUNDS} rounds)`, [
    { instances: 1, 'tasks/s': out.tasksPerS1, 'ms per task': perTask1, 'bare spawn ms': bareMs, 'task ÷ bare spawn': out.overheadRatio },
    { instances: 8, 'tasks/s': out.tasksPerS8, 'ms per task': median(eight.map((r) => r.msPerTask)), 'bare spawn ms': bareMs, 'task ÷ bare spawn': NaN },
  ]);
  console.log(`\nper task with 1 instance: ${perTask1.toFixed(2)} ms vs ${bareMs.toFixed(2)} ms for a bare spawn of \`true\` → ${out.overheadRatio.toFixed(2)}× (target ≤ 1.5×)`);
  return out;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await runCommandAgentBench();
