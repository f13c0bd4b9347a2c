/**
 * What one task costs in statements at the hub (issue 32, "hot path toward the floor"): a
 * report+claimNext and a claim → report, through the request table and the group committer, as
 * the 50-agent bench runs them. Each cut is pinned here so it cannot silently come back, and the
 * rows it writes are checked against what the audit and the tasks table must say.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Db } from '../db/open';
import { HubFixture, type FakeSocket } from '../tests/hub.testkit';
import { spyStatements } from '../tests/statements.testkit';

let h: HubFixture | undefined;
afterEach(() => {
  vi.restoreAllMocks();
  h?.close();
  h = undefined;
});

/** Records the source of every statement run on `db` until `stop()`. */
function recordStatements(db: Db): { ran: string[]; stop(): void } {
  const ran: string[] = [];
  spyStatements(db, (source) => ran.push(source));
  return { ran, stop: () => vi.restoreAllMocks() };
}

const N = 20;

async function setup(): Promise<{ sock: FakeSocket; held: { taskId: number; fence: number } }> {
  h = new HubFixture();
  for (let i = 0; i < N + 2; i++) h.core.tasks.create({ title: `t${i}`, role: 'dev', payload: { n: i } }, { actor: 'test' });
  const { sock } = await h.agent();
  const c = await h.call(sock, 'claim');
  return { sock, held: { taskId: c.result.task.id, fence: c.result.lock.fence } };
}

/** Per task, statements other than the transaction's own BEGIN / COMMIT (one per batch, one op per batch here). */
const perTask = (ran: string[]) => ran.filter((s) => s !== 'BEGIN IMMEDIATE' && s !== 'COMMIT');

describe('statements per task at the hub', () => {
  it('report+claimNext: 8, with no savepoint, no instance row read and no dependents probe; the rows and the audit chain as before', async () => {
    const { sock, held: first } = await setup();
    let held = first;
    const rec = recordStatements(h!.core.db);
    for (let i = 0; i < N; i++) {
      const r = await h!.call(sock, 'report', { ...held, status: 'done', claimNext: true });
      expect(r.ok).toBe(true);
      held = { taskId: r.result.next.task.id, fence: r.result.next.lock.fence };
    }
    rec.stop();
    const each = perTask(rec.ran);
    // Before: 14 — a SAVEPOINT and its RELEASE for the report and again for the claim, the
    // claiming instance's row, and a probe for tasks waiting on the one reported done.
    expect(each.filter((s) => /^(SAVEPOINT|RELEASE)|FROM instances|FROM task_deps WHERE/.test(s))).toEqual([]);
    // The rest: the reported row, the lock's delete, the task's update, the audit row; the next
    // task, its lock, its update, its audit row (and, once per epoch, the loop breaker's count).
    expect(each.length / N).toBeLessThanOrEqual(8.1);
    const audit = h!.core.db.prepare("SELECT type FROM audit WHERE type IN ('lock.claim', 'lock.release')").pluck().all();
    expect(audit.filter((t) => t === 'lock.release')).toHaveLength(N);
    expect(audit.filter((t) => t === 'lock.claim')).toHaveLength(N + 1);
    expect(h!.core.audit.verify().ok).toBe(true);
  });

  it('claim → report: 8 per task, no savepoint', async () => {
    const { sock, held: first } = await setup();
    let held = first;
    const rec = recordStatements(h!.core.db);
    for (let i = 0; i < N; i++) {
      expect((await h!.call(sock, 'report', { ...held, status: 'done' })).ok).toBe(true);
      const c = await h!.call(sock, 'claim');
      held = { taskId: c.result.task.id, fence: c.result.lock.fence };
    }
    rec.stop();
    const each = perTask(rec.ran);
    expect(each.filter((s) => /^(SAVEPOINT|RELEASE)|FROM instances|FROM task_deps WHERE/.test(s))).toEqual([]);
    expect(each.length / N).toBeLessThanOrEqual(8.1);
  });
});
