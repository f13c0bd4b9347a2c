/** The inbox's own API: lifecycle, folding, paging, snooze and wake, and bad input that changes nothing. */
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createCore } from '../create-core';
import { MIGRATIONS } from '../db/migrations';
import { makeTestCore, type TestCore } from '../tests/test-core';
import { pulseMs } from '../time/gap-detector';
import type { Occurrence } from './inbox';

let core: TestCore | undefined;
afterEach(() => {
  core?.close();
  core = undefined;
});

const operator = { actor: 'operator:test' };

function occ(key: string, over: Partial<Occurrence> = {}): Occurrence {
  return { key, kind: 'stuck_queue', subject: 'role:dev', about: { role: 'dev' }, entry: { ready: 2, waitedS: 600 }, ...over };
}

function snapshot(c: TestCore): string {
  return JSON.stringify([c.db.prepare('SELECT * FROM inbox_items ORDER BY id').all(), c.db.prepare('SELECT * FROM inbox_occurrences ORDER BY key').all()]);
}

describe('raising', () => {
  it('an occurrence raised twice is one item; another occurrence of the same kind and subject folds into it', () => {
    core = makeTestCore();
    const first = core.inbox.raise(occ('a'))!;
    expect(first).toMatchObject({ kind: 'stuck_queue', severity: 'warning', state: 'open', count: 1, title: 'Role dev: 2 tasks ready and no instance online' });
    expect(core.inbox.raise(occ('a'))).toBeNull();
    core.clock.advance(1000);
    const folded = core.inbox.raise(occ('b', { entry: { ready: 5, waitedS: 900 } }))!;
    expect(folded).toMatchObject({ id: first.id, count: 2, title: 'Role dev: 5 tasks ready and no instance online', at: first.at });
    expect(Date.parse(folded.lastAt)).toBe(Date.parse(first.at) + 1000);
    // Another subject is another item.
    expect(core.inbox.raise(occ('c', { subject: 'role:ops', about: { role: 'ops' } }))!.id).not.toBe(first.id);
    expect(core.inbox.counts()).toEqual({ open: 2, snoozed: 0, critical: 0, byKind: { stuck_queue: 2 } });
  });

  it('keeps the newest 50 occurrences in the evidence and counts them all', () => {
    core = makeTestCore();
    for (let i = 0; i < 60; i++) core.inbox.raise(occ(`k${i}`, { entry: { ready: i, waitedS: 0 } }));
    const [item] = core.inbox.list().items;
    expect(item!.count).toBe(60);
    const entries = item!.evidence.entries as Array<{ ready: number }>;
    expect(entries).toHaveLength(50);
    expect(entries[0]!.ready).toBe(10);
    expect(entries[49]!.ready).toBe(59);
  });

  it('a new item is handed to the webhook outbox inside its transaction; a folded one is not', () => {
    core = makeTestCore();
    const seen: Array<[number, boolean]> = [];
    vi.spyOn(core.attention.webhooks, 'enqueue').mockImplementation((item) => seen.push([item.id, core!.db.inTransaction]));
    const a = core.inbox.raise(occ('a'))!;
    core.inbox.raise(occ('b'));
    expect(seen).toEqual([[a.id, true]]);
  });
});

