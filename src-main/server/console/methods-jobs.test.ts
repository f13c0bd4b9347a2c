import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CONSOLE_METHODS } from '../../common/console-api';
import type { JobSpecInput } from '../../common/job-schema';
import { fail, startJobsHarness, succeed, type JobsHarness } from '../../core/tests/jobs.testkit';
import { auditCount, onlineInstance, stateDigest, type TestCore } from '../../core/tests/test-core';
import type { ConsoleEvent } from '../../common/console-api';
import { coalesce, mapCoreEvent } from './events';
import { createConsoleMethods, type ConsoleMethods } from './methods';
import { isJobsMethod, replacementPatch, type JobsMethod } from './methods-jobs';
import { consoleUnderTest, expectRefusedUnchanged } from '../tests/methods.testkit';

const ACTOR = 'operator:browser';
let core: TestCore;
let m: ConsoleMethods;

// The manual clock starts at 2026-11-30T08:00Z (16:00 in Shanghai).
beforeEach(() => ({ core, m } = consoleUnderTest({ actor: ACTOR, port: null, version: 'test' })));

afterEach(() => core.close());

const SPEC: JobSpecInput = {
  name: 'daily-report',
  role: 'reporter',
  schedule: { cron: '0 9 * * *', timezone: 'Asia/Shanghai' },
  window: { start: '09:00', end: '10:00', recheckEveryS: 300 },
};

/** Every table the jobs module writes, plus the core's own (stateDigest) and the settings row. */
function jobsDigest(c: TestCore = core): string {
  const tables = ['jobs', 'job_versions', 'runs', 'run_steps', 'checks', 'backfills', 'calendars', 'settings'];
  return [stateDigest(c), ...tables.map((t) => JSON.stringify(c.db.prepare(`SELECT * FROM ${t} ORDER BY 1, 2`).all()))].join('\n');
}

function lastAudit() {
  return core.auditQuery.query({ order: 'desc', limit: 1 }).items[0]!;
}

const expectRefused = (method: unknown, args: unknown, code?: string) => expectRefusedUnchanged(m, core, jobsDigest, method, args, code);

async function seed() {
  const { job } = await m.call('jobs.create', { spec: SPEC, reason: 'morning numbers' });
  await m.call('calendars.create', { calendar: { id: 'cn', name: 'China', timezone: 'Asia/Shanghai', workdays: [1, 2, 3, 4, 5], holidays: [], extraWorkdays: [] } });
  return job;
}

