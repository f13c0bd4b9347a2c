/**
 * What one trigger of a burst costs in statements (issue 32: the last of 1 000 jobs due at once),
 * and that each statement cut keeps what the rows say.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Db } from '../db/open';
import { startJobsHarness, succeed, until, type JobsHarness } from '../tests/jobs.testkit';
import { spyStatements } from '../tests/statements.testkit';
import { CalendarRepo } from './calendar-repo';
import { EngineContext } from './engine/context';
import { EngineRunSink } from './engine/run-sink';
import { JobRepo } from './repo';
import { slotRunBase } from './rows';

let h: JobsHarness | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  await h?.close();
  h = undefined;
});

/** Counts the statements run on `db` while `fn` runs. */
function statementsOf(db: Db, fn: () => void): string[] {
  const ran: string[] = [];
  spyStatements(db, (source) => ran.push(source));
  try {
    fn();
  } finally {
    vi.restoreAllMocks();
  }
  return ran;
}

/** Statements run inside the runner's passes and inside the run sink (acks and results), counted apart. */
function countPassAndSink(db: Db): { pass: string[]; sink: string[] } {
  const out = { pass: [] as string[], sink: [] as string[] };
  let into: string[] | undefined;
  spyStatements(db, (source) => into?.push(source));
  const begin = EngineContext.prototype.beginPass;
  const end = EngineContext.prototype.endPass;
  vi.spyOn(EngineContext.prototype, 'beginPass').mockImplementation(function (this: EngineContext) {
    into = out.pass;
    begin.call(this);
  });
  vi.spyOn(EngineContext.prototype, 'endPass').mockImplementation(function (this: EngineContext) {
    into = undefined;
    end.call(this);
  });
  for (const m of ['runStarted', 'runResult'] as const) {
    const orig = EngineRunSink.prototype[m] as (...a: unknown[]) => object;
    vi.spyOn(EngineRunSink.prototype, m).mockImplementation(function (this: EngineRunSink, ...a: unknown[]) {
      const was = into;
      into = out.sink;
      try {
        return orig.apply(this, a);
      } finally {
        into = was;
      }
    });
  }
  return out;
}

describe('a burst of triggers', () => {
  it('costs each trigger at most 12 statements in the pass and 11 for its ack and result, reads back no row it wrote, keeps every audit row', async () => {
    h = await startJobsHarness({ start: '2026-11-30T08:00:30.000Z' });
    const agent = await h.agent('ops', succeed());
    const N = 20;
    for (let i = 0; i < N; i++) h.createJob({ name: `j${i}`, role: 'ops', schedule: { everyS: 900, timezone: 'UTC' }, overlap: 'allow' });
    const ran = countPassAndSink(h.core.db);
    // A pass is cut into slices of real time; the slices of a loaded machine must not split this one.
    const slices = vi.spyOn(performance, 'now').mockReturnValue(0);
    await h.advanceTo('2026-11-30T08:15:00.000Z');
    slices.mockRestore();
    await until(() => agent.replies.filter((r) => r.type === 'run_result').length === N, 'every run reported');
    await h.settle();
    vi.restoreAllMocks();
    expect(agent.triggers).toHaveLength(N);
    // What each pass runs once, however many triggers it makes: its listings and its transaction.
    const perPass = /^(BEGIN|COMMIT|SELECT \* FROM jobs WHERE enabled|SELECT id FROM runs WHERE next_attempt_at|SELECT b\.\* FROM backfills|SELECT value FROM settings|SELECT count\(\*\) AS n FROM \(SELECT 1 FROM backfills)/;
    const perTrigger = ran.pass.filter((sql) => !perPass.test(sql)).length / N;
    // Before: 19 in the pass (a read before each of the two checks' upserts; 2 of the 19 are the
    // hub's pick of an instance), 16 for the ack and result (a look for the folded runs the run
    // covers, when it covers none). Then 16: the due job's row read again by id, and the offers out
    // to the instance counted for every offer; now the row comes with the due listing and the count
    // once per pass. Then 14: the hub's pick read the instance's status and held locks for every
    // trigger; now once per pass and instance (the pass keeps them, like the offers count). Then 13:
    // the slot's key was read before its claim (taken at another instant?); now the claim's INSERT
    // answers that itself (ON CONFLICT DO NOTHING).
    expect(perTrigger).toBeLessThanOrEqual(12.1);
    expect(ran.pass.filter((sql) => sql === 'SELECT * FROM runs WHERE job_id = ? AND slot = ?')).toEqual([]);
    expect(ran.pass.filter((sql) => sql === 'SELECT * FROM jobs WHERE id = ?')).toEqual([]);
    const commits = ran.pass.filter((sql) => sql === 'COMMIT').length;
    const counted = ran.pass.filter((sql) => /FROM runs WHERE offer_to = \? LIMIT/.test(sql)).length;
    expect(counted).toBeLessThanOrEqual(commits);
    const loads = ran.pass.filter((sql) => /FROM locks WHERE instance_id = \?\) AS held FROM instances/.test(sql)).length;
    expect(loads).toBeGreaterThan(0);
    expect(loads).toBeLessThanOrEqual(commits);
    // Before: 16 (also each run read back by its start and by its result); then 12 (the job's role
    // read for a trigger.acknowledged event nobody listened to).
    expect(ran.sink.length / N).toBeLessThanOrEqual(11.1);
    // The rows written are not read back: not by the dispatch, the start or the result.
    expect([...ran.pass, ...ran.sink].filter((sql) => /^(INSERT INTO|UPDATE) runs .*RETURNING \*$|^SELECT \* FROM runs WHERE id = \?$/.test(sql))).toEqual([]);
    // And what the engine holds as a run's row is, column for column, what the database holds.
    const repo = new JobRepo(h.core, new CalendarRepo(h.core.db));
    const byId = h.core.db.prepare('SELECT * FROM runs WHERE id = ?');
    for (const t of agent.triggers) expect(repo.run(t.runId)).toEqual(byId.get(t.runId));
    // Every audit row a trigger owes: its claim, dispatch and offer, and its start and success.
    for (const type of ['run.claim', 'run.dispatch', 'trigger.offer', 'run.start', 'run.succeed']) expect(h.audit(type).filter((a) => a.subject.startsWith('run:'))).toHaveLength(N);
    expect(h.core.audit.verify().ok).toBe(true);
  });
});

