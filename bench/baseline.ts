/**
 * What the design buys: the same claim+report workload with a naive "select then update"
 * implementation, in the same run and on the same disk as Gaffer's claim lock.
 *  - throughput in-process (naive has no lock row, no fence, no audit: it should be faster);
 *  - correctness with two OS processes racing on one database file: tasks handed out twice.
 * Run: npm run bench -- baseline   (or: npx tsx bench/baseline.ts)
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createCore } from '../src-main/core/create-core';
import { benchDir, median, printTable, seedBacklog } from './util';

const here = path.dirname(fileURLToPath(import.meta.url));
const PAIRS = 2000;
const RACE_TASKS = 2000;
const RUNS = 3;

function naiveRate(): number {
  const core = createCore({ dataDir: benchDir('naive') }); // same schema and pragmas
  seedBacklog(core.db, 1000 + PAIRS);
  const pick = core.db.prepare<[], { id: number }>(`SELECT id FROM tasks WHERE status = 'backlog' AND unmet_deps = 0 ORDER BY priority DESC, id LIMIT 1`);
  const take = core.db.prepare(`UPDATE tasks SET status = 'in_progress' WHERE id = ?`);
  const finish = core.db.prepare(`UPDATE tasks SET status = 'done' WHERE id = ?`);
  const t0 = performance.now();
  for (let i = 0; i < PAIRS; i++) {
    const id = pick.get()!.id;
    take.run(id);
    finish.run(id);
  }
  const rate = PAIRS / ((performance.now() - t0) / 1000);
  core.close();
  return rate;
}

function gafferRate(): number {
  const core = createCore({ dataDir: benchDir('gaffer') });
  seedBacklog(core.db, 1000 + PAIRS);
  const inst = core.instances.register({ role: 'dev', name: 'bench' }).id;
  const t0 = performance.now();
  for (let i = 0; i < PAIRS; i++) {
    const c = core.locks.claim({ instanceId: inst });
    core.locks.report({ instanceId: inst, taskId: c.task!.id, fence: c.lock!.fence, status: 'done' });
  }
  const rate = PAIRS / ((performance.now() - t0) / 1000);
  core.close();
  return rate;
}

/**
 * Two processes race on one file; returns how many times one attempt of a task was handed out
 * twice. The naive worker prints task ids; Gaffer's worker prints {task, fence} (a re-attempt after
 * a report back to the backlog is a new fence, not a double).
 */
async function race(kind: 'naive' | 'gaffer'): Promise<{ claims: number; doubles: number }> {
  const dir = benchDir(`race-${kind}`);
  const dbPath = path.join(dir, 'gaffer.db');
  const core = createCore({ dbPath, singleWriter: false });
  seedBacklog(core.db, RACE_TASKS);
  core.close();
  const worker =
    kind === 'naive'
      ? [path.join(here, 'baseline-worker.ts'), dbPath]
      : [path.join(here, '../src-main/core/tests/claim-worker.ts'), dbPath, 'bench', 'drain'];
  const kids = [0, 1].map(() => {
    const child = spawn(process.execPath, ['--import', 'tsx', ...worker], { stdio: ['pipe', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    return { child, out: () => out, done: new Promise((r) => child.on('exit', r)) };
  });
  while (!kids.every((k) => k.out().startsWith('ready\n'))) await new Promise((r) => setTimeout(r, 10));
  for (const k of kids) k.child.stdin!.end('go\n');
  await Promise.all(kids.map((k) => k.done));
  const ids = kids.flatMap((k) =>
    k
      .out()
      .split('\n')
      .slice(1)
      .filter(Boolean)
      .map((l) => (kind === 'naive' ? l : `${JSON.parse(l).task}/${JSON.parse(l).fence}`)),
  );
  const seen = new Map<string, number>();
  for (const id of ids) seen.set(id, (seen.get(id) ?? 0) + 1);
  return { claims: ids.length, doubles: [...seen.values()].filter((n) => n > 1).length };
}

export async function runBaselineBench(): Promise<Record<string, number>> {
  const naive: number[] = [];
  const gaffer: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    naive.push(naiveRate());
    gaffer.push(gafferRate());
  }
  const naiveRace = await race('naive');
  const gafferRace = await race('gaffer');
  const figures = {
    naiveClaimReportPerS: median(naive),
    gafferClaimReportPerS: median(gaffer),
    naiveRaceClaims: naiveRace.claims,
    naiveRaceDoubleClaims: naiveRace.doubles,
    gafferRaceClaims: gafferRace.claims,
    gafferRaceDoubleClaims: gafferRace.doubles,
  };
  printTable(`Baseline: naive "select then update" vs Gaffer's claim lock (same disk, synchronous=FULL, median of ${RUNS})`, [
    {
      implementation: 'naive select-then-update',
      'claim+report /s': Math.round(figures.naiveClaimReportPerS),
      'two processes, 2 000 tasks': `${naiveRace.doubles} handed out twice (${naiveRace.claims} claims)`,
      'audit / fence / expiry': 'none',
    },
    {
      implementation: 'Gaffer claim lock',
      'claim+report /s': Math.round(figures.gafferClaimReportPerS),
      'two processes, 2 000 tasks': `${gafferRace.doubles} handed out twice (${gafferRace.claims} claims incl. re-attempts)`,
      'audit / fence / expiry': 'yes',
    },
  ]);
  return figures;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await runBaselineBench();