describe('jobs console methods: bad arguments are refused and change nothing', () => {
  const bad: Record<JobsMethod, unknown[]> = {
    'jobs.list': [{ limit: 0 }, { role: 'bad role!' }, { paused: 'yes' }],
    'jobs.get': [{}, { id: '' }, { id: 'job_nope' }],
    'jobs.validate': [{}, { spec: 'x' }, { spec: [] }, { spec: {}, extra: 1 }],
    'jobs.preview': [{}, { id: 'daily-report', spec: {} }, { id: 'daily-report', count: 0 }, { id: 'daily-report', after: 'tomorrow' }],
    'jobs.create': [
      { spec: { ...SPEC, name: 'has space' } },
      { spec: { ...SPEC, missedWindow: 'run_now' } }, // contradiction: run_now needs toleranceS
      { spec: { ...SPEC, name: 'other', schedule: { cron: '61 9 * * *', timezone: 'Asia/Shanghai' } } },
      { spec: { ...SPEC, name: 'x2' }, actor: 'operator:spoofed' },
      { spec: { ...SPEC, name: 'daily-report' } }, // exists: conflict (checked below)
    ],
    'jobs.update': [
      { id: 'daily-report', spec: SPEC },
      { id: 'daily-report', spec: { ...SPEC, overlap: 'sometimes' }, reason: 'r' },
      { id: 'daily-report', spec: { ...SPEC, window: { start: '10:00', end: '09:00', recheckEveryS: 300 } }, reason: 'r' },
    ],
    'jobs.trigger': [{ id: 'daily-report' }, { id: 'daily-report', reason: '  ' }, { id: 'daily-report', reason: 'r', slot: 'not-a-slot' }],
    'jobs.pause': [{ id: 'daily-report' }, { reason: 'r' }],
    'jobs.resume': [{ id: 'daily-report' }],
    'jobs.setEnabled': [{ id: 'daily-report', enabled: 'no', reason: 'r' }, { id: 'daily-report', enabled: false }],
    'jobs.explain': [{ id: 'daily-report', at: 'yesterday' }, { at: '2026-11-30T09:00:00Z' }],
    'jobs.ledger': [{ id: 'daily-report', limit: 0 }, { id: 'daily-report', from: '2026-12-01T00:00:00Z', to: '2026-11-01T00:00:00Z' }],
    'jobs.triggerChoices': [{}, { id: 'daily-report', slot: 'x' }],
    'jobs.ledgerBuckets': [{ id: 'daily-report', by: 'week' }, { id: 'daily-report', from: '2026-12-01T00:00:00Z', to: '2026-11-01T00:00:00Z' }, { id: 'daily-report', from: '2026-01-01T00:00:00Z', to: '2027-03-01T00:00:00Z' }],
    'jobs.simulateDowntime': [{ id: 'daily-report', from: '2026-11-30T00:00:00Z' }, { id: 'daily-report', from: '2026-12-01T00:00:00Z', to: '2026-11-30T00:00:00Z' }],
    'jobs.rehearse': [{}, { spec: SPEC, scenarios: [] }, { spec: SPEC, scenarios: ['meteor'] }, { spec: { ...SPEC, window: { start: '10:00', end: '09:00' } } }, { spec: SPEC, from: 'tomorrow' }],
    'runs.list': [{ status: 'nope' }, { job: 'job_nope' }, { from: 'yesterday' }],
    'runs.get': [{}, { id: 'run_nope' }],
    'runs.approve': [{ id: 'run_nope' }, { id: 'run_nope', note: '  ' }, { id: 'run_nope', note: 'ok' }],
    'runs.reject': [{ id: 'run_nope', note: 'x', actor: 'spoofed' }, { id: 'run_nope', note: 'no' }],
    'runs.retry': [{}, { id: 'run_nope', actor: 'spoofed' }, { id: 'run_nope' }, { id: '' }],
    'backfills.list': [{ status: 'nope' }, { after: -1 }],
    'backfills.action': [{ id: 1, action: 'explode', reason: 'r' }, { id: 1, action: 'cancel' }, { id: 999, action: 'cancel', reason: 'r' }],
    'backfills.request': [{ jobId: 'daily-report', slot: '2026-11-29' }, { jobId: 'daily-report', slot: '2026-11-29', reason: 'r' }],
    'calendars.list': [{ all: true }],
    'calendars.get': [{}, { id: 'nope' }],
    'calendars.validate': [{}, { calendar: 'x' }],
    'calendars.create': [
      { calendar: { id: 'x', name: 'X', timezone: 'Asia/Shanghai', workdays: [8], holidays: [], extraWorkdays: [] } },
      { calendar: { id: 'x', name: 'X', timezone: 'Mars/Olympus', workdays: [1], holidays: [], extraWorkdays: [] } },
      { calendar: { id: 'cn', name: 'dup', timezone: 'Asia/Shanghai', workdays: [1], holidays: [], extraWorkdays: [] } },
    ],
    'calendars.update': [
      { id: 'cn', calendar: { name: 'China', timezone: 'Asia/Shanghai', workdays: [1], holidays: [], extraWorkdays: [] }, reason: '' },
      { id: 'cn', calendar: { name: 'China', timezone: 'Asia/Shanghai', workdays: [1], holidays: ['2026-13-01'], extraWorkdays: [] }, reason: 'r' },
    ],
    'calendars.importIcs': [{ id: 'cn', ics: 'BEGIN:VCALENDAR' }, { id: 'cn', ics: '', reason: 'r' }, { id: 'cn', ics: 'not an ics file', reason: 'r' }, { id: 'cn', ics: 'x', reason: 'r', mode: 'append' }],
  };

  it('covers every jobs method, and together with methods.test.ts every console method', () => {
    const jobsMethods = CONSOLE_METHODS.filter((x) => isJobsMethod(x));
    expect(Object.keys(bad).sort()).toEqual([...jobsMethods].sort());
    expect(jobsMethods.length).toBeGreaterThan(20);
  });

  for (const method of Object.keys(bad) as JobsMethod[]) {
    it(`${method}: bad arguments → typed error, nothing changed`, async () => {
      await seed();
      // The strict rule (a reason is required); the solo default fills one in (methods.test.ts).
      core.operatorSettings.setRequireReason({ on: true, actor: 'test' });
      for (const args of bad[method]) {
        const reply = await m.dispatch(method, args);
        // Most are bad_request; a few name an unknown thing (not_found) or an existing one (conflict).
        expect(reply.ok, `${method} ${JSON.stringify(args)}`).toBe(false);
        if (!reply.ok) await expectRefused(method, args, reply.error.code);
        if (!reply.ok) expect(['bad_request', 'not_found', 'conflict', 'invalid_transition']).toContain(reply.error.code);
      }
    });
  }

  it('a contradictory job is refused with the offending field in the error detail', async () => {
    const err = await expectRefused('jobs.create', { spec: { ...SPEC, missedWindow: 'run_now' } });
    expect(err!.message).toContain('toleranceS');
    expect((err!.detail as { issues: Array<{ field: string }> }).issues.map((i) => i.field)).toContain('toleranceS');
  });
});

