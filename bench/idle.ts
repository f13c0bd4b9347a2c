/**
 * Idle cost, measured from outside: the real start chain (`npm start -- --headless`), 200 jobs
 * (daily, none due during the window) and 20 connected SDK agents that wait for work (heartbeats
 * only), watched for 60 s through /proc: the server's CPU ticks and its wake-ups (voluntary context
 * switches: every sleep of a thread that ended, so timers, socket reads and fsync waits all count;
 * the main thread's alone is the event loop). The gap detector's pulse (≤ 1 s) is counted like the
 * rest. After 30 s to settle, the jobs alone (half a window), then with the agents. Also the chain's Node
 * processes and their RSS together.
 * Also what one durable commit costs in wake-ups on this disk (a probe in the bench's own thread:
 * the fsync of a synchronous=FULL WAL commit sleeps until the disk answers, each sleep a voluntary
 * context switch), so the figure can be read as the clock pulse + the storage look + heartbeat
 * reads + the heartbeats' batched commits.
 * Targets: < 1 % of one core, < 2 wake-ups/s. Run: npm run bench -- idle
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { DEFAULT_CONFIG } from '../src-main/common/config';
import { STORAGE_CHECK_MS } from '../src-main/core/db/storage-watch';
import { BEATS_WRITE_MS } from '../src-main/core/instances/registry';
import { pulseMs } from '../src-main/core/time/gap-detector';
import { connect, type Agent } from '../src-main/sdk';
import { BENCH_OPERATOR_TOKEN, startHeadless } from './headless-proc';
import { chainFootprint, sampleProc, ticksPerSecond } from './proc';
import { seedBigData } from './startup-seed';
import { benchDir, printTable } from './util';

const JOBS = 200;
const AGENTS = Number(process.env.GAFFER_BENCH_IDLE_AGENTS ?? 20);
const WINDOW_S = Number(process.env.GAFFER_BENCH_IDLE_S ?? 60);
const SETTLE_S = 30;

/** CPU (% of one core) and wake-ups per second of `pid` over `seconds`. */
async function watch(pid: number, seconds: number): Promise<{ cpuPct: number; wakeups: number; mainWakeups: number }> {
  const a = sampleProc(pid);
  const t0 = performance.now();
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const b = sampleProc(pid);
  const s = (performance.now() - t0) / 1000;
  const r2 = (x: number) => Math.round(x * 100) / 100;
  return { cpuPct: r2((100 * (b.cpuTicks - a.cpuTicks)) / ticksPerSecond() / s), wakeups: r2((b.wakeups - a.wakeups) / s), mainWakeups: r2((b.mainWakeups - a.mainWakeups) / s) };
}

/** Voluntary context switches of this thread per durable commit (WAL, synchronous=FULL) in `dir`. */
function wakeupsPerDurableCommit(dir: string, commits = 200): number {
  const file = path.join(dir, 'commit-probe.db');
  const db = new Database(file);
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.exec('CREATE TABLE beat (id INTEGER PRIMARY KEY, at INTEGER NOT NULL); INSERT INTO beat VALUES (1, 0)');
    const update = db.prepare('UPDATE beat SET at = ? WHERE id = 1');
    const own = () => Number(/^voluntary_ctxt_switches:\s+(\d+)/m.exec(fs.readFileSync('/proc/thread-self/status', 'utf8'))?.[1] ?? NaN);
    const before = own();
    for (let i = 0; i < commits; i++) update.run(i);
    return Math.round(((own() - before) / commits) * 100) / 100;
  } finally {
    db.close();
    for (const f of [file, `${file}-wal`, `${file}-shm`]) fs.rmSync(f, { force: true });
  }
}

const sleep = (s: number) => new Promise((r) => setTimeout(r, s * 1000));

