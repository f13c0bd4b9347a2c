/**
 * The trigger path of a burst, in process and on the manual clock (issues 26, 32): N jobs (default
 * 1 000) due at the very same instant, the hub replaced by a stub that takes every trigger (as
 * bench/jobs.ts `runner-burst` does), the clock moved to each due instant in turn. Per burst it
 * measures the process CPU of the pass that claims, checks and offers every slot (the triggers), and
 * of acknowledging and completing them (`run_started` + `run_result`, all in one transaction as the
 * hub's group commit would). No sockets, no real waits: a steady figure on a loaded machine.
 *
 *   npx tsx bench/jobs-profile.ts                       (N=1000 BURSTS=10 WARMUP=2)
 *   PROFILE=/tmp/burst.cpuprofile npx tsx bench/jobs-profile.ts   (the measured bursts only)
 *   COUNT=1 PLANS=1 BURSTS=2 npx tsx bench/jobs-profile.ts         (statements per trigger, and their query plans)
 *   COUNT=1 TIME=1 npx tsx bench/jobs-profile.ts                   (and each statement's µs per trigger, its native call timed)
 *   HISTORY=300 npx tsx bench/jobs-profile.ts                      (each job with 300 finished runs before the bursts)
 *
 * The stub speaks both the engine's port (pick/send) and the hub's older `pushJobTrigger`, so the
 * same file measures an older commit (copy it into that checkout's bench/).
 */
import fs from 'node:fs';
import { Session } from 'node:inspector/promises';
import os from 'node:os';
import path from 'node:path';
import { ManualClock } from '../src-main/common/clock';
import { createCore } from '../src-main/core/create-core';

const N = Number(process.env.N ?? 1000);
const BURSTS = Number(process.env.BURSTS ?? 10);
const WARMUP = Number(process.env.WARMUP ?? 2);
// HISTORY=K: before the measured bursts, K finished runs more per job, due 10 s apart before its
// first (a job that has run for a while: 300 is 50 minutes of a 10-s job). Its per-trigger reads
// should not grow with it.
const HISTORY = Number(process.env.HISTORY ?? 0);
// TIME=1 (with COUNT=1): each statement's native call timed as well as counted.
const TIMED = Boolean(process.env.TIME);

/** K copies of each job's first run, finished, at slots before it (bench only: no audit rows for them). */
function seedHistory(db: ReturnType<typeof createCore>['db'], k: number): void {
  const cols = (db.prepare('SELECT name FROM pragma_table_info(?)').pluck().all('runs') as string[]);
  const expr = (c: string) => (c === 'id' || c === 'slot' ? `r.${c} || '~' || k.n` : c === 'slot_at' ? 'r.slot_at - k.n * 10000' : `r.${c}`);
  const t0 = performance.now();
  const n = db
    .prepare(
      `INSERT INTO runs (${cols.join(', ')})
       WITH RECURSIVE k(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM k WHERE n < ?)
       SELECT ${cols.map(expr).join(', ')} FROM runs r, k WHERE r.slot_at = (SELECT min(slot_at) FROM runs) AND r.status NOT IN ('pending', 'running')`,
    )
    .run(k).changes;
  console.log(`history: ${n} finished runs added (${k} per job) in ${(performance.now() - t0).toFixed(0)} ms`);
}

type Sink = { runStarted(i: string, r: object): object; runResult(i: string, r: object): object };
type Trigger = { runId: string; slotAt: string };