describe('jobs console methods: jobs', () => {
  it('validate answers issues field by field and saves nothing', async () => {
    const before = jobsDigest();
    const bad = await m.call('jobs.validate', { spec: { ...SPEC, missedWindow: 'run_now', schedule: { cron: '0 9 * * *', timezone: 'Nowhere/City' } } });
    expect(bad.ok).toBe(false);
    const fields = bad.issues.map((i) => i.field);
    expect(fields).toContain('toleranceS');
    expect(fields).toContain('schedule.timezone');
    const good = await m.call('jobs.validate', { spec: { ...SPEC, missedWindow: 'run_now', toleranceS: 1800 } });
    expect(good).toEqual({ ok: true, issues: [] });
    const shape = await m.call('jobs.validate', { spec: { ...SPEC, name: '' } });
    expect(shape.issues[0]).toMatchObject({ field: 'name', severity: 'error' });
    expect(jobsDigest()).toBe(before);
  });

  it('create, get, list; update bumps the version, records actor and reason, removes dropped settings', async () => {
    const { job, warnings } = await m.call('jobs.create', { spec: SPEC, reason: 'morning numbers' });
    expect(warnings).toEqual([]);
    expect(job).toMatchObject({ name: 'daily-report', version: 1, createdBy: ACTOR, window: { start: '09:00' } });
    expect(lastAudit()).toMatchObject({ type: 'job.create', actor: ACTOR, subject: `job:${job.id}` });
    expect((await m.call('jobs.get', { id: 'daily-report' })).id).toBe(job.id);
    const page = await m.call('jobs.list', {});
    expect(page.items.map((j) => j.name)).toEqual(['daily-report']);
    expect(page.items[0]!.nextSlot).toMatchObject({ slot: '2026-12-01', at: '2026-12-01T01:00:00.000Z' });

    const { window: _w, ...noWindow } = SPEC;
    const up = await m.call('jobs.update', { id: job.id, spec: { ...noWindow, schedule: { cron: '30 8 * * 1-5', timezone: 'Asia/Shanghai' } }, reason: 'earlier, weekdays only', expectedVersion: 1 });
    expect(up.job.version).toBe(2);
    expect(up.job.window).toBeUndefined();
    expect(up.job.schedule.cron).toBe('30 8 * * 1-5');
    expect(up.job.updatedBy).toBe(ACTOR);
    expect(lastAudit()).toMatchObject({ type: 'job.update', actor: ACTOR, detail: { from: 1, to: 2, reason: 'earlier, weekdays only' } });
    // An edit of a stale version is refused and changes nothing.
    const err = await expectRefused('jobs.update', { id: job.id, spec: SPEC, reason: 'late edit', expectedVersion: 1 }, 'conflict');
    expect(err!.message).toMatch(/version 2/);
  });

  it('update never flips enabled (that is its own action with a reason)', async () => {
    const { job } = await m.call('jobs.create', { spec: SPEC });
    const up = await m.call('jobs.update', { id: job.id, spec: { ...SPEC, enabled: false, description: 'x' }, reason: 'describe it' });
    expect(up.job.enabled).toBe(true);
    expect(up.job.description).toBe('x');
    const off = await m.call('jobs.setEnabled', { id: job.id, enabled: false, reason: 'season over' });
    expect(off.enabled).toBe(false);
    expect(lastAudit()).toMatchObject({ type: 'job.disable', actor: ACTOR, detail: { reason: 'season over' } });
  });

  it('an edit can set and then remove the role quota', async () => {
    const { job } = await m.call('jobs.create', { spec: { ...SPEC, executionConditions: { maxConcurrentPerRole: 2 } } });
    expect(job.executionConditions.maxConcurrentPerRole).toBe(2);
    const up = await m.call('jobs.update', { id: job.id, spec: SPEC, reason: 'no quota any more' });
    expect(up.job.executionConditions.maxConcurrentPerRole).toBeUndefined();
    expect(up.job.version).toBe(2);
  });

  it('replacementPatch nulls removed optional settings and sends whole execution conditions', () => {
    const current = { ...SPEC, calendar: 'cn', toleranceS: 60, budget: { maxCostUsdPerRun: 1 }, executionConditions: { maintenanceWindows: [{ start: '01:00', end: '02:00' }] } };
    const patch = replacementPatch(current, { ...SPEC, enabled: false });
    expect(patch).toMatchObject({ calendar: null, toleranceS: null, budget: null, executionConditions: { maintenanceWindows: [] } });
    // Left out = back to the default (a replace, not a merge).
    expect(patch).toMatchObject({ retry: { maxAttempts: 3, firstDelayS: 300, backoff: 'fixed' }, missedWindow: 'skip_and_alert', overlap: 'skip', preconditions: [], payload: null });
    expect('enabled' in patch).toBe(false);
    expect('window' in patch).toBe(true);
  });

  it('preview: a saved job or an unsaved spec, with its issues', async () => {
    await m.call('jobs.create', { spec: SPEC });
    const saved = await m.call('jobs.preview', { id: 'daily-report', count: 3 });
    expect(saved.items.map((i) => i.slot)).toEqual(['2026-12-01', '2026-12-02', '2026-12-03']);
    expect(saved.timezone).toBe('Asia/Shanghai');
    const draft = await m.call('jobs.preview', { spec: { ...SPEC, name: 'draft', schedule: { cron: '0 9 * * 1-5', timezone: 'Europe/Berlin' } }, count: 2, after: '2026-11-28T00:00:00.000Z' });
    expect(draft.items.map((i) => i.local)).toEqual(['2026-11-30T09:00', '2026-12-01T09:00']);
    const broken = await m.call('jobs.preview', { spec: { ...SPEC, schedule: { cron: 'nope', timezone: 'UTC' } } });
    expect(broken.items).toEqual([]);
    expect(broken.issues.some((i) => i.field === 'schedule.cron')).toBe(true);
  });

  it('pause / resume take a reason; explain says who paused it and why', async () => {
    const { job } = await m.call('jobs.create', { spec: SPEC });
    const p = await m.call('jobs.pause', { id: job.id, reason: 'upstream migration' });
    expect(p.paused).toMatchObject({ by: ACTOR, reason: 'upstream migration' });
    expect(lastAudit()).toMatchObject({ type: 'job.pause', actor: ACTOR, detail: { reason: 'upstream migration' } });
    const why = await m.call('jobs.explain', { id: job.id, at: '2026-12-01T01:00:00.000Z' });
    expect(why.tense).toBe('future');
    expect(why.outcome).toContain('paused by operator:browser');
    expect(why.layers.execution.items.find((i) => i.name === 'pause')).toMatchObject({ verdict: 'not_ready' });
    await expectRefused('jobs.pause', { id: job.id, reason: 'again' }, 'invalid_transition');
    const r = await m.call('jobs.resume', { id: job.id, reason: 'migration done' });
    expect(r.paused).toBeNull();
    expect(lastAudit()).toMatchObject({ type: 'job.resume', actor: ACTOR, detail: { reason: 'migration done' } });
  });

  it('trigger now claims the slot once; runs.list / runs.get / ledger show it', async () => {
    const { job } = await m.call('jobs.create', { spec: SPEC });
    const t = await m.call('jobs.trigger', { id: job.id, reason: 'numbers needed now' });
    expect(t).toMatchObject({ created: true, dispatched: false, run: { slot: '2026-11-30', trigger: 'manual' } });
    expect(t.message).toMatch(/no online instance/);
    const again = await m.call('jobs.trigger', { id: job.id, reason: 'again' });
    expect(again.created).toBe(false);
    expect(again.run.id).toBe(t.run.id);
    const runs = await m.call('runs.list', { job: job.id });
    expect(runs.items.map((r) => r.id)).toEqual([t.run.id]);
    const detail = await m.call('runs.get', { id: t.run.id });
    expect(detail.run.id).toBe(t.run.id);
    expect(detail.run.verification).toBeUndefined();
    expect(detail.checks.some((c) => c.name === 'manual')).toBe(true);
    // Once Gaffer checked an attempt's work (PROTOCOL §13), the run carries the evidence, as over HTTP.
    const check = { name: 'report', kind: 'file' as const, passed: false, detail: 'report.md does not exist', durationMs: 2 };
    core.store.write(() => core.verify.store.finish(core.verify.store.open(`run:${t.run.id}`, 1, false, 0, 0), false, [check], 0));
    expect((await m.call('runs.get', { id: t.run.id })).run.verification).toMatchObject({ passed: false, attempt: 1, checks: [check] });
    const ledger = await m.call('jobs.ledger', { id: job.id, from: '2026-11-25T00:00:00.000Z', to: '2026-12-02T00:00:00.000Z' });
    expect(ledger.items.find((e) => e.slot === '2026-11-30')?.run?.id).toBe(t.run.id);
    const audit = core.auditQuery.query({ type: 'job.trigger', order: 'asc', limit: 1 }).items[0]!;
    expect(audit).toMatchObject({ actor: ACTOR, detail: { reason: 'numbers needed now' } });
  });

  it('simulateDowntime answers without changing anything', async () => {
    const { job } = await m.call('jobs.create', { spec: { ...SPEC, missedWindow: 'fold_into_next' } });
    const before = jobsDigest();
    const sim = await m.call('jobs.simulateDowntime', { id: job.id, from: '2026-11-30T00:00:00.000Z', to: '2026-12-03T00:00:00.000Z' });
    expect(sim.items.length).toBe(3);
    expect(jobsDigest()).toBe(before);
  });

  it('rehearse answers the asked scenarios of an unsaved spec and changes nothing live (no row, no audit)', async () => {
    const before = jobsDigest();
    const audits = auditCount(core);
    const r = await m.call('jobs.rehearse', { spec: { ...SPEC, name: 'draft' }, scenarios: ['normal', 'process_restart'] });
    expect(r.scenarios.map((s) => [s.name, s.outcome])).toEqual([
      ['normal', 'ran_once'],
      ['process_restart', 'ran_once'],
    ]);
    expect(r.job).toBe('draft');
    expect(jobsDigest()).toBe(before);
    expect(auditCount(core)).toBe(audits);
  });
});

