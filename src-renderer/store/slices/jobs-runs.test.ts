import { afterEach, describe, expect, it } from 'vitest';
import type { JobSpecInput } from '../../../src-main/common/job-schema';
import { ConsoleKit, KitAgent, type ConsoleKitOptions } from '../../testing/console-kit';
import { createConsoleStore, type ConsoleStore } from '../console-store';

const settle = async (n = 8) => {
  for (let i = 0; i < n; i++) await new Promise<void>((r) => setImmediate(r));
};

const spec = (name: string, cron = '0 9 * * *'): JobSpecInput => ({ name, role: 'reporter', schedule: { cron, timezone: 'UTC' }, retry: { maxAttempts: 1 } });

let made: Array<ConsoleStore | ConsoleKit> = [];
/** A kit (jobs.list answered in pages of two), and the store over it. */
function setup(opts: ConsoleKitOptions = {}) {
  const api = new ConsoleKit({ pageCap: { 'jobs.list': 2 }, ...opts });
  const timers = api.timers;
  const cs = createConsoleStore(api, { timers, now: timers.now, liveIntervalMs: 250, refreshIntervalMs: 1000, safetyRefreshMs: 600_000 });
  made.push(cs, api);
  /** Jobs created through the console, as the operator does; returns their ids by name. */
  const jobs = async (...specs: JobSpecInput[]): Promise<Record<string, string>> => {
    const ids: Record<string, string> = {};
    for (const sp of specs) ids[sp.name] = (await api.call('jobs.create', { spec: sp, reason: 'test' })).job.id;
    api.calls.length = 0;
    return ids;
  };
  return { api, timers, cs, jobs, s: () => cs.store.getState(), a: cs.actions };
}

afterEach(() => {
  made.forEach((m) => m.dispose());
  made = [];
});

