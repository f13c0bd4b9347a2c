/**
 * Idle cost, measured from outside: the real start chain (`npm start -- --headless`), 200 jobs
 * (daily, none due during the window) and 20 connected SDK agents that wait for work (heartbeats
 * only), watched for 60 s through /proc: the server's CPU ticks and its wake-ups (voluntary context
 * switches: every sleep of a thread that ended, so timers, socket reads and fsync waits all count;
 * the main thread's alone is the event loop). The gap detector's pulse (≤ 1 s) is counted like the
 * rest. Also the chain's Node processes and their RSS together.
 * Targets: < 1 % of one core, < 2 wake-ups/s. Run: npm run bench -- idle
 */
import { fileURLToPath } from 'node:url';
import { connect, type Agent } from '../src-main/sdk';
import { BENCH_OPERATOR_TOKEN, startHeadless } from './headless-proc';
import { chainFootprint, sampleProc, ticksPerSecond } from './proc';
import { seedBigData } from './startup-seed';
import { benchDir, printTable } from './util';

const JOBS = 200;
const AGENTS = 20;
const WINDOW_S = Number(process.env.GAFFER_BENCH_IDLE_S ?? 60);

export async function runIdleBench(): Promise<Record<string, number>> {
  const dir = benchDir('idle');
  seedBigData(dir, { auditRows: 0, tasks: 0, jobs: JOBS });
  const g = await startHeadless(dir);
  const agents: Agent[] = [];
  try {
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
    await new Promise((r) => setTimeout(r, 3000)); // hellos committed, first pings/heartbeats settled
    const a = sampleProc(g.serverPid);
    const t0 = performance.now();
    await new Promise((r) => setTimeout(r, WINDOW_S * 1000));
    const b = sampleProc(g.serverPid);
    const seconds = (performance.now() - t0) / 1000;
    const chain = chainFootprint(g.rootPid);
    const figures = {
      'idle.cpuPctOfCore': Math.round(((100 * (b.cpuTicks - a.cpuTicks)) / ticksPerSecond() / seconds) * 100) / 100,
      'idle.wakeupsPerS': Math.round(((b.wakeups - a.wakeups) / seconds) * 100) / 100,
      'idle.mainThreadWakeupsPerS': Math.round(((b.mainWakeups - a.mainWakeups) / seconds) * 100) / 100,
      'idle.serverRssMb': Math.round(b.rssKb / 102.4) / 10,
      'idle.chainNodeProcesses': chain.nodeProcesses,
      'idle.chainRssMb': chain.rssMb,
    };
    const ok = (pass: boolean) => (pass ? 'ok' : 'MISSED');
    printTable(`Idle: ${JOBS} jobs, ${AGENTS} idle agents, ${WINDOW_S} s (server measured from outside, /proc)`, [
      { figure: 'server CPU', value: `${figures['idle.cpuPctOfCore']} % of one core`, target: `< 1 %: ${ok(figures['idle.cpuPctOfCore'] < 1)}` },
      { figure: 'wake-ups, all threads', value: `${figures['idle.wakeupsPerS']} /s (main thread ${figures['idle.mainThreadWakeupsPerS']} /s)`, target: `< 2 /s: ${ok(figures['idle.wakeupsPerS'] < 2)}` },
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