describe('jobs console methods: instances with their current runs', () => {
  it('lists the runs an instance has started and not finished', async () => {
    const job = await seed();
    const a = onlineInstance(core, 'reporter', 'rep-1');
    const insert = core.db.prepare(
      `INSERT INTO runs (id, job_id, job_name, slot, slot_at, status, disposition, trigger, max_retry, opens_at, version, trace_id, idempotency_key, instance_id, created_at, updated_at)
       VALUES (?, ?, 'daily-report', ?, ?, ?, ?, 'manual', 0, 0, 1, 't', ?, ?, 0, 0)`,
    );
    insert.run('run_a', job.id, '2026-11-29', 1, 'running', 'running', 'daily-report:2026-11-29', a);
    insert.run('run_b', job.id, '2026-11-28', 0, 'success', 'ran', 'daily-report:2026-11-28', a);
    const list = await m.call('instances.list', {});
    expect(list.find((i) => i.id === a)!.currentRuns).toEqual([{ runId: 'run_a', jobId: job.id, job: 'daily-report', slot: '2026-11-29' }]);
  });
});

describe('jobs console methods: calendars', () => {
  const CAL = { id: 'cn-2026', name: 'China 2026', timezone: 'Asia/Shanghai', workdays: [1, 2, 3, 4, 5], holidays: ['2026-10-01'], extraWorkdays: [] };

  it('validate, create, update with a reason, list, get', async () => {
    const v = await m.call('calendars.validate', { calendar: { ...CAL, timezone: 'Mars/Olympus', holidays: ['2026-02-30'] } });
    expect(v.ok).toBe(false);
    expect(v.issues.map((i) => i.field)).toEqual(expect.arrayContaining(['timezone', 'holidays']));
    expect((await m.call('calendars.validate', { calendar: CAL })).ok).toBe(true);
    const c = await m.call('calendars.create', { calendar: CAL, reason: 'office calendar' });
    expect(c).toMatchObject({ id: 'cn-2026', version: 1, updatedBy: ACTOR });
    const u = await m.call('calendars.update', { id: 'cn-2026', calendar: { ...CAL, id: undefined, extraWorkdays: ['2026-10-10'] } as never, reason: 'make-up day' }).catch((e) => e);
    // `id` is not part of the replacement body.
    expect(u).toMatchObject({ code: 'bad_request' });
    const { id: _id, ...body } = CAL;
    const u2 = await m.call('calendars.update', { id: 'cn-2026', calendar: { ...body, extraWorkdays: ['2026-10-10'] }, reason: 'make-up day' });
    expect(u2.extraWorkdays).toEqual(['2026-10-10']);
    expect(lastAudit()).toMatchObject({ type: 'calendar.update', actor: ACTOR, detail: { reason: 'make-up day' } });
    expect((await m.call('calendars.list', {})).map((x) => x.id)).toEqual(['cn-2026']);
    expect((await m.call('calendars.get', { id: 'cn-2026' })).version).toBe(2);
  });

  it('imports an .ics file: counts and warnings', async () => {
    await m.call('calendars.create', { calendar: CAL });
    const ics = [
      'BEGIN:VCALENDAR',
      'VERSION:2.0',
      'PRODID:-//test//EN',
      'BEGIN:VEVENT',
      'UID:1',
      'DTSTART;VALUE=DATE:20261001',
      'DTEND;VALUE=DATE:20261004',
      'SUMMARY:National Day',
      'END:VEVENT',
      'BEGIN:VEVENT',
      'UID:2',
      'DTSTART;VALUE=DATE:20261010',
      'DTEND;VALUE=DATE:20261011',
      'SUMMARY:补班 make-up workday',
      'END:VEVENT',
      'END:VCALENDAR',
    ].join('\r\n');
    const r = await m.call('calendars.importIcs', { id: 'cn-2026', ics, reason: 'official holidays' });
    expect(r.added).toEqual({ holidays: 2, extraWorkdays: 1 });
    expect(r.calendar.holidays).toEqual(['2026-10-01', '2026-10-02', '2026-10-03']);
    expect(r.calendar.extraWorkdays).toEqual(['2026-10-10']);
    expect(Array.isArray(r.warnings)).toBe(true);
    expect(lastAudit()).toMatchObject({ type: 'calendar.import_ics', actor: ACTOR, detail: { reason: 'official holidays' } });
  });
});

