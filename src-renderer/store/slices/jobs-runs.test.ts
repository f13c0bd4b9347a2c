import { afterEach, describe, expect, it } from 'vitest';
import type { ConsoleApi, ConsoleArgs, ConsoleEvent, ConsoleMethod, ConsoleResult } from '../../../src-main/common/console-api';
import type { JobSummary, LedgerEntry } from '../../../src-main/common/job-schema';
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
      case 'jobs.ledger': {
        const all = (this.ledgers.get(String(a.id)) ?? []).filter((e) => e.at >= String(a.from));
        const items = all.slice(0, this.ledgerPage);
        return { items, next: all.length > this.ledgerPage ? items[items.length - 1]!.at : null, counts: {} } as never;
      }
      case 'backfills.list':
        return { items: [], next: null } as never;
      case 'calendars.list':
        return [] as never;
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

  it('pages the ledger of a frequent job, dedupes the page edges, and says when it stopped', async () => {
    const { api, a, s } = setup();
    const days = Array.from({ length: 30 }, (_, i) => slot(`2026-11-${String(i + 1).padStart(2, '0')}`));
    api.ledgers.set('job_f', days);
    api.ledgerPage = 4;
    a.selectLedgerJob('job_f', 6);
    await settle(20);
    const l = s().runs.ledger;
    expect(new Set(l.items.map((e) => e.slot)).size).toBe(l.items.length);
    expect(l.truncated).toBe(true);
    // 4 pages of 4 from the start reach only 2026-11-13: the newest slots are fetched again from
    // nearer the end, and those are the ones kept (the oldest are left out).
    expect(l.items.at(-1)!.slot).toBe('2026-11-30');
    expect(l.items.map((e) => e.slot)).toEqual(days.slice(days.length - l.items.length).map((e) => e.slot));
    expect(l.items.some((e) => e.slot === '2026-11-01')).toBe(false);
    expect(l.from).toBe(l.items[0]!.at);
    expect(api.countCalls('jobs.ledger')).toBeGreaterThan(4);
  });

  it('a truncated ledger keeps the newest slots even when they are denser than the first pass', async () => {
    const { api, a, s } = setup();
    // Every minute from late October, then every 10 s from 1 December: far more than 4 pages of
    // 5000, and the second pass (started from the first pass's density) must slide past its start.
    const at = (ms: number): LedgerEntry => {
      const iso = new Date(ms).toISOString();
      return { slot: iso, at: iso, local: iso.slice(0, 16), expected: 'due', disposition: 'ran', status: 'success', run: null, backfills: [] };
    };
    const entries: LedgerEntry[] = [];
    for (let t = Date.parse('2026-10-20T00:00:00Z'); t < Date.parse('2026-12-01T00:00:00Z'); t += 60_000) entries.push(at(t));
    for (let t = Date.parse('2026-12-01T00:00:00Z'); t < Date.parse('2026-12-04T00:00:00Z'); t += 10_000) entries.push(at(t));
    api.ledgers.set('job_f', entries);
    a.selectLedgerJob('job_f', 6);
    await settle(80);
    const l = s().runs.ledger;
    expect(l.truncated).toBe(true);
    expect(l.items.length).toBe(20_000);
    expect(l.items[0]!.slot).toBe(entries[entries.length - 20_000]!.slot);
    expect(l.items.at(-1)!.slot).toBe(entries.at(-1)!.slot);
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
