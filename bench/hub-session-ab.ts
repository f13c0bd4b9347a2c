/**
 * Paired A/B of the hub's server-side CPU per task WITHOUT sockets (issue 32): 50 sessions on
 * in-memory sockets (core.hub.connect), each sending report+claimNext frames as text the moment
 * the previous reply arrives, so every task crosses what the real hub runs — frame parse and
 * validation (session.ts), the request table, the group committer (one durable transaction per
 * batch, synchronous=FULL; SYNC_OFF=1 drops the fsync) and the reply's serialisation — but not
 * `ws` or the kernel. bench/hot-path-ab.ts is the same for the core alone.
 *   npx tsx bench/hub-session-ab.ts <checkoutA> <checkoutB> [rounds=8] [tasksPerRound=4000]
 * (a checkout: e.g. `git worktree add --detach /tmp/a main`, with node_modules linked in.)
 * CLAIM_NEXT=0: claim → report, two requests per task. PROFILE=<file>: a CPU profile of B's rounds.
 */
import fs from 'node:fs';
import { Session as Inspector } from 'node:inspector/promises';
import os from 'node:os';
import path from 'node:path';

const [dirA, dirB] = process.argv.slice(2, 4);
const ROUNDS = Number(process.argv[4] ?? 8);
const PER = Number(process.argv[5] ?? 4000);
const AGENTS = 50;
const CLAIM_NEXT = process.env.CLAIM_NEXT !== '0';

interface Conn {
  receive(text: string): void;
}

async function setup(dir: string) {
  const { createCore } = await import(path.join(dir, 'src-main/core/create-core.ts'));
  const data = fs.mkdtempSync(path.join(os.tmpdir(), 'gaffer-sab-'));
  const core = createCore({ dataDir: data, hub: { ratePerSecond: 1e9, rateBurst: 1e9 } });
  core.start();
  if (process.env.SYNC_OFF === '1') core.db.pragma('synchronous = OFF');
  const total = (ROUNDS + 3) * PER + 4 * AGENTS;
  for (let i = 0; i < total; i += 5000) {
    core.store.write(() => {
      for (let j = i; j < Math.min(total, i + 5000); j++) core.tasks.create({ title: `bench task ${j}`, role: 'bench', payload: { n: j } }, { actor: 'bench' });
    });
  }
  const { token } = core.tokens.create({ name: 'b', role: 'bench', actor: 'b' });
  const info = core.tokens.verify(token);
  let left = 0;
  let finished: (() => void) | undefined;
  const agents = Array.from({ length: AGENTS }, (_, k) => {
    const a = { conn: undefined as unknown as Conn, seq: 0, held: null as null | { task: { id: number }; lock: { fence: number } }, onReply: (_m: any) => {} };
    const socket = {
      send: (text: string) => queueMicrotask(() => a.onReply(JSON.parse(text))),
      close: () => {},
      bufferedAmount: 0,
    };
    a.conn = core.hub.connect(socket, { remoteAddress: '127.0.0.1', token: info }) as Conn;
    a.conn.receive(JSON.stringify({ id: ++a.seq, type: 'hello', role: 'bench', name: `a${k}` }));
    return a;
  });
  // One agent's loop: claim (when it holds nothing), then report (with claimNext: the reply's next).
  const next = (a: (typeof agents)[number]) => {
    if (left <= 0) {
      a.onReply = idle;
      if (finished && agents.every((x) => x.onReply === idle)) finished();
      return;
    }
    if (a.held === null) {
      a.onReply = (m) => {
        if (!m.ok) throw new Error(JSON.stringify(m));
        a.held = m.result.task ? m.result : null;
        next(a);
      };
      a.conn.receive(JSON.stringify({ id: ++a.seq, type: 'claim' }));
      return;
    }
    const h = a.held;
    a.onReply = (m) => {
      if (!m.ok) throw new Error(JSON.stringify(m));
      left--;
      a.held = CLAIM_NEXT && m.result.next?.task ? m.result.next : null;
      next(a);
    };
    a.conn.receive(JSON.stringify({ id: ++a.seq, type: 'report', taskId: h.task.id, fence: h.lock.fence, status: 'done', ...(CLAIM_NEXT ? { claimNext: true } : {}) }));
  };
  const idle = () => {};
  await new Promise((r) => setTimeout(r, 200)); // the hellos commit
  for (const a of agents) a.onReply = idle;
  const step = (n: number) =>
    new Promise<void>((resolve) => {
      left = n;
      finished = () => {
        finished = undefined;
        resolve();
      };
      for (const a of agents) next(a);
    });
  return { step, close: () => { core.close(); fs.rmSync(data, { recursive: true, force: true }); } };
}

const median = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); return s.length % 2 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2; };
const a = await setup(dirA!);
const b = await setup(dirB!);
await a.step(PER); await b.step(PER); // warm-up (JIT)
const inspector = process.env.PROFILE ? new Inspector() : undefined;
if (inspector) {
  inspector.connect();
  await inspector.post('Profiler.enable');
  await inspector.post('Profiler.setSamplingInterval', { interval: 100 });
}
const res: Record<string, number[]> = { A: [], B: [] };
for (let r = 0; r < ROUNDS; r++) {
  for (const [name, s] of (r % 2 ? [['B', b], ['A', a]] : [['A', a], ['B', b]]) as Array<[string, typeof a]>) {
    if (inspector && name === 'B') await inspector.post('Profiler.start');
    const c0 = process.cpuUsage();
    await s.step(PER);
    const c = process.cpuUsage(c0);
    if (inspector && name === 'B') {
      const { profile } = await inspector.post('Profiler.stop');
      if (r === ROUNDS - 1 || r === ROUNDS - 2) fs.writeFileSync(process.env.PROFILE!, JSON.stringify(profile));
    }
    res[name]!.push((c.user + c.system) / PER);
  }
}
const ma = median(res.A!), mb = median(res.B!);
console.log(`${CLAIM_NEXT ? 'report+claimNext' : 'claim → report'}, ${AGENTS} sessions, no sockets`);
console.log(`A ${dirA}: median ${ma.toFixed(1)} µs/task (rounds ${res.A!.map((x) => x.toFixed(0)).join(' ')})`);
console.log(`B ${dirB}: median ${mb.toFixed(1)} µs/task (rounds ${res.B!.map((x) => x.toFixed(0)).join(' ')})`);
console.log(`B / A = ${(mb / ma).toFixed(2)}; load ${os.loadavg()[0]!.toFixed(1)} on ${os.cpus().length} CPUs`);
a.close(); b.close();
process.exit(0);