/** SQLite's plan for `sql` (its detail lines), its parameters bound to null. */
function planOf(db: Db, sql: string): string[] {
  const named = [...new Set(sql.match(/@\w+/g) ?? [])].map((k) => k.slice(1));
  const args: unknown[] = named.length ? [Object.fromEntries(named.map((k) => [k, null]))] : Array((sql.match(/\?/g) ?? []).length).fill(null);
  return (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...args) as Array<{ detail: string }>).map((r) => r.detail);
}

describe('a trigger’s reads of its job’s runs', () => {
  it('reach the rows they want through an index made for them, never the job’s whole history (repo.ts invariant 7)', async () => {
    h = await startJobsHarness({ start: '2026-11-30T08:00:30.000Z' });
    const agent = await h.agent('ops', succeed());
    for (let i = 0; i < 3; i++) h.createJob({ name: `j${i}`, role: 'ops', schedule: { everyS: 900, timezone: 'UTC' }, overlap: 'allow' });
    const ran = countPassAndSink(h.core.db);
    await h.advanceTo('2026-11-30T08:15:00.000Z');
    await until(() => agent.replies.filter((r) => r.type === 'run_result').length === 3, 'every run reported');
    await h.settle();
    vi.restoreAllMocks();
    const reads = [...new Set([...ran.pass, ...ran.sink])].filter((sql) => /^SELECT .* FROM runs\b/.test(sql));
    // The job's open runs (layer 3's facts, and a result's look at the next), its range rows.
    expect(reads.filter((sql) => /status IN \('pending','running'\)|range_slots IS NOT NULL/.test(sql)).length).toBeGreaterThanOrEqual(3);
    // Before: `runs_job_at (job_id=?)` for the open runs and `(job_id=? AND slot_at<?)` for the
    // ranges — every run the job ever had, read and tested, on every trigger and every result.
    const unbounded = /SCAN runs\b|USING INDEX runs_job_at \(job_id=\?\)|USING INDEX runs_job_at \(job_id=\? AND slot_at<\?\)/;
    const bad = reads.map((sql) => ({ sql, plan: planOf(h!.core.db, sql).join(' | ') })).filter((r) => unbounded.test(r.plan));
    expect(bad).toEqual([]);
    // The sweep's read of every open run (and the start-up's): before, `SCAN runs USING INDEX runs_at`.
    const repo = new JobRepo(h.core, new CalendarRepo(h.core.db));
    const sweep = statementsOf(h.core.db, () => repo.openRuns());
    expect(sweep).toHaveLength(1);
    expect(planOf(h.core.db, sweep[0]!).join(' | ')).toMatch(/^SCAN runs USING INDEX runs_open\b/);
    // The pass's look for any open backfill: before, `SCAN backfills USING COVERING INDEX backfills_job` (all of them).
    const anyBackfill = [...new Set(ran.pass)].filter((sql) => /^SELECT count\(\*\) AS n FROM \(SELECT 1 FROM backfills\b/.test(sql));
    expect(anyBackfill).toHaveLength(1);
    expect(planOf(h.core.db, anyBackfill[0]!).join(' | ')).toMatch(/SCAN backfills USING (COVERING )?INDEX backfills_open\b/);
  });
});

describe('a trigger’s events', () => {
  it('are built only for a listener: no wire copy of a claim or a start, no offered / acknowledged event (nor the role read for it) while nobody listens; the same events as before when someone does', async () => {
    h = await startJobsHarness({ start: '2026-11-30T08:00:30.000Z' });
    const agent = await h.agent('ops', succeed());
    for (let i = 0; i < 3; i++) h.createJob({ name: `j${i}`, role: 'ops', schedule: { everyS: 900, timezone: 'UTC' }, overlap: 'allow' });
    const queued: Array<{ type: string; cause?: string; run?: { id: string; status: string } }> = [];
    const emit = h.core.store.emit.bind(h.core.store);
    vi.spyOn(h.core.store, 'emit').mockImplementation((ev) => {
      queued.push(ev as (typeof queued)[number]);
      emit(ev);
    });
    const roleReads: string[] = [];
    spyStatements(h.core.db, (sql) => {
      if (sql === 'SELECT role FROM jobs WHERE id = ?') roleReads.push(sql);
    });
    const burst = async (at: string, n: number) => {
      await h!.advanceTo(at);
      await until(() => agent.replies.filter((r) => r.type === 'run_result').length === n, 'every run reported');
      await h!.settle();
    };
    await burst('2026-11-30T08:15:00.000Z', 3);
    // Before: a run.changed with the run's wire copy for every claim and every start, a
    // trigger.offered and a trigger.acknowledged (its job's role read for it), heard by nobody.
    expect(queued.filter((ev) => ['run.changed', 'trigger.offered', 'trigger.acknowledged'].includes(ev.type))).toEqual([]);
    expect(roleReads).toEqual([]);
    // What is listened to still comes, with the row as written (the inbox hears run.finished).
    expect(queued.filter((ev) => ev.type === 'run.finished').map((ev) => ev.run?.status)).toEqual(['success', 'success', 'success']);
    // With a listener (the console's stream), every edge of every run is announced again.
    const heard: string[] = [];
    const l = h.core.events.onAny((ev) => {
      if (ev.type === 'run.changed') heard.push(`${ev.cause}:${ev.run.status}`);
      if (ev.type === 'trigger.offered' || ev.type === 'trigger.acknowledged') heard.push(`${ev.type}:${ev.role}`);
    });
    await burst('2026-11-30T08:30:00.000Z', 6);
    l.dispose();
    expect(heard.sort()).toEqual(
      [
        ...Array(3).fill('claim:pending'),
        ...Array(3).fill('start:running'),
        ...Array(3).fill('succeed:success'),
        ...Array(3).fill('trigger.acknowledged:ops'),
        ...Array(3).fill('trigger.offered:ops'),
      ].sort(),
    );
  });
});

describe('a burst of more jobs than one transaction held before', () => {
  it('is claimed, checked and offered in one transaction: one commit (one fsync) for the slice', async () => {
    h = await startJobsHarness({ start: '2026-11-30T08:00:30.000Z' });
    // No instance: every offer waits for one (the pass's writes are the same up to the offer).
    const N = 260;
    // One transaction for the setup (one fsync, not 300).
    h.core.store.write(() => {
      for (let i = 0; i < N; i++) h!.createJob({ name: `j${i}`, role: 'ops', schedule: { everyS: 900, timezone: 'UTC' }, overlap: 'allow' });
    });
    const ran = countPassAndSink(h.core.db);
    const slices = vi.spyOn(performance, 'now').mockReturnValue(0);
    await h.advanceTo('2026-11-30T08:15:00.000Z');
    slices.mockRestore();
    await h.settle();
    vi.restoreAllMocks();
    expect(h.audit('run.claim')).toHaveLength(N);
    // Before: a transaction ended every 250 rows (two commits for 260 jobs).
    expect(ran.pass.filter((sql) => sql === 'COMMIT')).toHaveLength(1);
  });
});

describe('a claimed run', () => {
  it('is built from its values and the schema’s defaults, column for column the row stored', async () => {
    h = await startJobsHarness({ startCore: false });
    const core = h.core;
    const jobId = h.createJob({ name: 'claimed' });
    const repo = new JobRepo(core, new CalendarRepo(core.db));
    const job = repo.jobRow(jobId);
    const claim = (slot: string, at: number, range?: { slots: number; lastSlot: string; lastAt: number }) =>
      core.store.write(() => repo.claimRun({ ...slotRunBase(job, { slot, at }, 3), trigger: 'schedule', nextAttemptAt: at, opensAt: at, windowClosesAt: null, ...(range ? { range } : {}) }, 'test'));
    const byId = core.db.prepare('SELECT * FROM runs WHERE id = ?');
    const one = claim('2026-11-30T09:00', Date.parse('2026-11-30T09:00:00Z'));
    expect(one).toEqual(byId.get(one.id));
    const range = claim('2026-11-30T10:00', Date.parse('2026-11-30T10:00:00Z'), { slots: 4, lastSlot: '2026-11-30T10:45', lastAt: Date.parse('2026-11-30T10:45:00Z') });
    expect(range).toEqual(byId.get(range.id));
    // Read again it is the same row, without a statement.
    expect(statementsOf(core.db, () => expect(repo.run(one.id)).toBe(one))).toEqual([]);
    // Moved along its phases without reading it back: still the stored row, column for column.
    const out = core.store.write(() => repo.movePhase(one, 'dispatch', { attempt: 1, dispatched_at: h!.clock.now(), deadline: h!.clock.now() + 60_000, offer_to: 'inst_a', offered: '["inst_a"]', disposition: 'dispatched', waiting_on: null }, 'test'));
    expect(out).toEqual(byId.get(one.id));
    const started = core.store.write(() => repo.movePhase(out, 'start', { instance_id: 'inst_a', offer_to: null, started_at: h!.clock.now(), disposition: 'running' }, 'inst_a'));
    expect(started).toEqual(byId.get(one.id));
    expect(core.store.write(() => repo.patchRun(one.id, { output: '{"n":1}' }))).toEqual(byId.get(one.id));
    // Finished, it is not kept: read again, it comes from the database.
    core.store.write(() => repo.movePhase(repo.run(one.id), 'succeed', { instance_id: 'inst_a', finished_at: h!.clock.now(), disposition: 'ran', next_attempt_at: null, dispatched_at: null, deadline: null }, 'inst_a'));
    let again: unknown;
    expect(statementsOf(core.db, () => (again = repo.run(one.id)))).toEqual(['SELECT * FROM runs WHERE id = ?']);
    expect(again).toEqual(byId.get(one.id));
  });
});

describe('a check’s verdict', () => {
  it('is one statement when first or changed, two when the same again; first, changed and count as before', async () => {
    h = await startJobsHarness({ startCore: false });
    const core = h.core;
    const repo = new JobRepo(core, new CalendarRepo(core.db));
    const row = () => core.db.prepare('SELECT verdict, reason, evidence, at, first_at, count, changed_at FROM checks WHERE job_id = ? AND slot = ? AND name = ?').get('j', 's', 'time');
    const record = (verdict: 'ready' | 'not_ready', reason: string) => {
      let change: string | undefined;
      const ran = core.store.write(() => statementsOf(core.db, () => (change = repo.recordCheck('j', 's', 'time', 'time', verdict, reason, { reason }))));
      return { change, ran: ran.length };
    };
    const t0 = h.clock.now();
    expect(record('not_ready', 'a')).toEqual({ change: 'new', ran: 1 });
    expect(row()).toEqual({ verdict: 'not_ready', reason: 'a', evidence: '{"reason":"a"}', at: t0, first_at: t0, count: 1, changed_at: t0 });
    h.clock.advance(1000);
    expect(record('not_ready', 'b')).toEqual({ change: 'same', ran: 2 });
    expect(row()).toEqual({ verdict: 'not_ready', reason: 'b', evidence: '{"reason":"b"}', at: t0 + 1000, first_at: t0, count: 2, changed_at: t0 });
    h.clock.advance(1000);
    expect(record('ready', 'c')).toEqual({ change: 'changed', ran: 1 });
    expect(row()).toEqual({ verdict: 'ready', reason: 'c', evidence: '{"reason":"c"}', at: t0 + 2000, first_at: t0, count: 3, changed_at: t0 + 2000 });
    // Another check of the same slot is a row of its own.
    let other: string | undefined;
    core.store.write(() => (other = repo.recordCheck('j', 's', 'execution', 'execution', 'ready', 'ok', null)));
    expect(other).toBe('new');
    expect(row()).toMatchObject({ verdict: 'ready', count: 3 });
  });
});
