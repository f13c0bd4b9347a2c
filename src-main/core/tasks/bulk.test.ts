import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { BULK_CHUNK } from '../../common/schemas';
import { errorCodeOf, makeTestCore, onlineInstance, stateDigest, type TestCore } from '../tests/test-core';

let core: TestCore;
afterEach(() => core?.close());

const who = { actor: 'operator:test' };
const op = 'operator:ann';

const codeOf = errorCodeOf;

/** A task taken by an agent and reported with `status`. */
function reported(role: string, title: string, status: 'blocked' | 'failed' | 'done'): number {
  const inst = onlineInstance(core, role, `${role}-agent`);
  const t = core.tasks.create({ title, role, priority: 1_000_000 }, who).task;
  const c = core.locks.claim({ instanceId: inst });
  expect(c.task!.id).toBe(t.id);
  core.locks.report({ instanceId: inst, taskId: t.id, fence: c.lock!.fence, status });
  return t.id;
}

const auditOf = (type: string) =>
  core.db
    .prepare(`SELECT subject, actor, json_extract(detail, '$.reason') AS reason, json_extract(detail, '$.bulk') AS bulk FROM audit WHERE type = ? ORDER BY id`)
    .all(type) as Array<{ subject: string; actor: string; reason: string; bulk: string | null }>;

describe('bulk actions on listed tasks', () => {
  it('changes the tasks the action applies to, skips the others with why, one audit row per changed task', () => {
    core = makeTestCore();
    const a = core.tasks.create({ title: 'a', role: 'dev' }, who).task.id;
    const b = core.tasks.create({ title: 'b', role: 'dev' }, who).task.id;
    const done = reported('dev', 'finished', 'done');
    const r = core.bulkTasks.apply({ action: 'cancel', reason: 'sprint cancelled', actor: op, ids: [a, b, done, 9999, a] });
    expect(r.changed).toEqual([a, b]);
    expect(r.skipped.map((s) => [s.taskId, s.code])).toEqual([
      [done, 'invalid_transition'],
      [9999, 'not_found'],
    ]);
    expect(r.skipped[0]!.message).toContain('is done');
    expect(r.bulkId).toMatch(/^bulk_/);
    expect(r.next).toBeNull();
    expect(core.tasks.get(a).status).toBe('cancelled');
    expect(core.tasks.get(done).status).toBe('done');
    expect(auditOf('operator.cancel')).toEqual([
      { subject: `task:${a}`, actor: op, reason: 'sprint cancelled', bulk: r.bulkId },
      { subject: `task:${b}`, actor: op, reason: 'sprint cancelled', bulk: r.bulkId },
    ]);
  });

  it('back to the backlog retries failed tasks and unblocks blocked ones; unblock leaves failed ones alone', () => {
    core = makeTestCore();
    const failed = reported('dev', 'f', 'failed');
    const blocked = reported('dev', 'b', 'blocked');
    const u = core.bulkTasks.apply({ action: 'unblock', reason: 'creds fixed', actor: op, ids: [failed, blocked] });
    expect(u.changed).toEqual([blocked]);
    expect(u.skipped.map((s) => s.taskId)).toEqual([failed]);
    const b = core.bulkTasks.apply({ action: 'backlog', reason: 'flaky network', actor: op, ids: [failed] });
    expect(b.changed).toEqual([failed]);
    expect(core.tasks.get(failed).status).toBe('backlog');
    expect(auditOf('operator.retry').map((x) => x.subject)).toEqual([`task:${failed}`]);
    expect(auditOf('operator.unblock').map((x) => x.subject)).toEqual([`task:${blocked}`]);
  });

  it('reprioritises with the new priority, and refuses a call without it before changing anything', () => {
    core = makeTestCore();
    const ids = [1, 2, 3].map((i) => core.tasks.create({ title: `t${i}`, role: 'dev' }, who).task.id);
    const before = stateDigest(core);
    expect(codeOf(() => core.bulkTasks.apply({ action: 'reprioritise', reason: 'r', actor: op, ids }))).toBe('bad_request');
    expect(codeOf(() => core.bulkTasks.apply({ action: 'cancel', reason: 'r', actor: op, ids, priority: 3 }))).toBe('bad_request');
    expect(codeOf(() => core.bulkTasks.apply({ action: 'cancel', reason: ' ', actor: op, ids }))).toBe('bad_request');
    expect(codeOf(() => core.bulkTasks.apply({ action: 'cancel', reason: 'r', actor: op, ids, filter: { role: 'dev' } }))).toBe('bad_request');
    expect(codeOf(() => core.bulkTasks.apply({ action: 'cancel', reason: 'r', actor: op, ids: Array.from({ length: BULK_CHUNK + 1 }, (_, i) => i + 1) }))).toBe('bad_request');
    expect(stateDigest(core)).toBe(before);
    const r = core.bulkTasks.apply({ action: 'reprioritise', reason: 'release week', actor: op, ids, priority: 7 });
    expect(r.changed).toEqual(ids);
    expect(ids.map((id) => core.tasks.get(id).priority)).toEqual([7, 7, 7]);
  });
});