describe('jobs slice', () => {
  it('Trigger now answers with the run: the toast links to it', async () => {
    const { api, jobs, a, s } = setup();
    const ids = await jobs(spec('nightly-qa'));
    const job = { id: ids['nightly-qa']!, name: 'nightly-qa' };
    // No agent of the role online: the slot is claimed, nothing is dispatched, and the toast says so.
    await a.jobAction('trigger', job, 'try it now', { slot: '2026-11-29' });
    expect(s().toasts.at(-1)).toMatchObject({ tone: 'info', title: 'nightly-qa: slot claimed', link: { label: 'Open the run', view: 'runs', param: job.id, query: { slot: '2026-11-29' } } });
    await KitAgent.join(api, 'reporter', () => {});
    await a.jobAction('trigger', job, 'try it now', { slot: '2026-11-30' });
    expect(s().toasts.at(-1)).toMatchObject({ tone: 'success', title: 'Triggered nightly-qa (2026-11-30)', link: { label: 'Open the run', view: 'runs', param: job.id, query: { slot: '2026-11-30' } } });
  });

  it('loads every page of the job list when watched', async () => {
    const { api, jobs, a, s } = setup();
    await jobs(...['a', 'b', 'c', 'd', 'e'].map((n) => spec(n)));
    a.watch('jobs');
    await settle();
    expect(s().jobs.list.data?.map((j) => j.name)).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(api.countCalls('jobs.list')).toBe(3);
  });

  it('live run / job events refresh the watched jobs topics only, once per burst', async () => {
    const { api, jobs, a, timers } = setup();
    const ids = await jobs(spec('a'));
    a.start();
    a.watch('jobs');
    a.watch('runs');
    a.selectLedgerJob(ids.a!, 2);
    await settle();
    const before = { list: api.countCalls('jobs.list'), ledger: api.countCalls('jobs.ledger'), cal: api.countCalls('calendars.list') };
    // A burst of run changes, pushed through the hub (seeding 500 runs would take long).
    for (let i = 0; i < 500; i++) api.emit({ type: 'run.changed', runId: `run_${i}`, jobId: ids.a!, status: 'running' });
    timers.advance(250);
    await settle();
    timers.advance(1000);
    await settle();
    expect(api.countCalls('jobs.list') - before.list).toBe(1);
    expect(api.countCalls('jobs.ledger') - before.ledger).toBe(1);
    // Calendars are not watched (and a run is not a calendar change).
    expect(api.countCalls('calendars.list') - before.cal).toBe(0);
    a.watch('calendars');
    await settle();
    const cal = api.countCalls('calendars.list');
    // A calendar change in the core.
    await api.call('calendars.create', { calendar: { id: 'cn', name: 'China', timezone: 'Asia/Shanghai', workdays: [1, 2, 3, 4, 5], holidays: [], extraWorkdays: [] } });
    timers.advance(1500);
    await settle();
    expect(api.countCalls('calendars.list')).toBe(cal + 1);
  });

  /** Jobs made on Saturday 2026-11-28 00:00; the clock then moves to Monday noon (nothing runs meanwhile). */
  async function jobsSinceSaturday(...specs: JobSpecInput[]) {
    const kit = setup({ start: '2026-11-28T00:00:00.000Z' });
    const ids = await kit.jobs(...specs);
    kit.timers.advance(Date.parse('2026-11-30T12:00:00.000Z') - kit.api.clock.now());
    return { ...kit, ids };
  }

  it('the ledger belongs to the selected job: a slow answer for the previous job is dropped', async () => {
    const { api, ids, a, s } = await jobsSinceSaturday(spec('a'), spec('b', '30 10 * * *'));
    const release = api.hold('jobs.ledger', { id: ids.a });
    a.selectLedgerJob(ids.a!, 2);
    await settle();
    a.selectLedgerJob(ids.b!, 2);
    await settle();
    expect(s().runs.ledger).toMatchObject({ jobId: ids.b, loading: false });
    const bTimes = () => s().runs.ledger.items.map((e) => e.at.slice(10, 16));
    expect(bTimes()).toHaveLength(15);
    expect(new Set(bTimes())).toEqual(new Set(['T10:30']));
    release();
    await settle();
    expect(s().runs.ledger.jobId).toBe(ids.b);
    expect(new Set(bTimes())).toEqual(new Set(['T10:30']));
  });

  it('a job with a few slots a day: its day counts, and every slot of the weeks shown', async () => {
    const { ids, a, s } = await jobsSinceSaturday(spec('d'));
    a.selectLedgerJob(ids.d!, 2);
    await settle(20);
    // The weeks shown: from Monday a week back to a week ahead, one slot a day.
    const days = s().runs.days.items;
    expect(days.map((b) => b.key)).toEqual(Array.from({ length: 15 }, (_, i) => new Date(Date.UTC(2026, 10, 23 + i)).toISOString().slice(0, 10)));
    expect(days.every((b) => b.slots === 1)).toBe(true);
    // Before the job existed, since (the runner is not running here), and ahead.
    const ledger = s().runs.ledger.items;
    expect(ledger.map((e) => e.slot)).toEqual(days.map((b) => b.key));
    expect(ledger.map((e) => e.disposition)).toEqual([...Array(5).fill('before_job'), ...Array(3).fill('not_evaluated'), ...Array(7).fill('scheduled')]);
  });

  it('a frequent job is read as days, then the hours of a day, then the slots of an hour — never all its slots', async () => {
    const { api, ids, a, s } = await jobsSinceSaturday(spec('f', '*/10 * * * *'));
    a.selectLedgerJob(ids.f!, 2);
    await settle(20);
    // Every 10 minutes: 144 slots a (UTC) day, read as day counts only. The first and last days
    // shown are cut at local midnight, so only the days between are whole wherever the test runs.
    expect(s().runs.days.items.slice(1, 14).map((b) => b.slots)).toEqual(Array(13).fill(144));
    expect(api.countCalls('jobs.ledger')).toBe(0);
    expect(s().runs.ledger.items).toEqual([]);
    a.selectLedgerScope({ day: '2026-11-29', hour: null });
    await settle(20);
    expect(s().runs.hours).toMatchObject({ day: '2026-11-29', complete: true });
    expect(s().runs.hours.items).toHaveLength(24);
    expect(api.countCalls('jobs.ledger')).toBe(0);
    a.selectLedgerScope({ day: '2026-11-29', hour: '2026-11-29T09' });
    await settle(20);
    expect(s().runs.ledger.items.map((e) => e.slot)).toEqual(['2026-11-29T09:00', '2026-11-29T09:10', '2026-11-29T09:20', '2026-11-29T09:30', '2026-11-29T09:40', '2026-11-29T09:50']);
    expect(api.argsOf('jobs.ledger')).toEqual([{ id: ids.f, from: '2026-11-29T09:00:00.000Z', to: '2026-11-29T10:00:00.000Z', limit: 5000 }]);
  });

  it('runs of every job: the filter goes to the server, a newer filter wins, more pages append', async () => {
    // Pages of two, so that three failed runs of `a` take a second page.
    const { api, jobs, a, s } = setup({ pageCap: { 'runs.list': 2 } });
    const ids = await jobs(spec('a'), spec('x'));
    await KitAgent.join(api, 'reporter');
    for (const [job, slot] of [['a', '2026-11-28'], ['a', '2026-11-29'], ['a', '2026-11-30'], ['x', '2026-11-30']] as const) {
      await api.call('jobs.trigger', { id: ids[job]!, reason: 'test', slot });
      await settle(20);
    }
    a.setAllRunsFilter({ status: 'failed' });
    a.setAllRunsFilter({ status: 'failed', job: ids.a, from: '' });
    await settle();
    expect(s().runs.all.filter).toEqual({ status: 'failed', job: ids.a });
    expect(s().runs.all.items).toHaveLength(2);
    await a.loadMoreAllRuns();
    expect(s().runs.all.items.map((r) => [r.jobId, r.status])).toEqual(Array(3).fill([ids.a, 'failed']));
    expect(new Set(s().runs.all.items.map((r) => r.slot))).toEqual(new Set(['2026-11-28', '2026-11-29', '2026-11-30']));
    expect(s().runs.all.next).toBeNull();
  });

  it('an operator action toasts with the reason and refreshes the list at once', async () => {
    const { api, jobs, a, s } = setup();
    const ids = await jobs(spec('a'));
    a.watch('jobs');
    await settle();
    const n = api.countCalls('jobs.list');
    await a.jobAction('pause', { id: ids.a!, name: 'a' }, 'upstream migration');
    await settle();
    expect(s().toasts.at(-1)).toMatchObject({ tone: 'warning', title: 'Paused a', body: 'Reason: upstream migration' });
    expect(api.countCalls('jobs.list')).toBe(n + 1);
    expect(s().jobs.list.data?.[0]?.paused?.reason).toBe('upstream migration');
  });

  it('a refused action toasts its code and rethrows', async () => {
    const { a, s } = setup();
    await expect(a.jobAction('trigger', { id: 'job_x', name: 'x' }, 'r')).rejects.toMatchObject({ code: 'not_found' });
    expect(s().toasts.at(-1)).toMatchObject({ tone: 'error', title: 'Could not trigger x', code: 'not_found' });
  });
});
