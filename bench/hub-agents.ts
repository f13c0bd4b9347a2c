/**
 * Benchmark agents, run in a CHILD process (forked by bench/hub.ts) so that client CPU does not
 * share the server's event loop. Raw `ws` clients speaking the agent protocol; driven over IPC.
 *
 *   {cmd:'run', url, token, agents, warmupMs, durationMs, claimNext?, role?, spawn?}  → {cycles, seconds, p50Ms, p99Ms, empty}
 *     one cycle = one task: claim → report (two round trips), or with `claimNext` report+claim in one
 *     (PROTOCOL §10: the report's reply carries the next task; a claim only when it had none).
 *     With `spawn` (an argv) each task first runs that command once, as a bare
 *     `child_process.spawn` (piped stdio, own process group, `{}` on stdin, wait for 'close'):
 *     the least any agent that runs a command per task can do (bench/command-agent.ts).
 *   {cmd:'spawn', spawn, n}                                → {msPerSpawn}  (n bare spawns of `spawn`, one after another)
 *   {cmd:'idle', url, token, agents}                       → {ready: n}   (then stays connected)
 *   {cmd:'hold', url, token}                               → {taskId}     (claims one task, then hangs)
 */
import { spawn } from 'node:child_process';
import WebSocket from 'ws';

// Wire JSON is whatever the peer sent: one deliberate escape hatch for reading it in tests/benchmarks.
type Json = any;

type Msg = { cmd: 'run' | 'spawn' | 'idle' | 'hold' | 'exit'; n?: number; url: string; token: string; agents?: number; warmupMs?: number; durationMs?: number; claimNext?: boolean; role?: string; spawn?: string[] };

/** Runs `argv` once the way bench/command-agent.ts's bare spawn does. */
function runOnce([command, ...args]: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const c = spawn(command!, args, { stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    c.once('error', reject);
    c.once('close', () => resolve());
    c.stdin.on('error', () => {}); // the command need not read its stdin
    c.stdin.end('{}\n');
  });
}

class Agent {
  private seq = 0;
  private readonly waiting = new Map<number, (r: Json) => void>();
  constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      const msg = JSON.parse(data.toString());
      const w = this.waiting.get(msg.id);
      if (w) {
        this.waiting.delete(msg.id);
        w(msg);
      }
    });
  }
  static open(url: string, token: string): Promise<Agent> {
    const ws = new WebSocket(url, { headers: { authorization: `Bearer ${token}` }, perMessageDeflate: false });
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(new Agent(ws)));
      ws.once('error', reject);
    });
  }
  request(frame: Record<string, unknown>): Promise<Json> {
    const id = ++this.seq;
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      this.ws.send(JSON.stringify({ id, ...frame }));
    });
  }
  async hello(name: string, role = 'bench'): Promise<string> {
    const r = await this.request({ type: 'hello', role, name });
    if (!r.ok) throw new Error(`hello refused: ${JSON.stringify(r.error)}`);
    return r.result.instanceId;
  }
}

async function openFleet(url: string, token: string, n: number, role?: string): Promise<Agent[]> {
  const fleet: Agent[] = [];
  // Connect in waves so 500 handshakes do not trip the server's backlog.
  // `token` may list several, comma-separated: one agent token holds at most 64 sockets at once.
  const tokens = token.split(',');
  for (let i = 0; i < n; i += 50) {
    const wave = await Promise.all(Array.from({ length: Math.min(50, n - i) }, (_, j) => Agent.open(url, tokens[(i + j) % tokens.length]!)));
    await Promise.all(wave.map((a, j) => a.hello(`bench-${i + j}`, role)));
    fleet.push(...wave);
  }
  return fleet;
}

async function run(m: Msg) {
  const fleet = await openFleet(m.url, m.token, m.agents ?? 1, m.role);
  const start = performance.now();
  const measureFrom = start + (m.warmupMs ?? 500);
  const end = measureFrom + (m.durationMs ?? 3000);
  let cycles = 0;
  let totalCycles = 0;
  let empty = 0;
  const lat: number[] = [];
  const claimNext = m.claimNext === true;
  await Promise.all(
    fleet.map(async (a) => {
      let held: Json = null; // {task, lock} handed over by the last report (claimNext)
      for (;;) {
        const t0 = performance.now();
        if (t0 >= end) {
          if (held) await a.request({ type: 'report', taskId: held.task.id, fence: held.lock.fence, status: 'backlog' });
          return;
        }
        let c = held;
        held = null;
        if (!c) {
          const reply = await a.request({ type: 'claim' });
          if (!reply.ok) throw new Error(`claim failed: ${JSON.stringify(reply.error)}`);
          c = reply.result;
        }
        if (c.task === null) {
          empty++;
          await new Promise((r) => setTimeout(r, 5));
          continue;
        }
        if (m.spawn) await runOnce(m.spawn);
        const r = await a.request({ type: 'report', taskId: c.task.id, fence: c.lock.fence, status: 'done', ...(claimNext ? { claimNext: true } : {}) });
        if (!r.ok) throw new Error(`report failed: ${JSON.stringify(r.error)}`);
        if (claimNext) {
          if (!r.result.next) throw new Error('claimNext: the report reply has no next');
          if (r.result.next.task) held = r.result.next;
        }
        const t1 = performance.now();
        totalCycles++;
        if (t0 >= measureFrom && t1 <= end) {
          cycles++;
          lat.push(t1 - t0);
        }
      }
    }),
  );
  for (const a of fleet) a.ws.close();
  lat.sort((x, y) => x - y);
  const q = (p: number) => lat[Math.min(lat.length - 1, Math.floor(p * lat.length))] ?? 0;
  return { cycles, totalCycles, seconds: (m.durationMs ?? 3000) / 1000, p50Ms: q(0.5), p99Ms: q(0.99), empty };
}

let kept: Agent[] = [];

process.on('message', (m: Msg) => {
  const reply = (v: unknown) => process.send!(v);
  const fail = (e: unknown) => reply({ error: String((e as Error)?.stack ?? e) });
  switch (m.cmd) {
    case 'run':
      run(m).then(reply, fail);
      break;
    case 'spawn':
      (async () => {
        const t0 = performance.now();
        for (let i = 0; i < (m.n ?? 100); i++) await runOnce(m.spawn!);
        return { msPerSpawn: (performance.now() - t0) / (m.n ?? 100) };
      })().then(reply, fail);
      break;
    case 'idle':
      openFleet(m.url, m.token, m.agents ?? 500).then((fleet) => {
        kept = fleet;
        reply({ ready: fleet.length });
      }, fail);
      break;
    case 'hold':
      openFleet(m.url, m.token, 1).then(async ([a]) => {
        kept = [a!];
        const c = await a!.request({ type: 'claim' });
        reply({ taskId: c.result?.task?.id ?? null });
      }, fail);
      break;
    case 'exit':
      for (const a of kept) a.ws.terminate();
      process.exit(0);
  }
});
process.send!({ up: true });
