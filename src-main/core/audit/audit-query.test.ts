import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AuditEvent } from '../../common/model';
import { makeTestCore, type TestCore } from '../tests/test-core';
import { SCAN_BUDGET, likePattern } from './query-store';

let core: TestCore;
beforeEach(() => {
  core = makeTestCore();
});
afterEach(() => core.close());

const T0 = Date.parse('2026-11-30T08:00:00.000Z');

/** n events, one second apart: type cycles a/b/c, actor cycles x/y, subject task:<i % 5>. */
function seed(n: number): void {
  for (let i = 1; i <= n; i++) {
    core.audit.record({
      type: ['t.a', 't.b', 't.c'][i % 3]!,
      actor: i % 2 ? 'x' : 'y',
      subject: `task:${i % 5}`,
      detail: { i, note: i % 10 === 0 ? `ten 100% ${i}` : `plain ${i}` },
    });
    core.clock.advance(1000);
  }
}

/** Pages through a query to the end; returns all ids and the number of pages. */
function collect(input: Record<string, unknown>): { ids: number[]; pages: number } {
  const ids: number[] = [];
  let pages = 0;
  let cursor: string | null = null;
  const order = input.order === 'desc' ? 'desc' : 'asc';
  do {
    const q: Record<string, unknown> = { ...input };
    if (cursor !== null) q[order === 'asc' ? 'after' : 'before'] = Number(cursor);
    const page = core.auditQuery.query(q);
    ids.push(...page.items.map((e: AuditEvent) => e.id));
    cursor = page.next;
    pages++;
    if (pages > 10_000) throw new Error('runaway paging');
  } while (cursor !== null);
  return { ids, pages };
}

const range = (a: number, b: number) => Array.from({ length: b - a + 1 }, (_, k) => a + k);

