/**
 * One checkout's hub, in process, for an instruction count (bench/hub-instr.mjs runs this under
 * `valgrind --tool=callgrind`): 50 in-memory sessions (as bench/hub-session-ab.ts: frame parse,
 * request table, group commit, audit, reply encoding; no sockets, no fsync) do WARM tasks, then
 * TASKS more, and exit. Two runs with different TASKS, the same seeding and warm-up, differ by the
 * instructions of the extra tasks alone.
 *   npx tsx bench/hub-instr.ts <checkout> <tasks> [warm=300]      CLAIM_NEXT=0: claim → report
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const [dir, tasksArg, warmArg] = process.argv.slice(2);
const TASKS = Number(tasksArg);
const WARM = Number(warmArg ?? 300);
const SEED = Number(process.env.SEED ?? 5000); // the same table for every run, whatever TASKS is
const CLAIM_NEXT = process.env.CLAIM_NEXT !== '0';
if (!dir || !(TASKS >= 0) || TASKS + WARM + 200 > SEED) throw new Error('usage: hub-instr.ts <checkout> <tasks ≤ 18 000> [warm]');

const { createCore } = await import(path.join(path.resolve(dir), 'src-main/core/create-core.ts'));
const data = fs.mkdtempSync(path.join(os.tmpdir(), 'gaffer-instr-'));
const core = createCore({ dataDir: data, hub: { ratePerSecond: 1e9, rateBurst: 1e9 } });
core.start();
core.db.pragma('synchronous = OFF');
for (let i = 0; i < SEED; i += 5000) {
  core.store.write(() => {
    for (let j = i; j < i + 5000; j++) core.tasks.create({ title: `bench task ${j}`, role: 'bench', payload: { n: j } }, { actor: 'bench' });
  });
}
const { token } = core.tokens.create({ name: 'b', role: 'bench', actor: 'b' });
const info = core.tokens.verify(token);
type Agent = { conn: { receive(t: string): void }; seq: number; held: any; onReply: (m: any) => void };
const idle = () => {};
let left = 0;
let finished: (() => void) | undefined;
const agents: Agent[] = Array.from({ length: 50 }, (_, k) => {
  const a: Agent = { conn: undefined as never, seq: 0, held: null, onReply: idle };
  a.conn = core.hub.connect({ send: (t: string) => queueMicrotask(() => a.onReply(JSON.parse(t))), close: () => {}, bufferedAmount: 0 }, { remoteAddress: '127.0.0.1', token: info });
  a.conn.receive(JSON.stringify({ id: ++a.seq, type: 'hello', role: 'bench', name: `a${k}` }));
  return a;
});
const check = (m: any) => {
  if (!m.ok) throw new Error(JSON.stringify(m));
};
const next = (a: Agent): void => {
  if (left <= 0) {
    a.onReply = idle;
    if (finished && agents.every((x) => x.onReply === idle)) finished();
    return;
  }
  if (a.held === null) {
    a.onReply = (m) => (check(m), (a.held = m.result.task ? m.result : null), next(a));
    a.conn.receive(JSON.stringify({ id: ++a.seq, type: 'claim' }));
    return;
  }
  const h = a.held;
  a.onReply = (m) => (check(m), left--, (a.held = CLAIM_NEXT && m.result.next?.task ? m.result.next : null), next(a));
  a.conn.receive(JSON.stringify({ id: ++a.seq, type: 'report', taskId: h.task.id, fence: h.lock.fence, status: 'done', ...(CLAIM_NEXT ? { claimNext: true } : {}) }));
};
const step = (n: number) =>
  new Promise<void>((resolve) => {
    left = n;
    finished = () => ((finished = undefined), resolve());
    for (const a of agents) next(a);
  });
await new Promise((r) => setTimeout(r, 200)); // the hellos commit
await step(WARM);
const c0 = process.cpuUsage();
if (TASKS > 0) await step(TASKS);
const c = process.cpuUsage(c0);
console.log(`${TASKS} tasks: ${((c.user + c.system) / Math.max(1, TASKS)).toFixed(1)} µs CPU per task`);
core.close();
fs.rmSync(data, { recursive: true, force: true });
process.exit(0);