describe('bulk actions over a filter', () => {
  it('walks the filter in chunks of at most BULK_CHUNK, under one bulk id, up to the tasks that existed when it began', () => {
    core = makeTestCore();
    const n = BULK_CHUNK * 2 + 50;
    const wanted: number[] = [];
    for (let i = 0; i < n; i++) {
      wanted.push(core.tasks.create({ title: `nightly import ${i}`, role: 'etl' }, who).task.id);
      if (i % 3 === 0) core.tasks.create({ title: `other ${i}`, role: 'etl' }, who);
    }
    const count = core.bulkTasks.count({ filter: { role: 'etl', q: 'nightly' }, action: 'cancel' });
    expect(count).toMatchObject({ count: n, exact: true });
    // A task created after the operator asked is not swept in.
    const late = core.tasks.create({ title: 'nightly import (late)', role: 'etl' }, who).task.id;
    const changed: number[] = [];
    let after = 0;
    let bulkId: string | undefined;
    let calls = 0;
    for (;;) {
      const r = core.bulkTasks.apply({ action: 'cancel', reason: 'source retired', actor: op, filter: { role: 'etl', q: 'nightly' }, after, through: count.through, ...(bulkId ? { bulkId } : {}) });
      calls++;
      expect(r.changed.length).toBeLessThanOrEqual(BULK_CHUNK);
      expect(r.through).toBe(count.through);
      bulkId ??= r.bulkId;
      expect(r.bulkId).toBe(bulkId);
      changed.push(...r.changed);
      if (r.next === null) break;
      after = r.next;
    }
    expect(calls).toBe(3);
    expect(changed).toEqual(wanted);
    expect(core.tasks.get(late).status).toBe('backlog');
    const rows = auditOf('operator.cancel');
    expect(rows).toHaveLength(n);
    expect(new Set(rows.map((x) => x.bulk))).toEqual(new Set([bulkId]));
    expect(core.bulkTasks.count({ filter: { role: 'etl', q: 'nightly' }, action: 'cancel' }).count).toBe(1);
  });

  it('selects only tasks the action applies to, as they are at each chunk: one that moved meanwhile is left out', () => {
    core = makeTestCore();
    const blocked = [1, 2, 3].map((i) => reported('ops', `blocked ${i}`, 'blocked'));
    reported('ops', 'failed one', 'failed');
    expect(core.bulkTasks.count({ filter: { role: 'ops' }, action: 'unblock' }).count).toBe(3);
    expect(core.bulkTasks.count({ filter: { role: 'ops', status: 'failed' }, action: 'unblock' }).count).toBe(0);
    // Someone cancels one between the count and the action.
    core.tasks.cancel({ taskId: blocked[1]!, reason: 'dup', actor: 'operator:bob' });
    const r = core.bulkTasks.apply({ action: 'unblock', reason: 'vpn back', actor: op, filter: { role: 'ops' } });
    expect(r.changed).toEqual([blocked[0], blocked[2]]);
    expect(r.skipped).toEqual([]);
    expect(r.next).toBeNull();
  });

  it('each chunk commits on its own: between two calls another connection sees it and can take the write lock', () => {
    core = makeTestCore();
    for (let i = 0; i < BULK_CHUNK + 10; i++) core.tasks.create({ title: `t${i}`, role: 'batch' }, who);
    const first = core.bulkTasks.apply({ action: 'reprioritise', priority: 5, reason: 'rush', actor: op, filter: { role: 'batch' } });
    expect(first.changed).toHaveLength(BULK_CHUNK);
    const other = new Database(core.dbPath, { timeout: 0 });
    try {
      expect(other.prepare('SELECT count(*) FROM tasks WHERE priority = 5').pluck().get()).toBe(BULK_CHUNK);
      // An agent's claim in another process needs exactly this lock: it is free between chunks.
      other.prepare('BEGIN IMMEDIATE').run();
      other.prepare('ROLLBACK').run();
    } finally {
      other.close();
    }
    const second = core.bulkTasks.apply({ action: 'reprioritise', priority: 5, reason: 'rush', actor: op, filter: { role: 'batch' }, after: first.next!, through: first.through!, bulkId: first.bulkId });
    expect(second.changed).toHaveLength(10);
    expect(second.next).toBeNull();
  });
});
