/**
 * PROTOCOL §10: `report` with `claimNext: true` — the report, then the claim of the instance's next
 * task, in one durable step (one group-commit op), answered after its commit (requests.ts invariant 4).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { GafferError } from '../../common/errors';
import type { Core } from '../create-core';
import { stateDigest } from '../tests/test-core';
import { HubFixture, until, type FakeSocket, type Json } from '../tests/hub.testkit';

let h: HubFixture | undefined;
let core: Core;
afterEach(() => {
  h?.close();
  h = undefined;
});

function setup() {
  h = new HubFixture();
  core = h.core;
}

const call = (sock: FakeSocket, type: string, fields: Record<string, unknown> = {}) => h!.call(sock, type, fields);
const create = (title: string, priority = 0, dependsOn?: number[]) =>
  core.tasks.create({ title, role: 'dev', priority, ...(dependsOn ? { dependsOn } : {}) }, { actor: 'test' }).task.id;
const lockOf = (taskId: number) => core.db.prepare('SELECT instance_id, fence FROM locks WHERE task_id = ?').get(taskId) as { instance_id: string; fence: number } | undefined;
const auditTypes = () => (core.db.prepare('SELECT type, subject FROM audit ORDER BY id').all() as Array<{ type: string; subject: string }>).map((r) => `${r.type} ${r.subject}`);

async function claimOne(sock: FakeSocket): Promise<{ taskId: number; fence: number }> {
  const c = await call(sock, 'claim');
  expect(c.ok).toBe(true);
  return { taskId: c.result.task.id, fence: c.result.lock.fence };
}

describe('report with claimNext', () => {
  it('reports, then claims the best next task of the role in the same commit; the reply carries both', async () => {
    setup();
    const { sock, id } = await h!.agent();
    const first = create('first', 9);
    const low = create('low', 1);
    const high = create('high', 5);
    const held = await claimOne(sock);
    expect(held.taskId).toBe(first);
    const before = { ...core.committer.stats };
    const r = await call(sock, 'report', { ...held, status: 'done', claimNext: true });
    expect(r.ok).toBe(true);
    expect(r.result.task).toMatchObject({ id: first, status: 'done', lock: null });
    expect(r.result.replayed).toBe(false);
    // The same shape `claim` answers (P3: priority first).
    expect(r.result.next).toEqual({
      task: expect.objectContaining({ id: high, status: 'in_progress', attempt: 1 }),
      lock: { fence: 1, expiresAt: r.result.next.task.lock.expiresAt },
    });
    expect(lockOf(high)).toEqual({ instance_id: id, fence: 1 });
    expect(lockOf(low)).toBeUndefined();
    // One op, one transaction: the release and the claim are adjacent audit rows of one commit.
    expect(core.committer.stats.batches - before.batches).toBe(1);
    expect(core.committer.stats.ops - before.ops).toBe(1);
    expect(auditTypes().slice(-2)).toEqual([`lock.release task:${first}`, `lock.claim task:${high}`]);
  });

  it('without claimNext the reply is unchanged (no next) and nothing is claimed', async () => {
    setup();
    const { sock } = await h!.agent();
    create('a');
    const other = create('b');
    const held = await claimOne(sock);
    const r = await call(sock, 'report', { ...held, status: 'done' });
    expect(Object.keys(r.result).sort()).toEqual(['replayed', 'task']);
    expect(lockOf(other)).toBeUndefined();
  });

  it('nothing claimable → next: {task: null}, and the report stands (P2)', async () => {
    setup();
    const { sock } = await h!.agent();
    create('only');
    const held = await claimOne(sock);
    const r = await call(sock, 'report', { ...held, status: 'failed', note: 'boom', claimNext: true });
    expect(r.result.task).toMatchObject({ status: 'failed', note: 'boom' });
    expect(r.result.next).toEqual({ task: null });
  });

  it('the claim sees the report: a task waiting on the one just done is claimable in the same step', async () => {
    setup();
    const { sock } = await h!.agent();
    const parent = create('parent');
    const child = create('child', 0, [parent]);
    const held = await claimOne(sock);
    expect(held.taskId).toBe(parent);
    const r = await call(sock, 'report', { ...held, status: 'done', claimNext: true });
    expect(r.result.next.task).toMatchObject({ id: child, dependsOn: [parent] });
  });

  it('a refused report claims nothing: not_holder, and the only change is the audited refusal', async () => {
    setup();
    const { sock } = await h!.agent();
    create('a');
    const waiting = create('b');
    const held = await claimOne(sock);
    const digest = stateDigest(core);
    const r = await call(sock, 'report', { ...held, fence: held.fence + 1, status: 'done', claimNext: true });
    expect(r.error).toMatchObject({ code: 'not_holder', status: 409 });
    expect(stateDigest(core)).toBe(digest);
    expect(lockOf(waiting)).toBeUndefined();
    expect(auditTypes().at(-1)).toBe(`lock.reject task:${held.taskId}`);
  });

  it('an invalid claimNext is bad_request and changes nothing', async () => {
    setup();
    const { sock } = await h!.agent();
    create('a');
    const held = await claimOne(sock);
    const digest = stateDigest(core);
    const r = await call(sock, 'report', { ...held, status: 'done', claimNext: 'yes' });
    expect(r.error).toMatchObject({ code: 'bad_request' });
    expect(r.error.message).toContain('claimNext');
    expect(stateDigest(core)).toBe(digest);
  });

  it('a claim refused after the report (its own savepoint) leaves the report standing: next: {task: null}', async () => {
    setup();
    const { sock } = await h!.agent();
    create('a');
    const waiting = create('b');
    const held = await claimOne(sock);
    // Stands in for any refusal the claim may raise (the report path does not run it).
    core.locks.claimChecked = () => {
      throw new GafferError('forbidden', 'claims refused for this test');
    };
    const r = await call(sock, 'report', { ...held, status: 'done', claimNext: true });
    expect(r.result).toMatchObject({ task: { status: 'done' }, replayed: false, next: { task: null } });
    expect(lockOf(waiting)).toBeUndefined();
    expect(lockOf(held.taskId)).toBeUndefined();
  });

  it('a role paused while the task ran (claims hand out nothing, P2): the report stands, next: {task: null}', async () => {
    setup();
    const { sock } = await h!.agent();
    create('a');
    const waiting = create('b');
    const held = await claimOne(sock);
    core.jobs.pauses.pauseRole('dev', { reason: 'incident', until: null, actor: 'operator:test' });
    const r = await call(sock, 'report', { ...held, status: 'done', claimNext: true });
    expect(r.result).toMatchObject({ task: { status: 'done' }, replayed: false, next: { task: null } });
    expect(core.tasks.get(waiting)).toMatchObject({ status: 'backlog', lock: null });
  });

  it('a storage failure in the claim undoes the report too: unavailable, nothing changed', async () => {
    setup();
    const { sock } = await h!.agent();
    create('a');
    create('b');
    const held = await claimOne(sock);
    const digest = stateDigest(core);
    const audits = core.audit.count();
    core.locks.claimChecked = () => {
      throw new GafferError('unavailable', 'storage refused the write (test)');
    };
    const r = await call(sock, 'report', { ...held, status: 'done', claimNext: true });
    expect(r.error).toMatchObject({ code: 'unavailable' });
    expect(stateDigest(core)).toBe(digest);
    expect(core.audit.count()).toBe(audits);
    expect(lockOf(held.taskId)).toMatchObject({ fence: held.fence });
  });

  it('a repeated report (lost reply) never claims again: replayed, next: {task: null}, one lock held', async () => {
    setup();
    const { sock, id } = await h!.agent();
    create('a', 9);
    const second = create('b', 5);
    const third = create('c', 1);
    const held = await claimOne(sock);
    const first = await call(sock, 'report', { ...held, status: 'done', claimNext: true });
    expect(first.result.next.task.id).toBe(second);
    const digest = stateDigest(core);
    const again = await call(sock, 'report', { ...held, status: 'done', claimNext: true });
    expect(again.ok).toBe(true);
    expect(again.result).toMatchObject({ replayed: true, task: { id: held.taskId, status: 'done' }, next: { task: null } });
    expect(stateDigest(core)).toBe(digest);
    expect(lockOf(third)).toBeUndefined();
    expect(core.db.prepare('SELECT count(*) AS n FROM locks WHERE instance_id = ?').get(id)).toEqual({ n: 1 });
  });

  it('reports from two instances in one batch never hand the same task out twice (P1)', async () => {
    setup();
    const a = await h!.agent('dev', 'a');
    const b = await h!.agent('dev', 'b');
    create('x');
    create('y');
    const last = create('z');
    const ha = await claimOne(a.sock);
    const hb = await claimOne(b.sock);
    const before = { ...core.committer.stats };
    // Both frames arrive in one event-loop turn, so they share one group commit.
    a.sock.conn.receive(JSON.stringify({ id: 'ra', type: 'report', ...ha, status: 'done', claimNext: true }));
    b.sock.conn.receive(JSON.stringify({ id: 'rb', type: 'report', ...hb, status: 'done', claimNext: true }));
    const ra: Json = await until(() => a.sock.replies('ra')[0], 'reply ra');
    const rb: Json = await until(() => b.sock.replies('rb')[0], 'reply rb');
    expect(core.committer.stats.batches - before.batches).toBe(1);
    expect(ra.result.next.task.id).toBe(last);
    expect(rb.result.next).toEqual({ task: null });
    expect(lockOf(last)).toEqual({ instance_id: a.id, fence: 1 });
  });
});