export async function runIdleBench(): Promise<Record<string, number>> {
  const dir = benchDir('idle');
  seedBigData(dir, { auditRows: 0, tasks: 0, jobs: JOBS });
  const perCommit = wakeupsPerDurableCommit(dir);
  const g = await startHeadless(dir);
  const agents: Agent[] = [];
  try {
    // Settle first: V8 collects the start's garbage over its first ~15 s (its GC threads wake
    // several times a second meanwhile; that is start-up, not idling).
    await sleep(SETTLE_S);
    const alone = await watch(g.serverPid, WINDOW_S / 2);
    const r = await fetch(`${g.url}/api/v1/tokens`, {
      method: 'POST',
      headers: { authorization: `Bearer ${BENCH_OPERATOR_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'idle bench' }),
    });
    const { token } = (await r.json()) as { token: string };
    for (let i = 0; i < AGENTS; i++) {
      const a = await connect({ url: g.agentUrl, token, role: ['dev', 'pm', 'ops', 'data', 'reviewer'][i % 5]!, name: `idle-${i}` });
      a.onJob(() => undefined); // waits for job triggers, as an idle agent of a job role does
      agents.push(a);
    }
    await sleep(SETTLE_S / 2); // the hellos commit, the heartbeats fall into step
    const busy = await watch(g.serverPid, WINDOW_S);
    const heartbeatsPerS = AGENTS / ((agents[0]?.hello?.heartbeatIntervalMs ?? 20_000) / 1000);
    const pulsePerS = 1000 / pulseMs(DEFAULT_CONFIG);
    const storagePerS = 1000 / STORAGE_CHECK_MS;
    const beatCommitsPerS = Math.round((1000 / BEATS_WRITE_MS) * 100) / 100;
    const chain = chainFootprint(g.rootPid);
    const rss = sampleProc(g.serverPid).rssKb;
    const figures = {
      'idle.cpuPctOfCore': busy.cpuPct,
      'idle.wakeupsPerS': busy.wakeups,
      'idle.mainThreadWakeupsPerS': busy.mainWakeups,
      'idle.agentHeartbeatsPerS': heartbeatsPerS,
      'idle.wakeupsPerDurableCommit': perCommit,
      'idle.noAgents.cpuPctOfCore': alone.cpuPct,
      'idle.noAgents.wakeupsPerS': alone.wakeups,
      'idle.noAgents.mainThreadWakeupsPerS': alone.mainWakeups,
      'idle.serverRssMb': Math.round(rss / 102.4) / 10,
      'idle.chainNodeProcesses': chain.nodeProcesses,
      'idle.chainRssMb': chain.rssMb,
    };
    const ok = (pass: boolean) => (pass ? 'ok' : 'MISSED');
    printTable(`Idle: ${JOBS} jobs, ${AGENTS} idle agents, ${WINDOW_S} s (server measured from outside, /proc)`, [
      { figure: 'server CPU', value: `${busy.cpuPct} % of one core`, target: `< 1 %: ${ok(busy.cpuPct < 1)}` },
      { figure: 'wake-ups, all threads', value: `${busy.wakeups} /s (main thread ${busy.mainWakeups} /s; the agents send ${heartbeatsPerS} heartbeats/s, each read, written together every ${BEATS_WRITE_MS / 1000} s)`, target: `< 2 /s: ${ok(busy.wakeups < 2)}` },
      {
        figure: '  read as',
        value: `clock pulse ${pulsePerS} /s + storage look ${storagePerS} /s + ${heartbeatsPerS} heartbeat reads/s + ${beatCommitsPerS} heartbeat commits/s × ${perCommit} wake-ups per durable commit on this disk = ${Math.round((pulsePerS + storagePerS + heartbeatsPerS + beatCommitsPerS * perCommit) * 100) / 100} /s`,
        target: '',
      },
      { figure: `the same ${JOBS} jobs, no agent (${WINDOW_S / 2} s)`, value: `${alone.cpuPct} % of one core, ${alone.wakeups} wake-ups/s (main thread ${alone.mainWakeups} /s: the clock pulse is ${pulsePerS} /s, the storage look ${storagePerS} /s)`, target: '' },
      { figure: 'start chain', value: `${chain.nodeProcesses} Node process(es), ${chain.rssMb} MB RSS in all (server ${figures['idle.serverRssMb']} MB)`, target: '' },
      ...chain.commands.map((c) => ({ figure: '  process', value: c, target: '' })),
    ]);
    return figures;
  } finally {
    await Promise.all(agents.map((a) => a.close({ timeoutMs: 100 })));
    await g.stop();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await runIdleBench();
