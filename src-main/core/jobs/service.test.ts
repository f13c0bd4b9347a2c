/**
 * The JobService API: validation of contradictory settings, versions, the run state machine,
 * explain (past and future), preview of an unsaved spec, ledger, backfill actions, bad input.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { GafferError } from '../../common/errors';
import { jobContradictions, normalizeJobSpec, type JobSpecInput } from '../../common/job-schema';
import { makeTestCore, type TestCore } from '../tests/test-core';
import { allRunEdges, isRunEdge } from './run-transitions';
import { assertInvariants, fail, startJobsHarness, succeed, until, type JobsHarness } from '../tests/jobs.testkit';

let core: TestCore | undefined;
let h: JobsHarness | undefined;
afterEach(() => {
  core?.close();
  core = undefined;
});

const base: JobSpecInput = {
  name: 'daily-sales-report',
  role: 'reporter',
  schedule: { cron: '0 9 * * *', timezone: 'Asia/Shanghai' },
  window: { start: '09:00', end: '10:00', recheckEveryS: 300 },
};

function issuesOf(fn: () => unknown): Array<{ field: string; message: string }> {
  try {
    fn();
  } catch (e) {
    if (e instanceof GafferError && e.code === 'bad_request') return (e.detail as { issues: Array<{ field: string; message: string }> }).issues;
    throw e;
  }
  throw new Error('expected a bad_request refusal');
}

describe('contradictory settings are refused at save time, with the field and why', () => {
  const cases: Array<[string, Partial<JobSpecInput>, string, RegExp]> = [
    ['run_now without a tolerance', { missedWindow: 'run_now' }, 'toleranceS', /“Run now \(within a tolerance\)” needs a tolerance/],
    ['a tolerance with another policy', { missedWindow: 'fold_into_next', toleranceS: 60 }, 'toleranceS', /a tolerance only applies to “Run now \(within a tolerance\)”, but a missed slot is set to “Fold into the next run”/],
    ['tolerance longer than the period (interval)', { schedule: { everyS: 300 }, window: undefined, missedWindow: 'run_now', toleranceS: 600 }, 'toleranceS', /every 300 s/],
    ['tolerance longer than the period (cron)', { schedule: { cron: '*/10 * * * *', timezone: 'UTC' }, window: undefined, missedWindow: 'run_now', toleranceS: 900 }, 'toleranceS', /every 600 s/],
    ['fold_into_next with overlap allow', { missedWindow: 'fold_into_next', overlap: 'allow' }, 'overlap', /“Fold into the next run” makes .* with “allow both” two runs/],
    ['retries that land after the window with skip_and_alert', { missedWindow: 'skip_and_alert', retry: { maxAttempts: 4, firstDelayS: 1200, backoff: 'fixed' } }, 'retry', /3 retries take 3600 s of delays, longer than the window 09:00–10:00/],
    ['exponential retries beyond the window', { missedWindow: 'skip_and_alert', window: { start: '09:00', end: '09:30', recheckEveryS: 60 }, retry: { maxAttempts: 4, firstDelayS: 300, backoff: 'exponential' } }, 'retry', /2100 s/],
    ['calendarPolicy without a calendar', { calendarPolicy: 'next_workday' }, 'calendarPolicy', /no calendar/],
    ['an unknown calendar', { calendar: 'nope' }, 'calendar', /there is no calendar 'nope'/],
    ['a bad cron', { schedule: { cron: '61 9 * * *', timezone: 'Asia/Shanghai' } }, 'schedule.cron', /out of range/],
    ['an unknown zone', { schedule: { cron: '0 9 * * *', timezone: 'Mars/Olympus' } }, 'schedule.timezone', /not a known IANA time zone/],
    ['a cron outside its window', { schedule: { cron: '0 11 * * *', timezone: 'Asia/Shanghai' } }, 'window', /never fires inside its window/],
    ['a window ending before it starts', { window: { start: '10:00', end: '09:00', recheckEveryS: 60 } }, 'window.end', /not after its start/],
    ['a re-check longer than the window', { window: { start: '09:00', end: '09:10', recheckEveryS: 900 } }, 'window.recheckEveryS', /after the window has closed/],
    ['http equals without jsonField', { preconditions: [{ kind: 'http', url: 'http://127.0.0.1:1/x', equals: true }] }, 'preconditions.0.jsonField', /“Equals \(JSON\)” is set but “JSON field” is not/],
    ['file "after" with check exists', { preconditions: [{ kind: 'file', path: '/tmp/x', after: 'date' }] }, 'preconditions.0.after', /“After” only applies when the file must have been modified after a time/],
    ['a command given as one shell string', { preconditions: [{ kind: 'command', argv: ['test -f /tmp/x && echo ok'] }] }, 'preconditions.0.argv', /without a shell/],
    ['an unknown placeholder', { preconditions: [{ kind: 'signal', name: 'data-ready', key: '{today}' }] }, 'preconditions.0.key', /unknown placeholder \{today\}/],
    ['a precondition kind with a missing field', { preconditions: [{ kind: 'file' } as never] }, 'preconditions.0.path', /.+/],
    ['an unknown precondition kind', { preconditions: [{ kind: 'psychic' } as never] }, 'preconditions.0.kind', /.+/],
    ['two preconditions with the same label', { preconditions: [{ kind: 'signal', name: 'a', label: 'x' }, { kind: 'signal', name: 'b', label: 'x' }] }, 'preconditions.1.label', /both called 'x'/],
    ['maintenance covering the whole window', { executionConditions: { maintenanceWindows: [{ start: '08:00', end: '11:00' }] } }, 'executionConditions.maintenanceWindows.0', /never be dispatched/],
    ['a maintenance window crossing midnight', { executionConditions: { maintenanceWindows: [{ start: '23:00', end: '01:00' }] } }, 'executionConditions.maintenanceWindows.0.end', /cannot cross midnight/],
  ];
  it.each(cases)('%s', (_name, patch, field, message) => {
    core = makeTestCore();
    const before = core.db.prepare('SELECT count(*) AS n FROM jobs').get();
    const auditBefore = core.audit.count();
    const issues = issuesOf(() => core!.jobs.create({ ...base, ...patch }, { actor: 'test' }));
    const hit = issues.find((i) => i.field === field);
    expect(hit, JSON.stringify(issues)).toBeDefined();
    expect(hit!.message).toMatch(message);
    // Nothing was written.
    expect(core.db.prepare('SELECT count(*) AS n FROM jobs').get()).toEqual(before);
    expect(core.audit.count()).toBe(auditBefore);
  });

  it('the pure checks run in the editor without a core', () => {
    const spec = normalizeJobSpec({ ...base, missedWindow: 'run_now' });
    expect(jobContradictions(spec)).toEqual([expect.objectContaining({ field: 'toleranceS', severity: 'error' })]);
  });

  it('defaults that would contradict are a warning, not a refusal', () => {
    core = makeTestCore();
    const r = core.jobs.create({ name: 'warm', role: 'ops', schedule: { everyS: 300 } }, { actor: 'test' });
    expect(r.warnings).toEqual([expect.objectContaining({ field: 'retry', severity: 'warning' })]);
  });

  it('a job saved with warnings can be edited: create, every update and validate see the same issues', () => {
    core = makeTestCore();
    const input = { name: 'every-minute', role: 'ops', schedule: { everyS: 60 } };
    const created = core.jobs.create(input, { actor: 'alice' });
    const warning = expect.objectContaining({ field: 'retry', severity: 'warning', message: expect.stringMatching(/the default retry settings/) });
    expect(created.warnings).toEqual([warning]);
    // The stored spec has every default filled in; it validates exactly like the input it came from.
    expect(core.jobs.validate(normalizeJobSpec(input)).issues).toEqual(core.jobs.validate(input).issues);
    expect(core.jobs.update(created.job.id, { enabled: false }, { actor: 'bob', reason: 'quiet for now' }).warnings).toEqual([warning]);
    expect(core.jobs.update(created.job.id, { payload: { channel: 'ops' } }, { actor: 'bob', reason: 'tell ops' }).warnings).toEqual([warning]);
    expect(core.jobs.get(created.job.id)).toMatchObject({ version: 3, enabled: false, payload: { channel: 'ops' } });
    // A retry policy somebody chose, which cannot fit between two slots, is refused (on create and on edit alike).
    const chosen = { retry: { maxAttempts: 2, firstDelayS: 120 } };
    expect(issuesOf(() => core!.jobs.update(created.job.id, chosen, { actor: 'bob' }))).toEqual([expect.objectContaining({ field: 'retry', severity: 'error' })]);
    expect(issuesOf(() => core!.jobs.create({ ...input, name: 'chosen', ...chosen }, { actor: 'bob' }))).toEqual([expect.objectContaining({ field: 'retry', severity: 'error' })]);
    expect(core.jobs.get(created.job.id).version).toBe(3);
  });

  it('validation depends on the normalised spec only: defaults written out give the same issues', () => {
    core = makeTestCore();
    const inputs: JobSpecInput[] = [
      { name: 'a', role: 'ops', schedule: { everyS: 60 } },
      { name: 'b', role: 'ops', schedule: { cron: '*/5 * * * *', timezone: 'UTC' } },
      { name: 'c', role: 'ops', schedule: { cron: '0 9 * * *', timezone: 'UTC' }, window: { start: '09:00', end: '09:05', recheckEveryS: 60 } },
      { name: 'd', role: 'ops', schedule: { cron: '0 0 29 2 1', timezone: 'UTC' }, missedWindow: 'run_now', toleranceS: 60, backfillCapPerTick: 0 },
      { name: 'e', role: 'ops', schedule: { everyS: 600 }, retry: { maxAttempts: 3, firstDelayS: 5 } },
    ];
    for (const input of inputs) {
      const short = core.jobs.validate(input);
      expect(short.issues.length, input.name).toBeGreaterThan(0);
      expect(core.jobs.validate(normalizeJobSpec(input)).issues, input.name).toEqual(short.issues);
    }
  });

  it('a cron naming both a day of the month and a weekday warns that either one fires it', () => {
    core = makeTestCore();
    const { warnings } = core.jobs.create({ name: 'leap-monday', role: 'ops', schedule: { cron: '0 0 29 2 1', timezone: 'UTC' } }, { actor: 'test' });
    expect(warnings).toEqual([expect.objectContaining({ field: 'schedule.cron', severity: 'warning', message: expect.stringMatching(/runs on every Monday in February as well as on day 29 of the month/) })]);
    expect(core.jobs.validate({ name: 'x', role: 'ops', schedule: { cron: '0 0 29 2 +1', timezone: 'UTC' } }).issues.some((i) => i.field === 'schedule.cron' && i.severity === 'warning')).toBe(false);
  });

  it('a window inside a DST gap saves with a warning naming the day and what happens then', () => {
    core = makeTestCore(); // the clock starts on 2026-11-30
    const { warnings } = core.jobs.create({ name: 'gap', role: 'ops', schedule: { cron: '30 2 * * *', timezone: 'America/New_York' }, window: { start: '02:30', end: '02:45', recheckEveryS: 60 } }, { actor: 'test' });
    expect(warnings).toEqual([
      expect.objectContaining({ field: 'window.start', severity: 'warning', message: 'on 2027-03-14 the clocks in America/New_York jump from 02:00 to 03:00, so the window start 02:30 does not exist: on that day the window opens at 03:00, with its slot, and keeps its 15 min' }),
    ]);
  });

  it('an edit is validated as a whole and refused the same way; a valid edit bumps the version', () => {
    core = makeTestCore();
    const { job } = core.jobs.create(base, { actor: 'alice' });
    expect(job.version).toBe(1);
    const issues = issuesOf(() => core!.jobs.update(job.id, { missedWindow: 'run_now' }, { actor: 'bob' }));
    expect(issues[0]).toMatchObject({ field: 'toleranceS' });
    expect(core.jobs.get(job.id).version).toBe(1);
    const v2 = core.jobs.update(job.id, { missedWindow: 'run_now', toleranceS: 1800, payload: { channel: 'ops' } }, { actor: 'bob', reason: 'catch up within half an hour' }).job;
    expect(v2).toMatchObject({ version: 2, missedWindow: 'run_now', toleranceS: 1800, payload: { channel: 'ops' }, updatedBy: 'bob' });
    const v3 = core.jobs.update(job.id, { window: null, toleranceS: null, missedWindow: 'skip_and_alert' }, { actor: 'bob' }).job;
    expect(v3.window).toBeUndefined();
    expect(v3.version).toBe(3);
    const audit = core.db.prepare(`SELECT detail FROM audit WHERE type = 'job.update' ORDER BY id`).all() as Array<{ detail: string }>;
    expect(JSON.parse(audit[0]!.detail)).toMatchObject({ from: 1, to: 2, changed: ['missedWindow', 'toleranceS', 'payload'], reason: 'catch up within half an hour' });
    expect(core.db.prepare('SELECT count(*) AS n FROM job_versions').get()).toEqual({ n: 3 });
    expect(() => core!.jobs.create(base, { actor: 'x' })).toThrow(/already exists/);
  });

  it('a zone typed in lower case is stored under its canonical name (job, calendar, its update)', () => {
    core = makeTestCore();
    const { job } = core.jobs.create({ ...base, schedule: { cron: '0 9 * * *', timezone: 'europe/berlin' } }, { actor: 'alice' });
    expect(job.schedule.timezone).toBe('Europe/Berlin');
    expect(core.jobs.get(job.id).schedule.timezone).toBe('Europe/Berlin');
    expect(core.jobs.update(job.id, { schedule: { cron: '0 9 * * *', timezone: 'america/new_york' } }, { actor: 'bob' }).job.schedule.timezone).toBe('America/New_York');
    const cal = core.jobs.createCalendar({ id: 'de', name: 'Germany', timezone: 'EUROPE/BERLIN', workdays: [1, 2, 3, 4, 5], holidays: [], extraWorkdays: [] }, { actor: 'x' });
    expect(cal.timezone).toBe('Europe/Berlin');
    expect(core.jobs.getCalendar('de').timezone).toBe('Europe/Berlin');
    // Not a zone: refused with the field, as before.
    expect(issuesOf(() => core!.jobs.create({ ...base, name: 'nowhere', schedule: { cron: '0 9 * * *', timezone: 'europe/nowhere' } }, { actor: 'alice' }))[0]).toMatchObject({
      field: 'schedule.timezone',
      message: expect.stringContaining("'europe/nowhere' is not a known IANA time zone"),
    });
  });

  it('bad input is a typed bad_request and changes nothing', () => {
    core = makeTestCore();
    const { job } = core.jobs.create(base, { actor: 'alice' });
    const snapshot = JSON.stringify(core.db.prepare('SELECT * FROM jobs').all());
    const audit = core.audit.count();
    for (const bad of [
      () => core!.jobs.pause(job.id, { reason: '', actor: 'x' }),
      () => core!.jobs.pause(job.id, { actor: 'x' }),
      () => core!.jobs.triggerNow(job.id, { actor: 'x' }),
      () => core!.jobs.update(job.id, { nope: 1 }, { actor: 'x' }),
      () => core!.jobs.setKillSwitch({ on: 'yes', reason: 'r', actor: 'x' }),
      () => core!.jobs.explain(job.id, 'yesterday'),
      () => core!.jobs.preview(job.id, 0),
      () => core!.jobs.listRuns({ status: 'exploded' }),
      () => core!.jobs.createCalendar({ id: 'c', name: 'c', timezone: 'UTC', workdays: [8], holidays: [], extraWorkdays: [] }, { actor: 'x' }),
      () => core!.jobs.createCalendar({ id: 'c', name: 'c', timezone: 'UTC', workdays: [1], holidays: ['2026-01-01'], extraWorkdays: ['2026-01-01'] }, { actor: 'x' }),
    ]) {
      expect(bad).toThrow(GafferError);
      try {
        bad();
      } catch (e) {
        expect((e as GafferError).code).toBe('bad_request');
      }
    }
    expect(JSON.stringify(core.db.prepare('SELECT * FROM jobs').all())).toBe(snapshot);
    expect(core.audit.count()).toBe(audit);
    expect(() => core!.jobs.get('job_nope')).toThrow(expect.objectContaining({ code: 'not_found' }));
  });
});

