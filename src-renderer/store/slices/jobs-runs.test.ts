import { afterEach, describe, expect, it } from 'vitest';
import type { ConsoleApi, ConsoleArgs, ConsoleEvent, ConsoleMethod, ConsoleResult } from '../../../src-main/common/console-api';
import type { JobSummary, LedgerBucket, LedgerEntry } from '../../../src-main/common/job-schema';
import { FakeConsoleApi, ManualTimers } from '../../testing/fake-console-api';
import { createConsoleStore, type ConsoleStore } from '../console-store';

const settle = async (n = 8) => {
  for (let i = 0; i < n; i++) await new Promise<void>((r) => setImmediate(r));
};

const job = (name: string, p: Partial<JobSummary> = {}) => ({ id: `job_${name}`, name, role: 'reporter', version: 1, enabled: true, paused: null, schedule: { cron: '0 9 * * *', timezone: 'UTC' }, ...p }) as JobSummary;
const slot = (s: string): LedgerEntry => ({ slot: s, at: `${s}T09:00:00.000Z`, local: `${s}T09:00`, expected: 'due', disposition: 'ran', status: 'success', run: null, backfills: [] });

/** The fake console API plus the jobs methods these tests need; `gate` holds a method's answers. */
class JobsFake extends FakeConsoleApi {
  jobs: JobSummary[] = [];
  ledgers = new Map<string, LedgerEntry[]>();
  ledgerPage = 5000;
  jobGates = new Map<string, Array<() => void>>();

  override async call<M extends ConsoleMethod>(method: M, args: ConsoleArgs<M>): Promise<ConsoleResult<M>> {
    if (!/^(jobs|runs|backfills|calendars)\./.test(method)) return super.call(method, args);
    this.calls.push({ method, args });
    const a = args as Record<string, unknown>;
    const gate = this.jobGates.get(`${method}:${String(a.id ?? '')}`);
    if (gate) await new Promise<void>((r) => gate.push(r));
    await Promise.resolve();
    switch (method) {
      case 'jobs.list': {
        const after = a.after as string | undefined;
        const rest = this.jobs.filter((j) => after === undefined || j.name > after);
        const items = rest.slice(0, 2); // pages of 2 to exercise paging
        return { items, next: rest.length > 2 ? items[items.length - 1]!.name : null } as never;
      }
      case 'jobs.ledgerBuckets': {
        const len = a.by === 'hour' ? 13 : 10;
        const buckets = new Map<string, LedgerBucket>();
        for (const e of (this.ledgers.get(String(a.id)) ?? []).filter((x) => x.at >= String(a.from) && (a.to === undefined || x.at < String(a.to)))) {
          const key = e.local!.slice(0, len);
          const b = buckets.get(key) ?? { key, first: e.at, slots: 0, counts: {} };
          b.slots++;
          b.counts[e.disposition] = (b.counts[e.disposition] ?? 0) + 1;
          buckets.set(key, b);
        }
        return { zone: 'UTC', by: a.by ?? 'day', buckets: [...buckets.values()], next: null } as never;
      }
      case 'jobs.ledger': {
        const all = (this.ledgers.get(String(a.id)) ?? []).filter((e) => e.at >= String(a.from) && (a.to === undefined || e.at < String(a.to)));
        const items = all.slice(0, this.ledgerPage);
        return { items, next: all.length > this.ledgerPage ? items[items.length - 1]!.at : null, counts: {} } as never;
      }
      case 'backfills.list':
        return { items: [], next: null } as never;
      case 'calendars.list':
        return [] as never;
      case 'jobs.trigger': {
        const j = this.jobs.find((x) => x.id === a.id)!;
        return { run: { id: 'run_t1', jobId: j.id, job: j.name, slot: String(a.slot ?? '2026-11-30') }, created: true, dispatched: true, message: 'dispatched now' } as never;
      }
      case 'jobs.pause': {
        const j = this.jobs.find((x) => x.id === a.id)!;
        j.paused = { at: 'now', by: 'operator:browser', reason: String(a.reason), until: null, drain: false, role: false };
        return j as never;
      }
      default:
        throw new Error(`not in the fake: ${method}`);
    }
  }

