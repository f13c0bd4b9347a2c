/**
 * The rehearsal and the live engine must agree (one engine, not a second model): each scenario is
 * played twice with the same job — once by `core.rehearsal` in its throw-away world, once on a live
 * core (real database file, real agent socket, agents speaking the protocol over `ws`, as in
 * ../rehearsal.test.ts) with the same data, agent and downtime at the same instants — and the
 * engine's decisions (claims, checks, dispatches, retries, results, misses, folds, backfills,
 * alerts) and the slot ledgers must be the same. The rehearsal runs at the live test agents' pace
 * (they answer at once).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../../common/config';
import { normalizeJobSpec, type JobSpecInput } from '../../../common/job-schema';
import type { RehearsalEvent, RehearsalScenario, ScenarioName } from '../../../common/rehearsal';
import { TestAgent } from '../../tests/ws-agent.testkit';
import { BASE_CONFIG, JobAgent, startJobsHarness, succeed, until, type Behavior, type JobsHarness } from '../../tests/jobs.testkit';
import { JobPlan } from '../plan';
import { Rehearsal } from '.';
import type { FeedItem } from './sandbox';
import { RECONNECT_MS } from './scripted-hub';
import { buildTimeline } from './timeline';
import { ZoneWords } from './words';

const harnesses: JobsHarness[] = [];
afterEach(async () => {
  for (const h of harnesses.splice(0)) await h.close();
});

// Sunday noon UTC: the job's next slot is Monday 2026-11-30 09:00 Asia/Shanghai (01:00Z), the day
// the existing rehearsal tests use.
const FROM = '2026-11-29T12:00:00.000Z';
const CONFIG = { ...DEFAULT_CONFIG, ...BASE_CONFIG };
const REPORT: JobSpecInput = {
  name: 'daily-sales-report',
  role: 'reporter',
  schedule: { cron: '0 9 * * *', timezone: 'Asia/Shanghai' },
  window: { start: '09:00', end: '10:00', recheckEveryS: 300 },
  preconditions: [{ kind: 'signal', name: 'data-ready', key: '{yesterday}' }],
  payload: { channel: 'sales' },
};
const STEPS = ['fetch', 'send', 'archive'];

/** The engine's decisions in a timeline: what happened to which slot, when (the words may differ). */
const DECISIONS = new Set<RehearsalEvent['kind']>(['trigger', 'check', 'dispatch', 'start', 'step', 'retry', 'success', 'failed', 'missed', 'skipped', 'fold', 'backfill', 'alert', 'hold']);
const decisions = (events: readonly RehearsalEvent[]) => events.filter((e) => DECISIONS.has(e.kind)).map((e) => `${e.at} ${e.kind} ${e.slot ?? '-'}${e.attempt ? ` #${e.attempt}` : ''}`);

async function rehearse(spec: JobSpecInput, name: ScenarioName): Promise<RehearsalScenario> {
  const r = new Rehearsal({ calendar: () => undefined, config: CONFIG, now: () => Date.parse(FROM), pace: { ackMs: 0, stepMs: 0 } });
  const res = await r.rehearse({ spec, scenarios: [name], from: FROM });
  expect(res.scenarios.map((s) => s.name)).toEqual([name]);
  return res.scenarios[0]!;
}

/** The live core's audit log, in the rehearsal's timeline words. */
function liveTimeline(h: JobsHarness, spec: JobSpecInput): RehearsalEvent[] {
  const s = normalizeJobSpec(spec);
  const plan = new JobPlan(s, undefined);
  const feed: FeedItem[] = h.audit().map((r) => ({ source: 'audit', at: r.at, type: r.type, subject: r.subject, detail: r.detail }));
  return buildTimeline(feed, [], s, plan.recheckMs(Date.parse(FROM)), new ZoneWords(plan.zone));
}

async function liveLedger(h: JobsHarness, jobId: string) {
  const backfills = new Map(h.core.jobs.listBackfills({ job: jobId }).items.map((b) => [b.slot, b.status]));
  return h.runs(jobId).map((r) => ({ slot: r.slot, disposition: r.disposition, attempts: r.attempt, status: r.status, backfill: backfills.get(r.slot) ?? null }));
}

/** A live core from the rehearsal's first instant, with one agent and the job. */
async function live(spec: JobSpecInput, start: string, behavior: Behavior, agentName = 'agent-1'): Promise<{ h: JobsHarness; jobId: string; agent: JobAgent }> {
  const h = await startJobsHarness({ start });
  harnesses.push(h);
  const jobId = h.createJob(spec as JobSpecInput & { name: string });
  const agent = await h.agent('reporter', behavior, agentName);
  return { h, jobId, agent };
}

const iso = (ms: number) => new Date(ms).toISOString();
const startOf = (s: RehearsalScenario) => s.events[0]!.at;

describe('the rehearsal agrees with the live engine', () => {
  it('normal: the data is ready, the agent succeeds — one run, its steps, nothing else', async () => {
    const r = await rehearse(REPORT, 'normal');
    const { h, jobId } = await live(REPORT, startOf(r), succeed(STEPS));
    h.core.signals.set({ name: 'data-ready', key: '2026-11-29', actor: 'warehouse' });
    await h.advanceTo('2026-12-01T00:59:59.000Z');
    expect(decisions(r.events)).toEqual(decisions(liveTimeline(h, REPORT)));
    expect(r.ledger).toEqual(await liveLedger(h, jobId));
    expect(r).toMatchObject({ outcome: 'ran_once', verdict: 'ran once', endsWell: true, surprise: null });
    expect(decisions(r.events)).toEqual([
      '2026-11-30T01:00:00.000Z trigger 2026-11-30',
      '2026-11-30T01:00:00.000Z dispatch 2026-11-30 #1',
      '2026-11-30T01:00:00.000Z start 2026-11-30 #1',
      '2026-11-30T01:00:00.000Z step 2026-11-30 #1',
      '2026-11-30T01:00:00.000Z step 2026-11-30 #1',
      '2026-11-30T01:00:00.000Z step 2026-11-30 #1',
      '2026-11-30T01:00:00.000Z success 2026-11-30 #1',
    ]);
  });

  it('data delay: late in the window it runs at the next re-check; after the window the missed-window policy decides, and the next day', async () => {
    for (const policy of [{}, { missedWindow: 'run_now', toleranceS: 1800 }, { missedWindow: 'fold_into_next' }] as const) {
      const spec = { ...REPORT, ...policy } as JobSpecInput;
      const r = await rehearse(spec, 'data_delay');
      const { h, jobId } = await live(spec, startOf(r), succeed(STEPS));
      h.core.signals.set({ name: 'data-ready', key: '2026-12-01', actor: 'warehouse' });
      // The scripted upstream: 2026-11-30's data at 09:40, 2026-12-01's only after its window (and tolerance).
      const ready = r.events.filter((e) => e.kind === 'data').map((e) => Date.parse(e.at));
      expect(ready).toHaveLength(2);
      await h.advanceTo(ready[0]! - 1);
      h.core.signals.set({ name: 'data-ready', key: '2026-11-29', actor: 'warehouse' });
      await h.advanceTo(ready[1]! - 1);
      h.core.signals.set({ name: 'data-ready', key: '2026-11-30', actor: 'warehouse' });
      await h.advanceTo('2026-12-02T23:00:00.000Z');
      expect(decisions(r.events), JSON.stringify(policy)).toEqual(decisions(liveTimeline(h, spec)));
      expect(r.ledger).toEqual(await liveLedger(h, jobId));
    }
  });

  it('downstream timeout: retries 5 minutes apart with the steps carried, the slot fails, and the policy makes it up (or not) the next day', async () => {
    for (const policy of [{}, { missedWindow: 'run_now', toleranceS: 1800 }, { missedWindow: 'fold_into_next', retry: { maxAttempts: 4, firstDelayS: 1200 } }] as const) {
      const spec = { ...REPORT, ...policy } as JobSpecInput;
      const r = await rehearse(spec, 'downstream_timeout');
      const behavior: Behavior = async (t, a) => {
        if (t.slot !== '2026-11-30' || t.trigger === 'backfill') return succeed(STEPS)(t, a);
        await a.started(t);
        for (const s of ['fetch', 'send']) if (!t.completedSteps.includes(s)) await a.step(t, s);
        await a.result(t, 'failed', 'retryable', 'the archive service timed out (no answer in 30 s)');
      };
      const { h, jobId, agent } = await live(spec, startOf(r), behavior);
      for (const key of ['2026-11-29', '2026-11-30']) h.core.signals.set({ name: 'data-ready', key, actor: 'warehouse' });
      await h.advanceTo('2026-12-01T23:00:00.000Z');
      expect(decisions(r.events), JSON.stringify(policy)).toEqual(decisions(liveTimeline(h, spec)));
      expect(r.ledger).toEqual(await liveLedger(h, jobId));
      // The side effect ("send") was done once: every later attempt was told it was done.
      expect(agent.triggers.filter((t) => t.slot === '2026-11-30').map((t) => t.completedSteps)).toEqual(agent.triggers.filter((t) => t.slot === '2026-11-30').map((_, i) => (i === 0 ? [] : ['fetch', 'send'])));
    }
    // With the loop breaker on (PROTOCOL §14, default 3), the third identical timeout holds the slot for a human, live and rehearsed alike.
    const broken = await rehearse({ ...REPORT, missedWindow: 'fold_into_next', retry: { maxAttempts: 4, firstDelayS: 1200 } } as JobSpecInput, 'downstream_timeout');
    expect(broken).toMatchObject({ outcome: 'held', surprise: 'slot 2026-11-30 stops until a human decides' });
    expect(broken.events.find((e) => e.surprise)?.detail).toMatch(/loop breaker: the same error came 3 times in a row/);
    const tight = await rehearse({ ...REPORT, missedWindow: 'fold_into_next', retry: { maxAttempts: 4, firstDelayS: 1200 }, loopBreaker: { sameErrorTimes: 0 } } as JobSpecInput, 'downstream_timeout');
    expect(tight.surprise).toBe('the 4th attempt would be due at 10:00, but the window closes at 10:00, so it never runs: the slot fails with 1 attempt unused');
    expect(tight.events.filter((e) => e.surprise).map((e) => e.kind)).toEqual(['failed']);
  });

  it('process restart: the agent dies after its first step (lost → retried with the step carried), then Gaffer restarts mid-run on the same database; the slot runs once', async () => {
    const r = await rehearse(REPORT, 'process_restart');
    const start = startOf(r);
    const first: Behavior = async (t, a) => {
      await a.started(t);
      await a.step(t, 'fetch');
      a.a.kill(); // the process dies
    };
    const { h, jobId } = await live(REPORT, start, first);
    h.core.signals.set({ name: 'data-ready', key: '2026-11-29', actor: 'warehouse' });
    await h.advanceTo('2026-11-30T01:00:00.000Z');
    await until(() => h.run(jobId, '2026-11-30')?.status === 'running', 'started');
    // The hub's reconnect grace runs out 10 s after the socket closed: the attempt is lost (the
    // harness only stops at the engine's wake-ups, so the grace's instant is stepped to by hand).
    await h.advanceTo(Date.parse('2026-11-30T01:00:00.000Z') + CONFIG.reconnectGraceS * 1000);
    // The supervisor starts the agent again 30 s later: a new instance. Its attempt: one step, then Gaffer goes.
    await h.advanceTo('2026-11-30T01:00:30.000Z');
    const token = h.core.tokens.create({ name: 'restarted', role: 'reporter', actor: 'test' }).token;
    let stepped = false;
    const second = new JobAgent(await TestAgent.hello(h.url, token, 'reporter', 'agent-1 (restarted)'), h.clock, async (t, a) => {
      await a.started(t);
      await a.step(t, 'send');
      stepped = true;
    });
    h.agents.push(second);
    await h.settle();
    for (let i = 0; i < 900 && !stepped; i++) await h.advance(1000);
    expect(stepped).toBe(true);
    const runId = h.run(jobId, '2026-11-30')!.id;
    const { clock, dir } = h;
    await h.stop();
    const down = r.events.filter((e) => e.kind === 'gaffer').map((e) => Date.parse(e.at));
    clock.advanceTo(down[1]!);
    const h2 = await startJobsHarness({ clock, dir });
    harnesses.push(h2);
    await h2.advanceTo(down[1]! + RECONNECT_MS);
    // The agent says hello again with its instance (within the reconnect grace) and sends what it kept.
    const back = new JobAgent(await TestAgent.hello(h2.url, token, 'reporter', 'agent-1 (restarted)', { instanceId: second.instanceId }), h2.clock, () => {});
    expect(back.instanceId).toBe(second.instanceId);
    h2.agents.push(back);
    await back.step({ runId } as never, 'archive');
    await back.result({ runId } as never, 'success');
    await h2.advanceTo('2026-11-30T23:00:00.000Z');
    expect(decisions(r.events)).toEqual(decisions(liveTimeline(h2, REPORT)));
    expect(r.ledger).toEqual(await liveLedger(h2, jobId));
    expect(r).toMatchObject({ outcome: 'ran_once', endsWell: true });
    expect(h2.core.jobs.getRun(runId).steps.map((s) => [s.step, s.attempt])).toEqual([
      ['fetch', 1],
      ['send', 2],
      ['archive', 2],
    ]);
  });

  it('cross-day backfill: Gaffer down across midnight; at start the missed slot is decided once, and its backfill runs before the next slot', async () => {
    for (const policy of [{}, { missedWindow: 'run_now', toleranceS: 1800 }, { missedWindow: 'fold_into_next' }] as const) {
      const spec = { ...REPORT, ...policy } as JobSpecInput;
      const r = await rehearse(spec, 'cross_day_backfill');
      const [down, up] = r.events.filter((e) => e.kind === 'gaffer').map((e) => Date.parse(e.at));
      const token = { value: '' };
      const { h, jobId, agent } = await live(spec, startOf(r), succeed(STEPS));
      for (const key of ['2026-11-29', '2026-11-30', '2026-12-01']) h.core.signals.set({ name: 'data-ready', key, actor: 'warehouse' });
      token.value = h.core.tokens.create({ name: 'again', role: 'reporter', actor: 'test' }).token;
      await h.advanceTo(down!);
      const { clock, dir } = h;
      await h.stop();
      clock.advanceTo(up!);
      const h2 = await startJobsHarness({ clock, dir });
      harnesses.push(h2);
      await h2.advanceTo(up! + RECONNECT_MS);
      h2.agents.push(new JobAgent(await TestAgent.hello(h2.url, token.value, 'reporter', 'agent-1'), h2.clock, succeed(STEPS)));
      await h2.advanceTo('2026-12-02T23:00:00.000Z');
      expect(agent.instanceId).toBeTruthy();
      expect(decisions(r.events), JSON.stringify(policy)).toEqual(decisions(liveTimeline(h2, spec)));
      expect(r.ledger).toEqual(await liveLedger(h2, jobId));
    }
  });
});

describe('said done, not done (verification, PROTOCOL §13)', () => {
  const CHECKED: JobSpecInput = { ...REPORT, verify: { checks: [{ kind: 'file', name: 'report sent', path: '/srv/reports/{date}.pdf' }] } };

  it('with checks: the first "done" is caught and retried, told what failed; the slot runs once, on the 2nd attempt — said in words', async () => {
    const sc = await rehearse(CHECKED, 'said_done_not_done');
    expect(sc).toMatchObject({ title: 'Said done, not done', outcome: 'ran_once', endsWell: true });
    expect(sc.verdict).toBe('the agent said done but the check failed → tried again, told what failed; ran once (on the 2nd attempt)');
    expect(sc.surprise).toMatch(/Gaffer’s own checks found the work not done/);
    expect(sc.events.filter((e) => e.kind === 'check' && e.detail.startsWith('Gaffer checks the work itself')).map((e) => [e.attempt, e.detail])).toEqual([
      [1, 'Gaffer checks the work itself: the agent said done, but “report sent” fails (onFail: retry)'],
      [2, 'Gaffer checks the work itself: report sent pass'],
    ]);
  });

  it('onFail needs_human: held for the operator; without checks the false success is called out; the default rehearsal includes it only for a job with checks', async () => {
    const held = await rehearse({ ...CHECKED, verify: { ...CHECKED.verify!, onFail: 'needs_human' } }, 'said_done_not_done');
    expect(held).toMatchObject({ outcome: 'held', endsWell: true, verdict: 'the agent said done but the check failed → held for you to decide; held for a human' });
    const unchecked = await rehearse(REPORT, 'said_done_not_done');
    expect(unchecked).toMatchObject({ outcome: 'ran_once', endsWell: false });
    expect(unchecked.verdict).toMatch(/the work was not done: the job has no "done when…" checks/);
    const r = new Rehearsal({ calendar: () => undefined, config: CONFIG, now: () => Date.parse(FROM), pace: { ackMs: 0, stepMs: 0 } });
    expect((await r.rehearse({ spec: REPORT, scenarios: ['normal'], from: FROM })).scenarios).toHaveLength(1);
    expect((await r.rehearse({ spec: CHECKED, from: FROM })).scenarios.map((s) => s.name)).toContain('said_done_not_done');
  });
});

describe('a rehearsal of the default pace', () => {
  it('finishes the five scenarios of a daily job well under 2 s, and says in plain words how each ends', async () => {
    const r = new Rehearsal({ calendar: () => undefined, config: DEFAULT_CONFIG, now: () => Date.parse(FROM) });
    const res = await r.rehearse({ spec: REPORT, from: FROM });
    expect(res.scenarios.map((s) => [s.name, s.outcome, s.endsWell])).toEqual([
      ['normal', 'ran_once', true],
      ['data_delay', 'missed', false],
      ['downstream_timeout', 'failed', false],
      ['process_restart', 'ran_once', true],
      ['cross_day_backfill', 'missed', false],
    ]);
    expect(res.scenarios.map((s) => s.verdict)).toEqual([
      'ran once',
      'ran late (09:40); when the data came after the window: missed, never made up (an alert only)',
      'failed after 3 attempts; nothing makes it up (an alert only)',
      'ran once (on the 2nd attempt), after a lost attempt and a restart of Gaffer',
      'missed, never made up (an alert only); then 2026-12-02 ran once',
    ]);
    // "Skip and alert" loses the slot: said plainly, with the moment flagged.
    const dd = res.scenarios[1]!;
    expect(dd.surprise).toMatch(/^slot 2026-12-01 is lost: under “Skip and alert” nothing runs it later/);
    expect(dd.events.filter((e) => e.surprise)).toMatchObject([{ kind: 'missed', slot: '2026-12-01' }]);
    expect(iso(Date.parse(res.from))).toBe(FROM);
  });
});
