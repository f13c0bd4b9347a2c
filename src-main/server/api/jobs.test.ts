/** The jobs routes of the local HTTP API (PROTOCOL §2), over a real server on 127.0.0.1:0. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startApiTestServer, type ApiTestServer } from '../tests/api-server.testkit';
import { testRequester } from '../tests/http-request.testkit';
import { auditCount, stateDigest, type TestCore } from '../../core/tests/test-core';

const OPERATOR = 'op-secret-for-jobs-tests';
type Json = any;

let api: ApiTestServer;
let core: TestCore; // manual clock at 2026-11-30T08:00:00Z
let port: number;

beforeEach(async () => {
  api = await startApiTestServer(OPERATOR);
  ({ core, port } = api);
});
afterEach(() => api.close());

const request = testRequester(() => port, OPERATOR);
const call = (method: string, path: string, body?: unknown, token: string | null = OPERATOR) => request(method, `/api/v1${path}`, { body, token });

const JOB = {
  name: 'daily-sales-report',
  role: 'reporter',
  schedule: { cron: '0 9 * * *', timezone: 'Asia/Shanghai' },
  window: { start: '09:00', end: '10:00', recheckEveryS: 300 },
  calendar: 'cn-workdays',
  calendarPolicy: 'skip',
  preconditions: [{ kind: 'signal', name: 'data-ready' }],
  retry: { maxAttempts: 3, firstDelayS: 300, backoff: 'fixed' },
  missedWindow: 'fold_into_next',
  overlap: 'skip',
  payload: { channel: 'sales' },
  enabled: true,
};
const CAL = { id: 'cn-workdays', name: 'CN workdays', timezone: 'Asia/Shanghai', workdays: [1, 2, 3, 4, 5], holidays: ['2026-10-01'], extraWorkdays: ['2026-09-20'] };

describe('jobs over HTTP', () => {
  it('the PROTOCOL job object round-trips: create, get, list, patch (version bump), preview', async () => {
    expect((await call('POST', '/calendars', { ...CAL, reason: 'initial' })).status).toBe(201);
    const created = await call('POST', '/jobs', { ...JOB, reason: 'new report' });
    expect(created.status).toBe(201);
    const job = created.body.job;
    expect(job).toMatchObject({ ...JOB, id: expect.stringMatching(/^job_/), version: 1, paused: null, createdBy: 'operator:http' });
    expect((await call('GET', `/jobs/${job.id}`)).body.job.id).toBe(job.id);
    expect((await call('GET', `/jobs/daily-sales-report`)).body.job.id).toBe(job.id); // by name too
    const list = await call('GET', '/jobs?role=reporter&limit=10');
    expect(list.body).toMatchObject({ items: [{ id: job.id, nextSlot: { slot: '2026-12-01', at: '2026-12-01T01:00:00.000Z' }, lastRun: null }], next: null });
    const patched = await call('PATCH', `/jobs/${job.id}`, { payload: { channel: 'ops' }, reason: 'new channel' });
    expect(patched.status).toBe(200);
    expect(patched.body.job).toMatchObject({ version: 2, payload: { channel: 'ops' } });
    const preview = await call('GET', `/jobs/${job.id}/preview?count=2`);
    expect(preview.body.items.map((i: Json) => [i.slot, i.at])).toEqual([
      ['2026-12-01', '2026-12-01T01:00:00.000Z'],
      ['2026-12-02', '2026-12-02T01:00:00.000Z'],
    ]);
    // Not cut short; `next` continues after the last listed slot.
    expect([preview.body.truncated, preview.body.next]).toEqual([false, '2026-12-02T01:00:00.000Z']);
  });

  it('PATCH sets, replaces and removes a job\'s "done when" checks; a bad check is refused and changes nothing', async () => {
    const created = (await call('POST', '/jobs', { name: 'checked', role: 'reporter', schedule: { cron: '0 9 * * *', timezone: 'UTC' }, reason: 'new' })).body.job;
    const tests = { checks: [{ kind: 'command', name: 'tests', command: ['npm', 'test'] }], onFail: 'needs_human' };
    const set = await call('PATCH', `/jobs/${created.id}`, { verify: tests, reason: 'check the work' });
    expect(set.status).toBe(200);
    expect(set.body.job).toMatchObject({ version: 2, verify: tests });
    const bad = await call('PATCH', `/jobs/${created.id}`, { verify: { checks: [{ kind: 'file', name: 'x' }] }, reason: 'no path' });
    expect([bad.status, bad.body.error.code]).toEqual([400, 'bad_request']);
    expect((await call('GET', `/jobs/${created.id}`)).body.job).toMatchObject({ version: 2, verify: tests });
    const removed = await call('PATCH', `/jobs/${created.id}`, { verify: null, reason: 'trust the agent' });
    expect(removed.body.job.version).toBe(3);
    expect(removed.body.job.verify).toBeUndefined();
  });

  it('a job saved with a warning can be patched: the warning stays a warning', async () => {
    const created = await call('POST', '/jobs', { name: 'every-minute', role: 'ops', schedule: { everyS: 60 } });
    expect(created.status).toBe(201);
    expect(created.body.warnings).toEqual([expect.objectContaining({ field: 'retry', severity: 'warning' })]);
    for (const patch of [{ enabled: false }, { payload: { channel: 'ops' } }]) {
      const r = await call('PATCH', `/jobs/${created.body.job.id}`, { ...patch, reason: 'edit' });
      expect([r.status, r.body.warnings]).toEqual([200, created.body.warnings]);
    }
  });

  it('contradictory settings: 400 with {field, message} issues, nothing created', async () => {
    const r = await call('POST', '/jobs', { ...JOB, calendar: undefined, calendarPolicy: 'skip', missedWindow: 'run_now' });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: 'bad_request', status: 400 });
    expect(r.body.error.detail.issues).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ field: 'toleranceS', message: expect.stringMatching(/needs a tolerance/) }),
        expect.objectContaining({ field: 'calendarPolicy', message: expect.stringMatching(/no calendar/) }),
      ]),
    );
    expect((await call('GET', '/jobs')).body.items).toEqual([]);
    const v = await call('POST', '/jobs/validate', { ...JOB, calendar: 'nope' });
    expect(v.body).toMatchObject({ ok: false, issues: [expect.objectContaining({ field: 'calendar' })] });
    const p = await call('POST', '/jobs/preview?count=2&after=2026-03-07T00:00:00Z', { name: 'x', role: 'r', schedule: { cron: '30 2 * * *', timezone: 'America/New_York' } });
    expect(p.body.items.map((i: Json) => i.shifted ?? null)).toEqual([null, 'dst_gap']);
  });

  it('pause / resume / trigger / explain / runs / ledger / simulate', async () => {
    await call('POST', '/calendars', CAL);
    const job = (await call('POST', '/jobs', JOB)).body.job;
    core.operatorSettings.setRequireReason({ on: true, actor: 'test' });
    expect((await call('POST', `/jobs/${job.id}/pause`, {})).status).toBe(400); // a reason is required (once the operator requires one)
    core.operatorSettings.setRequireReason({ on: false, actor: 'test' });
    const paused = await call('POST', `/jobs/${job.id}/pause`, { reason: 'data migration' });
    expect(paused.body.job.paused).toEqual({ at: '2026-11-30T08:00:00.000Z', by: 'operator:http', reason: 'data migration', until: null, drain: false, role: false });
    const ex = await call('GET', `/jobs/${job.id}/explain?at=2026-12-01T01:00:00.000Z`);
    expect(ex.body.explanation).toMatchObject({ tense: 'future', slot: { slot: '2026-12-01' }, outcome: expect.stringMatching(/unless the job is resumed/) });
    // Run now while paused: claims the current slot (one run per slot).
    const t1 = await call('POST', `/jobs/${job.id}/trigger`, { reason: 'customer asked' });
    expect(t1.status).toBe(201);
    // No agent of the role is online: claimed now, dispatched when one says hello.
    expect(t1.body).toMatchObject({ created: true, dispatched: false, run: { slot: '2026-11-30', trigger: 'manual', status: 'pending' }, message: expect.stringMatching(/no online instance of role reporter/) });
    const t2 = await call('POST', `/jobs/${job.id}/trigger`, { reason: 'again' });
    expect(t2.status).toBe(200);
    expect(t2.body).toMatchObject({ created: false, run: { id: t1.body.run.id } });
    expect((await call('POST', `/jobs/${job.id}/resume`, {})).body.job.paused).toBeNull();
    const runs = await call('GET', `/runs?job=${job.id}&status=pending`);
    expect(runs.body).toMatchObject({ items: [{ id: t1.body.run.id }], next: null });
    expect((await call('GET', `/runs?from=${encodeURIComponent(t1.body.run.slotAt)}`)).body.items).toHaveLength(1);
    expect((await call('GET', `/runs?to=${encodeURIComponent(t1.body.run.slotAt)}`)).body.items).toHaveLength(0);
    const one = await call('GET', `/runs/${t1.body.run.id}`);
    expect(one.body).toMatchObject({ run: { id: t1.body.run.id }, steps: [], checks: expect.arrayContaining([expect.objectContaining({ name: 'manual', verdict: 'ready' })]) });
    const ledger = await call('GET', `/jobs/${job.id}/ledger?from=2026-11-29T00:00:00Z&to=2026-12-02T00:00:00Z`);
    expect(ledger.body.items.map((e: Json) => [e.slot, e.disposition])).toEqual([
      // A Sunday before the job was created: nothing was expected of it, calendar or not.
      ['2026-11-29', 'before_job'],
      ['2026-11-30', 'waiting'],
      ['2026-12-01', 'scheduled'],
    ]);
    const sim = await call('GET', `/jobs/${job.id}/simulate?from=2026-12-01T00:00:00Z&to=2026-12-04T00:00:00Z`);
    expect(sim.body.simulation.items.map((i: Json) => [i.slot, i.decision, i.coveredBy])).toEqual([
      ['2026-12-01', 'folded', '2026-12-04'],
      ['2026-12-02', 'folded', '2026-12-04'],
      ['2026-12-03', 'folded', '2026-12-04'],
    ]);
    expect((await call('GET', '/runs?status=exploded')).status).toBe(400);
    expect((await call('GET', '/jobs/job_nope')).status).toBe(404);
  });

  it('calendars: create, list, replace, ICS import; kill switch and quota settings', async () => {
    expect((await call('POST', '/calendars', { ...CAL, workdays: [0] })).status).toBe(400);
    await call('POST', '/calendars', CAL);
    expect((await call('POST', '/calendars', CAL)).status).toBe(409);
    expect((await call('GET', '/calendars')).body).toMatchObject({ items: [{ id: 'cn-workdays', version: 1 }], next: null });
    const put = await call('PUT', '/calendars/cn-workdays', { name: 'CN', timezone: 'Asia/Shanghai', workdays: [1, 2, 3, 4, 5], holidays: [], extraWorkdays: [], reason: 'reset' });
    expect(put.body.calendar).toMatchObject({ version: 2, holidays: [] });
    const ics = 'BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//EN\r\nBEGIN:VEVENT\r\nUID:1\r\nDTSTART;VALUE=DATE:20261001\r\nDTEND;VALUE=DATE:20261008\r\nSUMMARY:National Day\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n';
    const imp = await call('POST', '/calendars/cn-workdays/import', { ics, reason: 'official' });
    expect(imp.body.calendar.holidays).toHaveLength(7);
    expect((await call('POST', '/calendars/cn-workdays/import', { ics: 'garbage' })).status).toBe(400);
    const ks = await call('PUT', '/job-settings/kill-switch', { on: true, reason: 'incident' });
    expect(ks.body.settings.killSwitch).toMatchObject({ on: true, reason: 'incident', by: 'operator:http' });
    const q = await call('PUT', '/job-settings/concurrency', { limit: 4, reason: 'laptop' });
    expect(q.body.settings).toMatchObject({ globalConcurrency: 4, killSwitch: { on: true } });
    expect((await call('GET', '/job-settings')).body.settings.globalConcurrency).toBe(4);
  });

  it('rehearse: the five scenarios of an unsaved spec with its calendar, on a throw-away world — the live database gains nothing', async () => {
    await call('POST', '/calendars', CAL);
    const spec = { ...JOB, name: 'not-saved-yet' };
    const before = { audit: auditCount(core), state: stateDigest(core), jobs: core.jobs.list({}).items.length, runs: core.jobs.listRuns({}).items.length };
    const r = await call('POST', '/jobs/rehearse', { spec, from: '2026-11-27T00:00:00Z' });
    expect(r.status).toBe(200);
    expect(r.body.scenarios.map((s: Json) => s.name)).toEqual(['normal', 'data_delay', 'downstream_timeout', 'process_restart', 'cross_day_backfill']);
    for (const s of r.body.scenarios) {
      expect(s.verdict).toEqual(expect.any(String));
      expect(s.events.length).toBeGreaterThan(0);
      for (const e of s.events) expect(Object.keys(e)).toEqual(expect.arrayContaining(['at', 'kind', 'detail']));
      for (const l of s.ledger) expect(Object.keys(l)).toEqual(expect.arrayContaining(['slot', 'disposition', 'attempts']));
    }
    // The calendar was copied: Friday 2026-11-27 is the last workday before the weekend the downtime spans.
    const cross = r.body.scenarios[4];
    expect(cross.ledger.filter((l: Json) => l.disposition === 'skipped_calendar').map((l: Json) => l.slot)).toEqual(['2026-11-28', '2026-11-29']);
    expect({ audit: auditCount(core), state: stateDigest(core), jobs: core.jobs.list({}).items.length, runs: core.jobs.listRuns({}).items.length }).toEqual(before);
    // Only the asked scenarios run.
    const one = await call('POST', '/jobs/rehearse', { spec, scenarios: ['normal'], from: '2026-11-27T00:00:00Z' });
    expect(one.body.scenarios.map((s: Json) => s.name)).toEqual(['normal']);
    expect(one.body.scenarios[0].events).toEqual(r.body.scenarios[0].events);
  });

  it('rehearse refuses a bad body or an invalid spec with 400 naming the field', async () => {
    const unknown = await call('POST', '/jobs/rehearse', { spec: JOB, scenarios: ['meteor'] });
    expect(unknown.status).toBe(400);
    expect(JSON.stringify(unknown.body)).toMatch(/scenarios/);
    const bad = await call('POST', '/jobs/rehearse', { spec: { ...JOB, calendar: undefined, window: { start: '10:00', end: '09:00' } } });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toMatch(/window/);
    expect((await call('POST', '/jobs/rehearse', { spec: JOB, extra: 1 })).status).toBe(400);
    expect(auditCount(core)).toBe(0);
  });

  it('requires the operator token', async () => {
    expect((await call('GET', '/jobs', undefined, null)).status).toBe(401);
    expect((await call('GET', '/runs', undefined, 'wrong')).status).toBe(401);
  });
});