  holdJob(key: string): () => void {
    const waiting: Array<() => void> = [];
    this.jobGates.set(key, waiting);
    return () => {
      this.jobGates.delete(key);
      waiting.splice(0).forEach((w) => w());
    };
  }
}

let made: ConsoleStore[] = [];
function setup() {
  const timers = new ManualTimers();
  const api = new JobsFake({ now: () => Date.parse('2026-11-30T12:00:00Z') + timers.now() });
  const cs = createConsoleStore(api as unknown as ConsoleApi, { timers, now: () => Date.parse('2026-11-30T12:00:00Z') + timers.now(), liveIntervalMs: 250, refreshIntervalMs: 1000, safetyRefreshMs: 600_000 });
  made.push(cs);
  return { api, timers, cs, s: () => cs.store.getState(), a: cs.actions };
}

afterEach(() => {
  made.forEach((m) => m.dispose());
  made = [];
});

describe('jobs slice', () => {
  it('Trigger now answers with the run: the toast links to it', async () => {
    const { api, a, s } = setup();
    api.jobs = [job('nightly-qa')];
    await a.jobAction('trigger', { id: 'job_nightly-qa', name: 'nightly-qa' }, 'try it now', { slot: '2026-11-30' });
    expect(s().toasts.at(-1)).toMatchObject({ tone: 'success', title: 'Triggered nightly-qa (2026-11-30)', link: { label: 'Open the run', view: 'runs', param: 'job_nightly-qa', query: { slot: '2026-11-30' } } });
  });

  it('loads every page of the job list when watched', async () => {
    const { api, a, s } = setup();
    api.jobs = ['a', 'b', 'c', 'd', 'e'].map((n) => job(n));
    a.watch('jobs');
    await settle();
    expect(s().jobs.list.data?.map((j) => j.name)).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(api.countCalls('jobs.list')).toBe(3);
  });

  it('live run / job events refresh the watched jobs topics only, once per burst', async () => {
    const { api, a, timers } = setup();
    api.jobs = [job('a')];
    a.start();
    a.watch('jobs');
    a.watch('runs');
    a.selectLedgerJob('job_a', 2);
    await settle();
    const before = { list: api.countCalls('jobs.list'), ledger: api.countCalls('jobs.ledger'), cal: api.countCalls('calendars.list') };
    for (let i = 0; i < 500; i++) api.emit({ type: 'run.changed', runId: `run_${i}`, jobId: 'job_a', status: 'running' } as ConsoleEvent);
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
    api.emit({ type: 'job.changed', jobId: 'calendar:cn' });
    timers.advance(1500);
    await settle();
    expect(api.countCalls('calendars.list')).toBe(cal + 1);
  });

  it('the ledger belongs to the selected job: a slow answer for the previous job is dropped', async () => {
    const { api, a, s } = setup();
    api.ledgers.set('job_a', [slot('2026-11-24')]);
    api.ledgers.set('job_b', [slot('2026-11-25'), slot('2026-11-26')]);
    const release = api.holdJob('jobs.ledger:job_a');
    a.selectLedgerJob('job_a', 2);
    await settle();
    a.selectLedgerJob('job_b', 2);
    await settle();
    expect(s().runs.ledger).toMatchObject({ jobId: 'job_b', loading: false });
    expect(s().runs.ledger.items.map((e) => e.slot)).toEqual(['2026-11-25', '2026-11-26']);
    release();
    await settle();
    expect(s().runs.ledger.jobId).toBe('job_b');
    expect(s().runs.ledger.items.map((e) => e.slot)).toEqual(['2026-11-25', '2026-11-26']);
  });

  it('a job with a few slots a day: its day counts, and every slot of the weeks shown', async () => {
    const { api, a, s } = setup();
    api.ledgers.set('job_d', [slot('2026-11-28'), slot('2026-11-29'), slot('2026-11-30')]);
    a.selectLedgerJob('job_d', 2);
    await settle(20);
    expect(s().runs.days.items.map((b) => [b.key, b.slots])).toEqual([
      ['2026-11-28', 1],
      ['2026-11-29', 1],
      ['2026-11-30', 1],
    ]);
    expect(s().runs.ledger.items.map((e) => e.slot)).toEqual(['2026-11-28', '2026-11-29', '2026-11-30']);
  });

  it('a frequent job is read as days, then the hours of a day, then the slots of an hour — never all its slots', async () => {
    const { api, a, s } = setup();
    // Every 10 minutes for three days: 144 slots a day.
    const entries: LedgerEntry[] = [];
    for (let t = Date.parse('2026-11-28T00:00:00Z'); t < Date.parse('2026-12-01T00:00:00Z'); t += 600_000) {
      const iso = new Date(t).toISOString();
      entries.push({ slot: iso.slice(0, 16), at: iso, local: iso.slice(0, 16), expected: 'due', disposition: 'ran', status: 'success', run: null, backfills: [] });
    }
    api.ledgers.set('job_f', entries);
    a.selectLedgerJob('job_f', 2);
    await settle(20);
    expect(s().runs.days.items.map((b) => b.slots)).toEqual([144, 144, 144]);
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
    expect(api.calls.filter((c) => c.method === 'jobs.ledger').map((c) => c.args)).toEqual([{ id: 'job_f', from: '2026-11-29T09:00:00.000Z', to: '2026-11-29T10:00:00.000Z', limit: 5000 }]);
  });

  it('runs of every job: the filter goes to the server, a newer filter wins, more pages append', async () => {
    const { api, a, s } = setup();
    const run = (id: string, jobId: string) => ({ id, jobId, job: jobId, slot: id, slotAt: '2026-11-30T09:00:00.000Z', status: 'failed', disposition: 'failed' });
    const realCall = api.call.bind(api);
    api.call = (async (method: string, args: unknown) => {
      if (method !== 'runs.list') return realCall(method as never, args as never);
      api.calls.push({ method: 'runs.list', args });
      const f = args as { job?: string; after?: string };
      if (f.after) return { items: [run('r3', 'job_a')], next: null };
      return { items: f.job ? [run('r1', f.job), run('r2', f.job)] : [run('r0', 'job_x')], next: 'c1' };
    }) as typeof api.call;
    a.setAllRunsFilter({ status: 'failed' });
    a.setAllRunsFilter({ status: 'failed', job: 'job_a', from: '' });
    await settle();
    expect(s().runs.all.filter).toEqual({ status: 'failed', job: 'job_a' });
    expect(s().runs.all.items.map((r) => r.id)).toEqual(['r1', 'r2']);
    await a.loadMoreAllRuns();
    expect(s().runs.all.items.map((r) => r.id)).toEqual(['r1', 'r2', 'r3']);
    expect(s().runs.all.next).toBeNull();
  });

  it('an operator action toasts with the reason and refreshes the list at once', async () => {
    const { api, a, s } = setup();
    api.jobs = [job('a')];
    a.watch('jobs');
    await settle();
    const n = api.countCalls('jobs.list');
    await a.jobAction('pause', { id: 'job_a', name: 'a' }, 'upstream migration');
    await settle();
    expect(s().toasts.at(-1)).toMatchObject({ tone: 'warning', title: 'Paused a', body: 'Reason: upstream migration' });
    expect(api.countCalls('jobs.list')).toBe(n + 1);
    expect(s().jobs.list.data?.[0]?.paused?.reason).toBe('upstream migration');
  });

  it('a refused action toasts its code and rethrows', async () => {
    const { a, s } = setup();
    await expect(a.jobAction('trigger', { id: 'job_x', name: 'x' }, 'r')).rejects.toThrow();
    expect(s().toasts.at(-1)).toMatchObject({ tone: 'error', title: 'Could not trigger x' });
  });
});
