import { afterEach, describe, expect, it } from 'vitest';
import { checkInvariants } from './invariants';
import { makeTestCore, onlineInstance, type TestCore } from './test-core';

let core: TestCore;
afterEach(() => core?.close());

describe('invariant checker', () => {
  it('passes a healthy database and flags each kind of damage', () => {
    core = makeTestCore();
    const inst = onlineInstance(core);
    const a = core.tasks.create({ title: 'a', role: 'dev' }, { actor: 't' }).task;
    const b = core.tasks.create({ title: 'b', role: 'dev' }, { actor: 't' }).task;
    const c = core.locks.claim({ instanceId: inst });
    expect(checkInvariants(core.db)).toEqual([]);

    core.db.prepare(`INSERT INTO locks (task_id, instance_id, fence, claimed_at, expires_at) VALUES (?, 'ghost', 1, 0, 0)`).run(b.id);
    core.db.prepare(`UPDATE tasks SET status = 'backlog' WHERE id = ?`).run(c.task!.id);
    // a forged second claim of a task that is still held, appended with a valid hash
    core.audit.record({ type: 'lock.claim', actor: 'ghost', subject: `task:${a.id}`, detail: { fence: 2 } });
    const problems = checkInvariants(core.db);
    expect(problems).toEqual(
      expect.arrayContaining([
        `task ${b.id} has a lock but status backlog`,
        `task ${a.id} has a lock but status backlog`,
        expect.stringMatching(new RegExp(`task:${a.id}: claimed \\(fence 2\\) while fence 1 was live`)),
      ]),
    );
  });

  it('flags a broken audit chain', () => {
    core = makeTestCore();
    core.tasks.create({ title: 'a', role: 'dev' }, { actor: 't' });
    core.tasks.create({ title: 'b', role: 'dev' }, { actor: 't' });
    core.db.exec('DROP TRIGGER audit_no_update');
    core.db.prepare(`UPDATE audit SET actor = 'mallory' WHERE id = 1`).run();
    expect(checkInvariants(core.db)).toEqual(['audit chain broken at row 1: row content does not match its hash']);
  });

  it('lets audit time go down only at a recorded backward clock step', () => {
    core = makeTestCore();
    core.start();
    core.tasks.create({ title: 'a', role: 'dev' }, { actor: 't' });
    core.clock.jump(-3600_000);
    core.clock.advance(1000); // the gap detector records the step; later rows carry true time
    core.tasks.create({ title: 'b', role: 'dev' }, { actor: 't' });
    expect(checkInvariants(core.db)).toEqual([]);
    // A row stamped earlier than its predecessor without a step, hash-chained like any other.
    const rows = core.db.prepare('SELECT id, at FROM audit ORDER BY id').all() as Array<{ id: number; at: number }>;
    const tail = rows[rows.length - 1]!;
    core.clock.jump(-5000); // below the detector's threshold: no step is recorded
    core.audit.record({ type: 'task.note', actor: 't', subject: 'task:1' });
    const at = core.db.prepare('SELECT at FROM audit WHERE id = ?').pluck().get(tail.id + 1) as number;
    expect(at).toBe(tail.at); // AuditLog holds the line itself
    core.db.exec('DROP TRIGGER audit_no_update');
    core.db.prepare('UPDATE audit SET at = at - 1 WHERE id = ?').run(tail.id + 1);
    expect(checkInvariants(core.db)).toEqual(
      expect.arrayContaining([`audit ${tail.id + 1}: time goes backwards (${tail.at - 1} < ${tail.at}) without a recorded clock step`]),
    );
  });

  it('lists every bad row and keeps checking the rows after it', () => {
    core = makeTestCore();
    const a = core.tasks.create({ title: 'a', role: 'dev' }, { actor: 't' }).task;
    core.tasks.create({ title: 'b', role: 'dev' }, { actor: 't' });
    core.tasks.create({ title: 'c', role: 'dev' }, { actor: 't' });
    core.db.exec('DROP TRIGGER audit_no_update');
    core.db.prepare(`UPDATE audit SET actor = 'mallory' WHERE id IN (1, 3)`).run();
    // After the damaged rows: a forged claim (valid hash) must still be noticed.
    core.audit.record({ type: 'lock.claim', actor: 'ghost', subject: `task:${a.id}`, detail: { fence: 7 } });
    expect(checkInvariants(core.db)).toEqual([
      'audit chain broken at row 1: row content does not match its hash',
      'audit chain broken at row 3: row content does not match its hash',
      `task:${a.id}: claim fence 7, expected 1 (audit 4)`,
    ]);
  });

  it('replays every run phase change: an illegal one in the audit, and a phase written behind the writer, are found', () => {
    core = makeTestCore();
    const runOf = (name: string) => {
      const id = core.jobs.create({ name, role: 'dev', schedule: { cron: '0 9 * * *', timezone: 'UTC' } }, { actor: 't' }).job.id;
      return core.jobs.triggerNow(id, { reason: 'test', actor: 't' }).run.id; // no instance online: claimed, waiting for one
    };
    const a = runOf('a');
    const b = runOf('b');
    expect(core.db.prepare(`SELECT json_extract(detail, '$.phaseTo') FROM audit WHERE subject = ? AND type = 'run.claim'`).pluck().get(`run:${a}`)).toBe('checking');
    expect(checkInvariants(core.db)).toEqual([]);

    // Behind the writer's back: the row says the attempt is out, the audit never said so.
    core.db.prepare('UPDATE runs SET dispatched_at = 1, attempt = 1 WHERE id = ?').run(a);
    // A forged change that is no edge of the table, appended with a valid hash.
    core.audit.record({ type: 'run.dispatch', actor: 'ghost', subject: `run:${b}`, detail: { phaseFrom: 'checking', phaseTo: 'started' } });
    expect(checkInvariants(core.db)).toEqual([
      `run:${b}: illegal run phase change dispatch checking → started (audit ${core.audit.count()})`,
      `run:${a}: its row says offered, but its audited phase changes end at checking`,
      `run:${b}: its row says checking, but its audited phase changes end at started`,
    ]);
  });
});
