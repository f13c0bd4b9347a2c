/**
 * Does the hub keep anything per task? 50 in-memory sessions (as bench/hub-session-ab.ts) run
 * report+claimNext in steps; after each step a full GC and the heap's used size. A flat line means
 * nothing is retained per task; a slope is bytes kept per task.
 *   node --expose-gc --import tsx bench/hub-retain.ts [steps=6] [tasksPerStep=4000]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import { Session } from 'node:inspector/promises';
import { createCore } from '../src-main/core/create-core';

const STEPS = Number(process.argv[2] ?? 6);
const PER = Number(process.argv[3] ?? 4000);
const gc = (globalThis as { gc?: () => void }).gc!;
const data = fs.mkdtempSync(path.join(os.tmpdir(), 'gaffer-retain-'));
const core = createCore({ dataDir: data, hub: { ratePerSecond: 1e9, rateBurst: 1e9 } });
core.start();
core.db.pragma('synchronous = OFF');
const total = (STEPS + 2) * PER + 200;
for (let i = 0; i < total; i += 5000) {
  core.store.write(() => {
    for (let j = i; j < Math.min(total, i + 5000); j++) core.tasks.create({ title: `bench task ${j}`, role: 'bench', payload: { n: j } }, { actor: 'bench' });
  });
}
const { token } = core.tokens.create({ name: 'b', role: 'bench', actor: 'b' });
const info = core.tokens.verify(token)!;
let left = 0;
let finished: (() => void) | undefined;
type Agent = { conn: { receive(t: string): void }; seq: number; held: any; onReply: (m: any) => void };
const idle = () => {};
const agents: Agent[] = Array.from({ length: 50 }, (_, k) => {
  const a: Agent = { conn: undefined as never, seq: 0, held: null, onReply: idle };
  a.conn = core.hub.connect({ send: (t: string) => queueMicrotask(() => a.onReply(JSON.parse(t))), close: () => {}, bufferedAmount: 0 }, { remoteAddress: '127.0.0.1', token: info }) as never;
  a.conn.receive(JSON.stringify({ id: ++a.seq, type: 'hello', role: 'bench', name: `a${k}` }));
  return a;
});
const next = (a: Agent): void => {
  if (left <= 0) {
    a.onReply = idle;
    if (finished && agents.every((x) => x.onReply === idle)) finished();
    return;
  }
  if (a.held === null) {
    a.onReply = (m) => ((a.held = m.result.task ? m.result : null), next(a));
    a.conn.receive(JSON.stringify({ id: ++a.seq, type: 'claim' }));
    return;
  }
  const h = a.held;
  a.onReply = (m) => (left--, (a.held = m.result.next?.task ? m.result.next : null), next(a));
  a.conn.receive(JSON.stringify({ id: ++a.seq, type: 'report', taskId: h.task.id, fence: h.lock.fence, status: 'done', claimNext: true }));
};
const step = (n: number) =>
  new Promise<void>((resolve) => {
    left = n;
    finished = () => ((finished = undefined), resolve());
    for (const a of agents) next(a);
  });
await new Promise((r) => setTimeout(r, 200));
const used = () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};
await step(PER);
const base = used();
let prev = base;
for (let s = 1; s <= STEPS; s++) {
  await step(PER);
  const u = used();
  console.log(`after ${s * PER} tasks: heap used ${(u / 1e6).toFixed(2)} MB (+${((u - prev) / PER).toFixed(0)} B/task this step)`);
  prev = u;
}
console.log(`retained: ${((prev - base) / (STEPS * PER)).toFixed(0)} B per task over ${STEPS * PER} tasks`);
if (process.env.ALLOC) {
  // Sampled allocations of one more step, by function (self bytes), to a file and the top 25 printed.
  const ins = new Session();
  ins.connect();
  await ins.post('HeapProfiler.enable');
  await ins.post('HeapProfiler.startSampling', { samplingInterval: 512, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  await step(PER);
  const { profile } = await ins.post('HeapProfiler.stopSampling');
  fs.writeFileSync(process.env.ALLOC, JSON.stringify(profile));
  const self = new Map<string, number>();
  let all = 0;
  const walk = (n: any) => {
    const bytes = n.selfSize as number;
    all += bytes;
    const f = n.callFrame;
    const k = `${f.functionName || '(anon)'} ${String(f.url).split('/').slice(-2).join('/')}:${f.lineNumber + 1}`;
    self.set(k, (self.get(k) ?? 0) + bytes);
    for (const c of n.children) walk(c);
  };
  walk(profile.head);
  console.log(`sampled allocation: ${(all / PER).toFixed(0)} B per task`);
  for (const [k, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(`${(v / PER).toFixed(0).padStart(7)} B/task  ${k}`);
}
if (process.env.SNAPSHOT) v8.writeHeapSnapshot(process.env.SNAPSHOT);
core.close();
fs.rmSync(data, { recursive: true, force: true });
process.exit(0);
