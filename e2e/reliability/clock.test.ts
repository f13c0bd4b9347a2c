/**
 * Scenario 3 — clock jumps while locks (and jobs) are live: an in-process core on a ManualClock
 * behind the real server (HTTP + agent socket on 127.0.0.1), agents speaking the wire protocol.
 * `clock.jump` steps the wall clock without letting timers run (a laptop sleep, an NTP step);
 * `clock.advance` lets time pass.
 *
 * Expected outcomes:
 * - forward (sleep 5 h): no mass expiry — no lock expires and no instance goes offline because of
 *   the jump; each lock keeps the time it had left (it expires when that time has really passed,
 *   within one sweep), including a lock granted after the wake but before the gap detector noticed.
 * - backward (one hour): no lock lives an extra hour — a lock with 30 min left expires after
 *   30 min, not 90 — and none loses time either.
 * - jobs: every slot has at most one run, the hours slept through get one
 *   decision per slot by policy (no trigger storm), and after a backward step no slot runs twice;
 *   a row written after the step carries true time (not the last instant before it).
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src-main/common/clock';
import type { SchedulerConfig } from '../../src-main/common/config';
import { createCore, type Core } from '../../src-main/core/create-core';
import { startServer, type RunningServer } from '../../src-main/server/server';
import { allInvariants, assertNoProblems } from './lib/invariants';
import { figures, sleep } from './lib/mode';
import { removeTempDirs, tempDir } from './lib/server';
import { RawAgent, type Json } from './lib/wire';

const MIN = 60_000;
const HOUR = 60 * MIN;

interface World {
  core: Core;
  clock: ManualClock;
  server: RunningServer;
  agents: RawAgent[];
  busy: { n: number };
}

let world: World | undefined;
afterAll(removeTempDirs);
afterEach(async () => {
  if (!world) return;
  for (const a of world.agents) a.kill();
  await world.server.close();
  world.core.close();
  world = undefined;
});

async function start(config: Partial<SchedulerConfig> = {}): Promise<World> {
  const clock = new ManualClock('2026-11-30T08:00:00.000Z');
  const core = createCore({ clock, dataDir: tempDir('clock'), config, hub: { pingIntervalMs: 0 } });
  core.start();
  const server = await startServer(core, { port: 0, operatorToken: 'gfo_clock_test' });
  world = { core, clock, server, agents: [], busy: { n: 0 } };
  return world;
}

async function agent(w: World, role: string, name: string): Promise<RawAgent> {
  const token = w.core.tokens.create({ name, role, actor: 'test' }).token;
  const a = await RawAgent.hello(w.server.agentUrl, token, role, name);
  w.agents.push(a);
  return a;
}

/** Waits (real time) until every write has committed and nothing moves any more. */
async function settle(w: World): Promise<void> {
  for (let i = 0; i < 400; i++) {
    await w.core.jobs.settled();
    const before = w.core.audit.count();
    await sleep(3);
    if (w.busy.n === 0 && w.core.committer.pending === 0 && w.core.audit.count() === before) return;
  }
}

/** Lets `ms` pass in steps of one minute; the agents heartbeat after every step. */
async function pass(w: World, ms: number, step = MIN): Promise<void> {
  for (let done = 0; done < ms; done += step) {
    w.clock.advance(Math.min(step, ms - done));
    await settle(w);
    for (const a of w.agents) if (a.open) await a.request('heartbeat');
    await settle(w);
  }
}

function auditRows(core: Core, type: string): Array<{ at: number; subject: string; detail: Json }> {
  return (core.db.prepare('SELECT at, subject, detail FROM audit WHERE type = ? ORDER BY id').all(type) as Array<{ at: number; subject: string; detail: string }>).map((r) => ({
    ...r,
    detail: JSON.parse(r.detail),
  }));
}

function task(w: World, title: string): number {
  return w.core.tasks.create({ title, role: 'dev' }, { actor: 'test' }).task.id;
}

async function claim(a: RawAgent): Promise<{ taskId: number; expiresAt: number }> {
  const r = await a.request('claim');
  expect(r.ok).toBe(true);
  return { taskId: r.result.task.id, expiresAt: Date.parse(r.result.lock.expiresAt) };
}

/** Heartbeats on, no renewals: advances until every listed lock has expired; returns when each did. */
async function expiriesOf(w: World, taskIds: number[], maxMs: number): Promise<Map<number, { at: number; reason: string }>> {
  const out = new Map<number, { at: number; reason: string }>();
  for (let t = 0; t < maxMs && out.size < taskIds.length; t += MIN) {
    await pass(w, MIN);
    for (const e of auditRows(w.core, 'lock.expire')) {
      const id = Number(e.subject.slice(5));
      if (taskIds.includes(id) && !out.has(id)) out.set(id, { at: e.at, reason: e.detail.reason });
    }
  }
  return out;
}