describe('audit query', () => {
  it('pages ascending and descending with an id cursor, nothing skipped or repeated', () => {
    seed(25);
    const asc = collect({ limit: 7 });
    expect(asc.ids).toEqual(range(1, 25));
    expect(asc.pages).toBe(4);
    const desc = collect({ limit: 7, order: 'desc' });
    expect(desc.ids).toEqual(range(1, 25).reverse());

    const first = core.auditQuery.query({ limit: 10 });
    expect(first.items.map((e) => e.id)).toEqual(range(1, 10));
    expect(first.next).toBe('10');
    expect(first.partial).toBe(false);
    const newest = core.auditQuery.query({ limit: 3, order: 'desc' });
    expect(newest.items.map((e) => e.id)).toEqual([25, 24, 23]);
    expect(newest.next).toBe('23');
    // An exact last page says so.
    expect(core.auditQuery.query({ after: 20, limit: 5 }).next).toBeNull();
    expect(core.auditQuery.query({ limit: 25 }).next).toBeNull();
  });

  it('returns full AuditEvent rows', () => {
    seed(2);
    const [e] = core.auditQuery.query({ limit: 1 }).items;
    expect(e).toMatchObject({ id: 1, type: 't.b', actor: 'x', subject: 'task:1', detail: { i: 1, note: 'plain 1' }, traceId: null });
    expect(e!.at).toBe(new Date(T0).toISOString());
    expect(e!.hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('filters by type, several types, actor, subject, and combinations', () => {
    seed(30);
    const all = range(1, 30);
    const is = (pred: (i: number) => boolean) => all.filter(pred);
    expect(collect({ type: 't.a', limit: 4 }).ids).toEqual(is((i) => i % 3 === 0));
    expect(collect({ types: ['t.a', 't.c'], limit: 4 }).ids).toEqual(is((i) => i % 3 !== 1));
    expect(collect({ type: 't.a', types: ['t.c'], limit: 4, order: 'desc' }).ids).toEqual(is((i) => i % 3 !== 1).reverse());
    expect(collect({ actor: 'y', limit: 4 }).ids).toEqual(is((i) => i % 2 === 0));
    expect(collect({ subject: 'task:3', limit: 2, order: 'desc' }).ids).toEqual(is((i) => i % 5 === 3).reverse());
    expect(collect({ actor: 'x', type: 't.b', limit: 3 }).ids).toEqual(is((i) => i % 2 === 1 && i % 3 === 1));
    expect(collect({ subject: 'task:0', actor: 'y', types: ['t.a', 't.b'], limit: 3 }).ids).toEqual(
      is((i) => i % 5 === 0 && i % 2 === 0 && i % 3 !== 2),
    );
    expect(collect({ type: 'nope' }).ids).toEqual([]);
  });

  it('takes a prefix for actor and type (`operator:*`, `t.*`), literally, alone or with exact types', () => {
    seed(12);
    core.audit.record({ type: 'operator.cancel', actor: 'operator:browser', subject: 'task:1', detail: {} });
    core.audit.record({ type: 'operator.retry', actor: 'operator:desktop', subject: 'task:2', detail: {} });
    core.audit.record({ type: 'operator_x', actor: 'operatorx', subject: 'task:2', detail: {} });
    expect(collect({ actor: 'operator:*' }).ids).toEqual([13, 14]);
    expect(collect({ type: 'operator.*' }).ids).toEqual([13, 14]);
    expect(collect({ types: ['t.a', 'operator.*'] }).ids).toEqual([3, 6, 9, 12, 13, 14]);
    expect(collect({ type: 't.*', actor: 'x' }).ids).toEqual([1, 3, 5, 7, 9, 11]);
    // `_` and `%` in a prefix are literal.
    expect(collect({ type: 'operator_*' }).ids).toEqual([15]);
    expect(collect({ actor: 'operator%*' }).ids).toEqual([]);
    expect(core.auditQuery.count({ actor: 'operator:*' })).toEqual({ count: 2, exact: true });
  });

  it('filters by time (from inclusive, to exclusive), in both orders', () => {
    seed(20); // event i at T0 + (i-1) s
    const at = (i: number) => new Date(T0 + (i - 1) * 1000).toISOString();
    expect(collect({ from: at(5), to: at(9), limit: 2 }).ids).toEqual([5, 6, 7, 8]);
    expect(collect({ from: at(5), to: at(9), limit: 3, order: 'desc' }).ids).toEqual([8, 7, 6, 5]);
    expect(collect({ from: at(18) }).ids).toEqual([18, 19, 20]);
    expect(collect({ to: at(3) }).ids).toEqual([1, 2]);
    // Between two events: nothing lost at the edges.
    expect(collect({ from: new Date(T0 + 4500).toISOString(), to: new Date(T0 + 7500).toISOString() }).ids).toEqual([6, 7, 8]);
    // Offsets are instants too.
    expect(collect({ from: '2026-11-30T16:00:10+08:00', to: '2026-11-30T16:00:12+08:00' }).ids).toEqual([11, 12]);
    expect(collect({ from: at(5), to: at(15), type: 't.a', limit: 1 }).ids).toEqual([6, 9, 12]);
    expect(() => core.auditQuery.query({ from: at(9), to: at(5) })).toThrow(/"from" must be before "to"/);
  });

  it('keeps time filters exact across a backward clock step', () => {
    seed(10); // ids 1..10 at T0 .. T0+9s, clock now T0+10s
    core.clock.jump(-8000); // wall clock back to T0+2s
    for (let i = 0; i < 10; i++) {
      core.audit.record({ type: 'after.step', actor: 'x', subject: 's', detail: { i } });
      core.clock.advance(1000);
    }
    // AuditLog keeps `at` non-decreasing: rows written "in the past" carry the newest instant so far.
    const ats = core.db.prepare('SELECT at FROM audit ORDER BY id').pluck().all() as number[];
    expect(ats).toEqual([...ats].sort((a, b) => a - b));
    const from = new Date(T0 + 9000).toISOString();
    const to = new Date(T0 + 10_000).toISOString();
    const expected = ats.flatMap((at, k) => (at >= T0 + 9000 && at < T0 + 10_000 ? [k + 1] : []));
    expect(expected.length).toBeGreaterThan(1);
    expect(collect({ from, to, limit: 2 }).ids).toEqual(expected);
    expect(collect({ from, to, order: 'desc', limit: 1 }).ids).toEqual([...expected].reverse());
    expect(core.auditQuery.count({ from, to })).toEqual({ count: expected.length, exact: true });
  });

  it('after a recorded backward step, a time range finds its rows on both sides of the step, in id order', () => {
    // A 1 s pulse (a quarter of a 4 s heartbeat interval), as the ids and times below assume.
    core.close();
    core = makeTestCore({ heartbeatIntervalMs: 4000 });
    core.start(); // the gap detector records the step
    seed(30); // ids 1..30 at T0 .. T0+29s, clock now T0+30s
    core.clock.jump(-25_000); // wall clock back to T0+5s
    core.clock.advance(1000); // its next pulse: the step row (id 31) carries T0+6s
    const step = core.auditQuery.query({ type: 'clock.jump' }).items;
    expect(step.map((e) => [e.id, e.at])).toEqual([[31, new Date(T0 + 6000).toISOString()]]);
    for (let i = 1; i <= 10; i++) {
      core.audit.record({ type: i % 2 ? 't.a' : 't.b', actor: 'x', subject: 's', detail: { i } }); // ids 32..41 at T0+6s ..
      core.clock.advance(1000);
    }
    const ats = core.db.prepare('SELECT at FROM audit ORDER BY id').pluck().all() as number[];
    const from = T0 + 8000;
    const to = T0 + 12_000;
    const expected = ats.flatMap((at, k) => (at >= from && at < to ? [k + 1] : []));
    expect(expected).toEqual([9, 10, 11, 12, 34, 35, 36, 37]);
    const q = { from: new Date(from).toISOString(), to: new Date(to).toISOString() };
    expect(collect({ ...q, limit: 3 }).ids).toEqual(expected);
    expect(collect({ ...q, limit: 4 }).ids).toEqual(expected);
    expect(collect({ ...q, limit: 3, order: 'desc' }).ids).toEqual([...expected].reverse());
    expect(core.auditQuery.count(q)).toEqual({ count: 8, exact: true });
    // Residual and driven filters across the step too.
    const tA = expected.filter((id) => (core.db.prepare('SELECT type FROM audit WHERE id = ?').pluck().get(id) as string) === 't.a');
    expect(collect({ ...q, type: 't.a', limit: 1 }).ids).toEqual(tA);
    expect(collect({ ...q, type: 't.a', actor: 'x', limit: 2, order: 'desc' }).ids).toEqual([...tA].filter((id) => (core.db.prepare('SELECT actor FROM audit WHERE id = ?').pluck().get(id) as string) === 'x').reverse());
    expect(core.auditQuery.count({ ...q, type: 't.a' })).toEqual({ count: tA.length, exact: true });
    // Only after the step: the rows with true time, not an hour of frozen stamps.
    expect(collect({ from: new Date(T0 + 13_000).toISOString(), to: new Date(T0 + 16_000).toISOString() }).ids).toEqual([14, 15, 16, 39, 40, 41]);
  });

  it('filters the high-volume lock types (left out of the type index) by walking the rowid', () => {
    for (let i = 1; i <= 12; i++) {
      core.audit.record({ type: i % 4 === 0 ? 'lock.claim' : i % 4 === 1 ? 'lock.renew' : 'task.create', actor: 'x', subject: `task:${i}` });
    }
    expect(collect({ type: 'lock.claim', limit: 2 }).ids).toEqual([4, 8, 12]);
    expect(collect({ types: ['lock.renew', 'task.create'], limit: 4, order: 'desc' }).ids).toEqual([11, 10, 9, 7, 6, 5, 3, 2, 1]);
    expect(collect({ type: 'task.create', limit: 3 }).ids).toEqual([2, 3, 6, 7, 10, 11]);
  });

  it('matches text literally (LIKE wildcards escaped), case-insensitively', () => {
    seed(30);
    expect(collect({ text: '100%' }).ids).toEqual([10, 20, 30]);
    expect(collect({ text: 'TEN', limit: 1, order: 'desc' }).ids).toEqual([30, 20, 10]);
    expect(collect({ text: 'plain_1' }).ids).toEqual([]);
    expect(likePattern('a%b_c\\')).toBe('%a\\%b\\_c\\\\%');
    expect(collect({ text: 'ten', actor: 'y' }).ids).toEqual([10, 20, 30]);
  });

  it('bounds the scan for residual filters: partial pages keep a cursor until the end', () => {
    const n = SCAN_BUDGET + 500;
    const insert = core.db.prepare(
      `INSERT INTO audit (id, at, type, actor, subject, detail, trace_id, prev_hash, hash) VALUES (?, ?, 't', 'x', 's', ?, NULL, '0', 'h')`,
    );
    core.db.transaction(() => {
      for (let i = 1; i <= n; i++) insert.run(i, T0 + i, JSON.stringify({ i, needle: i === n ? 'here' : undefined }));
    })();
    const p1 = core.auditQuery.query({ text: 'needle' });
    expect(p1.items).toEqual([]);
    expect(p1.partial).toBe(true);
    expect(p1.next).toBe(String(SCAN_BUDGET));
    const p2 = core.auditQuery.query({ text: 'needle', after: Number(p1.next) });
    expect(p2.items.map((e) => e.id)).toEqual([n]);
    expect(p2.next).toBeNull();
    // Descending: the budget applies from the newest end.
    const d1 = core.auditQuery.query({ text: 'needle', order: 'desc', limit: 5 });
    expect(d1.items.map((e) => e.id)).toEqual([n]);
    expect(d1.partial).toBe(true);
    expect(d1.next).toBe(String(n - SCAN_BUDGET + 1));
    expect(core.auditQuery.count({ text: 'needle' }, 100)).toEqual({ count: 0, exact: false });
    expect(core.auditQuery.count({ text: 'needle' }, n + 1)).toEqual({ count: 1, exact: true });
    expect(core.auditQuery.count({})).toEqual({ count: n, exact: true });
  });

  it('refuses bad input with bad_request', () => {
    for (const bad of [
      { limit: 0 },
      { limit: 1001 },
      { after: -1 },
      { order: 'sideways' },
      { from: 'yesterday' },
      { types: [] },
      { text: '' },
      { unknown: 1 },
    ]) {
      expect(() => core.auditQuery.query(bad), JSON.stringify(bad)).toThrow(expect.objectContaining({ code: 'bad_request' }));
    }
  });

  it('drives every filter through an index (query plans)', () => {
    seed(3);
    const plans: string[] = [];
    const db = core.db;
    const prepare = db.prepare.bind(db);
    // Capture the plan of every statement the query engine prepares.
    (db as { prepare: typeof db.prepare }).prepare = ((sql: string) => {
      const n = (sql.match(/\?/g) ?? []).length;
      const rows = prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...Array(n).fill(1)) as Array<{ detail: string }>;
      plans.push(rows.map((r) => r.detail).join(' | '));
      return prepare(sql);
    }) as typeof db.prepare;
    const from = new Date(T0).toISOString();
    try {
      for (const q of [
        {},
        { order: 'desc' },
        { type: 't.a' },
        { types: ['t.a', 't.b'], order: 'desc' },
        { actor: 'x' },
        { subject: 's' },
        { actor: 'x', type: 't.a' },
        { subject: 's', types: ['t.a', 't.b'] },
        { text: 'x' },
        { from, type: 't.a', order: 'desc' },
        { type: 'lock.claim' },
        { types: ['lock.renew', 't.a'], order: 'desc' },
      ]) {
        core.auditQuery.query(q);
      }
    } finally {
      (db as { prepare: typeof db.prepare }).prepare = prepare;
    }
    expect(plans.length).toBeGreaterThan(5);
    expect(plans.some((p) => p.includes('USING COVERING INDEX audit_type'))).toBe(true);
    expect(plans.some((p) => /SEARCH audit_subjects USING PRIMARY KEY \(subject=\? AND id>\? AND id<\?\)/.test(p))).toBe(true);
    // partial on `type`, a column it does not hold: the index drives, the row confirms the type
    expect(plans.some((p) => /USING (COVERING )?INDEX audit_actor/.test(p))).toBe(true);
    for (const p of plans) {
      // Never a full scan of the table, never a sort of an unbounded set.
      expect(p).not.toMatch(/SCAN (audit|a)\b/);
      expect(p).not.toMatch(/USE TEMP B-TREE/);
    }
  });
});

describe('actor filter with the partial actor index', () => {
  it('finds an instance’s lock events by walking the rowid and an operator’s actions by the index', () => {
    const core = makeTestCore();
    try {
      const inst = core.instances.register({ role: 'dev', name: 'a' }).id;
      for (let i = 0; i < 5; i++) core.tasks.create({ title: `t${i}`, role: 'dev' }, { actor: 'operator:ann' });
      for (let i = 0; i < 5; i++) {
        const c = core.locks.claim({ instanceId: inst });
        core.locks.report({ instanceId: inst, taskId: c.task!.id, fence: c.lock!.fence, status: 'done' });
      }
      const mine = core.auditQuery.query({ actor: inst, limit: 100 });
      expect(mine.items.map((e) => e.type)).toEqual(['instance.hello', ...Array(5).fill(['lock.claim', 'lock.release']).flat()]);
      const ann = core.auditQuery.query({ actor: 'operator:ann', order: 'desc', limit: 3 });
      expect(ann.items).toHaveLength(3);
      expect(ann.items.every((e) => e.type === 'task.create' && e.actor === 'operator:ann')).toBe(true);
      expect(ann.items[0]!.id).toBeGreaterThan(ann.items[1]!.id);
      expect(core.auditQuery.query({ actor: inst, type: 'lock.release' }).items).toHaveLength(5);
    } finally {
      core.close();
    }
  });
});