describe('run state machine', () => {
  it('has exactly the edges of the spec', () => {
    expect(allRunEdges().map((e) => `${e.cause}:${e.from ?? '∅'}→${e.to}`).sort()).toEqual(
      ['claim:∅→pending', 'start:pending→running', 'succeed:running→success', 'fail:running→failed', 'fail:pending→failed', 'skip:pending→skipped'].sort(),
    );
    expect(isRunEdge('start', 'failed', 'running')).toBe(false);
    expect(isRunEdge('succeed', 'pending', 'success')).toBe(false);
  });
});

describe('preview, explain, ledger', () => {
  it('previews an unsaved spec (the editor) with DST and calendar applied, and reports its issues', () => {
    core = makeTestCore();
    const p = core.jobs.preview({ name: 'x', role: 'r', schedule: { cron: '30 2 * * *', timezone: 'America/New_York' } }, 3, '2026-03-07T00:00:00.000Z');
    expect(p.items.map((i) => [i.slot, i.at, i.shifted ?? null])).toEqual([
      ['2026-03-07', '2026-03-07T07:30:00.000Z', null],
      ['2026-03-08', '2026-03-08T07:00:00.000Z', 'dst_gap'],
      ['2026-03-09', '2026-03-09T06:30:00.000Z', null],
    ]);
    expect(p.issues).toEqual([]);
    expect([p.truncated, p.next]).toEqual([false, '2026-03-09T06:30:00.000Z']);
    const bad = core.jobs.preview({ name: 'x', role: 'r', schedule: { cron: 'every day', timezone: 'UTC' } }, 3);
    expect(bad.items).toEqual([]);
    expect(bad.issues[0]).toMatchObject({ field: 'schedule.cron' });
  });

  it('says when a preview was cut short, and where to continue', () => {
    core = makeTestCore();
    core.jobs.createCalendar({ id: 'mondays', name: 'Mondays only', timezone: 'UTC', workdays: [1], holidays: [], extraWorkdays: [] }, { actor: 'test' });
    // Hourly, skipped on six days of seven: 144 skipped entries come before the next Monday's slots.
    const spec = { name: 'x', role: 'r', schedule: { cron: '0 * * * *', timezone: 'UTC' }, calendar: 'mondays' };
    const cut = core.jobs.preview(spec, 3, '2026-12-01T00:30:00.000Z'); // a Tuesday
    expect([cut.items.length, cut.items.every((i) => i.disposition === 'calendar_skip'), cut.truncated]).toEqual([53, true, true]);
    expect(cut.next).toBe(cut.items[52]!.at);
    // Continuing from `next` walks on.
    expect(core.jobs.preview(spec, 3, cut.next!).items[0]!.at).toBe('2026-12-03T06:00:00.000Z');
    // Leap days only: three in the ten years a preview looks ahead, so five are cut short there.
    const far = core.jobs.preview({ name: 'x', role: 'r', schedule: { cron: '0 0 29 2 *', timezone: 'UTC' } }, 5, '2026-12-01T00:00:00.000Z');
    expect([far.items.map((i) => i.slot), far.truncated, far.next]).toEqual([['2028-02', '2032-02', '2036-02'], true, '2036-12-08T00:00:00.000Z']);
  });

  it('explains "why did it not run yesterday at 09:00" and "will it run tomorrow at 09:00"', async () => {
    h = await startJobsHarness();
    await h.agent('reporter', fail('retryable', 'LLM API rate limited'));
    const jobId = h.createJob({ ...base, retry: { maxAttempts: 2, firstDelayS: 300 }, missedWindow: 'run_now', toleranceS: 600, preconditions: [{ kind: 'signal', name: 'data-ready', key: '{yesterday}' }] });
    h.core.signals.set({ name: 'data-ready', key: '2026-11-29', actor: 'etl' });
    await h.advanceTo('2026-11-30T03:00:00.000Z');
    await until(() => h!.run(jobId, '2026-11-30')?.status === 'failed', 'failed');
    const past = h.core.jobs.explain(jobId, '2026-11-30T01:00:00.000Z');
    expect(past.tense).toBe('past');
    expect(past.slot).toMatchObject({ slot: '2026-11-30', at: '2026-11-30T01:00:00.000Z', window: { opensAt: '2026-11-30T01:00:00.000Z', closesAt: '2026-11-30T02:00:00.000Z', latestStart: '2026-11-30T02:10:00.000Z' } });
    expect(past.outcome).toMatch(/ran and failed.*LLM API rate limited.*retr.*backfill #\d+ is queued/);
    expect(past.layers.time.verdict).toBe('ready');
    expect(past.layers.preconditions.items[0]).toMatchObject({ verdict: 'ready', evidence: expect.objectContaining({ key: '2026-11-29' }) });
    expect(past.layers.execution.verdict).toBe('ready');
    expect(past.run).toMatchObject({ attempt: 2, retryCount: 1 });
    expect(past.trail.map((e) => e.type)).toEqual(expect.arrayContaining(['run.claim', 'run.dispatch', 'run.start', 'run.retry', 'run.fail', 'backfill.enqueue']));
    expect(past.backfills).toMatchObject([{ status: 'queued', reason: 'failed' }]);

    const future = h.core.jobs.explain(jobId, '2026-12-01T01:00:00.000Z');
    expect(future.tense).toBe('future');
    expect(future.slot).toMatchObject({ slot: '2026-12-01', at: '2026-12-01T01:00:00.000Z' });
    expect(future.outcome).toMatch(/will be checked at 2026-12-01T01:00:00.000Z and run as soon as its preconditions pass/);
    expect(future.layers.preconditions.items[0]).toMatchObject({ verdict: 'will_check' });
    expect(future.layers.preconditions.items[0]!.reason).toMatch(/signal data-ready for 2026-11-30 is not set now/);
    expect(future.layers.execution.items.find((i) => i.name === 'order')!.reason).toMatch(/backfills of 2026-11-30 would run first/);

    const ledger = h.core.jobs.ledger(jobId, { from: '2026-11-29T00:00:00.000Z', to: '2026-12-03T00:00:00.000Z' });
    expect(ledger.items.map((e) => [e.slot, e.disposition])).toEqual([
      ['2026-11-29', 'before_job'],
      ['2026-11-30', 'failed'],
      ['2026-12-01', 'scheduled'],
      ['2026-12-02', 'scheduled'],
    ]);
    expect(ledger.items[1]!.backfills).toHaveLength(1);
    assertInvariants(h.core);
  });

  it('backfill queue actions: run now, mark done, cancel — each with a reason, audited', async () => {
    h = await startJobsHarness();
    const agent = await h.agent('reporter', fail('fatal', 'totals do not add up'));
    const jobId = h.createJob({ ...base, name: 'b' });
    await h.advanceTo('2026-11-30T01:00:00.000Z');
    await until(() => h!.run(jobId, '2026-11-30')?.disposition === 'held', 'held');
    const [held] = h.core.jobs.listBackfills({ job: jobId }).items;
    expect(held).toMatchObject({ status: 'held', reason: 'fatal' });
    agent.behavior = succeed();
    const bf = h.core.jobs.backfillAction(held!.id, { action: 'run_now', reason: 'fixed the totals', actor: 'alice' });
    expect(bf.status).toBe('dispatched');
    await until(() => h!.run(jobId, '2026-11-30')?.disposition === 'backfilled', 'backfilled');
    expect(h.run(jobId, '2026-11-30')!.status).toBe('failed');
    expect(h.core.jobs.listBackfills({ job: jobId }).items[0]).toMatchObject({ status: 'done', attempts: 1 });
    expect(() => h!.core.jobs.backfillAction(held!.id, { action: 'cancel', reason: 'x', actor: 'a' })).toThrow(/already done/);

    agent.behavior = fail('fatal', 'again');
    await h.advanceTo('2026-12-01T01:00:00.000Z');
    await until(() => h!.run(jobId, '2026-12-01')?.disposition === 'held', 'held 2');
    const second = h.core.jobs.listBackfills({ job: jobId, status: 'held' }).items[0]!;
    h.core.jobs.backfillAction(second.id, { action: 'mark_done', reason: 'sent by hand', actor: 'alice' });
    expect(h.run(jobId, '2026-12-01')).toMatchObject({ status: 'failed', disposition: 'backfilled' });
    expect(h.audit('backfill.mark_done')[0]).toMatchObject({ actor: 'alice', detail: { reason: 'sent by hand', from: 'held' } });
    // A missed slot can be queued by hand, then cancelled.
    await h.advanceTo('2026-12-02T01:00:00.000Z');
    await until(() => h!.run(jobId, '2026-12-02')?.disposition === 'held', 'held 3');
    const third = h.core.jobs.listBackfills({ job: jobId, status: 'held' }).items[0]!;
    const c = h.core.jobs.backfillAction(third.id, { action: 'cancel', reason: 'not needed', actor: 'bob' });
    expect(c.status).toBe('cancelled');
    const again = h.core.jobs.requestBackfill(jobId, { slot: '2026-12-02', reason: 'needed after all', actor: 'bob' });
    expect(again).toMatchObject({ status: 'queued', reason: 'operator', actor: 'bob' });
    expect(() => h!.core.jobs.requestBackfill(jobId, { slot: '2026-12-02', reason: 'x', actor: 'bob' })).toThrow(/already in the backfill queue/);
    assertInvariants(h.core);
  });

  it('disabling skips waiting slots; re-enabling does not catch up the disabled period', async () => {
    h = await startJobsHarness();
    const agent = await h.agent('reporter', succeed());
    const jobId = h.createJob({ ...base, preconditions: [{ kind: 'signal', name: 'never' }] });
    await h.advanceTo('2026-11-30T01:10:00.000Z');
    h.core.jobs.setEnabled(jobId, false, { reason: 'retired for a week', actor: 'alice' });
    expect(h.run(jobId, '2026-11-30')).toMatchObject({ status: 'skipped', disposition: 'skipped_disabled' });
    await h.advanceTo('2026-12-03T02:00:00.000Z');
    h.core.jobs.update(jobId, { preconditions: [] }, { actor: 'alice' });
    h.core.jobs.setEnabled(jobId, true, { reason: 'back', actor: 'alice' });
    await h.advanceTo('2026-12-04T01:00:00.000Z');
    await until(() => h!.run(jobId, '2026-12-04')?.status === 'success', 'ran');
    expect(agent.triggers.map((t) => [t.slot, t.version])).toEqual([['2026-12-04', 2]]);
    const ledger = h.core.jobs.ledger(jobId, { from: '2026-11-30T00:00:00.000Z', to: '2026-12-05T00:00:00.000Z' });
    expect(ledger.items.map((e) => e.disposition)).toEqual(['skipped_disabled', 'not_evaluated', 'not_evaluated', 'not_evaluated', 'ran']);
  });
});

describe('invariants', () => {
  it('one run per job and slot is enforced by the database; the checker flags a forged run edge', async () => {
    h = await startJobsHarness();
    await h.agent('reporter', succeed());
    const jobId = h.createJob(base);
    await h.advanceTo('2026-11-30T01:00:00.000Z');
    await until(() => h!.run(jobId, '2026-11-30')?.status === 'success', 'ran');
    assertInvariants(h.core);
    const run = h.run(jobId, '2026-11-30')!;
    expect(() =>
      h!.core.db
        .prepare(`INSERT INTO runs (id, job_id, job_name, slot, slot_at, status, disposition, trigger, max_retry, opens_at, version, trace_id, idempotency_key, created_at, updated_at)
                  VALUES ('run_dup', ?, 'x', '2026-11-30', 0, 'pending', 'waiting', 'schedule', 0, 0, 1, 't', 'k', 0, 0)`)
        .run(jobId),
    ).toThrow(/UNIQUE/);
    h.core.audit.record({ type: 'run.start', actor: 'mallory', subject: `run:${run.id}`, detail: { from: 'success', to: 'running' } });
    const { checkInvariants } = await import('../tests/invariants');
    expect(checkInvariants(h.core.db)).toEqual([expect.stringMatching(new RegExp(`run:${run.id}: illegal run start success → running`))]);
  });
});