describe('clock jumps while locks are live (default timings: 2 h window, 60 s sweep, 120 s heartbeat timeout)', () => {
  it('a 5-hour sleep is not a mass expiry: every lock keeps the time it had left, none gains the sleep', async () => {
    const w = await start();
    const [a, b, c] = [await agent(w, 'dev', 'a'), await agent(w, 'dev', 'b'), await agent(w, 'dev', 'c')];
    for (let i = 0; i < 4; i++) task(w, `t${i}`);
    const before: Array<{ taskId: number; expiresAt: number }> = [];
    before.push(await claim(a));
    await pass(w, 10 * MIN);
    before.push(await claim(b));
    await pass(w, 10 * MIN);
    before.push(await claim(a));
    await pass(w, 30_000, 30_000); // mid sweep interval
    const sleptFrom = w.clock.now();

    w.clock.jump(5 * HOUR); // the machine sleeps: wall time moves, timers do not
    // An agent claims right after the wake, before the gap detector's next pulse notices the jump.
    const wakeClaim = await claim(c);
    await pass(w, 30_000, 30_000); // the gap detector's pulse: the jump is detected here
    const jumps = auditRows(w.core, 'clock.jump');
    expect(jumps).toHaveLength(1);
    expect(jumps[0]!.detail.gapMs).toBe(5 * HOUR);
    expect(auditRows(w.core, 'lock.expire')).toEqual([]);
    expect(auditRows(w.core, 'instance.offline')).toEqual([]);
    expect(w.core.instances.list().filter((i) => i.status !== 'online')).toEqual([]);

    // Every lock expires when its own remaining time has really passed, within one sweep.
    const all = [...before, wakeClaim];
    const expired = await expiriesOf(w, all.map((l) => l.taskId), 3 * HOUR);
    const late: string[] = [];
    for (const l of before) {
      const due = l.expiresAt + 5 * HOUR; // the sleep does not count against the lock
      const at = expired.get(l.taskId)?.at ?? Infinity;
      if (at < due || at > due + MIN) late.push(`task ${l.taskId}: due ${new Date(due).toISOString()}, expired ${Number.isFinite(at) ? new Date(at).toISOString() : 'never'}`);
    }
    const wakeAt = expired.get(wakeClaim.taskId)?.at ?? Infinity;
    if (wakeAt < wakeClaim.expiresAt || wakeAt > wakeClaim.expiresAt + MIN) {
      late.push(`lock granted after the wake (task ${wakeClaim.taskId}): due ${new Date(wakeClaim.expiresAt).toISOString()}, expired ${Number.isFinite(wakeAt) ? new Date(wakeAt).toISOString() : 'never'}`);
    }
    expect(late).toEqual([]);
    for (const e of expired.values()) expect(e.reason).toBe('lock_window');
    assertNoProblems(allInvariants(w.core.db), 'after the forward jump');
    figures('clock-forward', { sleptHours: 5, sleptFrom: new Date(sleptFrom).toISOString(), locks: all.length, massExpiry: 0, expiredOnTime: expired.size });
  }, 120_000);

  it('a one-hour step back: a lock with 30 min left expires after 30 min (not 90), and none loses an hour', async () => {
    const w = await start();
    const [a, c] = [await agent(w, 'dev', 'a'), await agent(w, 'dev', 'c')];
    task(w, 'old');
    task(w, 'new');
    const old = await claim(a);
    await pass(w, 90 * MIN); // 30 min left
    await pass(w, 20_000, 20_000);
    const stepAt = w.clock.now();
    w.clock.jump(-HOUR);
    const after = await claim(c); // granted on the new wall clock, before the gap detector notices
    await pass(w, 40_000, 40_000); // tick: the step is detected
    const jumps = auditRows(w.core, 'clock.jump');
    expect(jumps.map((j) => j.detail.gapMs)).toEqual([-HOUR]);
    expect(auditRows(w.core, 'lock.expire')).toEqual([]);
    const expired = await expiriesOf(w, [old.taskId, after.taskId], 3 * HOUR);
    const oldAt = expired.get(old.taskId)?.at;
    // 30 minutes of real time after the step (the old timeline's expiry minus the hour).
    expect(oldAt, 'the old lock never expired').toBeDefined();
    expect(oldAt! - (old.expiresAt - HOUR)).toBeGreaterThanOrEqual(0);
    expect(oldAt! - (old.expiresAt - HOUR)).toBeLessThanOrEqual(MIN);
    const afterAt = expired.get(after.taskId)?.at;
    expect(afterAt, 'the new lock never expired').toBeDefined();
    expect(afterAt! - after.expiresAt, 'a lock granted after the step lost time').toBeGreaterThanOrEqual(0);
    expect(afterAt! - after.expiresAt).toBeLessThanOrEqual(MIN);
    assertNoProblems(allInvariants(w.core.db), 'after the backward jump');
    figures('clock-backward', { stepHours: -1, stepAt: new Date(stepAt).toISOString(), oldLockLeftMin: 30, expiredAfterMin: (oldAt! - (stepAt - HOUR)) / MIN });
  }, 120_000);
});