describe('jobs console methods with a real agent', () => {
  let h: JobsHarness;
  afterEach(async () => h?.close());

  it('a fatal failure lands in the backfill queue; cancel and mark done take reasons; needs attention counts it', async () => {
    h = await startJobsHarness({ start: '2026-11-30T00:00:00.000Z' });
    const cm = createConsoleMethods(h.core, { actor: ACTOR, port: null, dataDir: h.dir, version: 'test' });
    await h.agent('reporter', fail('fatal', 'validation failed: empty report'));
    const { job } = await cm.call('jobs.create', { spec: { ...SPEC, name: 'fragile' } });
    await cm.call('jobs.trigger', { id: job.id, reason: 'try it' });
    await h.settle();
    const run = (await cm.call('runs.list', { job: job.id })).items[0]!;
    expect(run).toMatchObject({ status: 'failed', errorClass: 'fatal', held: true });
    const queue = await cm.call('backfills.list', { job: job.id });
    expect(queue.items).toHaveLength(1);
    const b = queue.items[0]!;
    expect((await cm.call('dashboard.get', {})).runsNeedingAttention).toBeGreaterThan(0);
    const done = await cm.call('backfills.action', { id: b.id, action: 'mark_done', reason: 'fixed the report by hand' });
    expect(done.status).toBe('done');
    const detail = await cm.call('runs.get', { id: run.id });
    expect(detail.run.disposition).toBe('backfilled');
    expect(detail.backfills[0]).toMatchObject({ status: 'done', note: 'fixed the report by hand' });
    // A second request for the same slot, then cancel.
    const again = await cm.call('backfills.request', { jobId: job.id, slot: run.slot, reason: 'run it once more' });
    expect(again.status).toBe('queued');
    const cancelled = await cm.call('backfills.action', { id: again.id, action: 'cancel', reason: 'not needed' });
    expect(cancelled.status).toBe('cancelled');
  });

  it('the console event stream: run/job changes, one critical alert for a needs_human hold', async () => {
    h = await startJobsHarness({ start: '2026-11-30T00:00:00.000Z' });
    const cm = createConsoleMethods(h.core, { actor: ACTOR, port: null, dataDir: h.dir, version: 'test' });
    await h.agent('reporter', fail('needs_human', 'refund needs approval'));
    const seen: ConsoleEvent[] = [];
    const d = h.core.events.onAny((e) => seen.push(...mapCoreEvent(e)));
    const { job } = await cm.call('jobs.create', { spec: { ...SPEC, name: 'refunds' } });
    await cm.call('calendars.create', { calendar: { id: 'cn', name: 'China', timezone: 'Asia/Shanghai', workdays: [1, 2, 3, 4, 5], holidays: [], extraWorkdays: [] } });
    await cm.call('jobs.trigger', { id: job.id, reason: 'refund batch' });
    await h.settle();
    d.dispose();
    const batch = coalesce(seen);
    expect(batch).toContainEqual({ type: 'job.changed', jobId: job.id });
    expect(batch).toContainEqual({ type: 'job.changed', jobId: 'calendar:cn' });
    expect(batch.some((e) => e.type === 'run.changed' && e.jobId === job.id)).toBe(true);
    const alerts = batch.filter((e) => e.type === 'alert');
    expect(alerts.filter((e) => e.type === 'alert' && e.level === 'critical')).toEqual([
      { type: 'alert', level: 'critical', title: 'Needs a human', body: expect.stringContaining('refund needs approval') },
    ]);
    const run = (await cm.call('runs.list', { job: job.id })).items[0]!;
    expect(run).toMatchObject({ status: 'failed', errorClass: 'needs_human', held: true });
  });

  it('dashboard next triggers and a successful manual run come from core.jobs', async () => {
    h = await startJobsHarness({ start: '2026-11-30T00:00:00.000Z' });
    const cm = createConsoleMethods(h.core, { actor: ACTOR, port: null, dataDir: h.dir, version: 'test' });
    const agent = await h.agent('reporter', succeed(['fetch', 'send']));
    const { job } = await cm.call('jobs.create', { spec: SPEC });
    const dash = await cm.call('dashboard.get', {});
    expect(dash.nextTriggers).toEqual([{ jobId: job.id, job: 'daily-report', slot: '2026-11-30', at: '2026-11-30T01:00:00.000Z' }]);
    const t = await cm.call('jobs.trigger', { id: job.id, reason: 'now please' });
    expect(t.dispatched).toBe(true);
    await h.settle();
    expect(agent.triggers).toHaveLength(1);
    const detail = await cm.call('runs.get', { id: t.run.id });
    expect(detail.run).toMatchObject({ status: 'success', disposition: 'ran', instanceId: agent.instanceId });
    expect(detail.steps.map((s) => s.step)).toEqual(['fetch', 'send']);
  });
});
