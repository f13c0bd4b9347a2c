/**
 * Every request path over a job's slots is bounded by a count, never by the job's frequency times
 * a time range (issue 25 item 1: "run now" on an every-5 s job listed 400 days of slots — 6.9
 * million — inside its write transaction, and ran Gaffer out of memory).
 *
 * Each path is measured with the schedule library's scan meter (`slotScanMeter`: occurrences
 * considered), on an every-second and an every-5-second job, with an injected clock. The meter's
 * limit makes an unbounded path throw at once instead of running for minutes.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeTestCore, onlineInstance, type TestCore } from '../tests/test-core';
import { slotScanMeter } from './schedule';

let core: TestCore | undefined;
const who = { actor: 'operator:test' };
/** Far more than any bounded path needs, far less than 400 days (34.5 million slots at 1 s). */
const LIMIT = 250_000;

beforeEach(() => {
  slotScanMeter.considered = 0;
  slotScanMeter.limit = LIMIT;
});
afterEach(() => {
  slotScanMeter.limit = Infinity;
  core?.close();
  core = undefined;
});

/** Slots the call considered (it throws past LIMIT). */
function scanned<T>(fn: () => T): { result: T; considered: number } {
  // Setting the job up counts nothing: each measure starts from zero.
  slotScanMeter.considered = 0;
  const result = fn();
  return { result, considered: slotScanMeter.considered };
}

async function scannedAsync<T>(fn: () => Promise<T>): Promise<{ result: T; considered: number }> {
  slotScanMeter.considered = 0;
  const result = await fn();
  return { result, considered: slotScanMeter.considered };
}

function jobEvery(everyS: number): string {
  core = makeTestCore();
  core.clock.advance(Date.parse('2026-11-30T12:00:00.200Z') - core.clock.now());
  const id = core.jobs.create({ name: `every-${everyS}s`, role: 'etl', schedule: { everyS } }, who).job.id;
  // The job has lived for a while: a year later, so any look back over "the last 400 days" is long.
  core.clock.advance(365 * 86_400_000);
  return id;
}

describe.each([1, 5])('an every-%i-second job: request paths scan a bounded number of slots', (everyS) => {
  it('the Run-now dialog (jobs.triggerChoices) and "run now" without a slot', () => {
    const id = jobEvery(everyS);
    const c = scanned(() => core!.jobs.triggerChoices(id));
    expect(c.result.choices.map((x) => x.which)).toEqual(['current', 'previous', 'next']);
    const [current, previous, next] = c.result.choices;
    expect(Date.parse(next!.at) - Date.parse(current!.at)).toBe(everyS * 1000);
    expect(Date.parse(current!.at) - Date.parse(previous!.at)).toBe(everyS * 1000);
    expect(c.considered).toBeLessThan(1000);

    onlineInstance(core!, 'etl');
    const t = scanned(() => core!.jobs.triggerNow(id, { reason: 'now', actor: 'op' }));
    expect(t.result.run.slot).toBe(current!.slot);
    expect(t.considered).toBeLessThan(1000);
  });

  it('"run now" with a named slot', () => {
    const id = jobEvery(everyS);
    // A slot an hour ago, named by its key (the job's zone is UTC: the key is the local time).
    const at = Math.floor((core!.clock.now() - 3600_000) / (everyS * 1000)) * everyS * 1000;
    const slot = new Date(at).toISOString().slice(0, 19);
    const t = scanned(() => core!.jobs.triggerNow(id, { reason: 'that one', actor: 'op', slot }));
    expect(t.result.run.slot).toBe(slot);
    expect(t.considered).toBeLessThan(2000);
  });

  it('explain at an arbitrary instant, past and future', () => {
    const id = jobEvery(everyS);
    const now = core!.clock.now();
    for (const at of [now - 200 * 86_400_000 + 1234, now + 30 * 86_400_000 + 777]) {
      const x = scanned(() => core!.jobs.explain(id, at));
      expect(x.result.slot).not.toBeNull();
      expect(x.considered).toBeLessThan(1000);
    }
  });

  it('preview of 1000 slots, the job list, the next triggers', () => {
    const id = jobEvery(everyS);
    const p = scanned(() => core!.jobs.preview(id, 1000));
    expect(p.result.items).toHaveLength(1000);
    expect(p.considered).toBeLessThan(10_000);
    const l = scanned(() => core!.jobs.list());
    expect(l.result.items[0]!.nextSlot).not.toBeNull();
    expect(l.considered).toBeLessThan(1000);
    expect(scanned(() => core!.jobs.nextTriggers()).considered).toBeLessThan(1000);
  });

  it('the ledger and its buckets over 400 days are cut at their limits and say where to go on', () => {
    const id = jobEvery(everyS);
    const now = core!.clock.now();
    const range = { from: now - 400 * 86_400_000 + 1, to: now };
    const l = scanned(() => core!.jobs.ledger(id, { ...range, limit: 5000 }));
    expect(l.result.items).toHaveLength(5000);
    expect(l.result.next).not.toBeNull();
    expect(l.considered).toBeLessThan(20_000);
    const b = scanned(() => core!.jobs.ledgerBuckets(id, { ...range, by: 'hour' }));
    expect(b.result.next).not.toBeNull();
    expect(b.considered).toBeLessThan(50_000);
  });

  it('a simulated downtime of 400 days', () => {
    const id = jobEvery(everyS);
    const now = core!.clock.now();
    const s = scanned(() => core!.jobs.simulateDowntime(id, now - 400 * 86_400_000 + 1, now));
    // The runner's own rule: the newest slots one by one, the older ones one range.
    expect(s.result.items.filter((i) => i.range)).toHaveLength(1);
    const p = everyS * 1000;
    expect(s.result.summary.slots).toBe(Math.ceil(now / p) - Math.ceil((now - 400 * 86_400_000 + 1) / p));
    expect(s.considered).toBeLessThan(5000);
  });

  it('a rehearsal of the spec', async () => {
    const id = jobEvery(everyS);
    const spec = core!.jobs.get(id);
    const r = await scannedAsync(() => core!.rehearsal.rehearse({ spec: { name: spec.name, role: spec.role, schedule: spec.schedule } }));
    expect(r.result.scenarios.length).toBeGreaterThan(0);
    expect(r.considered).toBeLessThan(LIMIT);
  });
});

describe.each([1, 5])('an every-%i-second job whose weekend slots move to Monday (next_workday)', (everyS) => {
  it('finds its next slot on a Monday without listing the weekend', () => {
    core = makeTestCore();
    core.clock.advance(Date.parse('2026-12-07T10:00:00.200Z') - core.clock.now()); // a Monday
    core.jobs.createCalendar({ id: 'weekdays', name: 'Weekdays', timezone: 'UTC', workdays: [1, 2, 3, 4, 5], holidays: [], extraWorkdays: [] }, who);
    const id = core.jobs.create({ name: 'moved', role: 'etl', schedule: { everyS }, calendar: 'weekdays', calendarPolicy: 'next_workday' }, who).job.id;
    const l = scanned(() => core!.jobs.list());
    // Saturday's and Sunday's 10:00:0x slots are due now, with today's: moved slots keep their own keys.
    expect(l.result.items[0]!.nextSlot!.slot).toBe(`2026-12-05T10:00:${String(everyS).padStart(2, '0')}`);
    expect(l.considered).toBeLessThan(2000);
    expect(scanned(() => core!.jobs.triggerChoices(id)).considered).toBeLessThan(5000);
  });
});
