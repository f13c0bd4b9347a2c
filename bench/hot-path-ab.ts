/**
 * Paired A/B of the core's hot-path CPU per task, two checkouts in ONE process (issue 32): each
 * task is a done report then a claim, each in its own savepoint, 50 per transaction (what
 * report+claimNext does through the group committer at 50 agents), durable (synchronous=FULL;
 * SYNC_OFF=1 drops the fsync). The builds alternate every round, so a loaded machine slows both
 * alike; no sockets, no agents process: the hub's transport is not in it.
 *   npx tsx bench/hot-path-ab.ts <checkoutA> <checkoutB> [rounds=10] [tasksPerRound=2000]
 * (a checkout: e.g. `git worktree add --detach /tmp/a main`, with node_modules linked in).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const [dirA, dirB] = process.argv.slice(2, 4);
const ROUNDS = Number(process.argv[4] ?? 10);
const PER = Number(process.argv[5] ?? 2000);
const BATCH = 50;

async function setup(dir: string) {
  const { createCore } = await import(path.join(dir, 'src-main/core/create-core.ts'));
  const data = fs.mkdtempSync(path.join(os.tmpdir(), 'gaffer-ab-'));
  const core = createCore({ dataDir: data });
  if (process.env.SYNC_OFF === '1') core.db.pragma('synchronous = OFF');
  const total = ROUNDS * PER + 3 * PER + BATCH;
  for (let i = 0; i < total; i += 5000) {
    core.store.write(() => {
      for (let j = i; j < Math.min(total, i + 5000); j++) core.tasks.create({ title: `bench task ${j}`, role: 'bench', payload: { n: j } }, { actor: 'bench' });
    });
  }
  const insts = Array.from({ length: BATCH }, (_, k) => core.instances.register({ role: 'bench', name: `a${k}` }).id as string);
  // Each agent holds one task (as after its first claim).
  const held: Array<{ id: number; fence: number }> = [];
  core.store.write(() => {
    for (const inst of insts) {
      const r = core.locks.claimChecked({ instanceId: inst, role: undefined });
      held.push({ id: r.task.id, fence: r.lock.fence });
    }
  });
  const step = (n: number) => {
    for (let done = 0; done < n; done += BATCH) {
      core.store.write(() => {
        for (let k = 0; k < BATCH; k++) {
          const h = held[k]!;
          core.store.write(() => core.locks.reportChecked({ instanceId: insts[k], taskId: h.id, fence: h.fence, status: 'done' }));
          const r = core.store.write(() => core.locks.claimChecked({ instanceId: insts[k], role: undefined }));
          held[k] = { id: r.task.id, fence: r.lock.fence };
        }
      });
    }
  };
  return { step, close: () => { core.close(); fs.rmSync(data, { recursive: true, force: true }); } };
}

const median = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); return s.length % 2 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2; };
const a = await setup(dirA!);
const b = await setup(dirB!);
a.step(PER); b.step(PER); // warm-up (JIT)
const res: Record<string, number[]> = { A: [], B: [] };
for (let r = 0; r < ROUNDS; r++) {
  for (const [name, s] of (r % 2 ? [['B', b], ['A', a]] : [['A', a], ['B', b]]) as Array<[string, typeof a]>) {
    const c0 = process.cpuUsage();
    s.step(PER);
    const c = process.cpuUsage(c0);
    res[name]!.push((c.user + c.system) / PER);
  }
}
const ma = median(res.A!), mb = median(res.B!);
console.log(`A ${dirA}: median ${ma.toFixed(1)} µs/task (rounds ${res.A!.map((x) => x.toFixed(0)).join(' ')})`);
console.log(`B ${dirB}: median ${mb.toFixed(1)} µs/task (rounds ${res.B!.map((x) => x.toFixed(0)).join(' ')})`);
console.log(`B / A = ${(mb / ma).toFixed(2)}; load ${os.loadavg()[0]!.toFixed(1)} on ${os.cpus().length} CPUs`);
a.close(); b.close();
process.exit(0);