describe('acknowledging and snoozing', () => {
  it('ack with a note, once; the next occurrence after an acknowledgement opens a new item', () => {
    core = makeTestCore();
    const a = core.inbox.raise(occ('a'))!;
    const acked = core.inbox.ack(a.id, { note: 'restarting the docs agent', ...operator });
    expect(acked).toMatchObject({ state: 'acked', ackedBy: 'operator:test', note: 'restarting the docs agent' });
    expect(() => core!.inbox.ack(a.id, operator)).toThrow(expect.objectContaining({ code: 'invalid_transition' }));
    const b = core.inbox.raise(occ('b'))!;
    expect(b.id).not.toBe(a.id);
    expect(b.count).toBe(1);
  });

  it('bulk ack: unknown ids refuse the whole call; items acknowledged meanwhile are skipped', () => {
    core = makeTestCore();
    const a = core.inbox.raise(occ('a'))!;
    const b = core.inbox.raise(occ('b', { subject: 'role:ops' }))!;
    const c = core.inbox.raise(occ('c', { subject: 'role:qa' }))!;
    const before = snapshot(core);
    expect(() => core!.inbox.ackMany({ ids: [a.id, 999], ...operator })).toThrow(expect.objectContaining({ code: 'not_found' }));
    expect(snapshot(core)).toBe(before);
    core.inbox.ack(c.id, operator);
    const r = core.inbox.ackMany({ ids: [a.id, b.id, c.id], note: 'all handled', ...operator });
    expect(r.acked.map((i) => i.id)).toEqual([a.id, b.id]);
    expect(r.skipped).toEqual([c.id]);
    expect(core.inbox.counts().open).toBe(0);
    const audits = core.db.prepare(`SELECT subject, detail FROM audit WHERE type = 'inbox.ack' ORDER BY id`).all() as Array<{ subject: string; detail: string }>;
    expect(audits.map((x) => x.subject)).toEqual([`inbox:${c.id}`, `inbox:${a.id}`, `inbox:${b.id}`]);
    expect(JSON.parse(audits[1]!.detail)).toMatchObject({ note: 'all handled', bulk: 3, from: 'open', to: 'acked' });
  });

  it('snooze until a time: hidden from the open list, folds occurrences, opens again at its time (audited)', () => {
    core = makeTestCore();
    core.start();
    core.tasks.create({ title: 'waits', role: 'dev' }, { actor: 'test' }); // the queue stays stuck: the sweep does not resolve the item
    const a = core.inbox.raise(occ('a'))!;
    const until = new Date(core.clock.now() + 3600_000).toISOString();
    expect(core.inbox.snooze(a.id, { until, note: 'after lunch', ...operator })).toMatchObject({ state: 'snoozed', snoozedUntil: until });
    expect(core.inbox.list().items).toEqual([]);
    expect(core.inbox.counts()).toMatchObject({ open: 0, snoozed: 1 });
    core.inbox.raise(occ('b'));
    expect(core.inbox.get(a.id)).toMatchObject({ state: 'snoozed', count: 2 });
    core.clock.advance(3600_000 - 1);
    expect(core.inbox.get(a.id).state).toBe('snoozed');
    core.clock.advance(1);
    expect(core.inbox.get(a.id).state).toBe('open');
    const reopen = core.db.prepare(`SELECT actor, detail FROM audit WHERE type = 'inbox.reopen'`).all() as Array<{ actor: string; detail: string }>;
    expect(reopen).toHaveLength(1);
    expect(reopen[0]!.actor).toBe('inbox');
  });

  it('a snooze after a sleep wakes on the wall clock, not on the monotonic delay', () => {
    core = makeTestCore();
    core.start();
    const a = core.inbox.raise(occ('a'))!;
    core.inbox.snooze(a.id, { until: new Date(core.clock.now() + 2 * 3600_000).toISOString(), ...operator });
    core.clock.jump(3 * 3600_000); // the laptop slept past the snooze
    core.clock.advance(pulseMs(core.config) + 1000); // the gap detector's pulse notices
    expect(core.inbox.get(a.id).state).toBe('open');
  });

  it('refuses bad input with a typed error naming the field, and changes nothing', () => {
    core = makeTestCore();
    const a = core.inbox.raise(occ('a'))!;
    const before = snapshot(core);
    const cases: Array<[() => unknown, RegExp]> = [
      [() => core!.inbox.snooze(a.id, { until: 'tomorrow', ...operator }), /"until"/],
      [() => core!.inbox.snooze(a.id, { until: new Date(core!.clock.now() - 1).toISOString(), ...operator }), /must be in the future/],
      [() => core!.inbox.ack(a.id, { note: 'x'.repeat(2001), ...operator }), /"note"/],
      [() => core!.inbox.ack(a.id, { note: 'ok', actor: 'operator:test', extra: 1 }), /unrecognized|extra/i],
      [() => core!.inbox.ackMany({ ids: [], ...operator }), /"ids"/],
      [() => core!.inbox.list({ state: 'closed' }), /"state"/],
      [() => core!.inbox.list({ after: 'x' }), /cursor/],
    ];
    for (const [fn, msg] of cases) expect(fn).toThrow(expect.objectContaining({ code: 'bad_request', message: expect.stringMatching(msg) }));
    expect(() => core!.inbox.ack(12345, operator)).toThrow(expect.objectContaining({ code: 'not_found' }));
    expect(snapshot(core)).toBe(before);
  });
});