describe('clock jumps while a job is live', () => {
  // Time moves in steps shorter than the 30 s a trigger waits for its acknowledgement: a trigger
  // sent inside one synchronous step of the manual clock must be answerable before the next one
  // (real time never moves 30 s without the agent's frames being read, save in a stall: a gap).
  const OFFER_STEP = 20_000;
  it('one run per slot through a 5-hour sleep and a one-hour step back; the slept hours get one decision each, no storm', async () => {
    const w = await start({ heartbeatTimeoutS: 3600 });
    const r = await agent(w, 'reporter', 'reporter-1');
    const triggers: Array<{ runId: string; slot: string; at: number }> = [];
    r.onPush = (m: Json) => {
      if (m.type !== 'job_trigger') return;
      triggers.push({ runId: m.runId, slot: m.slot, at: w.clock.now() });
      w.busy.n++;
      void (async () => {
        try {
          await r.request('run_started', { runId: m.runId });
          await r.request('run_result', { runId: m.runId, outcome: 'success' });
        } finally {
          w.busy.n--;
        }
      })();
    };
    const jobId = w.core.jobs.create({ name: 'every-10-min', role: 'reporter', schedule: { everyS: 600 } }, { actor: 'test' }).job.id;
    const runs = () => w.core.db.prepare('SELECT slot, status, disposition, trigger FROM runs WHERE job_id = ? ORDER BY slot_at').all(jobId) as Array<{ slot: string; status: string; disposition: string; trigger: string }>;
    await pass(w, HOUR, OFFER_STEP);
    const ranBefore = runs().filter((x) => x.status === 'success').length;
    expect(ranBefore).toBeGreaterThanOrEqual(5);

    // Sleep 5 hours.
    const pushedBeforeSleep = triggers.length;
    w.clock.jump(5 * HOUR);
    await pass(w, 3 * MIN, OFFER_STEP);
    const wakePushes = triggers.length - pushedBeforeSleep;
    // ~30 slots were slept through: each got one decision, and at most a couple were pushed.
    expect(wakePushes).toBeLessThanOrEqual(3);
    const afterWake = runs();
    await pass(w, 30 * MIN, OFFER_STEP);

    // Step back one hour: slots already decided must not run again.
    const slotsBeforeStep = new Set(runs().map((x) => x.slot));
    const triggersBeforeStep = triggers.length;
    w.clock.jump(-HOUR);
    await pass(w, 5 * MIN, OFFER_STEP);
    // The audit carries true time again, not the last instant before the step for an hour.
    task(w, 'written after the step');
    const newest = w.core.db.prepare('SELECT at FROM audit ORDER BY id DESC LIMIT 1').get() as { at: number };
    const auditLagMs = newest.at - w.clock.now();
    expect(auditLagMs).toBe(0);
    await pass(w, 85 * MIN, OFFER_STEP);
    const all = runs();
    const slots = all.map((x) => x.slot);
    expect(new Set(slots).size).toBe(slots.length);
    const rerun = triggers.slice(triggersBeforeStep).filter((t) => slotsBeforeStep.has(t.slot));
    expect(rerun).toEqual([]);
    // Each runId was pushed once (one agent online: no re-offer needed).
    expect(new Set(triggers.map((t) => t.runId)).size).toBe(triggers.length);
    expect(new Set(triggers.map((t) => t.slot)).size).toBe(triggers.length);
    expect(all.filter((x) => x.status === 'pending' || x.status === 'running')).toEqual([]);
    assertNoProblems(allInvariants(w.core.db), 'after the job clock jumps');
    figures('clock-jobs', {
      slots: all.length,
      ran: all.filter((x) => x.status === 'success').length,
      decidedMissed: afterWake.length - ranBefore,
      pushesOnWake: wakePushes,
      pushesAfterStepBack: triggers.length - triggersBeforeStep,
      duplicateSlots: slots.length - new Set(slots).size,
      auditLagAfterStepS: auditLagMs / 1000,
    });
  }, 180_000);
});