const cpuMs = (c: NodeJS.CpuUsage) => (c.user + c.system) / 1000;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gaffer-burst-'));
  const clock = new ManualClock('2026-11-30T00:00:00.000Z');
  const core = createCore({ clock, dataDir: dir, config: { sweepIntervalS: 3600 }, hub: { pingIntervalMs: 0 } });
  const hub = core.hub as unknown as {
    connectedInstances: () => string[];
    runTakers: () => string[];
    setRunSink: (s: Sink | undefined) => void;
    pick: (role: string, exclude: ReadonlySet<string>) => string | null;
    send: (id: string, push: { type: string } & Partial<Trigger>) => boolean;
    pushJobTrigger: (role: string, t: Trigger) => Promise<unknown>;
  };
  let sink: Sink | undefined;
  const got: string[] = [];
  hub.connectedInstances = () => ['stub'];
  hub.runTakers = () => ['stub'];
  hub.setRunSink = (s) => (sink = s);
  hub.pick = (_role, exclude) => (exclude.has('stub') ? null : 'stub');
  hub.send = (_id, push) => {
    if (push.type === 'job_trigger') got.push(push.runId!);
    return true;
  };
  hub.pushJobTrigger = (_role, t) => {
    got.push(t.runId);
    return new Promise((resolve) => setImmediate(() => resolve({ status: 'acknowledged', runId: t.runId, instanceId: 'stub', offeredTo: ['stub'] })));
  };
  core.start();
  for (let i = 0; i < N; i++) {
    core.jobs.create({ name: `job-${i}`, role: 'bench', schedule: { everyS: 10 }, missedWindow: 'skip_and_alert', retry: { maxAttempts: 1 }, overlap: 'allow' }, { actor: 'bench' });
  }
  const settle = async () => {
    await core.jobs.settled();
    for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
  };
  await settle();
  const inspector = new Session();
  // COUNT=1: how often each statement runs per trigger in the measured bursts, for the trigger
  // pass and for ack + result apart.
  // TIME=1 adds the time inside each statement's call (wall, of a single thread: CPU but for the
  // commits' fsyncs), in µs per trigger.
  const counts = { pass: new Map<string, number>(), ack: new Map<string, number>() };
  const times = { pass: new Map<string, number>(), ack: new Map<string, number>() };
  let counting: Map<string, number> | undefined;
  let timing: Map<string, number> | undefined;
  if (process.env.COUNT) {
    const proto = Object.getPrototypeOf(core.db.prepare('SELECT 1')) as Record<string, (...a: unknown[]) => unknown>;
    for (const m of ['run', 'get', 'all', 'iterate']) {
      const orig = proto[m]!;
      proto[m] = function (this: { source: string }, ...a: unknown[]) {
        if (!counting) return orig.apply(this, a);
        const key = `${m} ${this.source}`;
        counting.set(key, (counting.get(key) ?? 0) + 1);
        if (!TIMED) return orig.apply(this, a);
        const t0 = performance.now();
        try {
          return orig.apply(this, a);
        } finally {
          timing!.set(key, (timing!.get(key) ?? 0) + (performance.now() - t0) * 1000);
        }
      };
    }
  }
  const trig: number[] = [];
  const wall: number[] = [];
  const done: number[] = [];
  let triggers = 0;
  for (let b = 0; b < WARMUP + BURSTS; b++) {
    const measuring = b >= WARMUP;
    if (b === WARMUP && HISTORY > 0) seedHistory(core.db, HISTORY);
    if (measuring && b === WARMUP && process.env.PROFILE) {
      inspector.connect();
      await inspector.post('Profiler.enable');
      await inspector.post('Profiler.start');
    }
    got.length = 0;
    counting = measuring ? counts.pass : undefined;
    timing = times.pass;
    // To the next instant that is a multiple of 10 s: every job is due.
    const next = Math.ceil((clock.now() + 1) / 10_000) * 10_000;
    const c0 = process.cpuUsage();
    const w0 = performance.now();
    clock.advance(next - clock.now());
    await settle();
    const w1 = performance.now() - w0;
    const c1 = process.cpuUsage(c0);
    if (got.length !== N) throw new Error(`burst ${b}: ${got.length} triggers, expected ${N}`);
    const ids = got.splice(0);
    counting = measuring ? counts.ack : undefined;
    timing = times.ack;
    const c2 = process.cpuUsage();
    core.store.write(() => {
      for (const id of ids) {
        sink!.runStarted('stub', { type: 'run_started', runId: id });
        sink!.runResult('stub', { type: 'run_result', runId: id, outcome: 'success' });
      }
    });
    await settle();
    const c3 = process.cpuUsage(c2);
    if (measuring) {
      trig.push(cpuMs(c1));
      wall.push(w1);
      done.push(cpuMs(c3));
      triggers += ids.length;
    }
  }
  counting = undefined;
  const plan = (sql: string) => {
    try {
      const stmt = core.db.prepare(`EXPLAIN QUERY PLAN ${sql}`);
      const n = (sql.match(/\?/g) ?? []).length;
      const named = [...new Set(sql.match(/@\w+/g) ?? [])].map((k) => k.slice(1));
      const args: unknown[] = named.length ? [Object.fromEntries(named.map((k) => [k, null]))] : Array(n).fill(null);
      return (stmt.all(...args) as Array<{ detail: string }>).map((r) => r.detail).join(' | ');
    } catch (err) {
      return `(no plan: ${(err as Error).message})`;
    }
  };
  if (process.env.COUNT) {
    const total = (m: Map<string, number>) => [...m.values()].reduce((n, c) => n + c, 0) / triggers;
    console.log(`statements per trigger: ${(total(counts.pass) + total(counts.ack)).toFixed(1)} (trigger pass ${total(counts.pass).toFixed(1)}, ack + result ${total(counts.ack).toFixed(1)})`);
    for (const [what, m] of Object.entries(counts)) {
      console.log(`-- ${what === 'pass' ? 'trigger pass' : 'ack + result'}`);
      const spent = times[what as keyof typeof times];
      const order = (sql: string) => (TIMED ? (spent.get(sql) ?? 0) : m.get(sql)!);
      for (const [sql, c] of [...m].sort((a, b) => order(b[0]) - order(a[0]))) {
        const us = TIMED ? `${((spent.get(sql) ?? 0) / triggers).toFixed(1).padStart(6)} µs  ` : '';
        console.log(`${(c / triggers).toFixed(2).padStart(6)}  ${us}${sql.replace(/\s+/g, ' ').slice(0, 150)}`);
        // PLANS=1: how SQLite runs each (a SCAN, or an index that leaves the job's whole history to filter, shows here).
        if (process.env.PLANS && /^(all|get|iterate) /.test(sql)) console.log(`        ${plan(sql.slice(sql.indexOf(' ') + 1))}`);
      }
    }
  }
  if (process.env.PROFILE) {
    const { profile } = await inspector.post('Profiler.stop');
    fs.writeFileSync(process.env.PROFILE, JSON.stringify(profile));
    inspector.disconnect();
  }
  if (HISTORY > 0) {
    // The safety sweep (every `sweepIntervalS`, 60 s by default) reads every open run, in a write transaction.
    const engine = (core.jobs as unknown as { engine: { sweep(): void } }).engine;
    const sweeps: number[] = [];
    for (let i = 0; i < 3; i++) {
      const c0 = process.cpuUsage();
      engine.sweep();
      sweeps.push(cpuMs(process.cpuUsage(c0)));
    }
    console.log(`  the sweep with ${N * (HISTORY + 1 + WARMUP + BURSTS)} runs: ${sweeps.map((x) => x.toFixed(1)).join(' ')} ms CPU`);
  }
  const per1000 = (xs: number[]) => (median(xs) / N) * 1000;
  console.log(`${N} jobs due at once, ${BURSTS} bursts (median): trigger pass ${per1000(trig).toFixed(0)} ms CPU per 1 000, ack + result ${per1000(done).toFixed(0)} ms per 1 000, total ${(per1000(trig) + per1000(done)).toFixed(0)} ms per 1 000 triggers (${triggers} triggers)`);
  console.log(`  trigger pass per burst: ${trig.map((x) => x.toFixed(0)).join(' ')} ms CPU; wall (CPU + the commits' fsyncs) ${wall.map((x) => x.toFixed(0)).join(' ')} ms, median ${median(wall).toFixed(0)}`);
  core.close();
  fs.rmSync(dir, { recursive: true, force: true });
}

await main();
process.exit(0);