describe('listing', () => {
  it('latest occurrence first, paged with a cursor, filtered by state, kind and subject', () => {
    core = makeTestCore();
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) {
      core.clock.advance(1000);
      ids.push(core.inbox.raise(occ(`k${i}`, { subject: `role:r${i}`, about: { role: `r${i}` } }))!.id);
    }
    core.clock.advance(1000);
    core.inbox.raise(occ('again', { subject: 'role:r0', about: { role: 'r0' } })); // r0 moves to the top
    const p1 = core.inbox.list({ limit: 2 });
    expect(p1.items.map((i) => i.subject)).toEqual(['role:r0', 'role:r4']);
    const p2 = core.inbox.list({ limit: 2, after: p1.next! });
    expect(p2.items.map((i) => i.subject)).toEqual(['role:r3', 'role:r2']);
    const p3 = core.inbox.list({ limit: 2, after: p2.next! });
    expect(p3.items.map((i) => i.subject)).toEqual(['role:r1']);
    expect(p3.next).toBeNull();
    core.inbox.ack(ids[2]!, operator);
    expect(core.inbox.list({ state: 'acked' }).items.map((i) => i.id)).toEqual([ids[2]]);
    expect(core.inbox.list({ state: 'all' }).items).toHaveLength(5);
    expect(core.inbox.list({ subject: 'role:r1' }).items.map((i) => i.id)).toEqual([ids[1]]);
    expect(core.inbox.list({ kind: 'dead_man' }).items).toEqual([]);
  });
});

describe('migration 013', () => {
  it('runs again on a database that has it without changing anything', () => {
    core = makeTestCore();
    const a = core.inbox.raise(occ('a'))!;
    const dir = core.dir;
    const clock = core.clock;
    core.close();
    const raw = new Database(path.join(dir, 'gaffer.db'));
    const at = MIGRATIONS.findIndex((m) => m.name.startsWith('013_'));
    raw.pragma(`user_version = ${at}`);
    raw.close();
    core = Object.assign(createCore({ clock, dataDir: dir }), { clock, dir }) as TestCore;
    expect(core.inbox.get(a.id)).toMatchObject({ kind: 'stuck_queue', state: 'open' });
    expect(core.db.pragma('user_version', { simple: true })).toBe(MIGRATIONS.length);
  });

  it('at most one live item per kind and subject, enforced by the database', () => {
    core = makeTestCore();
    const a = core.inbox.raise(occ('a'))!;
    const insert = () =>
      core!.db
        .prepare(`INSERT INTO inbox_items (kind, severity, subject, title, detail, evidence, state, count, first_at, last_at, updated_at) VALUES ('stuck_queue','warning','role:dev','t','d','{}','open',1,0,0,0)`)
        .run();
    expect(insert).toThrow(/UNIQUE/);
    core.inbox.ack(a.id, operator);
    expect(insert).not.toThrow();
  });
});

describe('resolving by cause', () => {
  it('settles several kinds of a subject with one read when none is live; the live ones resolved in the order asked, each audited', async () => {
    const { spyStatements } = await import('../tests/statements.testkit');
    core = makeTestCore();
    const subject = 'job:nightly';
    const kinds = ['run_failed', 'repeated_failures', 'missed', 'dead_man'] as const;
    const ran: string[] = [];
    spyStatements(core.db, (sql) => ran.push(sql));
    expect(core.inbox.resolveAny(kinds, subject, 'it ran')).toEqual([]);
    vi.restoreAllMocks();
    expect(ran).toHaveLength(1);
    expect(ran[0]).toMatch(/^SELECT \* FROM inbox_items WHERE kind IN \(\?, \?, \?, \?\) AND subject = \?/);
    const missed = core.inbox.raise(occ('m', { kind: 'missed', subject, about: { jobId: 'nightly', job: 'nightly' }, entry: { slot: 's1' } }))!;
    const failed = core.inbox.raise(occ('f', { kind: 'run_failed', subject, about: { jobId: 'nightly', job: 'nightly' }, entry: { runId: 'r1', error: 'boom' } }))!;
    core.inbox.raise(occ('o', { kind: 'missed', subject: 'job:other', about: { jobId: 'other', job: 'other' }, entry: { slot: 's1' } }));
    const resolved = core.inbox.resolveAny(kinds, subject, 'nightly: it ran', (item) => item.id !== -1);
    expect(resolved.map((i) => [i.id, i.state, i.resolution])).toEqual([
      [failed.id, 'resolved', 'nightly: it ran'],
      [missed.id, 'resolved', 'nightly: it ran'],
    ]);
    const audited = core.db.prepare<[], { subject: string }>("SELECT subject FROM audit WHERE type = 'inbox.resolve' ORDER BY rowid").all();
    expect(audited.map((a) => a.subject)).toEqual([`inbox:${failed.id}`, `inbox:${missed.id}`]);
    // `still` keeps an item it answers false for; another subject is untouched.
    const again = core.inbox.raise(occ('f2', { kind: 'run_failed', subject, about: { jobId: 'nightly', job: 'nightly' }, entry: { runId: 'r2', error: 'boom' } }))!;
    expect(core.inbox.resolveAny(kinds, subject, 'no', () => false)).toEqual([]);
    expect(core.inbox.counts().open).toBe(2);
    expect(core.inbox.resolve('run_failed', subject, 'ran again')!.id).toBe(again.id);
  });
});
